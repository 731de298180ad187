#!/usr/bin/env bash
# ycsba.sh: YCSB workload A throughput of runner binaries or flag variants side by side, in rounds
# (ABAB...: every variant once per round, in the order given), each run on a fresh bulk-loaded database
# in a tmpfs directory; prints every run and, per variant, the median ops/s, its range and the
# ratio of medians to the first variant.
#
# Usage: hack/bench/ycsba.sh [-h] LABEL:BINARY[:FLAGS] ...
#   e.g. hack/bench/ycsba.sh before:/tmp/runner-old after:bin/kvbench-runner:"--ycsb_update_mode=overwrite"
#   FLAGS are added to the common ones (space-separated, no colons).
#   Settings come from the environment (defaults in brackets):
#     NUM=1000000   records (--num)     THREADS=1   --threads     DUR=15   seconds per run (--duration)
#     REPS=5        rounds              DIR=/dev/shm  parent of the databases (removed at exit)
# Each line: label, round, ops/s of the ycsb-a phase, 1-minute load average when it ended.
set -euo pipefail
if [ "${1:-}" = -h ] || [ "${1:-}" = --help ] || [ $# -eq 0 ]; then
  sed -n '2,/^[^#]/{/^#/{s/^# \{0,1\}//;p}}' "$0"; [ $# -gt 0 ]; exit; fi
NUM=${NUM:-1000000}
THREADS=${THREADS:-1}
DUR=${DUR:-15}
REPS=${REPS:-5}
DIR=${DIR:-/dev/shm}
w=$(mktemp -d "$DIR/kvb-ycsba.XXXXXX")
trap 'rm -rf "$w"' EXIT
trap 'exit 130' INT TERM
COMMON=(--engine=rocksdb --num="$NUM" --load=bulk --benchmarks=ycsba --threads="$THREADS" --duration="$DUR" --seed=1)
echo "# $(date -u +%FT%TZ) $(nproc) CPUs NUM=$NUM THREADS=$THREADS DUR=$DUR REPS=$REPS DIR=$DIR; $(uptime)"
echo "# common flags: ${COMMON[*]}"
for v in "$@"; do echo "# variant $v"; done
for r in $(seq "$REPS"); do
  for v in "$@"; do
    IFS=: read -r label bin flags <<<"$v"
    # shellcheck disable=SC2086 # FLAGS are meant to split
    ops=$("$bin" bench "${COMMON[@]}" --db="$w/db" $flags 2>/dev/null |
      sed -n 's/^ycsb-a *: *[0-9.]* micros\/op \([0-9]*\) ops\/sec.*/\1/p')
    rm -rf "$w/db"
    [ -n "$ops" ] || { echo "$label: no ycsb-a result line" >&2; exit 1; }
    echo "$label $r $ops $(cut -d' ' -f1 /proc/loadavg)"
  done
done | tee "$w/runs"
echo "# $(uptime)"
awk '{ v[$1] = v[$1] " " $3; if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
END {
  printf "%-28s %10s %17s %7s\n", "variant", "median", "min-max", "ratio"
  for (i = 1; i <= n; i++) {
    k = split(substr(v[order[i]], 2), a, " ")
    for (x = 1; x <= k; x++) for (y = x + 1; y <= k; y++) if (a[y] < a[x]) { t = a[x]; a[x] = a[y]; a[y] = t }
    med[i] = k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
    printf "%-28s %10d %8d-%-8d %7.3f\n", order[i], med[i], a[1], a[k], med[i] / med[1]
  }
}' "$w/runs"
