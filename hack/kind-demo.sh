#!/usr/bin/env bash
# kind-demo.sh (make kind-demo): the install path of docs/install.md on a laptop with Docker and kind.
#   1. a local registry container (distribution's registry image) on 127.0.0.1:$REGISTRY_PORT, joined to the "kind"
#      Docker network, and a kind cluster whose containerd pulls localhost:$REGISTRY_PORT/… from it (hosts.toml,
#      the pattern of kind's "local registry" guide), with OwnerReferencesPermissionEnforcement on, as OpenShift has
#   2. the NVMe node label on every node; kind's own StorageClass "standard" (local-path: a directory on the node,
#      WaitForFirstConsumer) serves localNVMe volumes
#   3. make images-push REGISTRY=localhost:$REGISTRY_PORT and the chart pushed as an OCI artifact (make chart-push), then
#      helm install oci://… with both images by digest
#   4. config/samples/kvbench_v1alpha1_demo.yaml, waits, prints `kubectl get kvb`
# Usage: hack/kind-demo.sh [up|down|--print-config]   (default up; re-running reuses the cluster and the registry)
# Needs: docker, kind (0.2x), kubectl, helm (else built by hack/tools.sh), and what `make images-push` needs.
# Environment: KIND_CLUSTER (kvbench), KIND_NODE_IMAGE (kind's default), REGISTRY_NAME (kvbench-registry),
#   REGISTRY_PORT (5001), REGISTRY_IMAGE (registry:3), NVME_LABEL, DEMO_TIMEOUT (600 s).
# Not run on the project's CI machines (no Docker engine, no kind node image offline): see docs/install.md.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd); ROOT=$(cd "$HERE/.." && pwd)
CLUSTER=${KIND_CLUSTER:-kvbench}
REG_NAME=${REGISTRY_NAME:-kvbench-registry}
REG_PORT=${REGISTRY_PORT:-5001}
REG_IMAGE=${REGISTRY_IMAGE:-registry:3}
REGISTRY=localhost:$REG_PORT
NVME_LABEL=${NVME_LABEL:-feature.node.kubernetes.io/storage-nonrotationaldisk=true}
KIND=${KIND:-kind} DOCKER=${DOCKER:-docker} KUBECTL=${KUBECTL:-kubectl}
SAMPLE=$ROOT/config/samples/kvbench_v1alpha1_demo.yaml
say() { echo "kind-demo: $*" >&2; }

kind_config() {
  cat <<YAML
kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
name: $CLUSTER
# containerd reads per-registry hosts.toml files (written below for $REGISTRY)
containerdConfigPatches:
- |-
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "/etc/containerd/certs.d"
# as on OpenShift and the project's local cluster: blockOwnerDeletion needs update on the owner's finalizers
kubeadmConfigPatches:
- |
  kind: ClusterConfiguration
  apiServer:
    extraArgs:
      enable-admission-plugins: NodeRestriction,OwnerReferencesPermissionEnforcement
nodes:
- role: control-plane
YAML
}

case ${1:-up} in
  --print-config) kind_config; exit 0 ;;
  down)
    "$KIND" delete cluster --name "$CLUSTER" || true
    "$DOCKER" rm -f "$REG_NAME" >/dev/null 2>&1 || true
    say "deleted kind cluster $CLUSTER and registry container $REG_NAME"; exit 0 ;;
  up) ;;
  *) sed -n '2,16p' "$0" >&2; exit 2 ;;
esac
for c in "$DOCKER" "$KIND" "$KUBECTL"; do command -v "$c" >/dev/null || { say "$c not found (needs Docker, kind and kubectl)"; exit 1; }; done
HELM=${HELM:-$(command -v helm || "$HERE/tools.sh" helm)}

say "registry container $REG_NAME ($REG_IMAGE) on 127.0.0.1:$REG_PORT"
if [ "$("$DOCKER" inspect -f '{{.State.Running}}' "$REG_NAME" 2>/dev/null || true)" != true ]; then
  "$DOCKER" rm -f "$REG_NAME" >/dev/null 2>&1 || true
  "$DOCKER" run -d --restart=always -p "127.0.0.1:$REG_PORT:5000" --network bridge --name "$REG_NAME" "$REG_IMAGE" >/dev/null
fi

