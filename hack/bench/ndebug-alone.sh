#!/usr/bin/env bash
# ndebug-alone.sh: how much of the release build's lead over Debian's RocksDB is NDEBUG alone. Builds Debian's
# own configuration of RocksDB (debian/rules' dh_auto_configure: CMake, build type None, dpkg-buildflags' -g -O2
# -fstack-protector-strong -D_FORTIFY_SOURCE=2, a shared -fPIC library) with one change, -DNDEBUG appended to
# CFLAGS and CXXFLAGS, and its db_bench; then, with vs-dbbench.sh's workloads, flags and alternation:
#
#   1. Debian's /usr/bin/db_bench  vs  Debian's build + NDEBUG     (what the assertions cost)
#   2. Debian's build + NDEBUG     vs  the release build's db_bench (what the rest of Debian's build costs:
#                                      shared -fPIC, CMake flags, hardening; hack/engine-build.sh's build)
#
#   hack/bench/ndebug-alone.sh          (settings as hack/bench/vs-dbbench.sh: NUM, READS, REPS, DIRS, THREADS, ...)
#   STEPS="1 2" (default), BUILD_ONLY=1 (build, print the db_bench wrapper's path)
#
# A measurement aid, not part of make test: it installs debhelper (for dh_auto_configure) and builds RocksDB once
# more (about 10 min on 2 cores), cached under $KVBENCH_CACHE/engines/debian-ndebug-*.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd); ROOT=$(cd "$HERE/../.." && pwd)
CACHE=${KVBENCH_CACHE:-$HOME/.cache/kvbench}
log() { echo "ndebug-alone: $*" >&2; }
cd "$ROOT"
dpkg-query -W -f='${Status}' debhelper 2>/dev/null | grep -q "install ok installed" ||
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debhelper >/dev/null; }
release=$(hack/engine-build.sh)   # also fetches Debian's source package into $CACHE/engines/src
ROCKS_DEB=$(dpkg-query -W -f='${Version}' librocksdb-dev)
key=$(printf '%s\n' "$ROCKS_DEB" "$(g++ --version | head -1)" "$(sha256sum "$0")" | sha256sum | cut -c1-12)
OUT=$CACHE/engines/debian-ndebug-rocksdb-${ROCKS_DEB%%-*}-$key
if [ ! -f "$OUT/.complete" ]; then
  rm -rf "$OUT"; mkdir -p "$OUT/bin" "$OUT/lib"
  WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
  dpkg-source -q -x --no-check "$CACHE/engines/src/rocksdb_$ROCKS_DEB.dsc" "$WORK/rocksdb" >&2
  t=$(date +%s)
  log "configuring as debian/rules does, plus -DNDEBUG"
  (cd "$WORK/rocksdb" && DEB_CFLAGS_MAINT_APPEND=-DNDEBUG DEB_CXXFLAGS_MAINT_APPEND=-DNDEBUG \
    debian/rules override_dh_auto_configure >"$WORK/configure.log" 2>&1) || { tail -30 "$WORK/configure.log" >&2; exit 1; }
  build=$(find "$WORK/rocksdb" -maxdepth 1 -name 'obj-*' -type d)
  log "building db_bench and librocksdb.so ($(nproc) jobs; about 10 min)"
  nice -n 19 cmake --build "$build" -j "$(nproc)" --target db_bench -- VERBOSE=1 >"$WORK/build.log" 2>&1 ||
    { tail -30 "$WORK/build.log" >&2; exit 1; }
  grep -m1 -- '-c .*cache/cache.cc' "$WORK/build.log" | tr ' ' '\n' | grep -E '^-(O|DNDEBUG|D_FORTIFY|f|g$|std=)' |
    tr '\n' ' ' >"$OUT/flags"
  grep -q -- '-DNDEBUG' "$OUT/flags" || { log "the compile lines lack -DNDEBUG: $(cat "$OUT/flags")"; exit 1; }
  strip -o "$OUT/bin/db_bench" "$build/db_bench"
  for so in "$build"/librocksdb.so*; do
    if [ -L "$so" ]; then cp -P "$so" "$OUT/lib/"; else strip --strip-debug -o "$OUT/lib/${so##*/}" "$so"; fi
  done
  # Debian's no_rpath.patch: its tools find the library through the system path, this one through the wrapper
  printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s "$@"\n' "$OUT/lib" "$OUT/bin/db_bench" >"$OUT/db_bench"
  chmod +x "$OUT/db_bench"
  echo "$(( $(date +%s) - t ))" >"$OUT/build-seconds"
  touch "$OUT/.complete"
  log "built in $(cat "$OUT/build-seconds")s: $OUT (flags: $(cat "$OUT/flags"))"
fi
probe=$(mktemp -d)
"$OUT/db_bench" --benchmarks=fillseq --num=10 --db="$probe/db" >"$probe/out" 2>&1 || { cat "$probe/out" >&2; exit 1; }
! grep -q 'Assertions are enabled' "$probe/out" || { log "$OUT/db_bench still has assertions"; exit 1; }
rm -rf "$probe"
[ "${BUILD_ONLY:-0}" = 1 ] && { echo "$OUT/db_bench"; exit 0; }
for step in ${STEPS:-1 2}; do
  case $step in
    1) echo "== 1. Debian's db_bench vs Debian's build + NDEBUG (ratio debian/ndebug)"
       OPTIONS_IGNORE=info_log_level= A=db_bench:/usr/bin/db_bench DBBENCH="$OUT/db_bench" LABEL_A=debian \
         LABEL_B=ndebug LIB=release hack/bench/vs-dbbench.sh ;;
    2) echo "== 2. Debian's build + NDEBUG vs the release build (ratio ndebug/release)"
       A=db_bench:"$OUT/db_bench" DBBENCH="$release/bin/db_bench" LABEL_A=ndebug LABEL_B=release LIB=release \
         hack/bench/vs-dbbench.sh ;;
  esac
done
