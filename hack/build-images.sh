#!/usr/bin/env bash
# build-images.sh: the project's two images as `docker save` tarballs (hack/make-image.sh: no Docker engine, no
# registry), from Go modules and Debian packages only. Prints the output directory (default bin/images).
#
#   runner.tar    localhost/kvbench-runner:$VERSION   /kvbench-runner: static (cgo, Debian's librocksdb.a, libleveldb.a
#                 and their compression libraries linked in, -extldflags -static), uid 65532; plus /usr/bin/db_bench
#                 (Debian's rocksdb-tools 7.8.3, dynamically linked) with the exact shared libraries and loader it
#                 needs, for the dbbench driver. The runner writes only to /data, /tmp and /dev/termination-log,
#                 so a read-only root filesystem works.
#   operator.tar  localhost/kvbench-operator:$VERSION /manager: CGO_ENABLED=0 go build ., uid 65532.
#
# Reproducible: -trimpath -buildvcs=false, fixed tar metadata (make-image.sh): the same sources and Debian package
# versions give the same image IDs. Cached: each image is rebuilt only when a hash of its inputs (Go sources of the
# packages it links, go.mod/go.sum, the Debian package versions, this script, make-image.sh) changes; FORCE=1
# rebuilds. Builds run at nice 19.
#   VERSION (default v0.1.0), OUT (default <repo>/bin/images), WHAT (default "runner operator")
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd); ROOT=$(cd "$HERE/.." && pwd)
VERSION=${VERSION:-v0.1.0}
OUT=${OUT:-$ROOT/bin/images}
WHAT=${WHAT:-runner operator}
mkdir -p "$OUT"
cd "$ROOT"
log() { echo "build-images: $*" >&2; }

# inputs PKG...: hash of every non-stdlib Go/C file the packages compile, go.mod/go.sum and the build scripts
inputs() {
  { go list -deps -f '{{if not .Standard}}{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{range .CgoFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{range .CFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{range .CXXFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{range .HFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{end}}' "$@" \
      | sort | xargs sha256sum | sed "s|$ROOT/||"
    sha256sum go.mod go.sum "$HERE/build-images.sh" "$HERE/make-image.sh" | sed "s|$ROOT/||"
    echo "VERSION=$VERSION $(go env GOVERSION)"
  } | sha256sum | cut -c1-16
}
fresh() { [ "${FORCE:-0}" != 1 ] && [ -f "$OUT/$1.tar" ] && [ "$(cat "$OUT/$1.inputs" 2>/dev/null)" = "$2" ]; }

for w in $WHAT; do case $w in
runner)
  PKGS=(librocksdb-dev libleveldb-dev libsnappy-dev liblz4-dev libzstd-dev zlib1g-dev libbz2-dev libgflags-dev rocksdb-tools)
  debs=$(dpkg-query -W -f='${Package}=${Version}\n' "${PKGS[@]}" 2>/dev/null) || { log "missing Debian packages; run make deps"; exit 1; }
  key=$( { inputs ./runner/cmd/kvbench-runner; echo "$debs"; } | sha256sum | cut -c1-16)
  if fresh runner "$key"; then log "runner image up to date ($key)"; else
    t=$(date +%s)
    # The grocksdb/levigo cgo directives ask for -lrocksdb/-lleveldb; -static makes the linker take the .a files,
    # and these are what Debian's librocksdb.a and libleveldb.a themselves need (gflags: RocksDB's tools code).
    CGO_ENABLED=1 CGO_LDFLAGS="-lrocksdb -lleveldb -lsnappy -llz4 -lzstd -lz -lbz2 -lgflags -lstdc++ -lm -lpthread -ldl" \
      nice -n 19 go build -trimpath -buildvcs=false -tags osusergo,netgo \
      -ldflags "-s -w -linkmode external -extldflags '-static' -X github.com/kvbench/kvbench-operator/runner/bench.BuildRevision=inputs:$key" \
      -o "$OUT/kvbench-runner" ./runner/cmd/kvbench-runner
    if readelf -d "$OUT/kvbench-runner" 2>/dev/null | grep -q NEEDED || readelf -l "$OUT/kvbench-runner" | grep -q 'program interpreter'; then
      log "kvbench-runner is not static"; exit 1
    fi
    # db_bench: dynamically linked; add it with the resolved shared objects at their sonames and the loader
    adds=(--add /usr/bin/db_bench:/usr/bin/db_bench)
    while read -r so path; do
      adds+=(--add "$(readlink -f "$path"):$path")
    done < <(ldd /usr/bin/db_bench | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3} $1 ~ /^\/.*ld-linux/ {print $1, $1}')
    "$HERE/make-image.sh" --entrypoint /kvbench-runner --uid 65532 "${adds[@]}" \
      "$OUT/kvbench-runner" "localhost/kvbench-runner:$VERSION" "$OUT/runner.tar" >&2
    echo "$key" >"$OUT/runner.inputs"
    log "runner image built in $(( $(date +%s) - t ))s"
  fi ;;
operator)
  key=$(inputs .)
  if fresh operator "$key"; then log "operator image up to date ($key)"; else
    t=$(date +%s)
    CGO_ENABLED=0 nice -n 19 go build -trimpath -buildvcs=false -ldflags "-s -w" -o "$OUT/manager" .
    "$HERE/make-image.sh" --entrypoint /manager --uid 65532 "$OUT/manager" "localhost/kvbench-operator:$VERSION" "$OUT/operator.tar" >&2
    echo "$key" >"$OUT/operator.inputs"
    log "operator image built in $(( $(date +%s) - t ))s"
  fi ;;
*) log "unknown image $w"; exit 2 ;;
esac; done
echo "$OUT"
