# e2e-env.sh: shared by hack/demo.sh and hack/e2e.sh (sourced). Builds what is missing (all cached) and brings the
# local cluster, Prometheus, the images and the local-NVMe fixture up. Defines: KUBECONFIG KUBECTL HELM and the
# functions below. Progress on stderr.
. "$HERE/cluster-env.sh"
ROOT=$(cd "$HERE/.." && pwd)
VERSION=${VERSION:-v0.1.0}
export KUBECONFIG=$KUBECONFIG_ADMIN KUBECTL
export HELM_CACHE_HOME=$CD/helm/cache HELM_CONFIG_HOME=$CD/helm/config HELM_DATA_HOME=$CD/helm/data
T0=${T0:-$(date +%s)}
say() { echo "[$(( $(date +%s) - T0 ))s] $*" >&2; }
kc() { "$KUBECTL" "$@"; }

# stack_up: deps, binaries, images, cluster, Prometheus, images imported, local NVMe. Idempotent.
stack_up() {
  [ "$(id -u)" = 0 ] || { echo "$0: must run as root (the cluster runs containerd and the kubelet)" >&2; exit 1; }
  say "Debian packages (make deps)"; "$HERE/install-deps.sh"
  say "helm"; HELM=$(nice -n 19 "$HERE/tools.sh" helm); export HELM
  say "images (hack/build-images.sh: static runner + operator, cached by input hash)"
  IMAGES=$(VERSION=$VERSION "$HERE/build-images.sh")
  say "cluster up (Kubernetes binaries are built once and cached)"; "$HERE/cluster-up.sh" >/dev/null
  say "Prometheus (prometheus-operator + Prometheus, built from Go modules once: hack/monitoring-build.sh)"
  "$HERE/prometheus.sh" install >/dev/null
  say "importing images"; "$HERE/images.sh" import "$IMAGES/runner.tar" "$IMAGES/operator.tar" 2>/dev/null
  # 24 PVs: the seed examples spec alone runs 12 localNVMe runs at once, and a spec's volumes stay Released
  # (not recycled) until the next set-up.
  say "local NVMe fixture (StorageClass local-nvme, static local PVs, node label)"; "$HERE/local-nvme.sh" up 24
}

# chart_install: the CRD first (server-side apply: Helm installs crds/ only when missing, never upgrades it), then
# the chart with the images built above.
chart_install() {
  kc apply --server-side --force-conflicts -f "$ROOT/charts/kvbench-operator/crds" >/dev/null
  "$HELM" upgrade --install kvb "$ROOT/charts/kvbench-operator" -n kvbench-system --create-namespace \
    --set image.tag="$VERSION" --set runner.image="localhost/kvbench-runner:$VERSION" --wait --timeout 3m >/dev/null
}
