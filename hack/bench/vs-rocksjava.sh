#!/usr/bin/env bash
# vs-rocksjava.sh: one RocksDB 7.8.3 through three doors, side by side: the RocksJava runner (JNI,
# rocksdbjni 7.8.3), kvbench-runner's rocksdb engine (cgo, Debian's librocksdb 7.8.3) and db_bench 7.8.3
# (C++), with the same flags on the same database, in rotating order, reporting the median ops/sec of
# each and the JNI cost per operation: (1/java - 1/db_bench) per thread, in ns.
#
# Usage: hack/bench/vs-rocksjava.sh [-h]
#   Settings come from the environment (defaults in brackets):
#     NUM=1000000        keys (--num); fillseq writes NUM keys on one thread
#     READS=300000       read operations per thread (--reads)
#     REPS=5             repetitions; repetition r starts with tool r mod 3
#     DIR=/dev/shm       parent directory (tmpfs: no device in the numbers); a fresh kvb-vsj.XXXXXX
#                        directory is made in it and removed at exit
#     CASES="fillseq:1 readrandom:1 readrandom:2 readwhilewriting:1"   benchmark:threads
#     WRITE_RATE=2097152 readwhilewriting writer, bytes/s (--benchmark_write_rate_limit)
#     VALUE_SIZE=100     --value_size (seed 003's shape: 800)
#     COMPRESSION=snappy --compression_type (none, snappy, lz4, zstd: rocksdbjni's bundled snappy is
#                        built unoptimized, its lz4 and zstd are not; docs/benchmarks.md)
#     RAW=file           also keep every single measurement there (case rep tool ops load1)
#     RUNNER=bin/kvbench-runner (built from ./cmd/kvbench-runner when it is the default)
#     LIB=release       the RocksDB the runner links and whose db_bench is the reference: release (the
#                        build of hack/engine-build.sh, as users build it) or debian (Debian's packages,
#                        assertions on: librocksdb-dev and /usr/bin/db_bench)
#     DBBENCH=           default: the db_bench of LIB's build
#     JAVA_OPTS=""       extra JVM flags for the RocksJava runner
#     MODE=ops           ops: the ops/sec table. cpu: CPU time per operation instead, which a loaded
#                        machine disturbs far less than wall time: each tool runs each read case with
#                        READS and 2*READS operations per thread, and (CPU(2R) - CPU(R)) / (R * threads)
#                        is its CPU ns per operation, start-up (the JVM's too), open and JIT excluded
#                        (whole-process user+system CPU, background threads included); fillseq likewise
#                        with NUM and 2*NUM keys from an empty database (its flushes included)
#
# Fairness: the three tools' OPTIONS files are compared first (sorted, so that the JNI's different
# order of sections does not count); the one known difference, RocksJava's block checksum (kCRC32c where
# the C++ tools write kXXH3, see docs/runner.md), is printed, any other aborts. Read benchmarks start every
# run from a copy of one database db_bench filled (fillrandom + waitforcompaction, seed 1); every measured
# run uses seed 2. The JVM's start and JIT warm-up are outside the phase's clock only as far as the
# runner's first operations are concerned: the phase timer includes the JIT compiling the loop.
set -euo pipefail
if [ "${1:-}" = -h ] || [ "${1:-}" = --help ]; then sed -n '2,/^[^#]/{/^#/{s/^# \{0,1\}//;p}}' "$0"; exit 0; fi
cd "$(dirname "$0")/../.."
NUM=${NUM:-1000000}
READS=${READS:-300000}
REPS=${REPS:-5}
DIR=${DIR:-/dev/shm}
CASES=${CASES:-fillseq:1 readrandom:1 readrandom:2 readwhilewriting:1}
WRITE_RATE=${WRITE_RATE:-2097152}
VALUE_SIZE=${VALUE_SIZE:-100}
COMPRESSION=${COMPRESSION:-snappy}
. hack/bench/lib.sh   # LIB -> DBBENCH, ENGINE_LDFLAGS_X
JAVA_OPTS=${JAVA_OPTS:-}
MODE=${MODE:-ops}
if [ -z "${RUNNER:-}" ]; then
  RUNNER=bin/kvbench-runner
  go build -ldflags "$ENGINE_LDFLAGS_X" -o "$RUNNER" ./cmd/kvbench-runner
