#!/usr/bin/env bash
# engine-build.sh: RocksDB and LevelDB as their users build them, for the runner images, `make runner` and the
# reference db_bench. Debian's librocksdb-dev and libleveldb-dev are compiled without NDEBUG (assertions on:
# Debian's db_bench says "Assertions are enabled; benchmarks unnecessarily slow"); this builds the same versions
# from Debian's source packages (Debian's patches applied) in their projects' own release modes:
#
#   RocksDB  make DEBUG_LEVEL=0 PORTABLE=1 USE_RTTI=1 static_lib db_bench: RocksDB's Makefile release mode
#            (-O2 -DNDEBUG, -fno-omit-frame-pointer), what its INSTALL.md tells users to build; PORTABLE=1 so the
#            library runs on any CPU of the architecture (as Debian's does), USE_RTTI=1 as Debian's (grocksdb
#            needs nothing else). The optional libraries Debian's build does not use are switched off
#            (jemalloc, tcmalloc, liburing, numa, TBB, memkind), so compression (snappy, lz4, zstd, zlib, bz2)
#            and gflags (db_bench) are the only ones, as in Debian's.
#   LevelDB  cmake -DCMAKE_BUILD_TYPE=Release (-O3 -DNDEBUG), static, snappy: LevelDB's README's build.
#
#   hack/engine-build.sh [ARCH]        build once (cached), print the directory:
#       include/{rocksdb,leveldb}  lib/librocksdb.a lib/libleveldb.a  bin/db_bench (dynamic: gflags, compression)
#       build.json  what the runner records as provenance.libraryBuilds (source package, flags, compiler,
#                   assertions as counted in the archive, SHA256 of each archive)
#   hack/engine-build.sh env [ARCH]    the CGO_CFLAGS/CGO_CXXFLAGS/CGO_LDFLAGS and -ldflags -X for a go build that
#                                      links these libraries (eval "$(hack/engine-build.sh env)")
#
# ARCH: amd64 (default: this machine's) or arm64 (cross-compiled with gcc-aarch64-linux-gnu against the arm64
# sysroot of hack/arm64-sysroot.sh). The sources come through a private apt state with deb-src lines made from
# the host's own sources (the host's apt configuration is not touched), pinned to the versions of
# librocksdb-dev and libleveldb-dev installed on the host. Cached under $KVBENCH_CACHE/engines/ by those
# versions, the flags and the compiler: a cold build takes about 9-10 min per architecture on 2 cores (RocksDB
# 545-570 s, LevelDB 8-9 s; the archives are stored without debug info: 36 MB per architecture).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${KVBENCH_CACHE:-$HOME/.cache/kvbench}
log() { echo "engine-build: $*" >&2; }
mode=build
if [ "${1:-}" = env ]; then mode=env; shift; fi
HOSTARCH=$(dpkg --print-architecture)
ARCH=${1:-$HOSTARCH}

ROCKSDB_MAKE=(DEBUG_LEVEL=0 PORTABLE=1 USE_RTTI=1)
ROCKSDB_OFF=(ROCKSDB_DISABLE_JEMALLOC=1 ROCKSDB_DISABLE_TCMALLOC=1 ROCKSDB_DISABLE_URING=1 ROCKSDB_DISABLE_NUMA=1
  ROCKSDB_DISABLE_TBB=1 ROCKSDB_DISABLE_MEMKIND=1 ROCKSDB_DISABLE_BENCHMARK=1)
LEVELDB_CMAKE=(-DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DLEVELDB_BUILD_TESTS=OFF -DLEVELDB_BUILD_BENCHMARKS=OFF
  -DLEVELDB_INSTALL=OFF)

case $ARCH in
  "$HOSTARCH") CC=gcc CXX=g++ AR=ar NM=nm STRIP=strip TRIPLET=$(gcc -dumpmachine) SYSROOT="" ;;
  arm64) CC=aarch64-linux-gnu-gcc CXX=aarch64-linux-gnu-g++ AR=aarch64-linux-gnu-ar NM=aarch64-linux-gnu-nm STRIP=aarch64-linux-gnu-strip TRIPLET=aarch64-linux-gnu
    SYSROOT=$("$HERE/arm64-sysroot.sh") ;;
  *) log "no C cross-compiler for $ARCH"; exit 2 ;;
esac
hostver() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || { log "$1 is not installed; run make deps"; exit 1; }; }
ROCKS_DEB=$(hostver librocksdb-dev) LEVEL_DEB=$(hostver libleveldb-dev)
COMPILER=$($CXX --version | head -1)
key=$(printf '%s\n' "rocksdb=$ROCKS_DEB" "leveldb=$LEVEL_DEB" "$ARCH" "$COMPILER" "${ROCKSDB_MAKE[*]}" "${ROCKSDB_OFF[*]}" \
  "${LEVELDB_CMAKE[*]}" "${SYSROOT##*/}" | sha256sum | cut -c1-12)
