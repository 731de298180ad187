#!/usr/bin/env bash
# cluster-selftest.sh: the whole local-cluster path with wall times, as groundwork for the e2e suite:
#   cluster-up -> cluster-smoke.sh -> prometheus.sh install -> helm install charts/kvbench-operator (operator image
#   OPERATOR_IMAGE_TAR, default: a placeholder manager from hack/cluster/testimg) -> the chart's ServiceMonitor and
#   PodMonitor scraped by Prometheus -> helm uninstall leaves nothing but the CRD -> cluster-down --wipe.
#   KEEP_UP=1 leaves the cluster running at the end.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd); ROOT=$(cd "$HERE/.." && pwd)
. "$HERE/cluster-env.sh"
export KUBECONFIG=$KUBECONFIG_ADMIN HELM_CACHE_HOME=$CD/helm/cache HELM_CONFIG_HOME=$CD/helm/config HELM_DATA_HOME=$CD/helm/data
T0=$(date +%s)
step() { local n=$1; shift; local t=$(date +%s); "$@"; echo "== $n: $(( $(date +%s) - t ))s (total $(( $(date +%s) - T0 ))s)"; }
kc() { "$KUBECTL" "$@"; }
q() { "$@" >/dev/null; }
HELM=$("$HERE/tools.sh" helm)
step "cluster-up" q "$HERE/cluster-up.sh"
step "smoke" "$HERE/cluster-smoke.sh"
step "prometheus install" q "$HERE/prometheus.sh" install
if [ -z "${OPERATOR_IMAGE_TAR:-}" ]; then
  d=$("$HERE/images.sh" build)
  "$HERE/make-image.sh" --entrypoint /manager --uid 65532 "$d/testimg" localhost/kvbench-operator:v0.1.0-placeholder "$d/operator-placeholder.tar" >/dev/null
  OPERATOR_IMAGE_TAR=$d/operator-placeholder.tar OPERATOR_TAG=v0.1.0-placeholder
fi
# through the cluster's registry, by digest, as a user's cluster pulls it (containerd: hosts.toml)
CRANE=$("$HERE/tools.sh" crane)
step "push the operator image to $REGISTRY" q "$CRANE" push --insecure "$OPERATOR_IMAGE_TAR" "$REGISTRY/kvbench-operator:${OPERATOR_TAG:?set OPERATOR_TAG with OPERATOR_IMAGE_TAR}"
digest=$("$CRANE" digest --insecure "$REGISTRY/kvbench-operator:$OPERATOR_TAG")
step "helm install" q "$HELM" install kvb "$ROOT/charts/kvbench-operator" -n kvbench-system --create-namespace \
  --set image.repository="$REGISTRY/kvbench-operator" --set image.digest="$digest" --wait --timeout 3m
scraped() { local r; r=$("$HERE/prometheus.sh" query "$1" 2>/dev/null) && [[ $r == *'"value"'* ]]; }
wait_scraped() { for _ in $(seq 1 120); do scraped "$1" && return 0; sleep 1; done; echo "TIMEOUT: $1 never scraped"; "$HERE/prometheus.sh" targets; return 1; }
step "operator scraped through the chart's ServiceMonitor" wait_scraped 'up{namespace="kvbench-system",job="kvb-kvbench-operator-metrics"} == 1'
kc create ns kvb-selftest >/dev/null
kc -n kvb-selftest apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: fake-runner
  labels: {app.kubernetes.io/name: kvbench-runner, app.kubernetes.io/managed-by: kvbench-operator}
spec:
  securityContext: {runAsNonRoot: true, runAsUser: 65534, seccompProfile: {type: RuntimeDefault}}
  containers:
  - {name: runner, image: "localhost/kvbench-testimg:v1", imagePullPolicy: Never, args: [serve, ":9100"], ports: [{name: metrics, containerPort: 9100}],
     securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}}
YAML
step "runner-labelled pod scraped through the chart's PodMonitor" wait_scraped 'testimg_info{namespace="kvb-selftest"}'
"$HERE/prometheus.sh" targets
kc delete ns kvb-selftest --wait=true >/dev/null
step "helm uninstall" q "$HELM" uninstall kvb -n kvbench-system --wait
kc -n kvbench-system wait --for=delete pod -l app.kubernetes.io/instance=kvb --timeout=60s >/dev/null 2>&1 || true
left=$(kc get clusterrole,clusterrolebinding -o name | grep 'kvb-' || true
       kc -n kvbench-system get all,cm,secret,sa,role,rolebinding,servicemonitor,podmonitor -o name 2>/dev/null | grep -vE 'kube-root-ca|serviceaccount/default' || true)
[ -z "$left" ] && echo "helm uninstall left nothing behind (the CRD stays: helm.sh/resource-policy keep)" || { echo "LEFT BEHIND:"; echo "$left"; exit 1; }
[ "${KEEP_UP:-0}" = 1 ] && { echo "cluster left up: export KUBECONFIG=$KUBECONFIG_ADMIN"; exit 0; }
step "cluster-down --wipe" "$HERE/cluster-down.sh" --wipe 2>/dev/null
echo "== selftest OK in $(( $(date +%s) - T0 ))s"
