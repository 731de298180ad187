#!/usr/bin/env bash
# build-images.sh: the project's two images, linux/amd64 and linux/arm64, from Go modules and Debian packages only
# (no Docker engine, no base image): hack/imagebuild (go-containerregistry) packs the files listed here into one
# reproducible layer per architecture and an OCI image index per image. Prints the output directory (bin/images).
#
#   kvbench-runner    /kvbench-runner: static (cgo, -extldflags -static), uid 65532, linking the release builds of
#                     RocksDB and LevelDB that hack/engine-build.sh makes from Debian's source packages (Debian's own
#                     librocksdb.a and libleveldb.a have assertions on) and Debian's compression libraries; plus
#                     /usr/bin/db_bench from the same RocksDB build (dynamically linked) with exactly the shared
#                     libraries and loader it needs, for the dbbench driver. arm64: cross-compiled with
#                     gcc-aarch64-linux-gnu against Debian's arm64 packages, unpacked into a cached sysroot
#                     (hack/arm64-sysroot.sh), the engines cross-built by hack/engine-build.sh arm64.
#                     The runner writes only to /data, /tmp and /dev/termination-log: a read-only root filesystem works.
#   kvbench-operator  /manager: CGO_ENABLED=0 go build ./cmd/manager for each GOARCH, uid 65532.
#   kvbench-runner-java  the Java runner (runner/java, engine rocksjava): /opt/java, a jlink runtime from Debian's
#                     OpenJDK 17 (hack/java-jre.sh; arm64's from Debian's arm64 jmods), /opt/kvbench/lib the runner's
#                     jars (hack/rocksjava-runner.sh --home: the runner, HdrHistogram, YCSB core, Jackson),
#                     /opt/kvbench/rocksdbjni/<release>/ each of ROCKSDBJNI_VERSIONS' jar and the architecture's JNI
#                     library taken from it (Launcher's class loader hands it to RocksDB.loadLibrary: nothing is
#                     unpacked into /tmp), and the system libraries these need with their loader (glibc, libstdc++,
#                     zlib). Entrypoint: java ... io.kvbench.rocksjava.Launcher, which takes the Go runner's run
#                     arguments and starts Main with the release the config's engine.version asks for.
#
# Output (OUT, default <repo>/bin/images):
#   oci/kvbench-runner, oci/kvbench-operator, oci/kvbench-runner-java   OCI image layouts, one index each (what `make images-push` pushes)
#   runner.tar, operator.tar                   the host architecture's image as a `docker save` tarball tagged
#                                              localhost/NAME:$VERSION (for `ctr images import`, `podman load`)
#   runner.digests, operator.digests           hack/imagebuild's line: index digest, each architecture's manifest
#
# Reproducible: -trimpath -buildvcs=false, fixed layer metadata: the same sources and Debian package versions give the
# same digests. Cached: each image is rebuilt only when a hash of its inputs (Go sources of the packages it links,
# go.mod/go.sum, the Debian package versions of both architectures, hack/imagebuild, this script) changes; FORCE=1
# rebuilds. Builds run at nice 19.
#   VERSION (default v0.1.0), OUT, WHAT (default "runner operator runner-java"), ARCHS (default "amd64 arm64"),
#   ROCKSDBJNI_VERSIONS (default 7.8.3): the rocksdbjni releases the Java runner image carries (engines[].version)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd); ROOT=$(cd "$HERE/.." && pwd)
VERSION=${VERSION:-v0.1.0}
OUT=${OUT:-$ROOT/bin/images}
WHAT=${WHAT:-runner operator runner-java}
ROCKSDBJNI_VERSIONS=${ROCKSDBJNI_VERSIONS:-7.8.3}
ARCHS=${ARCHS:-amd64 arm64}
HOSTARCH=$(go env GOARCH)
mkdir -p "$OUT"
cd "$ROOT"
log() { echo "build-images: $*" >&2; }
. "$HERE/elf-deps.sh"
case " $ARCHS " in *" $HOSTARCH "*) ;; *) log "ARCHS=\"$ARCHS\" must include this machine's $HOSTARCH (runner.tar, operator.tar)"; exit 2 ;; esac

