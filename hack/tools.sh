#!/usr/bin/env bash
# tools.sh NAME...: build pinned Go tools once into a versioned cache outside the clone and print
# the path of the last one. Known: controller-gen, helm, kwok, registry (CNCF distribution), crane, krew.
set -euo pipefail
CACHE=${KVBENCH_CACHE:-$HOME/.cache/kvbench}
CONTROLLER_GEN_VERSION=${CONTROLLER_GEN_VERSION:-v0.18.0}
HELM_VERSION=${HELM_VERSION:-v3.22.0}
KWOK_VERSION=${KWOK_VERSION:-v0.8.0}
REGISTRY_VERSION=${REGISTRY_VERSION:-v3.1.2}
CRANE_VERSION=${CRANE_VERSION:-v0.22.1}
KREW_VERSION=${KREW_VERSION:-v0.4.3}
out=""
for tool in "$@"; do
  case $tool in
    controller-gen) pkg=sigs.k8s.io/controller-tools/cmd/controller-gen; ver=$CONTROLLER_GEN_VERSION; ldf="" ;;
    helm) pkg=helm.sh/helm/v3/cmd/helm; ver=$HELM_VERSION; ldf="-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION" ;;
    kwok) pkg=sigs.k8s.io/kwok/cmd/kwok; ver=$KWOK_VERSION; ldf="" ;;   # simulated nodes and pods (scale test)
    # the CNCF distribution registry the local cluster's containerd pulls from (hack/registry.sh)
    registry) pkg=github.com/distribution/distribution/v3/cmd/registry; ver=$REGISTRY_VERSION
      ldf="-X github.com/distribution/distribution/v3/version.version=$REGISTRY_VERSION" ;;
    crane) pkg=github.com/google/go-containerregistry/cmd/crane; ver=$CRANE_VERSION; ldf="-X github.com/google/go-containerregistry/cmd/crane/cmd.Version=$CRANE_VERSION" ;;   # registry client: digests, manifests
    krew) pkg=sigs.k8s.io/krew/cmd/krew; ver=$KREW_VERSION; ldf="-X sigs.k8s.io/krew/internal/version.gitTag=$KREW_VERSION" ;;   # installs dist/kvbench.yaml in make plugin-dist
    *) echo "tools.sh: unknown tool $tool" >&2; exit 2 ;;
  esac
  dir=$CACHE/tools/$tool-$ver
  if [ ! -x "$dir/$tool" ]; then
    mkdir -p "$dir"
    echo "tools.sh: building $tool $ver" >&2
    GOBIN="$dir" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w $ldf" "$pkg@$ver"
  fi
  out=$dir/$tool
done
echo "$out"
