#!/usr/bin/env bash
# vs-dbbench.sh: kvbench-runner (RocksDB engine) against Debian's db_bench 7.8.3 on the same
# database and the same options, alternating runs, printing runner/db_bench ops/sec ratios.
#
#   hack/bench/vs-dbbench.sh                 # defaults below
#   NUM=2000000 READS=1000000 REPS=3 DIR=/var/tmp/kvb hack/bench/vs-dbbench.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
NUM=${NUM:-1000000}
READS=${READS:-500000}
REPS=${REPS:-3}
DIR=${DIR:-/var/tmp/kvbench-vs}
RUNNER=${RUNNER:-bin/kvbench-runner}
DBBENCH=${DBBENCH:-/usr/bin/db_bench}
WRITE_RATE=${WRITE_RATE:-2097152}   # readwhilewriting writer, bytes/s (both tools)
[ -x "$RUNNER" ] || go build -o "$RUNNER" ./runner/cmd/kvbench-runner
COMMON=(--num="$NUM" --key_size=16 --value_size=100 --compression_type=snappy --compression_ratio=0.5
  --cache_size=8388608 --bloom_bits=10 --write_buffer_size=67108864 --seed=1)
mkdir -p "$DIR"

opsps() { sed -n 's/^'"$1"' *: *[0-9.]* micros\/op \([0-9]*\) ops\/sec.*/\1/p' | tail -1; }

runner() { "$RUNNER" bench --engine=rocksdb --db="$DIR/db" "${COMMON[@]}" "$@" 2>/dev/null; }
dbbench() { "$DBBENCH" --db="$DIR/db" "${COMMON[@]}" "$@" 2>/dev/null; }

printf "%-18s %7s %12s %12s %7s\n" benchmark threads runner db_bench ratio
for t in 1 2; do
  for b in fillrandom readrandom readwhilewriting seekrandom; do
    r_sum=0; d_sum=0
    for i in $(seq "$REPS"); do
      if [ "$b" = fillrandom ]; then
        extra=(--benchmarks=fillrandom --threads="$t" --num=$((NUM / t)))
        r=$(runner "${extra[@]}" | opsps fillrandom)
        d=$(dbbench "${extra[@]}" | opsps fillrandom)
      else
        # The read benchmarks share one database that db_bench filled.
        if [ ! -f "$DIR/db/CURRENT" ] || [ "${FILLED:-}" != 1 ]; then
          rm -rf "$DIR/db"; dbbench --benchmarks=fillrandom,waitforcompaction >/dev/null; FILLED=1
        fi
        extra=(--benchmarks="$b" --threads="$t" --reads="$READS" --use_existing_db=1 --seek_nexts=10
          --benchmark_write_rate_limit="$WRITE_RATE")
        # Alternate which tool goes first so neither always gets the warmer cache.
        if [ $((i % 2)) = 1 ]; then
          r=$(runner "${extra[@]}" | opsps "$b"); d=$(dbbench "${extra[@]}" | opsps "$b")
        else
          d=$(dbbench "${extra[@]}" | opsps "$b"); r=$(runner "${extra[@]}" | opsps "$b")
        fi
      fi
      r_sum=$((r_sum + r)); d_sum=$((d_sum + d))
    done
    [ "$b" = fillrandom ] && FILLED=0
    printf "%-18s %7s %12d %12d %7.3f\n" "$b" "$t" $((r_sum / REPS)) $((d_sum / REPS)) \
      "$(echo "$r_sum / $d_sum" | bc -l)"
  done
done
