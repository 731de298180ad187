# The runner and operator images for users with Docker (or podman, buildah), from pinned Debian packages. The build
# stage runs the same hack/build-images.sh as `make images` (for the target architecture only, natively: with buildx,
# arm64 builds under QEMU emulation), then copies that image's files into a scratch image, so the file layout, user
# and entrypoint are the ones `make images` produces.
#
#   docker build --target runner   -t REGISTRY/kvbench-runner:v0.1.0 .
#   docker build --target operator -t REGISTRY/kvbench-operator:v0.1.0 .
#   docker buildx build --platform linux/amd64,linux/arm64 --target runner -t REGISTRY/kvbench-runner:v0.1.0 --push .
#
# (make docker-build; docs/e2e.md says what of this was run here and how.)
ARG GO_IMAGE=golang:1.26.8-bookworm

FROM ${GO_IMAGE} AS build
# Debian bookworm's packages, pinned: the engines' versions (hack/engine-build.sh builds the same versions from
# Debian's source packages in release mode: the image links those and ships their db_bench), the compression
# libraries (linked in statically), the C toolchain, cmake (LevelDB's build) and readelf.
ARG ROCKSDB_VERSION=7.8.3-2
ARG LEVELDB_VERSION=1.23-4
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      librocksdb-dev=${ROCKSDB_VERSION} librocksdb7.8=${ROCKSDB_VERSION} rocksdb-tools=${ROCKSDB_VERSION} \
      libleveldb-dev=${LEVELDB_VERSION} libleveldb1d=${LEVELDB_VERSION} \
      libsnappy-dev liblz4-dev libzstd-dev zlib1g-dev libbz2-dev libgflags-dev \
      build-essential binutils cmake \
    && rm -rf /var/lib/apt/lists/*
ARG GOPROXY=https://proxy.golang.org,direct
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=v0.1.0
# Native build of this platform's images; then their files as a directory tree for COPY.
# (the Go build cache survives between builds: BuildKit's and buildah's cache mount)
RUN --mount=type=cache,target=/root/.cache/go-build arch=$(go env GOARCH) \
    && ARCHS=$arch VERSION=${VERSION} hack/build-images.sh \
    && go run ./hack/imagebuild unpack -layout bin/images/oci/kvbench-runner -arch $arch -out /rootfs/runner \
    && go run ./hack/imagebuild unpack -layout bin/images/oci/kvbench-operator -arch $arch -out /rootfs/operator

FROM scratch AS runner
COPY --from=build /rootfs/runner/ /
ENV PATH=/usr/local/bin:/usr/bin:/bin
WORKDIR /
USER 65532:65532
ENTRYPOINT ["/kvbench-runner"]

FROM scratch AS operator
COPY --from=build /rootfs/operator/ /
ENV PATH=/usr/local/bin:/usr/bin:/bin
WORKDIR /
USER 65532:65532
ENTRYPOINT ["/manager"]