fi
JAVACP=$(hack/rocksjava-runner.sh)
COMMON=(--key_size=16 --value_size="$VALUE_SIZE" --compression_type="$COMPRESSION" --compression_ratio=0.5
  --cache_size=8388608 --bloom_bits=10 --write_buffer_size=67108864)
READFLAGS=(--reads="$READS" --use_existing_db=1 --benchmark_write_rate_limit="$WRITE_RATE")
TOOLS=(rocksjava runner db_bench)

w=$(mktemp -d "$DIR/kvb-vsj.XXXXXX")
RAWTMP=$(mktemp)
trap 'rm -rf "$w" "$RAWTMP"' EXIT
trap 'exit 130' INT TERM

ops() { sed -n 's/^'"$1"' *: *[0-9.]* micros\/op \([0-9]*\) ops\/sec.*/\1/p' | tail -1; }
run_tool() { # run_tool rocksjava|runner|db_bench <db> <flags...>
  local tool=$1 db=$2; shift 2
  case $tool in
    # shellcheck disable=SC2086 # JAVA_OPTS is a list of flags
    rocksjava) java $JAVA_OPTS -cp "$JAVACP" io.kvbench.rocksjava.Main bench --db="$db" "${COMMON[@]}" --seed=2 "$@" 2>/dev/null ;;
    runner) "$RUNNER" bench --engine=rocksdb --db="$db" "${COMMON[@]}" --seed=2 "$@" 2>/dev/null ;;
    db_bench) "$DBBENCH" --db="$db" "${COMMON[@]}" --seed=2 "$@" 2>/dev/null ;;
  esac
}

# normalized OPTIONS: one setting per line, sorted (nested {a;b} settings split too).
norm_options() { grep -Ev '^#|listeners=|create_missing_column_families=' "$1"/OPTIONS-* | sed 's/^ *//' | tr ';{}' '\n\n\n' | grep . | sort; }
for tool in "${TOOLS[@]}"; do run_tool "$tool" "$w/opt-$tool" --benchmarks=fillrandom --num=1000 >/dev/null; done
for tool in rocksjava runner; do
  if ! diff <(norm_options "$w/opt-$tool") <(norm_options "$w/opt-db_bench") >"$w/options.diff"; then
    if [ "$tool" = rocksjava ] && [ "$(grep -c '^[<>]' "$w/options.diff")" = 2 ] &&
       grep -qx '< checksum=kCRC32c' "$w/options.diff" && grep -qx '> checksum=kXXH3' "$w/options.diff"; then
      echo "# OPTIONS: rocksjava's tables use checksum=kCRC32c, db_bench's and runner's kXXH3 (all else equal)"
    else
      echo "OPTIONS differ (< $tool, > db_bench):" >&2; cat "$w/options.diff" >&2; exit 1
    fi
  fi
done
rm -rf "$w"/opt-*

