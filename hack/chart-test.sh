#!/usr/bin/env bash
# chart-test.sh: lint and rendering checks for charts/kvbench-operator, no cluster needed.
# Uses the pinned Helm from hack/tools.sh (built once from its Go module). Exit status 1 on any failure.
#   - helm lint --strict (defaults, and with every optional part on)
#   - files/crds equals config/crd/bases (+ the keep annotation) and the RBAC rules equal config/rbac (sync-chart.sh --check)
#   - the CRD is a template with helm.sh/resource-policy: keep (crds.install=false: none)
#   - image.digest / runner.digest win over tags; runner pull secrets and service account become operator flags;
#     monitoring.labels (kube-prometheus-stack's release label) lands on both monitors
#   - ServiceMonitor/PodMonitor only when monitoring.coreos.com/v1 is served, or when forced
#   - values.schema.json rejects bad values (image tag latest, maxConcurrentRuns 0, unknown keys)
#   - the Deployment's flags exist in cmd/manager/main.go, the image and args come from values
#   - every rendered manifest parses, carries the chart labels, and the RBAC has no wildcards
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CHART=$ROOT/charts/kvbench-operator
HELM=${HELM:-$("$ROOT/hack/tools.sh" helm)}
export HELM_CACHE_HOME=$(mktemp -d) HELM_CONFIG_HOME=$(mktemp -d) HELM_DATA_HOME=$(mktemp -d)
trap 'rm -rf "$HELM_CACHE_HOME" "$HELM_CONFIG_HOME" "$HELM_DATA_HOME"' EXIT
fails=0; n=0
ok() { n=$((n+1)); echo "ok   $*"; }
bad() { n=$((n+1)); fails=$((fails+1)); echo "FAIL $*"; }
render() { "$HELM" template t "$CHART" --namespace kvb-system --kube-version v1.33.0 "$@"; }
kinds() { python3 -c 'import sys,yaml
for d in yaml.safe_load_all(sys.stdin):
    if d: print(d["kind"], d["metadata"]["name"])'; }

if "$HELM" lint --strict "$CHART" >/tmp/chart-lint.$$ 2>&1; then ok "helm lint --strict"; else bad "helm lint --strict"; cat /tmp/chart-lint.$$; fi
if "$HELM" lint --strict "$CHART" --set monitoring.serviceMonitor.force=true --set monitoring.podMonitor.force=true \
   --set runner.tag=v9 --set 'runner.imagePullSecrets={regcred}' --set monitoring.labels.release=kps --set 'operator.extraArgs={--zap-log-level=debug}' >/tmp/chart-lint.$$ 2>&1; then
  ok "helm lint --strict with monitors forced and extra args"; else bad "helm lint --strict (forced)"; cat /tmp/chart-lint.$$; fi
rm -f /tmp/chart-lint.$$
if "$ROOT/hack/sync-chart.sh" --check; then ok "chart files/crds and RBAC rules in sync with config/"; else bad "chart out of sync with config/"; fi

plain=$(render | kinds)
echo "$plain" | grep -q '^ServiceMonitor ' && bad "ServiceMonitor rendered without the monitoring API" || ok "no ServiceMonitor/PodMonitor without monitoring.coreos.com/v1"
echo "$plain" | grep -q '^PodMonitor ' && bad "PodMonitor rendered without the monitoring API" || true
for k in "Deployment t-kvbench-operator" "Service t-kvbench-operator-metrics" "ServiceAccount t-kvbench-operator" \
         "ClusterRole t-kvbench-operator" "ClusterRoleBinding t-kvbench-operator" "Role t-kvbench-operator-leader-election" \
         "RoleBinding t-kvbench-operator-leader-election" "ConfigMap t-kvbench-operator-dashboard" \
         "Lease kvbench-operator.kvbench.io"; do
  echo "$plain" | grep -qx "$k" && ok "renders $k" || bad "missing $k"
done
withapi=$(render --api-versions monitoring.coreos.com/v1/ServiceMonitor --api-versions monitoring.coreos.com/v1/PodMonitor | kinds)
echo "$withapi" | grep -qx 'ServiceMonitor t-kvbench-operator' && echo "$withapi" | grep -qx 'PodMonitor t-kvbench-operator-runners' \
  && ok "ServiceMonitor + PodMonitor when the API is served" || bad "monitors missing although the API is served"
echo "$plain" | grep -q '^PrometheusRule ' && bad "PrometheusRule rendered without the monitoring API" || ok "no PrometheusRule without monitoring.coreos.com/v1"
rules=$(render --api-versions monitoring.coreos.com/v1/PrometheusRule)
echo "$rules" | kinds | grep -qx 'PrometheusRule t-kvbench-operator' && ok "PrometheusRule when the API is served" || bad "PrometheusRule missing although the API is served"
echo "$rules" | python3 -c 'import sys,yaml
r=[d for d in yaml.safe_load_all(sys.stdin) if d and d["kind"]=="PrometheusRule"][0]["spec"]["groups"][0]["rules"][0]
assert r["alert"]=="KVBenchScheduleRegressed" and "kvbench_schedule_change_point" in r["expr"] and "child" in r["expr"], r
assert "{{ $labels.child }}" in r["annotations"]["summary"], r["annotations"]' && ok "the rule alerts per change point (child) with the labels in its text" || bad "PrometheusRule content"
forced=$(render --set monitoring.serviceMonitor.force=true --set monitoring.podMonitor.force=true | kinds)
echo "$forced" | grep -q '^ServiceMonitor ' && echo "$forced" | grep -q '^PodMonitor ' && ok "monitors rendered when forced" || bad "force did not render monitors"
off=$(render --api-versions monitoring.coreos.com/v1/ServiceMonitor --set monitoring.serviceMonitor.enabled=false --set grafana.dashboard.enabled=false | kinds)
echo "$off" | grep -qE '^(ServiceMonitor|ConfigMap) ' && bad "enabled=false still renders" || ok "enabled=false switches monitor and dashboard off"

# GOMEMLIMIT: set by default, absent when operator.goMemLimit is empty.
render | grep -A1 'name: GOMEMLIMIT' | grep -q 'value: "90MiB"' && ok "GOMEMLIMIT 90MiB by default" || bad "no GOMEMLIMIT by default"
render --set operator.goMemLimit= | grep -q GOMEMLIMIT && bad "goMemLimit='' still sets GOMEMLIMIT" || ok "goMemLimit='' leaves GOMEMLIMIT unset"

# The CRD: a template (helm upgrade updates it) kept on uninstall, the same schema as config/crd/bases.
python3 - "$ROOT" <(render) <(render --set crds.install=false) <<'PY' && ok "both CRDs rendered with resource-policy keep, equal to config/; none with crds.install=false" || bad "CRD template"
import sys, yaml
root = sys.argv[1]
crds = {d["metadata"]["name"]: d for d in yaml.safe_load_all(open(sys.argv[2])) if d and d["kind"] == "CustomResourceDefinition"}
ok = sorted(crds) == ["kvbenchmarks.kvbench.io", "kvbenchmarkschedules.kvbench.io"]
for name, d in crds.items():
    src = yaml.safe_load(open(root + "/config/crd/bases/kvbench.io_" + name.split(".")[0] + ".yaml"))
    ok = ok and d["metadata"]["annotations"].get("helm.sh/resource-policy") == "keep" and d["spec"] == src["spec"]
ok = ok and not [d for d in yaml.safe_load_all(open(sys.argv[3])) if d and d["kind"] == "CustomResourceDefinition"]
sys.exit(0 if ok else 1)
PY

# Images: digest wins over tag; defaults are v<appVersion> tags.
A=sha256:$(printf 'a%.0s' $(seq 64)); B=sha256:$(printf 'b%.0s' $(seq 64))
imgs() { render "$@" | python3 -c 'import sys,yaml
d = next(d for d in yaml.safe_load_all(sys.stdin) if d and d["kind"] == "Deployment")["spec"]["template"]["spec"]["containers"][0]
print(d["image"], next(a for a in d["args"] if a.startswith("--runner-image=")), next(a for a in d["args"] if a.startswith("--java-runner-image=")))'; }
got=$(imgs --set image.repository=reg:5000/op --set image.tag=v2 --set image.digest=$A --set runner.repository=reg:5000/run --set runner.tag=v2 --set runner.digest=$B \
  --set javaRunner.repository=reg:5000/java --set javaRunner.tag=v2 --set javaRunner.digest=$A)
[ "$got" = "reg:5000/op@$A --runner-image=reg:5000/run@$B --java-runner-image=reg:5000/java@$A" ] && ok "image.digest, runner.digest and javaRunner.digest win over tags" || bad "digests: $got"
got=$(imgs)
[ "$got" = "localhost/kvbench-operator:v0.1.0 --runner-image=localhost/kvbench-runner:v0.1.0 --java-runner-image=localhost/kvbench-runner-java:v0.1.0" ] && ok "default images are v<appVersion> tags" || bad "default images: $got"

# Runner pull secrets and service account: chart values -> operator flags (cmd/manager/main.go defines them: see below).
args=$(render --set 'runner.imagePullSecrets={regcred,mirror}' --set runner.serviceAccountName=kvbench-runner)
# (here-strings, not echo | grep -q: under pipefail grep's early exit would fail the pipe with SIGPIPE)
grep -qx -- '            - --runner-image-pull-secrets=regcred,mirror' <<<"$args" && grep -qx -- '            - --runner-service-account=kvbench-runner' <<<"$args" \
  && ok "runner.imagePullSecrets and runner.serviceAccountName become operator flags" || bad "runner pull secrets / service account flags"
render | grep -qE -- '--runner-(image-pull-secrets|service-account)' && bad "runner pull-secret/SA flags set by default" || ok "no runner pull-secret/SA flags by default"

# monitoring.labels (e.g. kube-prometheus-stack's release label) on both monitors, with each monitor's own labels.
python3 - <(render --set monitoring.serviceMonitor.force=true --set monitoring.podMonitor.force=true \
  --set monitoring.labels.release=kube-prometheus-stack --set monitoring.serviceMonitor.labels.team=a --set monitoring.podMonitor.labels.team=b) <<'PY' \
  && ok "monitoring.labels on the ServiceMonitor and PodMonitor (/metrics and /metrics/results, honorLabels)" || bad "monitor labels"
import sys, yaml
docs = {d["kind"]: d for d in yaml.safe_load_all(open(sys.argv[1])) if d}
sm, pm = docs["ServiceMonitor"], docs["PodMonitor"]
ok = sm["metadata"]["labels"].get("release") == "kube-prometheus-stack" == pm["metadata"]["labels"].get("release")
ok = ok and sm["metadata"]["labels"].get("team") == "a" and pm["metadata"]["labels"].get("team") == "b"
ok = ok and all(e.get("honorLabels") is True for e in sm["spec"]["endpoints"])
# the operator's own series and the results, each on its path (cmd/manager/main.go: ResultsPath)
ok = ok and [e["path"] for e in sm["spec"]["endpoints"]] == ["/metrics", "/metrics/results"]
sys.exit(0 if ok else 1)
PY

# Prometheus' service account bound to the metrics reader (get on /metrics and /metrics/results) when given.
bind=$(render --set monitoring.serviceMonitor.prometheusServiceAccount.name=prom --set monitoring.serviceMonitor.prometheusServiceAccount.namespace=monitoring)
python3 - <(echo "$bind") <<'PY' && ok "prometheusServiceAccount binds <release>-metrics-reader (/metrics, /metrics/results)" || bad "metrics-reader binding"
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
role = [d for d in docs if d["kind"] == "ClusterRole" and d["metadata"]["name"].endswith("-metrics-reader")][0]
b = [d for d in docs if d["kind"] == "ClusterRoleBinding" and d["roleRef"]["name"] == role["metadata"]["name"]]
ok = len(b) == 1 and b[0]["subjects"] == [{"kind": "ServiceAccount", "name": "prom", "namespace": "monitoring"}]
ok = ok and sorted(role["rules"][0]["nonResourceURLs"]) == ["/metrics", "/metrics/results"]
sys.exit(0 if ok else 1)
PY
render | grep -q 'name: t-kvbench-operator-metrics-reader$' && render | python3 -c 'import sys,yaml; sys.exit(any(d and d["kind"]=="ClusterRoleBinding" and d["roleRef"]["name"].endswith("-metrics-reader") for d in yaml.safe_load_all(sys.stdin)))' \
  && ok "no metrics-reader binding by default" || bad "metrics-reader bound by default"
render --set monitoring.serviceMonitor.prometheusServiceAccount.name=prom >/dev/null 2>&1 && bad "a service account name without a namespace rendered" || ok "prometheusServiceAccount.name needs its namespace"

for bad_vals in "image.digest=sha256:abc" "runner.digest=latest" "runner.tag=latest" "runner.imagePullSecrets={Bad_Name}" \
                "runner.serviceAccountName=a b" "runner.image=x:v1" "crds.install=yes" "image.tag=latest" "operator.maxConcurrentRuns=-1" "nosuchkey=1" "metrics.port=0" "monitoring.serviceMonitor.interval=5" "operator.goMemLimit=100M"; do
  if render --set "$bad_vals" >/dev/null 2>&1; then bad "schema accepted $bad_vals"; else ok "schema rejects $bad_vals"; fi
done

# the Deployment: image, flags, security context, and flags that cmd/manager/main.go defines
out=$(render --set image.tag=v1.2.3 --set runner.tag=v1.2.3 --set operator.maxConcurrentRuns=3 \
  --set 'runner.imagePullSecrets={regcred}' --set runner.serviceAccountName=kvbench-runner)
rendered=$(mktemp); echo "$out" >"$rendered"
python3 - "$ROOT" "$rendered" <<'PY' && ok "Deployment image/args/securityContext, labels, RBAC without wildcards" || bad "Deployment/labels/RBAC checks"
import sys, yaml, os, re
root = sys.argv[1]
docs = [d for d in yaml.safe_load_all(open(sys.argv[2])) if d]
errs = []
for d in docs:
    if d["kind"] == "CustomResourceDefinition":
        continue   # config/'s generated CRD as is (+ the keep annotation); Helm labels it managed-by at install
    l = d["metadata"].get("labels", {})
    if l.get("app.kubernetes.io/instance") != "t" or "helm.sh/chart" not in l:
        errs.append(f'{d["kind"]} {d["metadata"]["name"]}: chart labels missing')
    for r in d.get("rules", []) or []:
        if "*" in r.get("verbs", []) or "*" in r.get("resources", []) or "*" in r.get("apiGroups", []):
            errs.append(f'{d["kind"]} {d["metadata"]["name"]}: wildcard rule {r}')
dep = next(d for d in docs if d["kind"] == "Deployment")
c = dep["spec"]["template"]["spec"]["containers"][0]
if c["image"] != "localhost/kvbench-operator:v1.2.3": errs.append("image " + c["image"])
args = dict(a[2:].split("=", 1) for a in c["args"])
want = {"runner-image": "localhost/kvbench-runner:v1.2.3", "max-concurrent-runs": "3", "leader-elect": "true",
        "metrics-bind-address": ":8080", "metrics-secure": "true", "health-probe-bind-address": ":8081",
        "nvme-node-label": "feature.node.kubernetes.io/storage-nonrotationaldisk=true", "local-nvme-storage-class": "local-nvme", "unschedulable-timeout": "10m",
        "runner-image-pull-secrets": "regcred", "runner-service-account": "kvbench-runner"}
for k, v in want.items():
    if args.get(k) != v: errs.append(f"arg --{k}={args.get(k)} want {v}")
sc = c["securityContext"]
if not (sc.get("readOnlyRootFilesystem") and sc.get("allowPrivilegeEscalation") is False and sc["capabilities"]["drop"] == ["ALL"]):
    errs.append("container securityContext not restricted")
if not dep["spec"]["template"]["spec"]["securityContext"].get("runAsNonRoot"): errs.append("runAsNonRoot missing")
main = os.path.join(root, "cmd", "manager", "main.go")
if os.path.exists(main):
    src = open(main).read()
    for k in args:
        if not re.search(r'"%s"' % re.escape(k), src): errs.append(f"cmd/manager/main.go defines no flag {k!r}")
else:
    print("  (cmd/manager/main.go not there yet: flag names not checked against it)")
for e in errs: print("  " + e)
sys.exit(1 if errs else 0)
PY
rm -f "$rendered"
echo "$n checks, $fails failed"
[ $fails = 0 ]
