# kvbench-operator Makefile. `make help` lists the targets.
SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

K8S_VERSION ?= v1.33.13
KVBENCH_CACHE ?= $(HOME)/.cache/kvbench
export KVBENCH_CACHE
# The images' tag (make images, images-push); the chart defaults to v<appVersion>.
VERSION ?= v0.1.0
export VERSION
BIN := $(CURDIR)/bin
GO_TEST_FLAGS ?=

CONTROLLER_GEN = $(shell hack/tools.sh controller-gen)

.PHONY: help
help: ## Show this help.
	@grep -hE '^[a-zA-Z0-9_-]+:.*?## ' $(MAKEFILE_LIST) | awk -F':.*?## ' '{printf "  %-16s %s\n", $$1, $$2}'

##@ Setup

.PHONY: deps
deps: ## Install the Debian packages the build needs (idempotent).
	hack/install-deps.sh

.PHONY: envtest-assets
envtest-assets: ## Build kube-apiserver and etcd for envtest from Go modules (cached by version).
	@K8S_VERSION=$(K8S_VERSION) WHAT="kube-apiserver etcd" hack/k8s-binaries.sh >/dev/null

##@ Build

.PHONY: generate
generate: ## Generate deepcopy code.
	$(CONTROLLER_GEN) object paths=./api/...

.PHONY: manifests
manifests: ## Generate the CRD and RBAC manifests.
	$(CONTROLLER_GEN) crd:allowDangerousTypes=true rbac:roleName=kvbench-operator paths=./api/... paths=./controllers/... \
		output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac
	hack/sync-chart.sh

.PHONY: runner
runner: deps ## Build bin/kvbench-runner (cgo: release builds of RocksDB and LevelDB, hack/engine-build.sh; the first build takes ~10 min).
	eval "$$(hack/engine-build.sh env)" && go build -ldflags "$$ENGINE_LDFLAGS_X" -o $(BIN)/kvbench-runner ./cmd/kvbench-runner

.PHONY: manager
manager: ## Build bin/manager (the operator).
	CGO_ENABLED=0 go build -o $(BIN)/manager ./cmd/manager

.PHONY: plugin
plugin: ## Build bin/kubectl-kvbench (`kubectl kvbench`: report, compare, plot, save; see docs/report.md).
	CGO_ENABLED=0 go build -o $(BIN)/kubectl-kvbench ./cmd/kubectl-kvbench

.PHONY: plugin-dist
plugin-dist: ## kubectl-kvbench archives (linux, darwin, windows x amd64, arm64), SHA256SUMS and the krew manifest kvbench.yaml in dist/ (VERSION, URL_BASE).
	hack/plugin-dist.sh

.PHONY: build
build: runner manager plugin ## Build everything.

##@ Test

.PHONY: fmt-check
fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

.PHONY: vet
vet: deps
	go vet ./...
	go vet -tags e2e,qemu ./test/...  # build-tagged suites too: a renamed function once broke the qemu test only at run time

.PHONY: verify
verify: deps generate manifests fmt-check vet ## Regenerate code and manifests, fail on a diff; gofmt and go vet; no tracked file over 1 MiB or built binary.
	hack/check-tracked.sh
	go run ./hack/funclen -max 120 -known hack/funclen/known.txt
	@git add -N . >/dev/null 2>&1 || true
	@if ! git diff --exit-code --stat; then echo "verify: generated files are out of date: run 'make generate manifests' and commit"; exit 1; fi

.PHONY: test
test: test-unit test-scale-small test-e2e ## Everything CI runs: test-unit, the small scale scenario, then the e2e suite on a local cluster (root).

.PHONY: test-unit
test-unit: deps envtest-assets verify chart-test ## verify, chart checks, unit, runner (real engines) and envtest suites; no cluster.
	KUBEBUILDER_ASSETS=$$(K8S_VERSION=$(K8S_VERSION) WHAT="kube-apiserver etcd" hack/k8s-binaries.sh) \
		go test $(GO_TEST_FLAGS) ./...
	$(MAKE) fuzz
	$(MAKE) test-arm64

.PHONY: test-arm64
test-arm64: deps ## The arm64 runner image under qemu-user: runner fillseq,readrandom (RocksDB, LevelDB), result file decoded, db_bench; the Java runner image, amd64 and arm64, running an operator-rendered rocksjava Job (~1.5 min once built).
	WHAT="runner runner-java" hack/build-images.sh >/dev/null
	go test -count=1 -tags qemu ./test/multiarch -layout $(BIN)/images/oci/kvbench-runner -java-layout $(BIN)/images/oci/kvbench-runner-java -v