# inputs PKG...: hash of every non-stdlib Go/C file the packages compile, go.mod/go.sum and the build scripts; paths
# relative to the clone and the module cache, so another checkout (the Dockerfile's /src) gets the same key
inputs() {
  local modcache; modcache=$(go env GOMODCACHE)
  { go list -deps -f '{{if not .Standard}}{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{range .CgoFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{range .CFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{range .CXXFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{range .HFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{end}}' "$@" ./hack/imagebuild \
      | sort -u | xargs sha256sum | sed "s|$ROOT/||; s|$modcache/||"
    sha256sum go.mod go.sum "$HERE/build-images.sh" "$HERE/elf-deps.sh" "$HERE/arm64-sysroot.sh" | sed "s|$ROOT/||"
    echo "VERSION=$VERSION ARCHS=$ARCHS HOSTARCH=$HOSTARCH $(go env GOVERSION)"
  } | sha256sum | cut -c1-16
}
fresh() { [ "${FORCE:-0}" != 1 ] && [ -f "$OUT/$1.tar" ] && [ -f "$OUT/oci/kvbench-$1/index.json" ] && [ "$(cat "$OUT/$1.inputs" 2>/dev/null)" = "$2" ]; }

# spec NAME ENTRYPOINT, then "ARCH SRC DST" lines on stdin: hack/imagebuild's JSON (oci.Spec) for one image, user 65532;
# ENTRYPOINT is a path, or a JSON array of the command and its arguments
spec() {
  local name=$1 ep=$2 arch src dst sep="" cur="" fsep="" q='["\\]'
  case $ep in "["*) ;; *) ep="[\"$ep\"]" ;; esac
  printf '{"images": [{"name": "%s", "tag": "%s", "entrypoint": %s, "user": 65532,\n' "$name" "$VERSION" "$ep"
  printf '  "labels": {"org.opencontainers.image.title": "%s", "org.opencontainers.image.version": "%s"},\n  "platforms": {' "$name" "$VERSION"
  while read -r arch src dst; do
    if [[ $src$dst =~ $q ]]; then log "a path with a quote or backslash: $src $dst"; return 1; fi
    if [ "$arch" != "$cur" ]; then
      [ -z "$cur" ] || printf ']}'
      printf '%s\n    "%s": {"files": [' "$sep" "$arch"; cur=$arch sep="," fsep=""
    fi
    printf '%s\n      {"src": "%s", "dst": "%s"}' "$fsep" "$src" "$dst"; fsep=","
  done
  printf ']}}}]}\n'
}

# pack SHORT NAME ENTRYPOINT KEY: build the image from the spec lines on stdin, keep the host architecture's tarball
pack() {
  local short=$1 name=$2 ep=$3 key=$4
  spec "$name" "$ep" >"$OUT/$short.spec.json"
  go build -o "$OUT/.imagebuild" ./hack/imagebuild
  nice -n 19 "$OUT/.imagebuild" build -spec "$OUT/$short.spec.json" -out "$OUT" -docker-archive "$HOSTARCH" >"$OUT/$short.digests"
  mv "$OUT/$name-$HOSTARCH.tar" "$OUT/$short.tar"
  echo "$key" >"$OUT/$short.inputs"
  log "$(cat "$OUT/$short.digests")"
}

# cross ARCH: the C cross-compiler environment for a cgo build (the host's gcc for the host architecture)
cross() {
  case $1 in
    "$HOSTARCH") echo "CC=gcc CXX=g++" ;;
    arm64) echo "CC=aarch64-linux-gnu-gcc CXX=aarch64-linux-gnu-g++" ;;
    *) log "no C cross-compiler for $1"; return 1 ;;
  esac
}
triplet() { case $1 in amd64) echo x86_64-linux-gnu ;; arm64) echo aarch64-linux-gnu ;; esac; }

