#!/usr/bin/env bash
# demo.sh (make demo): on a fresh machine, build everything (Debian packages, Kubernetes, the monitoring stack, helm,
# both images: all cached under ~/.cache/kvbench and bin/images), start the local cluster with its registry, push the
# images and the chart there, install Prometheus and the chart from the registry (images by digest), run
# config/samples/kvbench_v1alpha1_demo.yaml (RocksDB and Pebble on tmpfs, ~30 s) and print
# `kubectl get kvb` with its numbers. Leaves the cluster up; `make cluster-down` (or cluster-wipe) takes it down.
# Idempotent: a second run reuses everything and runs the sample again from scratch.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/e2e-env.sh"
SAMPLE=${SAMPLE:-$ROOT/config/samples/kvbench_v1alpha1_demo.yaml}
NS=${DEMO_NAMESPACE:-default}

rm -f "$CL_VAR/made-by-e2e" # the cluster is the demo's now: make test refuses to wipe it
stack_up
say "helm push + helm upgrade --install kvb oci://$REGISTRY/charts/kvbench-operator -n kvbench-system"; chart_install
name=$(awk '/^metadata:/{m=1} m && /^  name:/{print $2; exit}' "$SAMPLE")
# the spec is immutable: a re-run deletes the previous demo and starts a fresh one
kc -n "$NS" delete kvbenchmark "$name" --ignore-not-found --wait=true >/dev/null
kc -n "$NS" apply -f "$SAMPLE" >/dev/null
say "applied $(basename "$SAMPLE") (kvbenchmark/$name in namespace $NS); waiting for it to finish"
end=$(( $(date +%s) + ${DEMO_TIMEOUT:-600} ))
while :; do
  phase=$(kc -n "$NS" get kvbenchmark "$name" -o jsonpath='{.status.phase}' 2>/dev/null || true)
  case $phase in Succeeded|Failed) break ;; esac
  [ "$(date +%s)" -lt "$end" ] || { say "timed out (phase '$phase')"; break; }
  sleep 2
done
say "benchmark $name: $phase"
echo
kc -n "$NS" get kvb
echo
kc -n "$NS" get kvb -o wide
echo
kc -n "$NS" get kvbenchmark "$name" -o json | python3 -c 'import json,sys
for r in json.load(sys.stdin)["status"].get("runs", []):
    for p in r.get("results", []):
        lat = p.get("latencyMicros") or {}
        print("%-8s %-22s threads=%-3d %12.0f ops/s   p99 %9.1f us" % (r["engine"], p["workload"], p["threads"], p["opsPerSec"], lat.get("p99", 0)))
    if r.get("reason"): print("%-8s %s: %s" % (r["engine"], r["reason"], r.get("message", "")))'
PROM=$("$HERE/prometheus.sh" url)
cat <<EOF

Installed from the cluster's registry $REGISTRY, as on any cluster:
  chart   $CHART --version $CHART_VERSION ($CHART_DIGEST)
  images  $OPERATOR_IMAGE
          $RUNNER_IMAGE
          $RUNNER_JAVA_IMAGE

The cluster stays up. To explore:
  export KUBECONFIG=$KUBECONFIG PATH=$K8S_BIN:$(dirname "$HELM"):\$PATH
  kubectl -n $NS get kvb $name -o yaml
  curl -s $PROM/api/v1/query --data-urlencode 'query=kvbench_result_ops_per_second{benchmark="$name"}'
Take it down:   make cluster-down     (keeps etcd data; 'make cluster-wipe' deletes all cluster state)
EOF
[ "$phase" = Succeeded ]
