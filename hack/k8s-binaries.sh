#!/usr/bin/env bash
# k8s-binaries.sh: build Kubernetes binaries (and etcd) from the Go module proxy, cached outside the clone.
#
#   K8S_VERSION  default v1.33.13 (kubelet still runs on cgroup v1 there)
#   WHAT         default "kube-apiserver etcd" (envtest); any of kube-apiserver kube-controller-manager
#                kube-scheduler kubelet kube-proxy kubectl etcd
#   KVBENCH_CACHE default ~/.cache/kvbench
#
# Output: $KVBENCH_CACHE/k8s-$K8S_VERSION/bin. A binary already there is kept, so a second run is instant.
# Prints the bin directory on stdout (log lines go to stderr).
set -euo pipefail
K8S_VERSION=${K8S_VERSION:-v1.33.13}
WHAT=${WHAT:-kube-apiserver etcd}
CACHE=${KVBENCH_CACHE:-$HOME/.cache/kvbench}
ROOT=$CACHE/k8s-$K8S_VERSION; OUT=$ROOT/bin; BD=$ROOT/build
STG=v0.${K8S_VERSION#v1.}; MINOR=$(echo "$K8S_VERSION" | cut -d. -f2)
log() { echo "k8s-binaries: $*" >&2; }

missing=""
for w in $WHAT; do [ -x "$OUT/$w" ] || missing+=" $w"; done
if [ -z "$missing" ]; then echo "$OUT"; exit 0; fi

mkdir -p "$OUT" "$BD"
# One build at a time per cache dir: CI and a developer shell may race.
exec 9>"$ROOT/.lock"; flock 9
cd "$BD"
PROXY=$(go env GOPROXY); PROXY=${PROXY%%,*}; case $PROXY in http*) ;; *) PROXY=https://proxy.golang.org;; esac
if [ ! -f go.sum ] || ! grep -q "^require k8s.io/kubernetes $K8S_VERSION\$" go.mod 2>/dev/null; then
  rm -f go.mod go.sum
  curl -fsS "$PROXY/k8s.io/kubernetes/@v/$K8S_VERSION.mod" > kubernetes.mod
  # Same go/godebug lines as kubernetes' own go.mod; staging modules point at their published tags.
  { echo "module k8sbuild"; echo; grep -E '^(go|godebug) ' kubernetes.mod; echo; echo "require k8s.io/kubernetes $K8S_VERSION"; } > go.mod
  sed -n '/^replace (/,/^)/p' kubernetes.mod | awk '/=> \.\/staging/{print $1}' |
    while read -r m; do echo "replace $m => $m $STG"; done >> go.mod
  log "downloading modules for $K8S_VERSION"
  go get k8s.io/kubernetes/cmd/kube-apiserver@"$K8S_VERSION" >&2
  ETCD_VER=$(awk '$1=="go.etcd.io/etcd/server/v3"{print $2}' kubernetes.mod)
  go get "go.etcd.io/etcd/server/v3@$ETCD_VER" >&2
fi
LDF="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$MINOR -X k8s.io/component-base/version.gitTreeState=clean -X k8s.io/component-base/version.buildDate=1970-01-01T00:00:00Z -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$MINOR"
for w in $missing; do
  t=$(date +%s)
  case $w in
    etcd) CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$OUT/etcd.tmp" go.etcd.io/etcd/server/v3 ;;
    *) # go.sum may lack this command's dependencies (the module was made for another command);
       # go get at the pinned version adds them and is a no-op when they are there.
       go get "k8s.io/kubernetes/cmd/$w@$K8S_VERSION" >&2
       CGO_ENABLED=0 go build -trimpath -ldflags "$LDF" -o "$OUT/$w.tmp" "k8s.io/kubernetes/cmd/$w" ;;
  esac
  mv "$OUT/$w.tmp" "$OUT/$w"   # only a finished binary gets the final name
  log "built $w in $(( $(date +%s) - t ))s"
done
echo "$OUT"