if ! "$KIND" get clusters 2>/dev/null | grep -qx "$CLUSTER"; then
  say "kind create cluster --name $CLUSTER"
  "$KIND" create cluster --config <(kind_config) ${KIND_NODE_IMAGE:+--image "$KIND_NODE_IMAGE"} --wait 120s
fi
export KUBECONFIG=${KUBECONFIG:-$(mktemp)}
"$KIND" get kubeconfig --name "$CLUSTER" >"$KUBECONFIG"

# every node pulls localhost:$REG_PORT/… from the registry container by its name on the kind network
for node in $("$KIND" get nodes --name "$CLUSTER"); do
  "$DOCKER" exec "$node" mkdir -p "/etc/containerd/certs.d/$REGISTRY"
  printf '[host."http://%s:5000"]\n' "$REG_NAME" | "$DOCKER" exec -i "$node" cp /dev/stdin "/etc/containerd/certs.d/$REGISTRY/hosts.toml"
done
if [ "$("$DOCKER" inspect -f '{{json .NetworkSettings.Networks.kind}}' "$REG_NAME")" = null ]; then
  "$DOCKER" network connect kind "$REG_NAME"
fi
# KEP-1755: tells tools which registry the cluster pulls from
"$KUBECTL" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: ConfigMap
metadata: {name: local-registry-hosting, namespace: kube-public}
data:
  localRegistryHosting.v1: |
    host: "$REGISTRY"
    help: "https://kind.sigs.k8s.io/docs/user/local-registry/"
YAML

say "NVMe label $NVME_LABEL on every node; StorageClass standard (kind's local-path) for localNVMe volumes"
"$KUBECTL" label nodes --all "$NVME_LABEL" --overwrite >/dev/null
"$KUBECTL" get storageclass standard >/dev/null

say "make images-push REGISTRY=$REGISTRY"
make -s -C "$ROOT" images-push REGISTRY="$REGISTRY" >/dev/null
# shellcheck disable=SC1091
. "$ROOT/bin/images/pushed.env"
say "make chart-push REGISTRY=$REGISTRY"
REGISTRY=$REGISTRY PLAIN_HTTP=1 HELM=$HELM "$HERE/chart-push.sh" >/dev/null
# shellcheck disable=SC1091
. "$ROOT/bin/chart/pushed.env"
say "helm upgrade --install kvb $CHART --version $CHART_VERSION"
"$HELM" upgrade --install kvb "$CHART" --version "$CHART_VERSION" --plain-http -n kvbench-system --create-namespace \
  --set image.repository="${OPERATOR_IMAGE%@*}" --set image.digest="${OPERATOR_IMAGE#*@}" \
  --set runner.repository="${RUNNER_IMAGE%@*}" --set runner.digest="${RUNNER_IMAGE#*@}" \
  --set javaRunner.repository="${RUNNER_JAVA_IMAGE%@*}" --set javaRunner.digest="${RUNNER_JAVA_IMAGE#*@}" \
  --set operator.nvmeNodeLabel="$NVME_LABEL" --set operator.localNVMeStorageClass=standard --wait --timeout 5m >/dev/null

name=$(awk '/^metadata:/{m=1} m && /^  name:/{print $2; exit}' "$SAMPLE")
"$KUBECTL" delete kvbenchmark "$name" --ignore-not-found --wait=true >/dev/null
"$KUBECTL" apply -f "$SAMPLE" >/dev/null
say "applied $(basename "$SAMPLE"); waiting for kvbenchmark/$name"
end=$(( $(date +%s) + ${DEMO_TIMEOUT:-600} )); phase=""
while :; do
  phase=$("$KUBECTL" get kvbenchmark "$name" -o jsonpath='{.status.phase}' 2>/dev/null || true)
  case $phase in Succeeded|Failed) break ;; esac
  [ "$(date +%s)" -lt "$end" ] || { say "timed out (phase '$phase')"; break; }
  sleep 2
done
"$KUBECTL" get kvb -o wide
cat <<EOF

kind cluster $CLUSTER (KUBECONFIG=$KUBECONFIG), registry $REGISTRY:
  chart   $CHART --version $CHART_VERSION
  images  $OPERATOR_IMAGE
          $RUNNER_IMAGE
          $RUNNER_JAVA_IMAGE
Take it down: hack/kind-demo.sh down
EOF
[ "$phase" = Succeeded ]
