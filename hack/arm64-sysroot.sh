#!/usr/bin/env bash
# arm64-sysroot.sh: Debian's arm64 libraries for the arm64 runner image, without touching the host's packages.
#
# librocksdb-dev:arm64 cannot be installed beside the amd64 one (apt would remove the amd64 package), so this
# keeps a private apt state (APT::Architecture=arm64, the host's sources and keys, an empty dpkg status) under
# $KVBENCH_CACHE/apt-arm64, `apt-get download`s the packages below (apt checks their SHA256 against the signed
# index) and unpacks them with `dpkg-deb -x` into $KVBENCH_CACHE/arm64-sysroot-<key>, where <key> is a hash of
# the exact .deb file names (package_version_arch) and their SHA256s. Prints that directory.
#
#   static link (hack/build-images.sh): librocksdb-dev libleveldb-dev and the compression libraries' -dev
#   db_bench in the image: rocksdb-tools and the shared libraries it needs, loader included (libc6)
#
# The engine packages are pinned to the versions installed on the host (amd64), so both architectures of the
# image carry the same RocksDB and LevelDB; a mismatch is an error. REFRESH=1 re-reads the package index.
set -euo pipefail
CACHE=${KVBENCH_CACHE:-$HOME/.cache/kvbench}
APT=$CACHE/apt-arm64
log() { echo "arm64-sysroot: $*" >&2; }

STATIC=(libsnappy-dev liblz4-dev libzstd-dev zlib1g-dev libbz2-dev libgflags-dev)
RUNTIME=(libsnappy1v5 liblz4-1 libzstd1 zlib1g libbz2-1.0 libgflags2.2 libstdc++6 libgcc-s1 libc6)

aptopts=(-o "Dir::State=$APT/state" -o "Dir::State::status=$APT/state/status" -o "Dir::Cache=$APT/cache"
  -o APT::Architecture=arm64 -o APT::Architectures::=arm64 -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
mkdir -p "$APT/state/lists/partial" "$APT/cache/archives/partial"
touch "$APT/state/status"
if [ "${REFRESH:-0}" = 1 ] || ! ls "$APT"/state/lists/*_Packages* >/dev/null 2>&1; then
  log "reading Debian's arm64 package index into $APT"
  apt-get "${aptopts[@]}" -qq update >&2
fi

hostver() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || { log "$1 is not installed on the host; run make deps"; exit 1; }; }
rocks=$(hostver librocksdb-dev) level=$(hostver libleveldb-dev)
wanted=("librocksdb-dev=$rocks" "librocksdb7.8=$rocks" "rocksdb-tools=$(hostver rocksdb-tools)"
  "libleveldb-dev=$level" "libleveldb1d=$level")
wanted+=("${STATIC[@]}" "${RUNTIME[@]}")

# 'URI' file size SHA256:... per package: the key, and what apt-get download fetches and checks
if ! uris=$(apt-get "${aptopts[@]}" download --print-uris "${wanted[@]}" 2>&1); then
  log "apt-get download --print-uris failed (REFRESH=1 re-reads the index):"; echo "$uris" >&2; exit 1
fi
key=$(echo "$uris" | awk '{print $2, $4}' | sort | sha256sum | cut -c1-16)
ROOT=$CACHE/arm64-sysroot-$key
if [ -f "$ROOT/.complete" ]; then echo "$ROOT"; exit 0; fi

t=$(date +%s)
rm -rf "$ROOT" "$ROOT.debs"; mkdir -p "$ROOT.debs"
(cd "$ROOT.debs" && apt-get "${aptopts[@]}" -qq download "${wanted[@]}" >&2)
mkdir -p "$ROOT"
for d in "$ROOT.debs"/*.deb; do dpkg-deb -x "$d" "$ROOT"; done
echo "$uris" | awk '{print $2}' | sort >"$ROOT/.debs"
rm -rf "$ROOT.debs"
touch "$ROOT/.complete"
log "unpacked $(wc -l <"$ROOT/.debs") arm64 packages into $ROOT in $(( $(date +%s) - t ))s"
echo "$ROOT"