OUT=$CACHE/engines/$ARCH-rocksdb-${ROCKS_DEB%%-*}-leveldb-${LEVEL_DEB%%-*}-$key

if [ "$mode" = env ]; then
  [ -f "$OUT/.complete" ] || "$0" "$ARCH" >/dev/null
  libs="-L$OUT/lib -lrocksdb -lleveldb"
  [ -z "$SYSROOT" ] || libs="$libs -L$SYSROOT/usr/lib/$TRIPLET"
  inc="-I$OUT/include"
  [ -z "$SYSROOT" ] || inc="$inc -I$SYSROOT/usr/include"
  printf 'export CGO_CFLAGS=%q CGO_CXXFLAGS=%q CGO_LDFLAGS=%q ENGINE_LDFLAGS_X=%q ENGINE_DIR=%q\n' "-O2 -g $inc" "-O2 -g $inc" \
    "$libs -lsnappy -llz4 -lzstd -lz -lbz2 -lgflags -lstdc++ -lm -lpthread -ldl" \
    "-X github.com/kvbench/kvbench-operator/runner/engine.linkedBuilds=$(base64 -w0 "$OUT/build.json")" "$OUT"
  exit 0
fi
if [ -f "$OUT/.complete" ]; then echo "$OUT"; exit 0; fi

# The sources: apt-get source through a private state whose only lists are deb-src twins of the host's deb lines.
APT=$CACHE/apt-src
mkdir -p "$APT/state/lists/partial" "$APT/cache/archives/partial" "$APT/sources.list.d" "$CACHE/engines/src"
touch "$APT/state/status"
{ [ ! -f /etc/apt/sources.list ] || sed -n 's/^deb \(.*\)/deb-src \1/p' /etc/apt/sources.list; } >"$APT/sources.list"
for f in /etc/apt/sources.list.d/*.sources; do [ -f "$f" ] && sed 's/^Types: *deb$/Types: deb-src/' "$f" >"$APT/sources.list.d/${f##*/}"; done
aptopts=(-o "Dir::State=$APT/state" -o "Dir::State::status=$APT/state/status" -o "Dir::Cache=$APT/cache"
  -o "Dir::Etc::sourcelist=$APT/sources.list" -o "Dir::Etc::sourceparts=$APT/sources.list.d" -o Debug::NoLocking=1
  -o APT::Sandbox::User=root)
SRC=$CACHE/engines/src
if [ ! -f "$SRC/rocksdb_$ROCKS_DEB.dsc" ] || [ ! -f "$SRC/leveldb_$LEVEL_DEB.dsc" ]; then
  log "fetching Debian's source packages rocksdb $ROCKS_DEB and leveldb $LEVEL_DEB"
  apt-get "${aptopts[@]}" -qq update >&2
  (cd "$SRC" && apt-get "${aptopts[@]}" -qq source --download-only "rocksdb=$ROCKS_DEB" "leveldb=$LEVEL_DEB" >&2)
fi

t0=$(date +%s)
WORK=$OUT.work
rm -rf "$OUT" "$WORK"; mkdir -p "$WORK" "$OUT/lib" "$OUT/include" "$OUT/bin"
# dpkg-source applies Debian's patches; --no-check: apt already checked every file against the signed index
dpkg-source -q -x --no-check "$SRC/rocksdb_$ROCKS_DEB.dsc" "$WORK/rocksdb" >&2
dpkg-source -q -x --no-check "$SRC/leveldb_$LEVEL_DEB.dsc" "$WORK/leveldb" >&2
jobs=$(nproc)

# Cross builds find the arm64 headers through CPATH (RocksDB's platform detection compiles probes with $CXX alone)
# and the libraries db_bench links through -L and -rpath-link.
crossenv=()
cross_ld=""
if [ -n "$SYSROOT" ]; then
  crossenv=(CPATH="$SYSROOT/usr/include" TARGET_ARCHITECTURE=aarch64)
  cross_ld="-L$SYSROOT/usr/lib/$TRIPLET -Wl,-rpath-link=$SYSROOT/usr/lib/$TRIPLET"
fi
log "$ARCH: building RocksDB $ROCKS_DEB (make ${ROCKSDB_MAKE[*]} static_lib db_bench, $jobs jobs)"
t=$(date +%s)
(cd "$WORK/rocksdb" && env "${ROCKSDB_OFF[@]}" "${crossenv[@]}" nice -n 19 make -j"$jobs" CC="$CC" CXX="$CXX" AR="$AR" \
  ${SYSROOT:+MACHINE=aarch64} EXTRA_LDFLAGS="$cross_ld" "${ROCKSDB_MAKE[@]}" V=1 static_lib db_bench >"$WORK/rocksdb.log" 2>&1) ||
  { tail -30 "$WORK/rocksdb.log" >&2; log "RocksDB build failed (log: $WORK/rocksdb.log)"; exit 1; }
