#!/usr/bin/env bash
# vs-dbbench.sh: kvbench-runner (RocksDB engine) against db_bench 7.8.3 from the same RocksDB build (LIB below)
# with identical flags and identical effective options, alternating which tool runs first,
# reporting the median runner/db_bench ops/sec ratio per benchmark, thread count and directory.
#
# Usage: hack/bench/vs-dbbench.sh [-h]
#   Settings come from the environment (defaults in brackets):
#     NUM=1000000        keys (--num); fillrandom at T threads writes NUM/T keys per thread
#     READS=300000       read/seek operations per thread (--reads)
#     REPS=5             alternating repetitions (odd: runner first, even: db_bench first)
#     DIRS="/dev/shm /var/tmp"  parent directories to run in (tmpfs and disk); a fresh
#                        kvb-vs.XXXXXX directory is made in each and removed at exit
#     THREADS="1 2"      thread counts
#     BENCHMARKS="fillrandom readrandom readwhilewriting seekrandom"
#                        (any other read benchmark both tools have works too, e.g. readseq readreverse
#                        with READS=NUM: each thread scans READS entries)
#     WRITE_RATE=2097152 readwhilewriting writer, bytes/s (db_bench --benchmark_write_rate_limit;
#                        the runner turns it into writes/s = rate / (key_size + value_size))
#     HISTOGRAM=0        1: both tools get --histogram. db_bench 7.8.3 reads the clock per
#                        operation only then; the runner always times every operation (its
#                        latency percentiles are part of its result), so by default it does
#                        that work and db_bench does not
#     A=runner           the tool measured against db_bench: the runner, or db_bench:PATH for a second
#                        db_bench (hack/bench/release-vs-debian.sh: Debian's against the release build);
#                        LABEL_A, LABEL_B name the two columns (default runner, db_bench);
#                        OPTIONS_IGNORE=regex: OPTIONS lines the check may also find different
#     RAW=file           also keep every single measurement there
#                        (dir bench threads rep tool ops load1), load1 the 1-minute load average
#                        when the measurement ended
#     RUNNER=bin/kvbench-runner (built from ./cmd/kvbench-runner when it is the default)
#     LIB=release       the RocksDB the runner links and whose db_bench is the reference: release (the
#                        build of hack/engine-build.sh, as users build it) or debian (Debian's packages,
#                        assertions on: librocksdb-dev and /usr/bin/db_bench)
#     DBBENCH=           default: the db_bench of LIB's build
#
# Fairness: before measuring, both tools create a small database and their OPTIONS-* files are
# diffed; any difference other than db_bench's internal error-handler listener and
# create_missing_column_families (which db_bench sets for its multi-CF modes) aborts the run.
# The read benchmarks start every run from a copy of one database db_bench filled
# (fillrandom + waitforcompaction), so readwhilewriting's writes never leak into the next run.
set -euo pipefail
if [ "${1:-}" = -h ] || [ "${1:-}" = --help ]; then sed -n '2,/^[^#]/{/^#/{s/^# \{0,1\}//;p}}' "$0"; exit 0; fi
cd "$(dirname "$0")/../.."
NUM=${NUM:-1000000}
READS=${READS:-300000}
REPS=${REPS:-5}
DIRS=${DIRS:-/dev/shm /var/tmp}
THREADS=${THREADS:-1 2}
BENCHMARKS=${BENCHMARKS:-fillrandom readrandom readwhilewriting seekrandom}
WRITE_RATE=${WRITE_RATE:-2097152}
HISTOGRAM=${HISTOGRAM:-0}
. hack/bench/lib.sh   # LIB -> DBBENCH, ENGINE_LDFLAGS_X
A=${A:-runner}
LABEL_A=${LABEL_A:-runner} LABEL_B=${LABEL_B:-db_bench}
if [ -z "${RUNNER:-}" ] && [ "$A" = runner ]; then
  RUNNER=bin/kvbench-runner
  go build -ldflags "$ENGINE_LDFLAGS_X" -o "$RUNNER" ./cmd/kvbench-runner
fi
# --seed: the base database is filled with seed 1 and every measured run uses seed 2. With one
# seed for both, db_bench's reader threads would replay its filler's key sequence and find every
# key (the runner's generator draws other keys and finds the expected ~63%), so the two tools would
# not do the same work.
COMMON=(--key_size=16 --value_size=100 --compression_type=snappy --compression_ratio=0.5
  --cache_size=8388608 --bloom_bits=10 --write_buffer_size=67108864)
[ "$HISTOGRAM" = 1 ] && COMMON+=(--histogram)
READFLAGS=(--reads="$READS" --use_existing_db=1 --seek_nexts=10 --benchmark_write_rate_limit="$WRITE_RATE")