for w in $WHAT; do case $w in
runner)
  PKGS=(librocksdb-dev libleveldb-dev libsnappy-dev liblz4-dev libzstd-dev zlib1g-dev libbz2-dev libgflags-dev rocksdb-tools)
  debs=$(dpkg-query -W -f='${Package}=${Version}\n' "${PKGS[@]}" 2>/dev/null) || { log "missing Debian packages; run make deps"; exit 1; }
  SYSROOT=""
  case " $ARCHS " in *" arm64 "*) [ "$HOSTARCH" = arm64 ] || SYSROOT=$("$HERE/arm64-sysroot.sh") ;; esac
  # the release engine libraries, one build per architecture (cached; long the first time)
  declare -A ENGINES=()
  for arch in $ARCHS; do ENGINES[$arch]=$("$HERE/engine-build.sh" "$arch"); done
  key=$( { inputs ./cmd/kvbench-runner; echo "$debs"; [ -z "$SYSROOT" ] || cat "$SYSROOT/.debs"
    for arch in $ARCHS; do cat "${ENGINES[$arch]}/build.json"; done; sha256sum <"$HERE/engine-build.sh"; } | sha256sum | cut -c1-16)
  if fresh runner "$key"; then log "runner image up to date ($key): $(cat "$OUT/runner.digests")"; else
    t=$(date +%s)
    files=()
    for arch in $ARCHS; do
      t1=$(date +%s)
      root=""
      [ "$arch" = "$HOSTARCH" ] || root=$SYSROOT
      bin=$OUT/build/runner/$arch/kvbench-runner
      # The grocksdb/levigo cgo directives ask for -lrocksdb/-lleveldb; -static makes the linker take the .a files
      # of the release build (engine-build.sh env: its include and lib directories first, the sysroot's after).
      eval "$("$HERE/engine-build.sh" env "$arch")"
      env $(cross "$arch") CGO_ENABLED=1 GOOS=linux GOARCH="$arch" \
        CGO_CFLAGS="$CGO_CFLAGS" CGO_CXXFLAGS="$CGO_CXXFLAGS" CGO_LDFLAGS="$CGO_LDFLAGS" \
        nice -n 19 go build -trimpath -buildvcs=false -tags osusergo,netgo \
        -ldflags "-s -w -linkmode external -extldflags '-static' -X github.com/kvbench/kvbench-operator/runner/bench.BuildRevision=inputs:$key $ENGINE_LDFLAGS_X" \
        -o "$bin" ./cmd/kvbench-runner
      if readelf -d "$bin" 2>/dev/null | grep -q NEEDED || readelf -l "$bin" | grep -q 'program interpreter'; then
        log "$arch kvbench-runner is not static"; exit 1
      fi
      dbb=$ENGINE_DIR/bin/db_bench
      files+=("$arch $bin /kvbench-runner" "$arch $dbb /usr/bin/db_bench")
      interp=$(readelf -l "$dbb" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
      while read -r src dst; do files+=("$arch $src $dst"); done < <(elf_closure "$root" "$(triplet "$arch")" "$interp" "" "$dbb")
      log "$arch runner built in $(( $(date +%s) - t1 ))s"
    done
    printf '%s\n' "${files[@]}" | pack runner kvbench-runner /kvbench-runner "$key"
    log "runner image built in $(( $(date +%s) - t ))s"
  fi ;;
operator)
  key=$(inputs ./cmd/manager)
  if fresh operator "$key"; then log "operator image up to date ($key): $(cat "$OUT/operator.digests")"; else
    t=$(date +%s)
    files=()
    for arch in $ARCHS; do
      CGO_ENABLED=0 GOOS=linux GOARCH=$arch nice -n 19 go build -trimpath -buildvcs=false -ldflags "-s -w" -o "$OUT/build/operator/$arch/manager" ./cmd/manager
      files+=("$arch $OUT/build/operator/$arch/manager /manager")
    done
    printf '%s\n' "${files[@]}" | pack operator kvbench-operator /manager "$key"
    log "operator image built in $(( $(date +%s) - t ))s"
  fi ;;
