# e2e-env.sh: shared by hack/demo.sh and hack/e2e.sh (sourced). Builds what is missing (all cached) and brings the
# local cluster (with its registry), Prometheus and the local-NVMe fixture up, and pushes the images to that registry
# as a user would push to theirs. Defines: KUBECONFIG KUBECTL HELM REGISTRY OPERATOR_IMAGE RUNNER_IMAGE (by digest)
# and the functions below. Progress on stderr.
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
  # no project image is imported into containerd: they are pushed to the registry and pulled from it by digest
  "$HERE/images.sh" forget "$IMAGES/runner.tar" "$IMAGES/operator.tar"   # remembered by an older e2e-env.sh
  say "pushing the images to the cluster's registry $REGISTRY (make images-push)"
  make -s -C "$ROOT" images-push REGISTRY="$REGISTRY" VERSION="$VERSION" >/dev/null
  # shellcheck disable=SC1091
  . "$ROOT/bin/images/pushed.env"; export OPERATOR_IMAGE RUNNER_IMAGE RUNNER_JAVA_IMAGE
  say "  $OPERATOR_IMAGE"; say "  $RUNNER_IMAGE"; say "  $RUNNER_JAVA_IMAGE"
  # 24 PVs: the seed examples spec alone runs 12 localNVMe runs at once, and a spec's volumes stay Released
  # (not recycled) until the next set-up.
  say "local NVMe fixture (StorageClass local-nvme, static local PVs, node label)"; "$HERE/local-nvme.sh" up 24
}

# chart_install: the chart packaged and pushed to the registry (helm push), installed from there (helm upgrade
# --install oci://…) with both images by digest. The CRD is a chart template: install and upgrade apply it.
chart_install() {
  local crd=kvbenchmarks.kvbench.io owner
  # a CRD from the older chart (Helm's crds/ directory) has no release: adopt it, or Helm refuses to take it over
  owner=$(kc get crd "$crd" -o jsonpath='{.metadata.annotations.meta\.helm\.sh/release-name}' 2>/dev/null || true)
  if kc get crd "$crd" >/dev/null 2>&1 && [ -z "$owner" ]; then
    kc label crd "$crd" app.kubernetes.io/managed-by=Helm --overwrite >/dev/null
    kc annotate crd "$crd" meta.helm.sh/release-name=kvb meta.helm.sh/release-namespace=kvbench-system --overwrite >/dev/null
  fi
  REGISTRY=$REGISTRY PLAIN_HTTP=1 HELM=$HELM "$HERE/chart-push.sh" >/dev/null
  # shellcheck disable=SC1091
  . "$ROOT/bin/chart/pushed.env"
  say "chart $CHART:$CHART_VERSION ($CHART_DIGEST)"
  "$HELM" upgrade --install kvb "$CHART" --version "$CHART_VERSION" --plain-http -n kvbench-system --create-namespace \
    --set image.repository="${OPERATOR_IMAGE%@*}" --set image.digest="${OPERATOR_IMAGE#*@}" \
    --set runner.repository="${RUNNER_IMAGE%@*}" --set runner.digest="${RUNNER_IMAGE#*@}" \
    --set javaRunner.repository="${RUNNER_JAVA_IMAGE%@*}" --set javaRunner.digest="${RUNNER_JAVA_IMAGE#*@}" \
    --set monitoring.serviceMonitor.prometheusServiceAccount.name=prometheus \
    --set monitoring.serviceMonitor.prometheusServiceAccount.namespace=monitoring --wait --timeout 3m >/dev/null
}
