#!/usr/bin/env bash
# docker-test.sh: builds the Dockerfile's runner and operator images with podman (Debian's) on this machine, which has
# no Docker Hub: the debian:bookworm base is made with debootstrap from Debian's mirror (cached in
# $KVBENCH_CACHE/debian-bookworm-minbase) and imported; the golang image the Dockerfile starts from is that base plus
# this machine's Go toolchain (`go env GOROOT`), gcc and ca-certificates. The builds reach Debian's mirror through the
# host's network; Go modules come from the host's module cache (GOPROXY=file://, read-only bind mount), because this
# machine's HTTPS path to proxy.golang.org needs a certificate authority that only the host trusts. Then it checks the podman-built images against `make images`' amd64
# images (same files, modes, entrypoint, user; whether the binaries are byte-identical is reported) and runs the
# runner image read-only: db_bench and the runner's fillseq,readrandom. Root; slow (minutes): not part of make test.
#   KEEP=1 keeps the built images (localhost/kvbench-{runner,operator}:docker-test)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd); ROOT=$(cd "$HERE/.." && pwd)
CACHE=${KVBENCH_CACHE:-$HOME/.cache/kvbench}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
cd "$ROOT"
T0=$(date +%s)
say() { echo "[$(( $(date +%s) - T0 ))s] docker-test: $*" >&2; }
[ "$(id -u)" = 0 ] || { echo "docker-test: run as root (podman, debootstrap)" >&2; exit 1; }

missing=()
for p in podman debootstrap runc; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# This machine: crun cannot run on its hybrid cgroups and podman's default ulimits are above the hard limits, so runc
# and the limits the shell has.
PODMAN_RUN=(--runtime runc --ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit nproc=4096:4096)

BASE=$CACHE/debian-bookworm-minbase
if [ ! -f "$BASE/etc/debian_version" ]; then
  say "debootstrap --variant=minbase bookworm from $MIRROR"
  rm -rf "$BASE.tmp"
  nice debootstrap --variant=minbase bookworm "$BASE.tmp" "$MIRROR" >/dev/null
  mv "$BASE.tmp" "$BASE"
fi
if ! podman image exists localhost/debian:bookworm; then
  say "podman import $BASE as localhost/debian:bookworm"
  tar --numeric-owner -C "$BASE" -c . | podman import - localhost/debian:bookworm >/dev/null
fi
GOIMG=localhost/golang:$(go env GOVERSION | sed 's/^go//')-bookworm
if ! podman image exists "$GOIMG"; then
  say "$GOIMG: localhost/debian:bookworm + $(go env GOROOT) + gcc, ca-certificates"
  ctx=$(mktemp -d); trap 'rm -rf "$ctx"' EXIT
  cp -a "$(go env GOROOT)" "$ctx/go"
  cat >"$ctx/Containerfile" <<'EOF'
FROM localhost/debian:bookworm
# the apt sources of Docker Hub's debian:bookworm (debootstrap writes bookworm main only)
RUN rm -f /etc/apt/sources.list && printf '%s\n' 'Types: deb' 'URIs: http://deb.debian.org/debian' \
      'Suites: bookworm bookworm-updates' 'Components: main' 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' '' \
      'Types: deb' 'URIs: http://deb.debian.org/debian-security' 'Suites: bookworm-security' 'Components: main' \
      'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' >/etc/apt/sources.list.d/debian.sources
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ca-certificates gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
COPY go /usr/local/go
ENV PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin GOTOOLCHAIN=local
EOF
  podman build -q --network host "${PODMAN_RUN[@]}" -t "$GOIMG" "$ctx" >/dev/null
fi

