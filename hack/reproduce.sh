#!/usr/bin/env bash
# reproduce.sh: run one seed example at a chosen size on the current cluster and keep what docs/reproductions.md
# shows: the saved benchmarks with their runners' full results, the report as markdown, and plots.
#
#   hack/reproduce.sh EXAMPLE SIZE-FLAG [OUT]
#     hack/reproduce.sh examples/seed-002-leveldb-vs-rocksdb.yaml --dataset-size=10Gi
#     hack/reproduce.sh examples/seed-003-rocksdb-on-flash.yaml --num=4000000 results/seed-003
#
# Steps: kubectl kvbench scale | kubectl apply (namespace $NS, default "seeds"), wait until every benchmark of the
# file has finished, kubectl kvbench save (before the Jobs' cleanup TTL), then report (markdown) and plots into OUT
# (default results/<example name>). KUBECONFIG must point at the cluster (make demo leaves one up); the runs keep
# the example's placement (exclusive: one runner per node at a time).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
[ $# -ge 2 ] || { sed -n '2,12p' "$0" >&2; exit 2; }
example=$1 size=$2
out=${3:-$ROOT/results/$(basename "$example" .yaml)}
NS=${NS:-seeds}
KUBECTL=${KUBECTL:-kubectl}
PLUGIN=$ROOT/bin/kubectl-kvbench
(cd "$ROOT" && CGO_ENABLED=0 go build -o "$PLUGIN" ./cmd/kubectl-kvbench)
kv() { "$PLUGIN" -n "$NS" "$@"; }

"$KUBECTL" get ns "$NS" >/dev/null 2>&1 || "$KUBECTL" create ns "$NS" >/dev/null
manifest=$(kv scale -f "$example" "$size")
names=$(printf '%s\n' "$manifest" | sed -n 's/^  name: //p')
printf '%s\n' "$manifest" | "$KUBECTL" apply -n "$NS" -f -
start=$(date +%s)
for n in $names; do
  while :; do
    phase=$("$KUBECTL" get kvb -n "$NS" "$n" -o jsonpath='{.status.phase}')
    case $phase in Succeeded|Failed) break ;; esac
    sleep 10
  done
  echo "reproduce: $n $phase after $(( $(date +%s) - start ))s" >&2
done
mkdir -p "$out"
kv save $names -d "$out" >/dev/null
printf '%s\n' "$manifest" >"$out/applied.manifest"   # not .yaml: report -f DIR would read it as a benchmark
{
  echo "<!-- hack/reproduce.sh $example $size; $(date -u +%FT%TZ); node: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end -->"
  kv report -f "$out" --format markdown
} >"$out/report.md"
for n in $names; do
  for kind in threads latency pulse timeseries; do
    kv plot -f "$out/$n.yaml" --kind "$kind" -o "$out/$n-$kind.png" 2>/dev/null || true
  done
done
echo "reproduce: $out" >&2
