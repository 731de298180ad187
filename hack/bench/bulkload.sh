#!/usr/bin/env bash
# bulkload.sh: how long preparing a dataset takes, on one disk directory, four ways:
#   bulk        kvbench-runner --load=bulk: sorted SST files written by one worker per core,
#               then ingested (moved) into the bottom level
#   load-fill   kvbench-runner --load=fillrandom: every key once in random order, batches of 1000
#   fillrandom  kvbench-runner --benchmarks=fillrandom --num=N: db_bench's fillrandom (one write
#               per operation, random keys with repeats, 1 thread), the usual way to fill a DB
#   dd          the same number of raw bytes (N * (key+value)) written sequentially with dd,
#               buffered and fsync'd at the end (conv=fsync), from a pre-made random file in /dev/shm
# Each time is the wall clock of the whole command (open, load, flush, close); the table also
# shows the load phase's own seconds as the runner reports it and the bytes left on disk.
#
# Usage: hack/bench/bulkload.sh [-h]
#   DIR=/var/tmp   parent directory on the disk under test (a kvb-bulk.XXXXXX dir is made and removed)
#   SIZE=1Gi       dataset size (--dataset_size); N = SIZE / (16 + 100) keys
#   RUNNER=bin/kvbench-runner (built from ./cmd/kvbench-runner when it is the default)
#   SKIP="..."     space-separated steps to skip (bulk load-fill fillrandom dd)
set -euo pipefail
if [ "${1:-}" = -h ] || [ "${1:-}" = --help ]; then sed -n '2,/^$/{s/^# \{0,1\}//;p}' "$0"; exit 0; fi
cd "$(dirname "$0")/../.."
DIR=${DIR:-/var/tmp}
SIZE=${SIZE:-1Gi}
SKIP=${SKIP:-}
if [ -z "${RUNNER:-}" ]; then
  RUNNER=bin/kvbench-runner
  make -s runner
fi
w=$(mktemp -d "$DIR/kvb-bulk.XXXXXX")
src=""
cleanup() { rm -rf "$w" ${src:+"$src"}; }
trap cleanup EXIT
trap 'exit 130' INT TERM

FLAGS=(--engine=rocksdb --key_size=16 --value_size=100 --compression_type=snappy --compression_ratio=0.5
  --cache_size=8388608 --bloom_bits=10 --write_buffer_size=67108864 --seed=1)
# N as the runner computes it from --dataset_size (Engine/Entries header line).
N=$("$RUNNER" bench "${FLAGS[@]}" --db="$w/probe" --dataset_size="$SIZE" --load=none --benchmarks=readseq \
  --reads=1 2>/dev/null | sed -n 's/^Entries: *//p')
rm -rf "$w/probe"
BYTES=$((N * 116))

now() { date +%s.%N; }
row() { printf "%-11s %9.1f %10s %9s  %s\n" "$@"; }
secs() { sed -n 's/^'"$1"' *: .* ops\/sec \([0-9.]*\) seconds.*/\1/p' | tail -1; }
skip() { case " $SKIP " in *" $1 "*) return 0 ;; esac; return 1; }

echo "# $(date -u +%FT%TZ) $(nproc) CPUs, dir $DIR ($(df -P "$DIR" | awk 'NR==2{print $1}')), SIZE=$SIZE: N=$N keys, $BYTES raw bytes"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-11s %9s %10s %9s  %s\n" step wall_s phase_s disk_MiB note
if ! skip bulk; then
  sync; t0=$(now)
  out=$("$RUNNER" bench "${FLAGS[@]}" --db="$w/db" --dataset_size="$SIZE" --load=bulk --benchmarks=readseq --reads=1 2>/dev/null)
  t1=$(now)
  row bulk "$(echo "$t1 - $t0" | bc)" "$(echo "$out" | secs load)" "$(du -sm "$w/db" | cut -f1)" "SST write + ingest"
  rm -rf "$w/db"
fi
if ! skip load-fill; then
  sync; t0=$(now)
  out=$("$RUNNER" bench "${FLAGS[@]}" --db="$w/db" --dataset_size="$SIZE" --load=fillrandom --benchmarks=readseq --reads=1 2>/dev/null)
  t1=$(now)
  row load-fill "$(echo "$t1 - $t0" | bc)" "$(echo "$out" | secs load)" "$(du -sm "$w/db" | cut -f1)" "each key once, batches of 1000, + flush"
  rm -rf "$w/db"
fi
if ! skip fillrandom; then
  sync; t0=$(now)
  out=$("$RUNNER" bench "${FLAGS[@]}" --db="$w/db" --num="$N" --benchmarks=fillrandom 2>/dev/null)
  t1=$(now)
  row fillrandom "$(echo "$t1 - $t0" | bc)" "$(echo "$out" | secs fillrandom)" "$(du -sm "$w/db" | cut -f1)" "db_bench fillrandom, 1 thread"
  rm -rf "$w/db"
fi
if ! skip dd; then
  src=$(mktemp /dev/shm/kvb-bulk-src.XXXXXX)
  head -c "$BYTES" /dev/urandom >"$src"
  sync; t0=$(now)
  dd if="$src" of="$w/dd" bs=1M conv=fsync status=none
  t1=$(now)
  row dd "$(echo "$t1 - $t0" | bc)" - "$(du -sm "$w/dd" | cut -f1)" "sequential write + fsync"
fi
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
