#!/usr/bin/env bash
# ycsb-vs-rocksjava.sh: the YCSB letters through the RocksJava runner (engine rocksjava, YCSB core's
# generators, JNI) and kvbench-runner (engine rocksdb, cgo) side by side: the same RunnerConfig (YCSB
# records, a fillseq load, one ycsb phase) for both, each run on a fresh database in a tmpfs directory,
# in rotating order; prints every run and per letter the median ops/s of each and java/go.
#
# Usage: hack/bench/ycsb-vs-rocksjava.sh [-h]
#   Settings come from the environment (defaults in brackets):
#     NUM=100000    records (YCSB's default 10 fields of 100 bytes)
#     OPS=300000    transactions per thread          THREADS=1
#     LETTERS="A C" YCSB workloads                   REPS=2   rounds
#     DIR=/dev/shm  parent of the databases (removed at exit)
#     RUNNER=bin/kvbench-runner (built from ./cmd/kvbench-runner when it is the default)
#     JAVA_OPTS=""  extra JVM flags for the RocksJava runner
# Each line: letter, runner, round, ops/s of the ycsb phase, its Java heap bytes/op note (java), the
# 1-minute load average when it ended.
set -euo pipefail
if [ "${1:-}" = -h ] || [ "${1:-}" = --help ]; then sed -n '2,/^[^#]/{/^#/{s/^# \{0,1\}//;p}}' "$0"; exit 0; fi
cd "$(dirname "$0")/../.."
NUM=${NUM:-100000}
OPS=${OPS:-300000}
THREADS=${THREADS:-1}
LETTERS=${LETTERS:-A C}
REPS=${REPS:-2}
DIR=${DIR:-/dev/shm}
RUNNER=${RUNNER:-bin/kvbench-runner}
JAVA_OPTS=${JAVA_OPTS:-}
[ "$RUNNER" != bin/kvbench-runner ] || make -s runner
CP=$(hack/rocksjava-runner.sh)
w=$(mktemp -d "$DIR/kvb-ycsbj.XXXXXX")
trap 'rm -rf "$w"' EXIT
trap 'exit 130' INT TERM
config() { # engine letter
  jq -nc --arg e "$1" --arg l "$2" --arg db "$w/db" --argjson n "$NUM" --argjson o "$OPS" --argjson t "$THREADS" \
    '{engine: {name: $e}, dbPath: $db, threads: [$t], dataset: {num: $n, loadMode: "fillseq", ycsb: {}},
      workloads: [{name: "ycsb", num: $o, ycsb: {workload: $l}}]}'
}
echo "# $(date -u +%FT%TZ) $(nproc) CPUs NUM=$NUM OPS=$OPS THREADS=$THREADS REPS=$REPS DIR=$DIR; $(uptime)"
for r in $(seq "$REPS"); do
  for l in $LETTERS; do
    order="go java"
    [ $((r % 2)) -eq 0 ] && order="java go"
    for tool in $order; do
      note=-
      if [ "$tool" = go ]; then
        "$RUNNER" run --config-json="$(config rocksdb "$l")" --json="$w/r.json" >/dev/null 2>"$w/err" ||
          { cat "$w/err" >&2; exit 1; }
      else
        # shellcheck disable=SC2086 # JAVA_OPTS are meant to split
        java --add-opens=java.base/java.lang=ALL-UNNAMED $JAVA_OPTS -cp "$CP" io.kvbench.rocksjava.Main run \
          --config-json="$(config rocksjava "$l")" --json="$w/r.json" >/dev/null 2>"$w/err" ||
          { cat "$w/err" >&2; exit 1; }
        note=$(sed -n 's/^note: ycsb: the measured loops allocated \([0-9.]*\) bytes\/op.*/\1/p' "$w/err" | tail -1)
      fi
      ops=$(jq -r '.phases[0].opsPerSec | floor' "$w/r.json")
      rm -rf "$w/db" "$w/r.json"
      echo "$l $tool $r $ops ${note:--} $(cut -d' ' -f1 /proc/loadavg)"
    done
  done
done | tee "$w/runs"
echo "# $(uptime)"
awk '{ k = $1 " " $2; v[k] = v[k] " " $4; letters[$1] = 1 }
function median(s,   a, n, x, y, t) {
  n = split(substr(s, 2), a, " ")
  for (x = 1; x <= n; x++) for (y = x + 1; y <= n; y++) if (a[y] < a[x]) { t = a[x]; a[x] = a[y]; a[y] = t }
  return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
END {
  printf "%-7s %12s %12s %9s\n", "letter", "go ops/s", "java ops/s", "java/go"
  for (l in letters) {
    g = median(v[l " go"]); j = median(v[l " java"])
    printf "ycsb-%-2s %12d %12d %9.3f\n", tolower(l), g, j, j / g
  }
}' "$w/runs"