WORK=()
RAWTMP=$(mktemp)
cleanup() { rm -rf "${WORK[@]}" "$RAWTMP"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# ops <benchmark>: the ops/sec of a db_bench-format result line.
ops() { sed -n 's/^'"$1"' *: *[0-9.]* micros\/op \([0-9]*\) ops\/sec.*/\1/p' | tail -1; }
run_tool() { # run_tool runner|db_bench <db> <flags...>
  local tool=$1 db=$2; shift 2
  if [ "$tool" = runner ] && [ "$A" != runner ]; then
    "${A#db_bench:}" --db="$db" "${COMMON[@]}" --seed=2 "$@" 2>/dev/null
  elif [ "$tool" = runner ]; then
    "$RUNNER" bench --engine=rocksdb --db="$db" "${COMMON[@]}" --seed=2 "$@" 2>/dev/null
  else
    "$DBBENCH" --db="$db" "${COMMON[@]}" --seed=2 "$@" 2>/dev/null
  fi
}

check_options() { # both tools create a DB in $1; their OPTIONS files must match
  local w=$1
  run_tool runner "$w/opt-runner" --benchmarks=fillrandom --num=1000 >/dev/null
  run_tool db_bench "$w/opt-dbbench" --benchmarks=fillrandom --num=1000 >/dev/null
  local filter='^#|listeners=|create_missing_column_families='${OPTIONS_IGNORE:+"|$OPTIONS_IGNORE"}
  if ! diff <(grep -Ev "$filter" "$w"/opt-runner/OPTIONS-* | sed 's/^ *//') \
            <(grep -Ev "$filter" "$w"/opt-dbbench/OPTIONS-* | sed 's/^ *//') >"$w/options.diff"; then
    echo "OPTIONS differ (< runner, > db_bench):" >&2; cat "$w/options.diff" >&2; exit 1
  fi
  rm -rf "$w/opt-runner" "$w/opt-dbbench"
}

echo "# $(date -u +%FT%TZ) $(nproc) CPUs ($(sed -n 's/^model name\t*: //p' /proc/cpuinfo | head -1)), $(uname -r)"
echo "# $LABEL_A: $([ "$A" = runner ] && echo "$RUNNER" || echo "${A#db_bench:}") $LABEL_B: $DBBENCH (LIB=$LIB; RocksDB $(dpkg-query -W -f '${Version}' librocksdb-dev 2>/dev/null || echo '?'))"
echo "# NUM=$NUM READS=$READS REPS=$REPS THREADS='$THREADS' WRITE_RATE=$WRITE_RATE HISTOGRAM=$HISTOGRAM"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for parent in $DIRS; do
  w=$(mktemp -d "$parent/kvb-vs.XXXXXX"); WORK+=("$w")
  check_options "$w"
  if [ -n "$(echo " $BENCHMARKS " | sed 's/ fillrandom / /g' | tr -d ' ')" ]; then # a read benchmark
    run_tool db_bench "$w/base" --benchmarks=fillrandom,waitforcompaction --num="$NUM" --seed=1 >/dev/null
  fi
  for rep in $(seq "$REPS"); do
    for t in $THREADS; do
      for b in $BENCHMARKS; do
        if [ $((rep % 2)) = 1 ]; then order="runner db_bench"; else order="db_bench runner"; fi
        for tool in $order; do
          rm -rf "$w/db"
          if [ "$b" = fillrandom ]; then
            r=$(run_tool "$tool" "$w/db" --benchmarks=fillrandom --threads="$t" --num=$((NUM / t)) | ops fillrandom)
          else
            cp -a "$w/base" "$w/db"
            r=$(run_tool "$tool" "$w/db" --benchmarks="$b" --threads="$t" --num="$NUM" "${READFLAGS[@]}" | ops "$b")
          fi
          echo "$parent $b $t $rep $tool ${r:-0} $(cut -d' ' -f1 /proc/loadavg)" >>"$RAWTMP"
        done
      done
    done
  done
  rm -rf "$w"
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
[ -n "${RAW:-}" ] && cp "$RAWTMP" "$RAW"

# Medians over the repetitions: of each tool's ops/sec and of the per-repetition ratio.
awk -v la="$LABEL_A" -v lb="$LABEL_B" -v benches="$BENCHMARKS" -v threads="$THREADS" -v dirs="$DIRS" '
function median(a, n,   i, j, x) {
  for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j > 0 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
  return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ v[$1, $2, $3, $4, $5] = $6; reps[$4] = 1 }
END {
  printf "%-9s %-17s %3s %10s %10s %7s %13s %3s\n", "dir", "benchmark", "thr", la, lb, "ratio", "ratio min-max", "n"
  nd = split(dirs, D, " "); nb = split(benches, B, " "); nt = split(threads, T, " ")
  for (di = 1; di <= nd; di++) for (ti = 1; ti <= nt; ti++) for (bi = 1; bi <= nb; bi++) {
    n = 0; lo = 1e9; hi = 0
    for (r in reps) {
      k1 = D[di] SUBSEP B[bi] SUBSEP T[ti] SUBSEP r
      if (!((k1 SUBSEP "runner") in v) || !((k1 SUBSEP "db_bench") in v)) continue
      x = v[k1, "runner"]; y = v[k1, "db_bench"]; if (y <= 0) continue
      n++; R[n] = x; Y[n] = y; Q[n] = x / y; if (Q[n] < lo) lo = Q[n]; if (Q[n] > hi) hi = Q[n]
    }
    if (n == 0) continue
    printf "%-9s %-17s %3s %10d %10d %7.3f %6.2f-%-6.2f %3d\n", D[di], B[bi], T[ti], median(R, n), median(Y, n), median(Q, n), lo, hi, n
  }
}' "$RAWTMP"
