# cluster-env.sh: settings shared by cluster-up.sh, cluster-down.sh, images.sh and prometheus.sh (sourced, not run).
# Everything the cluster writes lives under KVBENCH_CLUSTER_DIR (outside the clone); binaries are cached by version
# under KVBENCH_CACHE. Override any of these in the environment.
KVBENCH_CACHE=${KVBENCH_CACHE:-$HOME/.cache/kvbench}
KVBENCH_CLUSTER_DIR=${KVBENCH_CLUSTER_DIR:-/opt/kvbench-cluster}
K8S_VERSION=${K8S_VERSION:-v1.33.13}
PO_VERSION=${PO_VERSION:-v0.85.0}
CD=$KVBENCH_CLUSTER_DIR
CL_PKI=$CD/pki CL_ETC=$CD/etc CL_VAR=$CD/var CL_LOGS=$CD/logs CL_RUN=$CD/run CL_IMAGES=$CD/images
KUBECONFIG_ADMIN=$CD/kubeconfig
NODE_NAME=${NODE_NAME:-$(hostname | tr '[:upper:]' '[:lower:]')}
NODE_IP=${NODE_IP:-10.87.0.1}          # on the port-less bridge $NODE_IF, never on the outside interface
POD_CIDR=${POD_CIDR:-10.88.0.0/16}
SVC_CIDR=${SVC_CIDR:-10.96.0.0/16}
API_SVC_IP=${API_SVC_IP:-10.96.0.1}    # first address of SVC_CIDR: the `kubernetes` Service
NODE_IF=kvbnode0 POD_IF=kvbcni0 GUARD_CHAIN=KVBENCH-GUARD CNI_NET=kvbench-pods
CTRD_STATE=/run/kvbench-containerd
CTRD_SOCK=$CTRD_STATE/containerd.sock
PAUSE_IMAGE=localhost/kvbench-pause:v1
# The cluster's registry (CNCF distribution, started by cluster-up on the node IP, plain HTTP, storage under
# $CL_VAR/registry): images and charts are pushed to it from the host and containerd pulls from it (hosts.toml).
REGISTRY_PORT=${REGISTRY_PORT:-5000}
REGISTRY=$NODE_IP:$REGISTRY_PORT
K8S_BIN=$KVBENCH_CACHE/k8s-$K8S_VERSION/bin
KUBECTL=${KUBECTL:-$K8S_BIN/kubectl}
ctr_() { ctr -a "$CTRD_SOCK" -n k8s.io "$@"; }