.PHONY: test-ycsb-full
test-ycsb-full: deps ## The runner's YCSB against YCSB core 0.17.0 at 1M records and 2M operations (make test runs it at 100k/200k).
	KVBENCH_YCSB_FULL=1 go test ./runner/bench -run TestYCSBConformance -v -count=1 -timeout 30m

# Parsers of untrusted input (runner output, archives, files given to kubectl kvbench):
# package:FuzzTarget:executions. Each seed corpus (testdata/fuzz/<target>) also runs in plain `go test`.
# `make fuzz` explores each target for its count of executions (about 8 s each on the 2-core VM):
# a count, not a duration, because Go 1.26's coordinator can fail a target with "context deadline
# exceeded" when a duration ends while a worker is mid-input (golang/go#75804, fixed in Go 1.27;
# CI hit it once). FUZZTIME=4m overrides every count with a duration.
FUZZ_TARGETS = ./controllers/kvbenchmark:FuzzParseSummary:24000 ./archive:FuzzReadLog:120000 ./archive:FuzzDecompress:100000 \
	./controllers/metrics:FuzzGather:32000 ./cmd/kubectl-kvbench:FuzzDecode:28000 ./runner/dbbench:FuzzParse:140000 \
	./controllers/schedule:FuzzHistory:20000
FUZZTIME ?=

