#!/usr/bin/env bash
# stats-vs-dbbench.sh: do the runner's engine statistics agree with RocksDB's own tools? One
# RocksDB fillrandom with the same flags through kvbench-runner and through Debian's db_bench
# 7.8.3 (same librocksdb), both with --statistics and both followed by waitforcompaction, so
# that both are compared settled (at the end of the fill, the backlog of compaction depends on
# how fast the fill went):
#   - compaction bytes written: the runner's engineTotals.compactionBytesWritten (from the DB
#     properties) against db_bench's rocksdb.compact.write.bytes ticker;
#   - write amplification: the runner's engineTotals.writeAmplification against db_bench's
#     (flush + compaction bytes written) / flush bytes written from its tickers;
#   - LSM bytes: the runner's engineTotals.lsmBytes against `du` of the table files (*.sst) the
#     runner left in its database directory.
# Each must agree within 10%; the script exits 1 otherwise. The two runs draw different random
# keys (the generators differ), so the compaction figures agree only as two runs of one workload.
# It also prints the runner's fillrandom phase figures (at the end of the fill, unsettled).
#
# Usage: hack/bench/stats-vs-dbbench.sh [-h]
#   Settings come from the environment (defaults in brackets):
#     NUM=1000000   keys
#     DIR=/var/tmp  parent directory (a disk, so that du counts real blocks); a fresh
#                   kvb-stats.XXXXXX directory is made there and removed at exit
#     RUNNER=bin/kvbench-runner (built from ./cmd/kvbench-runner when it is the default)
#     LIB=release       the RocksDB the runner links and whose db_bench is the reference: release (the
#                        build of hack/engine-build.sh, as users build it) or debian (Debian's packages,
#                        assertions on: librocksdb-dev and /usr/bin/db_bench)
#     DBBENCH=           default: the db_bench of LIB's build
set -euo pipefail
if [ "${1:-}" = -h ] || [ "${1:-}" = --help ]; then sed -n '2,/^[^#]/{/^#/{s/^# \{0,1\}//;p}}' "$0"; exit 0; fi
cd "$(dirname "$0")/../.."
NUM=${NUM:-1000000}
DIR=${DIR:-/var/tmp}
. hack/bench/lib.sh   # LIB -> DBBENCH, ENGINE_LDFLAGS_X
if [ -z "${RUNNER:-}" ]; then
  RUNNER=bin/kvbench-runner
  go build -ldflags "$ENGINE_LDFLAGS_X" -o "$RUNNER" ./cmd/kvbench-runner
fi
command -v jq >/dev/null || { echo "stats-vs-dbbench: needs jq" >&2; exit 2; }
W=$(mktemp -d "$DIR/kvb-stats.XXXXXX")
trap 'rm -rf "$W"' EXIT
# Small memtables and level sizes, so that 1M keys make several levels of compaction.
FLAGS=(--num="$NUM" --threads=1 --key_size=16 --value_size=100 --compression_type=snappy --compression_ratio=0.5
  --write_buffer_size=4194304 --target_file_size_base=4194304 --max_bytes_for_level_base=16777216
  --statistics --seed=1)

"$DBBENCH" --db="$W/dbbench" --benchmarks=fillrandom,waitforcompaction,stats "${FLAGS[@]}" >"$W/dbbench.out" 2>&1
"$RUNNER" bench --db="$W/runner" --benchmarks=fillrandom,waitforcompaction "${FLAGS[@]}" \
  --json="$W/runner.json" >"$W/runner.out" 2>&1

ticker() { awk -v n="$1" '$1 == n && $2 == "COUNT" { print $4 }' "$W/dbbench.out"; }
db_cw=$(ticker rocksdb.compact.write.bytes)
db_fw=$(ticker rocksdb.flush.write.bytes)
db_sum_wamp=$(awk '$1 == "Sum" { print $12 }' "$W/dbbench.out" | tail -1)
r_cw=$(jq '.engineTotals.compactionBytesWritten' "$W/runner.json")
r_fw=$(jq '.engineTotals.flushBytesWritten' "$W/runner.json")
r_wamp=$(jq '.engineTotals.writeAmplification' "$W/runner.json")
r_lsm=$(jq '.engineTotals.lsmBytes' "$W/runner.json")
p_cw=$(jq '.phases[0].engineStats.compactionBytesWritten' "$W/runner.json")
p_wamp=$(jq '.phases[0].engineStats.writeAmplification' "$W/runner.json")
du_sst=$(find "$W/runner" -name '*.sst' -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
du_all=$(du -sb "$W/runner" | cut -f1)

awk -v num="$NUM" -v db_cw="$db_cw" -v db_fw="$db_fw" -v db_sum="$db_sum_wamp" -v r_cw="$r_cw" -v r_fw="$r_fw" \
  -v r_wamp="$r_wamp" -v r_lsm="$r_lsm" -v du_sst="$du_sst" -v du_all="$du_all" -v p_cw="$p_cw" -v p_wamp="$p_wamp" 'BEGIN {
  db_wamp = (db_fw + db_cw) / db_fw
  printf "fillrandom then waitforcompaction, %d keys of 16+100 bytes, write_buffer 4 MiB, level base 16 MiB, --statistics\n", num
  printf "%-34s %14s %14s %8s\n", "", "kvbench-runner", "db_bench", "ratio"
  printf "%-34s %14.0f %14.0f\n", "flush bytes written", r_fw, db_fw
  bad = 0
  r = r_cw / db_cw; bad += (r < 0.9 || r > 1.1)
  printf "%-34s %14.0f %14.0f %8.3f\n", "compaction bytes written", r_cw, db_cw, r
  r = r_wamp / db_wamp; bad += (r < 0.9 || r > 1.1)
  printf "%-34s %14.3f %14.3f %8.3f   (db_bench Compaction Stats Sum W-Amp: %s)\n", "write amplification", r_wamp, db_wamp, r, db_sum
  r = r_lsm / du_sst; bad += (r < 0.9 || r > 1.1)
  printf "%-34s %14.0f %14.0f %8.3f   (du of the whole directory: %d)\n", "runner LSM bytes vs du of *.sst", r_lsm, du_sst, r, du_all
  printf "(runner fillrandom phase, at the end of the fill: compaction bytes written %.0f, write amplification %.3f)\n", p_cw, p_wamp
  if (bad) { print "DISAGREE: a ratio is outside 0.9..1.1"; exit 1 }
  print "agree within 10%"
}'
