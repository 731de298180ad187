#!/usr/bin/env bash
# plugin-dist.sh: kubectl-kvbench release archives for linux, darwin and windows x amd64, arm64 (CGO_ENABLED=0
# cross builds), their SHA256SUMS and a krew plugin manifest generated from them (hack/plugindist), in dist/; then
# krew (v0.4.3, hack/tools.sh) installs this machine's archive with that manifest into a throwaway KREW_ROOT.
#   VERSION (default v0.1.0)   the plugin's version (kubectl kvbench version), archive names, manifest
#   URL_BASE                   where the archives are published (default: the GitHub release of VERSION)
#   OUT (default dist)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd); ROOT=$(cd "$HERE/.." && pwd)
VERSION=${VERSION:-v0.1.0}
URL_BASE=${URL_BASE:-https://github.com/kvbench/kvbench-operator/releases/download/$VERSION}
OUT=${OUT:-$ROOT/dist}
cd "$ROOT"
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
[ -z "$(git status --porcelain 2>/dev/null)" ] || commit+="+dirty"
bins=$OUT/.bin
rm -rf "$bins"; mkdir -p "$bins"
t=$(date +%s)
for os in linux darwin windows; do
  for arch in amd64 arm64; do
    exe=kubectl-kvbench; [ "$os" = windows ] && exe+=.exe
    CGO_ENABLED=0 GOOS=$os GOARCH=$arch nice -n 19 go build -trimpath -buildvcs=false \
      -ldflags "-s -w -X main.version=$VERSION -X main.commit=$commit" -o "$bins/${os}_$arch/$exe" ./cmd/kubectl-kvbench
  done
done
echo "plugin-dist: 6 binaries built in $(( $(date +%s) - t ))s" >&2
license=(); [ -f LICENSE ] && license=(-license LICENSE)
go run ./hack/plugindist -version "$VERSION" -url-base "$URL_BASE" -out "$OUT" "${license[@]}" "$bins"
# the host's binary says the version it was built with
host="$bins/$(go env GOOS)_$(go env GOARCH)/kubectl-kvbench"
"$host" version --client | grep -qF "kubectl-kvbench $VERSION (commit $commit," || { echo "plugin-dist: $host version does not say $VERSION" >&2; exit 1; }
(cd "$OUT" && sha256sum -c --quiet SHA256SUMS)
# krew itself installs the host's archive from the manifest (it checks the manifest, the sha256 and bin/files)
krew=$("$HERE/tools.sh" krew)
kr=$(mktemp -d); trap 'rm -rf "$kr"' EXIT
archive=$(ls "$OUT"/kubectl-kvbench_"${VERSION}"_"$(go env GOOS)"_"$(go env GOARCH)".*)
KREW_ROOT=$kr "$krew" install --manifest="$OUT/kvbench.yaml" --archive="$archive" >&2
KREW_ROOT=$kr "$kr/bin/kubectl-kvbench" version --client | grep -qF "kubectl-kvbench $VERSION " || { echo "plugin-dist: the krew-installed plugin does not say $VERSION" >&2; exit 1; }
echo "plugin-dist: krew installed $(basename "$archive") from dist/kvbench.yaml" >&2
rm -rf "$bins"