echo "# $(date -u +%FT%TZ) $(nproc) CPUs ($(sed -n 's/^model name\t*: //p' /proc/cpuinfo | head -1)), $(uname -r)"
echo "# $(java -version 2>&1 | sed -n 2p); db_bench $DBBENCH (LIB=$LIB); JAVA_OPTS='$JAVA_OPTS'"
echo "# NUM=$NUM READS=$READS REPS=$REPS DIR=$DIR CASES='$CASES' WRITE_RATE=$WRITE_RATE VALUE_SIZE=$VALUE_SIZE COMPRESSION=$COMPRESSION"
echo "# uptime before: $(uptime)"
run_tool db_bench "$w/base" --benchmarks=fillrandom,waitforcompaction --num="$NUM" --seed=1 >/dev/null
if [ "$MODE" = cpu ]; then
  cpu_of() { # cpu_of <tool> <benchmark> <threads> <n>: the process's user+system CPU seconds
    # for n reads per thread, or (fillseq) n keys written by the threads into an empty database
    rm -rf "$w/db"
    local TIMEFORMAT='%U %S' t
    if [ "$2" = fillseq ]; then
      t=$( { time run_tool "$1" "$w/db" --benchmarks=fillseq --threads="$3" --num=$(($4 / $3)) >/dev/null; } 2>&1 | tail -1)
    else
      cp -a "$w/base" "$w/db"
      t=$( { time run_tool "$1" "$w/db" --benchmarks="$2" --threads="$3" --num="$NUM" "${READFLAGS[@]/--reads=*/--reads=$4}" >/dev/null; } 2>&1 | tail -1)
    fi
    echo "$t" | awk '{print $1 + $2}'
  }
  for rep in $(seq "$REPS"); do
    for c in $CASES; do
      b=${c%:*} t=${c#*:}
      n=$READS per=$t # operations of the smaller run, and the divisor: per thread for reads, all keys for fillseq
      [ "$b" = fillseq ] && n=$NUM per=1
      for i in 0 1 2; do
        tool=${TOOLS[$(((rep + i) % 3))]}
        c1=$(cpu_of "$tool" "$b" "$t" "$n"); c2=$(cpu_of "$tool" "$b" "$t" $((2 * n)))
        echo "$c $rep $tool $(awk -v a="$c1" -v b="$c2" -v n="$n" -v t="$per" 'BEGIN{printf "%.0f", (b - a) * 1e9 / (n * t)}') $(cut -d' ' -f1 /proc/loadavg)" >>"$RAWTMP"
      done
    done
  done
  echo "# uptime after: $(uptime)"
  [ -n "${RAW:-}" ] && cp "$RAWTMP" "$RAW"
  awk -v cases="$CASES" '
  function median(a, n,   i, j, x) {
    for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j > 0 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  { v[$1, $3, ++n[$1, $3]] = $4 }
  END {
    printf "%-20s %14s %14s %14s %16s %3s\n", "CPU ns/op", "rocksjava", "runner", "db_bench", "java-dbb (JNI)", "n"
    nc = split(cases, C, " ")
    for (ci = 1; ci <= nc; ci++) {
      c = C[ci]; if (!((c, "db_bench") in n)) continue
      for (k = 1; k <= n[c, "rocksjava"]; k++) J[k] = v[c, "rocksjava", k]
      for (k = 1; k <= n[c, "runner"]; k++) R[k] = v[c, "runner", k]
      for (k = 1; k <= n[c, "db_bench"]; k++) D[k] = v[c, "db_bench", k]
      j = median(J, n[c, "rocksjava"]); r = median(R, n[c, "runner"]); d = median(D, n[c, "db_bench"])
      printf "%-20s %14d %14d %14d %16d %3d\n", c, j, r, d, j - d, n[c, "db_bench"]
    }
  }' "$RAWTMP"
  exit 0
fi
for rep in $(seq "$REPS"); do
  for c in $CASES; do
    b=${c%:*} t=${c#*:}
    for i in 0 1 2; do
      tool=${TOOLS[$(((rep + i) % 3))]}
      rm -rf "$w/db"
      if [ "$b" = fillseq ]; then
        r=$(run_tool "$tool" "$w/db" --benchmarks=fillseq --threads="$t" --num=$((NUM / t)) | ops fillseq)
      else
        cp -a "$w/base" "$w/db"
        r=$(run_tool "$tool" "$w/db" --benchmarks="$b" --threads="$t" --num="$NUM" "${READFLAGS[@]}" | ops "$b")
      fi
      echo "$c $rep $tool ${r:-0} $(cut -d' ' -f1 /proc/loadavg)" >>"$RAWTMP"
    done
  done
done
echo "# uptime after: $(uptime)"
[ -n "${RAW:-}" ] && cp "$RAWTMP" "$RAW"

awk -v cases="$CASES" '
function median(a, n,   i, j, x) {
  for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j > 0 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
  return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ v[$1, $3, ++n[$1, $3]] = $4 }
END {
  printf "%-20s %10s %10s %10s %10s %10s %14s %3s\n", "benchmark:threads", "rocksjava", "runner", "db_bench", "java/dbb", "runner/dbb", "JNI ns/op/thr", "n"
  nc = split(cases, C, " ")
  for (ci = 1; ci <= nc; ci++) {
    c = C[ci]; split(c, bt, ":")
    for (k = 1; k <= n[c, "rocksjava"]; k++) J[k] = v[c, "rocksjava", k]
    for (k = 1; k <= n[c, "runner"]; k++) R[k] = v[c, "runner", k]
    for (k = 1; k <= n[c, "db_bench"]; k++) D[k] = v[c, "db_bench", k]
    j = median(J, n[c, "rocksjava"]); r = median(R, n[c, "runner"]); d = median(D, n[c, "db_bench"])
    jni = (j > 0 && d > 0) ? (1e9 / j - 1e9 / d) * bt[2] : 0
    printf "%-20s %10d %10d %10d %10.3f %10.3f %14.0f %3d\n", c, j, r, d, d ? j / d : 0, d ? r / d : 0, jni, n[c, "db_bench"]
  }
}' "$RAWTMP"