.PHONY: fuzz
fuzz: ## Run every fuzz target for its count of executions (about 8 s each, a minute in all once built), or FUZZTIME each.
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; rest=$${t#*:}; target=$${rest%%:*}; budget=$${FUZZTIME:-$${rest#*:}x}; \
		echo "fuzz $$target ($$pkg, $$budget)"; \
		go test $$pkg -run='^$$' -fuzz="^$$target$$" -fuzztime=$$budget; \
	done

##@ Cluster (local single-node e2e cluster; owner: cluster/e2e. See docs/cluster.md)

# The scale scenario: a real etcd, kube-apiserver, kube-scheduler and kube-controller-manager
# (built from Go modules like envtest's), KWOK nodes and pods, and the operator binary; fails when a
# figure leaves its range (test/scale/ranges-*.yaml). No cluster is touched; all on 127.0.0.1.
SCALE_K8S = WHAT="kube-apiserver etcd kube-scheduler kube-controller-manager" hack/k8s-binaries.sh
SCALE_ARGS ?=
# What every simulated runner prints: a real runner's log (phase lines and result line) of a saved result.
SCALE_RESULT ?= docs/reproductions/seed-000-evidence/seed-000-prefix-rocksdb.result.json

.PHONY: test-scale
test-scale: manager ## 1,000 KVBenchmarks on 100 simulated (KWOK) nodes against a real control plane, 100 slots; checks test/scale/ranges-full.yaml.
	go run ./test/scale --k8s-bin "$$($(SCALE_K8S))" --kwok "$$(hack/tools.sh kwok)" --operator $(BIN)/manager \
		--benchmarks 1000 --nodes 100 --nvme-nodes 10 --each-node 10 --exclusive 100 --slots 100 --hostile 5 --run-for 10s \
		--result $(SCALE_RESULT) --ranges test/scale/ranges-full.yaml $(SCALE_ARGS)

.PHONY: test-scale-small
test-scale-small: manager ## 100 KVBenchmarks on 20 simulated nodes, 40 slots (about 2 minutes); checks test/scale/ranges-small.yaml.
	go run ./test/scale --k8s-bin "$$($(SCALE_K8S))" --kwok "$$(hack/tools.sh kwok)" --operator $(BIN)/manager \
		--benchmarks 100 --nodes 20 --nvme-nodes 10 --each-node 2 --exclusive 10 --slots 40 --hostile 2 --run-for 10s \
		--result $(SCALE_RESULT) --ranges test/scale/ranges-small.yaml $(SCALE_ARGS)

.PHONY: cluster-up
cluster-up: ## Start the local single-node cluster (root; builds and caches Kubernetes binaries once).
	K8S_VERSION=$(K8S_VERSION) hack/cluster-up.sh

.PHONY: cluster-down
cluster-down: ## Stop the local cluster and restore the host (keeps etcd data; cluster-wipe deletes it).
	hack/cluster-down.sh

.PHONY: cluster-wipe
cluster-wipe: ## Stop the local cluster and delete its state.
	hack/cluster-down.sh --wipe

.PHONY: monitoring-build
monitoring-build: ## Build prometheus-operator, Prometheus and the monitoring CRDs from Go modules (cached).
	hack/monitoring-build.sh >/dev/null

.PHONY: prometheus
prometheus: ## Install prometheus-operator and a Prometheus into the running local cluster.
	hack/prometheus.sh install

.PHONY: chart-sync
chart-sync: ## Copy the CRD and RBAC rules from config/ into charts/kvbench-operator.
	hack/sync-chart.sh

.PHONY: chart-test
chart-test: ## helm lint --strict and rendering checks of charts/kvbench-operator (no cluster needed).
	hack/chart-test.sh

.PHONY: images
images: deps ## Build the runner (static, RocksDB+LevelDB linked in, + db_bench), operator and Java runner (jlink runtime + RocksJava) images, linux/amd64 and arm64, into bin/images (cached).
	hack/build-images.sh >/dev/null

# REGISTRY=host:port[/path]; plain HTTP for localhost, 127.0.0.1 and private addresses, INSECURE=1 for any.
.PHONY: images-push
images-push: images ## Push the three image indexes to REGISTRY=host:port (VERSION, INSECURE=1); prints the digests, writes bin/images/pushed.env.
	@[ -n "$(REGISTRY)" ] || { echo "images-push: set REGISTRY=host:port[/path], e.g. make images-push REGISTRY=localhost:5000"; exit 2; }
	go run ./hack/imagebuild push -registry '$(REGISTRY)' $(if $(filter 1 true yes,$(INSECURE)),-insecure) \
		-env-file $(BIN)/images/pushed.env $(BIN)/images/oci/kvbench-operator $(BIN)/images/oci/kvbench-runner \
		$(BIN)/images/oci/kvbench-runner-java
	@cat $(BIN)/images/pushed.env

.PHONY: chart-push
chart-push: ## helm package + helm push the chart to oci://REGISTRY/charts (PLAIN_HTTP=1 for HTTP); writes bin/chart/pushed.env.
	REGISTRY=$(REGISTRY) hack/chart-push.sh

.PHONY: build-installer
build-installer: ## dist/install.yaml from config/ (CRD, RBAC, Deployment), images by digest: IMG=…@sha256:… RUNNER_IMG=…@sha256:… JAVA_RUNNER_IMG=…@sha256:… (default: bin/images/pushed.env).
	IMG=$(IMG) RUNNER_IMG=$(RUNNER_IMG) JAVA_RUNNER_IMG=$(JAVA_RUNNER_IMG) hack/build-installer.sh >/dev/null

.PHONY: kind-demo
kind-demo: ## With Docker and kind: a kind cluster + local registry, images and chart pushed and installed by digest, the demo benchmark.
	hack/kind-demo.sh

# With Docker (or podman: DOCKER=podman): the same images from the Dockerfile, for this machine's architecture;
# docker buildx build --platform linux/amd64,linux/arm64 for both (docs/e2e.md).
# IMG and RUNNER_IMG are tags here (build-installer wants digests, so they get no global default).
DOCKER ?= docker
DOCKER_IMG = $(or $(IMG),localhost/kvbench-operator:$(VERSION))
DOCKER_RUNNER_IMG = $(or $(RUNNER_IMG),localhost/kvbench-runner:$(VERSION))

.PHONY: docker-build
docker-build: ## $(DOCKER) build the operator (IMG) and runner (RUNNER_IMG) images from the Dockerfile.
	$(DOCKER) build --build-arg VERSION=$(VERSION) --target operator -t $(DOCKER_IMG) .
	$(DOCKER) build --build-arg VERSION=$(VERSION) --target runner -t $(DOCKER_RUNNER_IMG) .

.PHONY: docker-push
docker-push: ## $(DOCKER) push IMG and RUNNER_IMG.
	$(DOCKER) push $(DOCKER_IMG)
	$(DOCKER) push $(DOCKER_RUNNER_IMG)

.PHONY: docker-test
docker-test: ## Here (root, podman): debootstrap'd bookworm base, podman build of the Dockerfile, compared with make images; minutes, not in make test.
	hack/docker-test.sh

.PHONY: local-nvme
local-nvme: ## In the running local cluster: StorageClass local-nvme, static local PVs, the NVMe node label.
	hack/local-nvme.sh up

.PHONY: demo
demo: ## Fresh machine to numbers: build all, cluster up, Prometheus + chart, run a sample, print `kubectl get kvb`.
	hack/demo.sh

##@ E2E

.PHONY: test-e2e
test-e2e: ## e2e suite (test/e2e) on a fresh local cluster, torn down afterwards; diagnostics in bin/e2e-artifacts.
	hack/e2e.sh

.PHONY: test-e2e-schedule
test-e2e-schedule: ## The long KVBenchmarkSchedule scenario (about 15 minutes): a slowdown, its change point, the alert in Prometheus, ack.
	E2E_LABELS=schedule-long hack/e2e.sh
