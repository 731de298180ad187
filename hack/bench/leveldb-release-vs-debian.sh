#!/usr/bin/env bash
# leveldb-release-vs-debian.sh: what Debian's assertions cost LevelDB. LevelDB has no db_bench in Debian, so this
# runs the runner's leveldb engine twice, built against Debian's libleveldb.a (1.23, assertions on) and against the
# release build of hack/engine-build.sh (the same source package, cmake Release), alternating which goes first,
# and prints the medians and the median debian/release ratio per benchmark and thread count.
#
#   NUM=1000000 READS=300000 REPS=5 DIR=/dev/shm THREADS="1 2" BENCHMARKS="fillrandom readrandom seekrandom"
#   hack/bench/leveldb-release-vs-debian.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
NUM=${NUM:-1000000} READS=${READS:-300000} REPS=${REPS:-5} DIR=${DIR:-/dev/shm} THREADS=${THREADS:-1 2}
BENCHMARKS=${BENCHMARKS:-fillrandom readrandom seekrandom}
W=$(mktemp -d "$DIR/kvb-ldb.XXXXXX")
RAW=$(mktemp)
trap 'rm -rf "$W" "$RAW"' EXIT
trap 'exit 130' INT TERM
go build -o "$W/debian" ./cmd/kvbench-runner
( eval "$(hack/engine-build.sh env)" && go build -ldflags "$ENGINE_LDFLAGS_X" -o "$W/release" ./cmd/kvbench-runner )
COMMON=(--engine=leveldb --key_size=16 --value_size=100 --compression_ratio=0.5 --cache_size=8388608 --bloom_bits=10
  --write_buffer_size=67108864)
ops() { sed -n 's/^'"$1"' *: *[0-9.]* micros\/op \([0-9]*\) ops\/sec.*/\1/p' | tail -1; }
echo "# $(date -u +%FT%TZ) $(nproc) CPUs, $(uname -r); LevelDB $(dpkg-query -W -f '${Version}' libleveldb-dev)"
echo "# NUM=$NUM READS=$READS REPS=$REPS THREADS='$THREADS' DIR=$DIR; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$W/debian" bench "${COMMON[@]}" --db="$W/base" --benchmarks=fillrandom --num="$NUM" --seed=1 >/dev/null 2>&1
for rep in $(seq "$REPS"); do
  for t in $THREADS; do
    for b in $BENCHMARKS; do
      if [ $((rep % 2)) = 1 ]; then order="debian release"; else order="release debian"; fi
      for tool in $order; do
        rm -rf "$W/db"
        if [ "$b" = fillrandom ]; then
          r=$("$W/$tool" bench "${COMMON[@]}" --db="$W/db" --benchmarks=fillrandom --threads="$t" --num=$((NUM / t)) --seed=2 2>/dev/null | ops fillrandom)
        else
          cp -a "$W/base" "$W/db"
          r=$("$W/$tool" bench "${COMMON[@]}" --db="$W/db" --benchmarks="$b" --threads="$t" --num="$NUM" --reads="$READS" \
            --use_existing_db=1 --seek_nexts=10 --seed=2 2>/dev/null | ops "$b")
        fi
        echo "$b $t $rep $tool ${r:-0}" >>"$RAW"
      done
    done
  done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
awk '
function median(a, n,   i, j, x) {
  for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j > 0 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
  return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ v[$1, $2, $3, $4] = $5; if (!(($1, $2) in seen)) { seen[$1, $2] = 1; keys[++nk] = $1 SUBSEP $2 }; reps[$3] = 1 }
END {
  printf "%-12s %3s %10s %10s %8s %13s %3s\n", "benchmark", "thr", "debian", "release", "deb/rel", "ratio min-max", "n"
  for (k = 1; k <= nk; k++) {
    split(keys[k], kk, SUBSEP); n = 0; lo = 1e9; hi = 0
    for (r in reps) {
      d = v[kk[1], kk[2], r, "debian"]; e = v[kk[1], kk[2], r, "release"]
      if (d <= 0 || e <= 0) continue
      n++; D[n] = d; E[n] = e; Q[n] = d / e; if (Q[n] < lo) lo = Q[n]; if (Q[n] > hi) hi = Q[n]
    }
    if (n) printf "%-12s %3s %10d %10d %8.3f %6.2f-%-6.2f %3d\n", kk[1], kk[2], median(D, n), median(E, n), median(Q, n), lo, hi, n
  }
}' "$RAW"