runner-java)
  home=$(ROCKSDBJNI_VERSIONS="$ROCKSDBJNI_VERSIONS" "$HERE/rocksjava-runner.sh" --home)
  jres=() sysdebs=""
  for arch in $ARCHS; do jres+=("$("$HERE/java-jre.sh" "$arch")"); done
  SYSROOT=""
  case " $ARCHS " in *" arm64 "*) [ "$HOSTARCH" = arm64 ] || { SYSROOT=$("$HERE/arm64-sysroot.sh"); sysdebs=$(cat "$SYSROOT/.debs"); } ;; esac
  hostdebs=$(dpkg-query -W -f='${Package}=${Version}\n' libc6 libstdc++6 libgcc-s1 zlib1g)
  key=$( { echo "$home" "${jres[*]}" "$VERSION" "$ARCHS"; echo "$hostdebs"; echo "$sysdebs"
    sha256sum "$HERE/build-images.sh" "$HERE/elf-deps.sh" "$HERE/java-jre.sh" "$HERE/rocksjava-runner.sh" | cut -d" " -f1; } | sha256sum | cut -c1-16)
  if fresh runner-java "$key"; then log "runner-java image up to date ($key): $(cat "$OUT/runner-java.digests")"; else
    t=$(date +%s)
    files=() i=0
    for arch in $ARCHS; do
      jre=${jres[$i]}; i=$((i + 1))
      root="" so=librocksdbjni-linux64.so
      [ "$arch" = "$HOSTARCH" ] || root=$SYSROOT
      [ "$arch" = arm64 ] && so=librocksdbjni-linux-aarch64.so
      while read -r f; do
        [ "$(basename "$f")" = .complete ] || files+=("$arch $(readlink -f "$f") /opt/java/${f#"$jre"/}")
      done < <(find "$jre" \( -type f -o -type l \) | LC_ALL=C sort)
      for jar in "$home"/lib/*.jar; do files+=("$arch $(readlink -f "$jar") /opt/kvbench/lib/$(basename "$jar")"); done
      jnis=()
      for d in "$home"/rocksdbjni/*/; do
        v=$(basename "$d")
        files+=("$arch $(readlink -f "$d"rocksdbjni-*.jar) /opt/kvbench/rocksdbjni/$v/rocksdbjni-$v.jar"
          "$arch ${d}$so /opt/kvbench/rocksdbjni/$v/$so")
        jnis+=("${d}$so")
      done
      elves=()
      while read -r f; do [ "$(head -c4 "$f" | tr -d '\0')" = "$(printf '\177ELF')" ] && elves+=("$f"); done < <(find "$jre" -type f)
      interp=$(readelf -l "$jre/bin/java" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
      while read -r src dst; do files+=("$arch $src $dst"); done < <(elf_closure "$root" "$(triplet "$arch")" "$interp" \
        "$jre/lib:$jre/lib/server" "${elves[@]}" "${jnis[@]}")
    done
    # -XX:-UsePerfData: no hsperfdata file in /tmp; the heap is a quarter of the pod's memory limit (the JVM's
    # default), RocksDB's memory is native. --add-opens: the ycsb workload seeds each thread's ThreadLocalRandom,
    # which YCSB's generators draw from (runner/java Ycsb.seedThread). Launcher puts the chosen rocksdbjni release on Main's class path.
    printf '%s\n' "${files[@]}" | pack runner-java kvbench-runner-java \
      '["/opt/java/bin/java", "-XX:-UsePerfData", "--add-opens=java.base/java.lang=ALL-UNNAMED", "-Dkvbench.home=/opt/kvbench", "-cp", "/opt/kvbench/lib/kvbench-runner-java-1.jar", "io.kvbench.rocksjava.Launcher"]' "$key"
    log "runner-java image built in $(( $(date +%s) - t ))s"
  fi ;;
*) log "unknown image $w"; exit 2 ;;
esac; done
echo "$OUT"
