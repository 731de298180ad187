#!/usr/bin/env bash
# e2e.sh (make test-e2e): the end-to-end suite (test/e2e, ginkgo, build tag e2e) on a fresh local cluster.
#   builds what is missing (cached) -> cluster-down --wipe (a clean start) -> cluster-up (with its registry) ->
#   Prometheus -> images pushed to the registry (make images-push) -> local NVMe fixture -> go test -tags e2e ./test/e2e
#   given only the kubeconfig, the registry, the images by digest and the Prometheus URL, as against any cluster (the
#   suite pushes the chart, installs it from oci://, and ends with helm uninstall, a CRD upgrade and the installer)
#   -> on failure: diagnostics into $E2E_ARTIFACTS -> cluster-down --wipe (KEEP_UP=1 keeps the cluster).
# E2E_ARTIFACTS (default bin/e2e-artifacts/<timestamp>): per failed spec (operator logs, events, pod describe,
# benchmarks, Prometheus targets, written by the suite) plus the cluster's component logs (kubelet, containerd,
# apiserver, ...). GINKGO_ARGS are passed to the suite (e.g. GINKGO_ARGS='-ginkgo.focus=OOM'). E2E_LABELS is the
# suite's label filter (default '!schedule-long': the 15-minute schedule scenario runs in make test-e2e-schedule).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/e2e-env.sh"
ART=${E2E_ARTIFACTS:-$ROOT/bin/e2e-artifacts/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$ART"
status=1
# Never the demo's cluster (issue 34: a make test in a second clone wiped a running demo, its benchmarks
# and a schedule's history). Only a cluster an earlier make test made ($CL_VAR/made-by-e2e) and left
# stopped (killed, or KEEP_UP=1 then cluster-down) is wiped; any other, or a running one, is refused
# before anything is touched.
apiserver_pid=$(cat "$CL_RUN/kube-apiserver.pid" 2>/dev/null || true)
if [ -n "$apiserver_pid" ] && kill -0 "$apiserver_pid" 2>/dev/null; then
  say "refusing to run: a local cluster is running (state in $CD; make demo's, or another make test's). make test needs"
  say "the machine's one local cluster and would delete its benchmarks. Take it down first: make cluster-down"
  say "(keeps its etcd data; then make cluster-wipe, which deletes it) and run make test again."
  exit 2
fi
if [ -d "$CL_VAR/etcd" ] && [ ! -f "$CL_VAR/made-by-e2e" ]; then
  say "refusing to run: $CL_VAR holds a stopped cluster's data that make test did not make (make demo's: its"
  say "benchmarks and schedules). make test starts from an empty cluster; run make cluster-wipe to delete that data first."
  exit 2
fi
finish() {
  if [ "$status" != 0 ]; then
    say "FAILED: collecting cluster logs into $ART"
    mkdir -p "$ART/cluster"
    for f in "$CL_LOGS"/*.log; do [ -f "$f" ] && tail -n 5000 "$f" >"$ART/cluster/$(basename "$f")"; done
    if [ -f "$KUBECONFIG" ]; then
      kc get all,kvbenchmarks,pvc,pv,events -A -o wide >"$ART/cluster/objects.txt" 2>&1 || true
      kc describe node >"$ART/cluster/node.txt" 2>&1 || true
      kc -n kvbench-system logs -l app.kubernetes.io/component=manager --tail=-1 >"$ART/cluster/operator.log" 2>&1 || true
      "$HERE/prometheus.sh" targets >"$ART/cluster/prometheus-targets.txt" 2>&1 || true
    fi
    cp -r "$CL_RUN" "$ART/cluster/run" 2>/dev/null || true
  fi
  if [ "${KEEP_UP:-0}" = 1 ]; then
    say "cluster left up (KEEP_UP=1): export KUBECONFIG=$KUBECONFIG; make cluster-wipe to take it down"
  else
    say "cluster-down --wipe"; "$HERE/cluster-down.sh" --wipe >/dev/null 2>&1 || "$HERE/cluster-down.sh" --wipe
  fi
  say "e2e $([ "$status" = 0 ] && echo PASSED || echo "FAILED (artifacts: $ART)") in $(( $(date +%s) - T0 ))s"
  exit "$status"
}
trap finish EXIT

# a clean cluster every time: no CRD, release or PV left from an earlier run (an earlier make test's: checked above)
if [ -f "$CL_RUN/kube-apiserver.pid" ] || [ -d "$CL_VAR/etcd" ]; then say "wiping the previous make test's cluster"; "$HERE/cluster-down.sh" --wipe >/dev/null 2>&1; fi
mkdir -p "$CL_VAR" && echo "made by make test (hack/e2e.sh); it wipes this cluster when it ends" >"$CL_VAR/made-by-e2e"
stack_up
say "running the suite (go test -tags e2e ./test/e2e)"
set +e
E2E_LABELS=${E2E_LABELS-!schedule-long}
(cd "$ROOT" && KUBECTL=$KUBECTL HELM=$HELM E2E_ARTIFACTS=$ART nice -n 5 go test -tags e2e ./test/e2e/ -count=1 -timeout 45m -v \
  -args -e2e.registry="$REGISTRY" -e2e.plain-http -e2e.operator-image="$OPERATOR_IMAGE" -e2e.runner-image="$RUNNER_IMAGE" \
  -e2e.java-runner-image="$RUNNER_JAVA_IMAGE" \
  -e2e.prometheus-url="$("$HERE/prometheus.sh" url)" \
  -ginkgo.v -ginkgo.no-color -ginkgo.junit-report="$ART/junit.xml" ${E2E_LABELS:+"-ginkgo.label-filter=$E2E_LABELS"} ${GINKGO_ARGS:-}) 2>&1 | tee "$ART/suite.log"
status=${PIPESTATUS[0]}
set -e
