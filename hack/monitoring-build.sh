#!/usr/bin/env bash
# monitoring-build.sh [WHAT...]: build the monitoring stack for the e2e cluster from the Go module proxy only,
# cached outside the clone and keyed by version. Nothing here touches the repository's go.mod.
#
#   operator     prometheus-operator cmd/operator                 -> $OUT/bin/operator
#   reloader     prometheus-operator cmd/prometheus-config-reloader -> $OUT/bin/prometheus-config-reloader
#   prometheus   Prometheus $PROM_VERSION (module github.com/prometheus/prometheus $PROM_MODULE_VERSION)
#                                                                 -> $OUT/bin/prometheus
#   crds         monitoring.coreos.com CRDs, controller-gen (hack/tools.sh) from pkg/apis/monitoring
#                                                                 -> $OUT/crds/*.yaml
#   images       pack the three binaries as docker-save tarballs (hack/make-image.sh) -> $OUT/images/*.tar
#   (default: all of them, in this order)
#
#   PO_VERSION          default v0.85.0 (the only version of the main module this proxy serves)
#   PROM_MODULE_VERSION default v0.305.0 (= Prometheus 3.5.0, the version operator v0.85.0 defaults to)
#   KVBENCH_CACHE       default ~/.cache/kvbench; OUT = $KVBENCH_CACHE/monitoring-$PO_VERSION
#   NICE                default 19: the builds share 2 cores with everything else
#
# A binary already present is kept, so a second run is instant. Prints $OUT on stdout; logs go to stderr.
# Throwaway modules: $OUT/build/{promop,prom,crdgen}. Cold: ~4 min download + ~8 min compile on 2 idle cores.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${KVBENCH_CACHE:-$HOME/.cache/kvbench}
PO_VERSION=${PO_VERSION:-v0.85.0}
PROM_MODULE_VERSION=${PROM_MODULE_VERSION:-v0.305.0}
PROM_VERSION=${PROM_VERSION:-3.5.0}
NICE=${NICE:-19}
OUT=$CACHE/monitoring-$PO_VERSION; BIN=$OUT/bin; BD=$OUT/build
WHAT=${*:-operator reloader prometheus crds images}
PO=github.com/prometheus-operator/prometheus-operator
API=$PO/pkg/apis/monitoring
VER=github.com/prometheus/common/version
log() { echo "monitoring-build: $*" >&2; }
go_() { nice -n "$NICE" go "$@"; }

mkdir -p "$BIN" "$BD"
exec 9>"$OUT/.lock"; flock 9   # one build per cache dir

# mod DIR NAME GOVERSION [REPLACE...] -- PKG@VER...: (re)create a throwaway module when its wanted set changes
mod() {
  local d=$1 name=$2 gov=$3; shift 3; local repl=()
  while [ "$1" != -- ]; do repl+=("$1"); shift; done; shift
  local want="$* ${repl[*]}"
  mkdir -p "$d"
  if [ -f "$d/go.sum" ] && [ "$(cat "$d/.wanted" 2>/dev/null)" = "$want" ]; then return; fi
  rm -f "$d/go.mod" "$d/go.sum" "$d/.wanted"
  { printf 'module %s\n\ngo %s\n' "$name" "$gov"; for r in "${repl[@]}"; do echo "replace $r"; done; } > "$d/go.mod"
  local t=$(date +%s)
  (cd "$d" && go_ get "$@" >&2)
  echo "$want" > "$d/.wanted"
  log "downloaded modules for $name in $(( $(date +%s) - t ))s"
}
# build OUTNAME DIR LDFLAGS TAGS PKG
build() {
  local out=$1 d=$2 ldf=$3 tags=$4 pkg=$5
  [ -x "$BIN/$out" ] && { log "$out present"; return; }
  local t=$(date +%s)
  (cd "$d" && CGO_ENABLED=0 go_ build -trimpath ${tags:+-tags "$tags"} -ldflags "-s -w $ldf" -o "$BIN/$out.tmp" "$pkg")
  mv "$BIN/$out.tmp" "$BIN/$out"
  log "built $out in $(( $(date +%s) - t ))s"
}
# upstream's ldflags: version info comes from prometheus/common/version
vflags() { echo "-X $VER.Version=$1 -X $VER.Revision=$2 -X $VER.Branch=HEAD -X $VER.BuildUser=kvbench -X $VER.BuildDate=19700101-00:00:00"; }

