#!/usr/bin/env bash
# images.sh: images for the local cluster (no registry: tarballs imported into the cluster's containerd).
#
#   images.sh build            build the cluster's own helper images (hack/cluster/testimg, stdlib Go, static):
#                                localhost/kvbench-pause:v1    the pod sandbox image (cluster-up.sh imports it)
#                                localhost/kvbench-testimg:v1  hello / serve /metrics / get URL / apicheck
#                              into $KVBENCH_CACHE/cluster-images/*.tar; prints that directory
#   images.sh import TAR...    import docker-save tarballs (hack/make-image.sh) into the running cluster and
#                              remember them (symlink in $KVBENCH_CLUSTER_DIR/images), so that cluster-up.sh
#                              re-imports them after cluster-down.sh --wipe
#   images.sh forget TAR...    stop re-importing those tarballs
#   images.sh list             the localhost/ images the cluster's containerd has
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/cluster-env.sh"
OUT=$KVBENCH_CACHE/cluster-images
cmd=${1:-}; shift || true
case $cmd in
  build)
    mkdir -p "$OUT"
    src=$HERE/cluster/testimg
    sum=$(cat "$src"/go.mod "$src"/*.go "$HERE/make-image.sh" | sha256sum | cut -c1-16)
    if [ "$(cat "$OUT/.src" 2>/dev/null)" != "$sum" ] || [ ! -f "$OUT/pause.tar" ] || [ ! -f "$OUT/testimg.tar" ]; then
      (cd "$src" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$OUT/testimg" .)
      "$HERE/make-image.sh" --entrypoint /pause --uid 65534 "$OUT/testimg" "$PAUSE_IMAGE" "$OUT/pause.tar" >&2
      "$HERE/make-image.sh" --entrypoint /testimg --uid 65534 "$OUT/testimg" localhost/kvbench-testimg:v1 "$OUT/testimg.tar" >&2
      echo "$sum" > "$OUT/.src"
    fi
    echo "$OUT" ;;
  import)
    [ -S "$CTRD_SOCK" ] || { echo "images.sh: the cluster's containerd is not running ($CTRD_SOCK); run hack/cluster-up.sh" >&2; exit 1; }
    mkdir -p "$CL_IMAGES"
    for f in "$@"; do
      f=$(readlink -f "$f")
      ctr_ images import "$f" | sed 's/^/images.sh: imported /' >&2
      ln -sfn "$f" "$CL_IMAGES/$(echo "$f" | sha256sum | cut -c1-12)-$(basename "$f")"
    done ;;
  forget)
    for f in "$@"; do rm -f "$CL_IMAGES/$(readlink -f "$f" | sha256sum | cut -c1-12)-$(basename "$f")"; done ;;
  list)
    ctr_ images ls -q | grep '^localhost/' || true ;;
  *) sed -n '2,14p' "$0" >&2; exit 2 ;;
esac