rocks_secs=$(( $(date +%s) - t ))
# debug info off the archive (870 MB -> about 60) and db_bench (240 MB): the runner is linked -s -w anyway
$STRIP --strip-debug -o "$OUT/lib/librocksdb.a" "$WORK/rocksdb/librocksdb.a" && cp -r "$WORK/rocksdb/include/rocksdb" "$OUT/include/"
$STRIP -o "$OUT/bin/db_bench" "$WORK/rocksdb/db_bench"
# the code-generation flags of one library object's compile line (V=1 prints them)
rocks_flags=$(grep -m1 -- ' -c cache/cache.cc' "$WORK/rocksdb.log" | tr ' ' '\n' |
  grep -E '^-(O|DNDEBUG|march|mtune|mcpu|f(no-)?omit|g$|std=)' | tr '\n' ' ')

log "$ARCH: building LevelDB $LEVEL_DEB (cmake ${LEVELDB_CMAKE[*]})"
t=$(date +%s)
ldcross=()
[ -z "$SYSROOT" ] || ldcross=(-DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR=aarch64 -DCMAKE_C_COMPILER="$CC"
  -DCMAKE_CXX_COMPILER="$CXX" "-DCMAKE_CXX_FLAGS=-I$SYSROOT/usr/include" "-DCMAKE_C_FLAGS=-I$SYSROOT/usr/include"
  "-DCMAKE_EXE_LINKER_FLAGS=$cross_ld")
(cd "$WORK/leveldb" && nice -n 19 cmake -S . -B build "${LEVELDB_CMAKE[@]}" "${ldcross[@]}" >"$WORK/leveldb.log" 2>&1 &&
  nice -n 19 cmake --build build -j "$jobs" --target leveldb -- VERBOSE=1 >>"$WORK/leveldb.log" 2>&1) ||
  { tail -30 "$WORK/leveldb.log" >&2; log "LevelDB build failed (log: $WORK/leveldb.log)"; exit 1; }
level_secs=$(( $(date +%s) - t ))
grep -q 'define HAVE_SNAPPY 1' "$WORK/leveldb/build/include/port/port_config.h" || { log "LevelDB was built without snappy"; exit 1; }
$STRIP --strip-debug -o "$OUT/lib/libleveldb.a" "$WORK/leveldb/build/libleveldb.a" && cp -r "$WORK/leveldb/include/leveldb" "$OUT/include/"
level_flags=$(sed -n 's/^CMAKE_CXX_FLAGS_RELEASE:STRING=//p' "$WORK/leveldb/build/CMakeCache.txt")

# Assertions as the archive shows them: its objects that call __assert_fail (glibc's assert()).
asserts() { $NM -A "$1" 2>/dev/null | grep -c ' U __assert_fail$' || true; }
digest() { echo "sha256:$(sha256sum "$1" | cut -d' ' -f1)"; }
onoff() { if [ "$1" -gt 0 ]; then echo on; else echo off; fi; }
ra=$(asserts "$OUT/lib/librocksdb.a") la=$(asserts "$OUT/lib/libleveldb.a")
js() { local v=${1//\\/\\\\}; printf '"%s"' "${v//\"/\\\"}"; } # a JSON string
build() { # build VERSION SOURCE ASSERT_CALLS FLAGS ARCHIVE: one library's entry
  printf '{"version": %s, "source": %s, "assertions": "%s", "assertCalls": %d, "compiler": %s, "flags": %s, "digest": "%s"}' \
    "$(js "$1")" "$(js "$2")" "$(onoff "$3")" "$3" "$(js "$COMPILER")" "$(js "$4")" "$(digest "$5")"
}
printf '{\n "leveldb": %s,\n "rocksdb": %s\n}\n' \
  "$(build "${LEVEL_DEB%%-*}" "release build of Debian source package leveldb $LEVEL_DEB ($ARCH)" "$la" \
    "cmake ${LEVELDB_CMAKE[*]}: CMAKE_CXX_FLAGS_RELEASE=$level_flags" "$OUT/lib/libleveldb.a")" \
  "$(build "${ROCKS_DEB%%-*}" "release build of Debian source package rocksdb $ROCKS_DEB ($ARCH)" "$ra" \
    "make ${ROCKSDB_MAKE[*]} static_lib: ${rocks_flags% }" "$OUT/lib/librocksdb.a")" >"$OUT/build.json"
[ "$ra" = 0 ] && [ "$la" = 0 ] || { log "assertions left in the release archives (rocksdb $ra, leveldb $la objects)"; exit 1; }
echo "RocksDB ${rocks_secs}s, LevelDB ${level_secs}s" >"$OUT/build-time"
rm -rf "$WORK"
touch "$OUT/.complete"
log "$ARCH: RocksDB and LevelDB release builds in $OUT ($(cat "$OUT/build-time"), $(( $(date +%s) - t0 ))s in all)"
echo "$OUT"
