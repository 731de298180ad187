#!/usr/bin/env bash
# chart-push.sh (make chart-push REGISTRY=host:port): package charts/kvbench-operator and push it to a registry as an
# OCI artifact, as a chart release would be published. Install it with
#   helm install kvb oci://$REGISTRY/charts/kvbench-operator --version <version> [--plain-http] --set image.digest=…
#
#   REGISTRY      host[:port] (required)
#   CHART_VERSION chart version (default: Chart.yaml's); APP_VERSION likewise (default: Chart.yaml's appVersion)
#   CHART_DIR     chart to package (default charts/kvbench-operator)
#   PLAIN_HTTP=1  the registry speaks plain HTTP (the local cluster's registry does)
#   HELM          helm binary (default: the pinned build from hack/tools.sh)
# Writes bin/chart/pushed.env (CHART=oci://…, CHART_VERSION=…, CHART_DIGEST=sha256:…) and prints it.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd); ROOT=$(cd "$HERE/.." && pwd)
: "${REGISTRY:?chart-push: REGISTRY=host:port is required}"
CHART_DIR=${CHART_DIR:-$ROOT/charts/kvbench-operator}
HELM=${HELM:-$(nice -n 10 "$HERE/tools.sh" helm)}
OUT=$ROOT/bin/chart
mkdir -p "$OUT"
# helm's registry client state stays out of the user's home unless they set it
export HELM_CACHE_HOME=${HELM_CACHE_HOME:-$OUT/.helm/cache} HELM_CONFIG_HOME=${HELM_CONFIG_HOME:-$OUT/.helm/config} \
  HELM_DATA_HOME=${HELM_DATA_HOME:-$OUT/.helm/data}
pkg_args=(); [ -n "${CHART_VERSION:-}" ] && pkg_args+=(--version "$CHART_VERSION"); [ -n "${APP_VERSION:-}" ] && pkg_args+=(--app-version "$APP_VERSION")
tgz=$("$HELM" package "$CHART_DIR" -d "$OUT" "${pkg_args[@]}" | sed -n 's/^Successfully packaged chart and saved it to: //p')
[ -f "$tgz" ] || { echo "chart-push: helm package wrote no chart" >&2; exit 1; }
push_args=(); [ "${PLAIN_HTTP:-0}" = 1 ] && push_args+=(--plain-http)
# helm push prints "Pushed: <ref>:<version>" and "Digest: sha256:…" (on stderr)
log=$("$HELM" push "$tgz" "oci://$REGISTRY/charts" "${push_args[@]}" 2>&1) || { echo "$log" >&2; exit 1; }
version=$("$HELM" show chart "$tgz" | sed -n 's/^version: //p'); chart=$("$HELM" show chart "$tgz" | sed -n 's/^name: //p')
digest=$(sed -n 's/^Digest: //p' <<<"$log")
[[ $digest == sha256:* ]] || { echo "chart-push: no digest in helm push output:" >&2; echo "$log" >&2; exit 1; }
printf 'CHART=oci://%s/charts/%s\nCHART_VERSION=%s\nCHART_DIGEST=%s\n' "$REGISTRY" "$chart" "$version" "$digest" >"$OUT/pushed.env"
cat "$OUT/pushed.env"