go mod download   # every module go.mod names, into the host's cache the builds read (GOPROXY=file://)
for target in runner operator; do
  say "podman build --target $target (Dockerfile, GO_IMAGE=$GOIMG)"
  t=$(date +%s)
  nice podman build -q --network host "${PODMAN_RUN[@]}" --build-arg GO_IMAGE="$GOIMG" \
    -v "$(go env GOMODCACHE)/cache/download:/goproxy:ro" --build-arg GOPROXY=file:///goproxy \
    --target "$target" -t "localhost/kvbench-$target:docker-test" . >/dev/null
  say "  built in $(( $(date +%s) - t ))s: $(podman image inspect --format '{{.Size}}' "localhost/kvbench-$target:docker-test" | awk '{printf "%.1f MB", $1/1e6}') uncompressed"
done

# The same files as make images' amd64 image: paths, modes; the binaries' sha256 reported.
say "make images (amd64 images to compare with)"
ARCHS=amd64 OUT=$ROOT/bin/docker-test/images "$HERE/build-images.sh" >/dev/null
fail=0
for target in runner operator; do
  ours=$ROOT/bin/docker-test/$target
  rm -rf "$ours"
  go run ./hack/imagebuild unpack -layout "bin/docker-test/images/oci/kvbench-$target" -arch amd64 -out "$ours"
  theirs=$(podman image mount "localhost/kvbench-$target:docker-test")
  list() { (cd "$1" && find . -mindepth 1 \( -type f -o -type d \) -printf '%M %p\n' | sort); }
  if ! diff <(list "$ours") <(list "$theirs") >"$ROOT/bin/docker-test/$target.diff"; then
    say "  $target: the podman image's files differ from make images' (bin/docker-test/$target.diff)"; fail=1
  else
    same=0 differ=()
    while read -r f; do
      if cmp -s "$ours/$f" "$theirs/$f"; then same=$((same + 1)); else differ+=("$f"); fi
    done < <(cd "$ours" && find . -type f | sort)
    say "  $target: same files and modes as make images' amd64 image; $same byte-identical${differ[*]:+, differing: ${differ[*]}}"
    [ ${#differ[@]} = 0 ] || fail=1   # same machine, same Debian packages and Go: every file must be the same
  fi
  cfg=$(podman image inspect --format '{{.Config.User}} {{json .Config.Entrypoint}}' "localhost/kvbench-$target:docker-test")
  want="65532:65532 [\"/$( [ $target = runner ] && echo kvbench-runner || echo manager )\"]"
  [ "$cfg" = "$want" ] || { say "  $target: user and entrypoint $cfg, want $want"; fail=1; }
  podman image unmount "localhost/kvbench-$target:docker-test" >/dev/null
done

say "podman run (read-only root, user from the image): db_bench, then the runner"
run() { podman run --rm --network none --read-only --tmpfs /data:rw,mode=1777 "${PODMAN_RUN[@]}" "$@"; }
# both result lines, all reads found (db_bench's progress lines end in \r, not \n)
check() {
  local lines; lines=$(tr '\r' '\n' | grep -E '^(fillseq|readrandom) +:') || true
  echo "$lines" >&2
  [ "$(echo "$lines" | grep -c .)" = 2 ] && echo "$lines" | grep -q '^readrandom .*(5000 of 5000 found)' \
    || { say "  $1: want a fillseq and a readrandom line with 5000 of 5000 found"; fail=1; }
}
out=$(run --entrypoint /usr/bin/db_bench localhost/kvbench-runner:docker-test --benchmarks=fillseq,readrandom --num=5000 --db=/data/db) || fail=1
check db_bench <<<"$out"
out=$(run localhost/kvbench-runner:docker-test bench --engine=rocksdb --db=/data/db --benchmarks=fillseq,readrandom --num=5000) || fail=1
check runner <<<"$out"
run localhost/kvbench-operator:docker-test --help 2>&1 | grep -q -- '-runner-image' || { say "the operator image does not run"; fail=1; }

[ "${KEEP:-0}" = 1 ] || podman rmi -f localhost/kvbench-runner:docker-test localhost/kvbench-operator:docker-test >/dev/null
[ $fail = 0 ] && say "OK" || say "FAILED"
exit $fail
