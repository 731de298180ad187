#!/usr/bin/env bash
# prometheus.sh: the monitoring stack in the local cluster (hack/cluster-up.sh), all built from Go modules
# (hack/monitoring-build.sh: prometheus-operator + config-reloader $PO_VERSION, Prometheus 3.5.0, CRDs via controller-gen).
#
#   prometheus.sh install     build (cached), import the images, apply the monitoring.coreos.com CRDs (server-side:
#                             they are too big for client-side apply), run the operator (hack/cluster/monitoring/
#                             prometheus-operator.yaml) and one Prometheus (prometheus.yaml) selecting all monitors;
#                             waits until Prometheus answers, prints its URL
#   prometheus.sh url         http://<ClusterIP>:9090 (reachable from the host and from pods)
#   prometheus.sh query EXPR  instant query, prints the JSON result
#   prometheus.sh targets     active targets: scrape pool, URL, health
#   prometheus.sh uninstall   delete Prometheus, the operator and (with --crds) the CRDs
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/cluster-env.sh"
PROM_VERSION=${PROM_VERSION:-3.5.0}
M=$HERE/cluster/monitoring
export KUBECONFIG=${KUBECONFIG:-$KUBECONFIG_ADMIN}
kc() { "$KUBECTL" "$@"; }
t0=$(date +%s%N)
el() { local d=$(( ($(date +%s%N) - t0) / 100000000 )); printf 'prometheus %4d.%ds %s\n' $((d/10)) $((d%10)) "$*" >&2; }
subst() { sed -e "s/\${PO_VERSION}/$PO_VERSION/g" -e "s/\${PROM_VERSION}/$PROM_VERSION/g" "$1"; }
url() { echo "http://$(kc -n monitoring get svc prometheus -o jsonpath='{.spec.clusterIP}'):9090"; }
case ${1:-} in
  install)
    OUT=$(PO_VERSION=$PO_VERSION "$HERE/monitoring-build.sh")
    "$HERE/images.sh" import "$OUT"/images/*.tar
    el "images imported"
    kc apply --server-side --force-conflicts -f "$OUT/crds" >/dev/null
    kc wait --for=condition=Established --timeout=60s $(for f in "$OUT"/crds/*.yaml; do
      echo "crd/$(basename "$f" .yaml | cut -d_ -f2).monitoring.coreos.com"; done) >/dev/null
    el "$(ls "$OUT"/crds/*.yaml | wc -l) monitoring.coreos.com CRDs established"
    subst "$M/prometheus-operator.yaml" | kc apply -f - >/dev/null
    kc -n monitoring rollout status deploy/prometheus-operator --timeout=180s >/dev/null
    el "prometheus-operator available"
    subst "$M/prometheus.yaml" | kc apply -f - >/dev/null
    until kc -n monitoring get statefulset prometheus-kvbench >/dev/null 2>&1; do sleep 0.5; done
    kc -n monitoring rollout status statefulset/prometheus-kvbench --timeout=300s >/dev/null
    kc -n monitoring wait --for=condition=Available prometheus/kvbench --timeout=120s >/dev/null
    u=$(url)
    curl -fsS --max-time 5 --retry 30 --retry-connrefused --retry-delay 1 "$u/-/ready" >/dev/null   # Ready is not yet routable
    el "Prometheus $PROM_VERSION ready at $u"
    echo "$u" ;;
  url) url ;;
  query)
    curl -fsS --max-time 10 --get "$(url)/api/v1/query" --data-urlencode "query=$2"; echo ;;
  targets)
    curl -fsS --max-time 10 "$(url)/api/v1/targets?state=active" | python3 -c 'import json,sys
for t in json.load(sys.stdin)["data"]["activeTargets"]: print(t["scrapePool"], t["scrapeUrl"], t["health"], t["lastError"])' ;;
  uninstall)
    subst "$M/prometheus.yaml" | kc delete --ignore-not-found --wait=true -f - >/dev/null 2>&1 || true
    subst "$M/prometheus-operator.yaml" | kc delete --ignore-not-found --wait=true -f - >/dev/null
    if [ "${2:-}" = --crds ]; then
      kc delete --ignore-not-found -f "$KVBENCH_CACHE/monitoring-$PO_VERSION/crds" >/dev/null
    fi
    el "uninstalled" ;;
  *) sed -n '2,13p' "$0" >&2; exit 2 ;;
esac
