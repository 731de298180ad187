#!/usr/bin/env bash
# local-nvme.sh: a "local NVMe" for the local cluster, as a user's local-volume provisioner would give it:
#   StorageClass local-nvme (kubernetes.io/no-provisioner, WaitForFirstConsumer), static local PersistentVolumes on
#   directories under $KVBENCH_CLUSTER_DIR/var/local-nvme (node affinity to this node, reclaim policy Retain), and
#   the operator's NVMe node label (the chart's operator.nvmeNodeLabel; NFD's label by default).
#
#   local-nvme.sh up [N] [SIZE]  create the class and N (default 4) PVs of SIZE (default 200Gi: capacity is only the
#                                binding size, the directories live on the host's disk) and label the node. Idempotent;
#                                Released PVs (their generic ephemeral PVC is gone with the runner pod) are wiped and
#                                recreated Available, so repeated localNVMe runs always find a volume.
#   local-nvme.sh recycle        only the Released -> Available step
#   local-nvme.sh label|unlabel  only the node label
#   local-nvme.sh down           delete the PVs (must be unbound), the class, the directories and the label
#
# NVME_LABEL=key=value overrides the label (must match the operator's --nvme-node-label).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/cluster-env.sh"
export KUBECONFIG=${KUBECONFIG:-$KUBECONFIG_ADMIN}
NVME_LABEL=${NVME_LABEL:-feature.node.kubernetes.io/storage-nonrotationaldisk=true}
SC=${LOCAL_NVME_CLASS:-local-nvme}
DIR=$CL_VAR/local-nvme
RUNNER_UID=65532
kc() { "$KUBECTL" "$@"; }
pv_yaml() { # NAME PATH SIZE
  cat <<YAML
apiVersion: v1
kind: PersistentVolume
metadata:
  name: $1
  labels: {app.kubernetes.io/part-of: kvbench-e2e, kvbench.io/local-nvme: "true"}
spec:
  capacity: {storage: $3}
  accessModes: [ReadWriteOnce]
  volumeMode: Filesystem
  persistentVolumeReclaimPolicy: Retain
  storageClassName: $SC
  local: {path: $2}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions:
        - {key: kubernetes.io/hostname, operator: In, values: [$NODE_NAME]}
YAML
}
mkpv() { # NAME SIZE: (re)create the directory, then the PV
  local d=$DIR/$1
  rm -rf "$d"; mkdir -p "$d"; chown "$RUNNER_UID:$RUNNER_UID" "$d"; chmod 0770 "$d"
  pv_yaml "$1" "$d" "$2" | kc apply -f - >/dev/null
}
recycle() {
  local pv size
  for pv in $(kc get pv -l kvbench.io/local-nvme=true -o jsonpath='{range .items[?(@.status.phase=="Released")]}{.metadata.name}{" "}{end}'); do
    size=$(kc get pv "$pv" -o jsonpath='{.spec.capacity.storage}')
    kc delete pv "$pv" --wait=true >/dev/null
    mkpv "$pv" "$size"
    echo "local-nvme: recycled $pv" >&2
  done
}
label() { kc label node "$NODE_NAME" "$NVME_LABEL" --overwrite >/dev/null; }
unlabel() { kc label node "$NODE_NAME" "${NVME_LABEL%%=*}-" >/dev/null 2>&1 || true; }
case ${1:-} in
  up)
    n=${2:-4} size=${3:-200Gi}
    kc apply -f - >/dev/null <<YAML
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: $SC
  labels: {app.kubernetes.io/part-of: kvbench-e2e}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Retain
YAML
    recycle
    for i in $(seq 0 $((n - 1))); do
      kc get pv "local-nvme-$i" >/dev/null 2>&1 || mkpv "local-nvme-$i" "$size"
    done
    label
    echo "local-nvme: StorageClass $SC, $(kc get pv -l kvbench.io/local-nvme=true --no-headers | grep -c Available) Available PVs under $DIR, node $NODE_NAME labelled $NVME_LABEL" >&2 ;;
  recycle) recycle ;;
  label) label ;;
  unlabel) unlabel ;;
  down)
    kc delete pv -l kvbench.io/local-nvme=true --ignore-not-found --wait=true >/dev/null
    kc delete storageclass "$SC" --ignore-not-found >/dev/null
    rm -rf "$DIR"; unlabel ;;
  *) sed -n '2,15p' "$0" >&2; exit 2 ;;
esac
