#!/usr/bin/env bash
# java-jre.sh ARCH: a minimal Java runtime for the Java runner's image (runner/java), made by jlink from Debian's
# OpenJDK 17 jmods, for linux ARCH (amd64 or arm64). Prints its directory.
#
# jlink must be of the jmods' exact version, so the JDK is not the host's (which may lag Debian's index): this
# downloads openjdk-17-jre-headless and openjdk-17-jdk-headless for amd64 (jlink itself, amd64's jmods) and
# openjdk-17-jdk-headless for arm64 (its jmods), all of one version JDK_VERSION (default: the candidate in the
# host's apt index), with apt-get download (apt checks each .deb's SHA256 against the signed index; arm64's through
# hack/arm64-sysroot.sh's private apt state) and unpacks them into $KVBENCH_CACHE/jdk/<version>/<arch>, never
# installing them. Modules: what the runner uses (jdeps: java.base; java.management and jdk.management for the
# per-thread allocation counter; jdk.httpserver for --metrics-addr); Java debug attributes stripped (native code
# is stripped by Debian already; the host objcopy cannot read arm64 anyway);
# Jackson's optional java.sql/java.desktop are left out.
#
# Cached in $KVBENCH_CACHE/jre/<jdk version>-<arch>-<hash of the modules and this script>.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ARCH=${1:?usage: java-jre.sh amd64|arm64}
CACHE=${KVBENCH_CACHE:-$HOME/.cache/kvbench}
MODULES=java.base,java.management,jdk.management,jdk.httpserver
log() { echo "java-jre: $*" >&2; }

case $ARCH in amd64 | arm64) ;; *) log "no jmods for $ARCH"; exit 2 ;; esac
[ "$(dpkg --print-architecture)" = amd64 ] || { log "the JDK's jlink is taken for amd64: build on an amd64 machine"; exit 2; }
V=${JDK_VERSION:-$(apt-cache policy openjdk-17-jdk-headless | sed -n 's/^ *Candidate: //p')}
[ -n "$V" ] && [ "$V" != "(none)" ] || { log "no openjdk-17-jdk-headless in the apt index: apt-get update"; exit 1; }
key=$(echo "$MODULES $(sha256sum "$0" | cut -c1-64)" | sha256sum | cut -c1-12)
out=$CACHE/jre/$V-$ARCH-$key
if [ -f "$out/.complete" ]; then echo "$out"; exit 0; fi

# unpack ARCH PKG...: the packages of version V, unpacked into $CACHE/jdk/V/ARCH; prints that directory
unpack() {
  local arch=$1 dir=$CACHE/jdk/$V/$1 opts=() pkgs=()
  shift
  if [ ! -f "$dir/.complete" ]; then
    if [ "$arch" = arm64 ]; then
      "$HERE/arm64-sysroot.sh" >/dev/null # the private apt state and its arm64 package index
      opts=(-o "Dir::State=$CACHE/apt-arm64/state" -o "Dir::State::status=$CACHE/apt-arm64/state/status"
        -o "Dir::Cache=$CACHE/apt-arm64/cache" -o APT::Architecture=arm64 -o APT::Architectures::=arm64
        -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
    fi
    for p in "$@"; do pkgs+=("$p:$arch=$V"); done
    rm -rf "$dir" "$dir.deb"; mkdir -p "$dir.deb"
    log "downloading ${pkgs[*]}"
    (cd "$dir.deb" && apt-get "${opts[@]}" -qq -o APT::Sandbox::User=root download "${pkgs[@]}" >&2) || {
      log "Debian's $arch index has no ${pkgs[*]}: apt-get update (REFRESH=1 hack/arm64-sysroot.sh for arm64), or set JDK_VERSION"; exit 1; }
    for d in "$dir.deb"/*.deb; do dpkg-deb -x "$d" "$dir"; done
    rm -rf "$dir.deb"
    touch "$dir/.complete"
  fi
  echo "$dir"
}
jdk=$(unpack amd64 openjdk-17-jre-headless openjdk-17-jdk-headless)/usr/lib/jvm/java-17-openjdk-amd64
jmods=$jdk/jmods
[ "$ARCH" = amd64 ] || jmods=$(unpack "$ARCH" openjdk-17-jdk-headless)/usr/lib/jvm/java-17-openjdk-$ARCH/jmods
[ -f "$jmods/java.base.jmod" ] || { log "no java.base.jmod in $jmods"; exit 1; }
rm -rf "$out"
mkdir -p "$(dirname "$out")"
nice -n 19 "$jdk/bin/jlink" --module-path "$jmods" --add-modules "$MODULES" --strip-java-debug-attributes \
  --no-header-files --no-man-pages --compress=2 --output "$out"
touch "$out/.complete"
log "$ARCH runtime (OpenJDK $V: $MODULES) in $out: $(du -sh "$out" | cut -f1)"
echo "$out"
