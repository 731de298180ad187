#!/usr/bin/env bash
# seed004.sh: seed 004 (examples/seed-004-ycsb-pegasus.yaml) run by kvbench-runner directly, without a
# cluster: each KVBenchmark scaled by kubectl kvbench scale, turned into the RunnerConfig the operator
# would pass (spec.engines[0], dataset, workloads, threads; the API server's defaults filled in), and run
# with `kvbench-runner run` on a fresh database in a tmpfs directory, once per key chooser, the choosers
# alternating within each benchmark. Everything but workloads[].ycsb.requestDistribution is the same.
#
# Usage: hack/bench/seed004.sh [-h] OUT
#   OUT/<chooser>/<benchmark>.yaml                  the KVBenchmark as scaled, with the chooser
#   OUT/<chooser>/<benchmark>-rocksdb.result.json   the runner's full result
#   OUT/<chooser>/<benchmark>.runnerconfig          the RunnerConfig that ran (JSON)
#   OUT/report.md                                   kubectl kvbench report -f OUT/<chooser> --table ycsb, after
#                                                   the runs' log (times and load averages) as comments
#   Settings come from the environment (defaults in brackets):
#     SIZE=1Gi           kubectl kvbench scale --dataset-size (the example's full size is 10Gi)
#     DIR=/dev/shm       parent directory of the databases (a kvb-seed004.XXXXXX dir, removed at exit)
#     CHOOSERS="permutedZipfian zipfian"   requestDistribution values, in the order they run
#     RUNNER=bin/kvbench-runner, PLUGIN=bin/kubectl-kvbench (built here when they are the defaults)
# The 1-minute load average (other work on the machine) is printed before and after each run.
set -euo pipefail
if [ "${1:-}" = -h ] || [ "${1:-}" = --help ] || [ $# -ne 1 ]; then
  sed -n '2,/^[^#]/{/^#/{s/^# \{0,1\}//;p}}' "$0"; [ $# -eq 1 ]; exit; fi
cd "$(dirname "$0")/../.."
OUT=$1
SIZE=${SIZE:-1Gi}
DIR=${DIR:-/dev/shm}
CHOOSERS=${CHOOSERS:-permutedZipfian zipfian}
if [ -z "${RUNNER:-}" ]; then
  RUNNER=bin/kvbench-runner
  make -s runner
fi
if [ -z "${PLUGIN:-}" ]; then
  PLUGIN=bin/kubectl-kvbench
  go build -o "$PLUGIN" ./cmd/kubectl-kvbench
fi
w=$(mktemp -d "$DIR/kvb-seed004.XXXXXX")
trap 'rm -rf "$w"' EXIT
trap 'exit 130' INT TERM
mkdir -p "$OUT"
"$PLUGIN" scale -f examples/seed-004-ycsb-pegasus.yaml --dataset-size="$SIZE" --medium=tmpfs >"$w/scaled.yaml"

# config <benchmark> <chooser> <dbpath> <yaml>: the RunnerConfig of one benchmark of the scaled file;
# the benchmark with the chooser goes to <yaml>.
config() {
  python3 - "$w/scaled.yaml" "$@" <<'EOF'
import json, sys, yaml
path, name, chooser, db, out = sys.argv[1:]
b = next(d for d in yaml.safe_load_all(open(path)) if d and d["metadata"]["name"] == name)
spec = b["spec"]
for wl in spec["workloads"]:
    wl["ycsb"]["requestDistribution"] = chooser
yaml.safe_dump(b, open(out, "w"), sort_keys=False)
ds = spec["dataset"]
for k, v in {"keySize": 16, "valueSize": 100, "keyOrder": "random", "loadMode": "bulk"}.items():
    ds.setdefault(k, v)  # the CRD's defaults (they do not apply to YCSB records)
print(json.dumps({"engine": spec["engines"][0], "dataset": ds, "workloads": spec["workloads"],
                  "threads": spec["threads"], "cacheMode": spec.get("cacheMode", "warm"),
                  "repeat": spec.get("repeat", 1), "dbPath": db}, indent=1))
EOF
}

names=$(sed -n 's/^  name: //p' "$w/scaled.yaml")
say() { echo "$*" | tee -a "$w/log"; }
say "# $(date -u +%FT%TZ) $(nproc) CPUs, SIZE=$SIZE DIR=$DIR RUNNER=$RUNNER (worktree at $(git rev-parse --short HEAD)); uptime: $(uptime)"
for name in $names; do
  for c in $CHOOSERS; do
    mkdir -p "$OUT/$c"
    config "$name" "$c" "$w/db" "$OUT/$c/$name.yaml" >"$OUT/$c/$name.runnerconfig"
    l0=$(cut -d' ' -f1 /proc/loadavg)
    s=$(date +%s)
    "$RUNNER" run --config="$OUT/$c/$name.runnerconfig" --json="$OUT/$c/$name-rocksdb.result.json" >/dev/null
    say "$name $c: $(($(date +%s) - s)) s, load $l0 -> $(cut -d' ' -f1 /proc/loadavg)"
    rm -rf "$w/db"
  done
done
{
  sed 's/^/<!-- /; s/$/ -->/' "$w/log"
  for c in $CHOOSERS; do
    echo "### requestDistribution: $c"
    echo
    "$PLUGIN" report -f "$OUT/$c" --table ycsb --format markdown
  done
} >"$OUT/report.md"
cat "$OUT/report.md"