for w in $WHAT; do case $w in
  operator|reloader)
    # `go install $PO/cmd/operator@v0.85.0` is refused (local replace directives for pkg/apis and pkg/client);
    # a throwaway module uses their published versions instead
    mod "$BD/promop" promopbuild 1.24.0 -- "$PO/cmd/operator@$PO_VERSION" "$PO/cmd/prometheus-config-reloader@$PO_VERSION"
    cmd=operator; [ "$w" = reloader ] && cmd=prometheus-config-reloader
    build "$cmd" "$BD/promop" "$(vflags "${PO_VERSION#v}" "module-proxy-$PO_VERSION")" "" "$PO/cmd/$cmd" ;;
  prometheus)
    # prometheus' go.mod replaces fsnotify v1.8.0 => v1.7.0, so `go install` is refused; repeat the replace here.
    # Tag netgo only: builtinassets needs the npm-built web UI, which the module zip lacks (the HTTP API works).
    mod "$BD/prom" prombuild 1.23.0 "github.com/fsnotify/fsnotify v1.8.0 => github.com/fsnotify/fsnotify v1.7.0" -- \
      "github.com/prometheus/prometheus/cmd/prometheus@$PROM_MODULE_VERSION"
    build prometheus "$BD/prom" "$(vflags "$PROM_VERSION" "module-proxy-$PROM_MODULE_VERSION")" netgo github.com/prometheus/prometheus/cmd/prometheus ;;
  crds)
    if [ -f "$OUT/crds/.done" ]; then log "CRDs present"; continue; fi
    CG=$("$HERE/tools.sh" controller-gen)   # v0.18.0, the version upstream generated v0.85.0's CRDs with
    mod "$BD/crdgen" crdgen 1.24.0 -- "$API/v1@$PO_VERSION" "$API/v1alpha1@$PO_VERSION"
    rm -rf "$OUT/crds"; mkdir -p "$OUT/crds"
    # upstream's `make generate-crds`: crd:crdVersions=v1 over v1 and v1alpha1 (run inside the module for go.sum)
    (cd "$BD/crdgen" && nice -n "$NICE" "$CG" crd:crdVersions=v1 paths="$API/v1" paths="$API/v1alpha1" output:crd:dir="$OUT/crds")
    for f in "$OUT"/crds/*.yaml; do   # = upstream's scripts/generate/append-operator-version.sh
      sed -i "s/^\(    controller-gen.kubebuilder.io\/version: .*\)$/\1\n    operator.prometheus.io\/version: ${PO_VERSION#v}/" "$f"
    done
    touch "$OUT/crds/.done"
    log "generated $(ls "$OUT"/crds/*.yaml | wc -l) CRDs into $OUT/crds" ;;
  images)
    mkdir -p "$OUT/images"
    img() { # img BINARY REF PATH-IN-IMAGE
      local tar=$OUT/images/$1.tar
      [ -f "$tar" ] && [ "$tar" -nt "$BIN/$1" ] && return
      [ -x "$BIN/$1" ] || { log "skip image $2: no $BIN/$1"; return; }
      "$HERE/make-image.sh" --entrypoint "$3" --uid 65534 "$BIN/$1" "$2" "$tar" >&2
    }
    img operator "localhost/prometheus-operator:$PO_VERSION" /bin/operator
    # the operator runs the reloader as /bin/prometheus-config-reloader (command:), so that path is fixed
    img prometheus-config-reloader "localhost/prometheus-config-reloader:$PO_VERSION" /bin/prometheus-config-reloader
    img prometheus "localhost/prometheus:v$PROM_VERSION" /bin/prometheus ;;
  *) echo "monitoring-build: unknown $w (operator reloader prometheus crds images)" >&2; exit 2 ;;
esac; done
echo "$OUT"
