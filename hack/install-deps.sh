#!/usr/bin/env bash
# install-deps.sh: the Debian packages the build and tests need. Idempotent: apt runs only when a
# package is missing, so a second run takes well under a second.
set -euo pipefail
PKGS=(
  librocksdb-dev libleveldb-dev rocksdb-tools   # engines (cgo; assertions on) and db_bench 7.8.3: the unit tier's
  dpkg-dev cmake libgflags-dev                   # hack/engine-build.sh: the same versions from Debian's sources in
                                                 # release mode (dpkg-source, LevelDB's cmake, db_bench's gflags)
  libsnappy-dev liblz4-dev libzstd-dev zlib1g-dev libbz2-dev  # RocksDB's compression libs (static link)
  gcc-aarch64-linux-gnu g++-aarch64-linux-gnu    # the arm64 runner (cgo, static; hack/build-images.sh)
  qemu-user-static                               # runs the arm64 image's programs in make test-arm64 (qemu is
                                                 # called directly with -L: no binfmt_misc registration needed),
                                                 # and both Java runner images (make test-arm64)
  etcd-server                                    # fallback etcd for envtest
  openjdk-17-jdk-headless maven                  # YCSB core (Maven Central), the runner's YCSB reference (hack/ycsb-ref.sh),
                                                 # the Java runner (runner/java); its image's JDK is downloaded
                                                 # separately by hack/java-jre.sh (jlink needs one exact version)
  build-essential pkg-config curl ca-certificates git util-linux python3 python3-yaml
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-deps: installing ${missing[*]}" >&2
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
