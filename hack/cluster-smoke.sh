#!/usr/bin/env bash
# cluster-smoke.sh: prove the local cluster (hack/cluster-up.sh) does what the e2e suite needs, in ~15 s:
#   a Job from a locally imported image (localhost/kvbench-testimg:v1) in a namespace enforcing Pod Security
#   "restricted" (non-root, read-only root fs, tmpfs emptyDir), in-cluster API access through the `kubernetes`
#   Service with the pod's ServiceAccount, and pod -> ClusterIP -> pod. Cleans up its namespace.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/cluster-env.sh"
export KUBECONFIG=${KUBECONFIG:-$KUBECONFIG_ADMIN}
kc() { "$KUBECTL" "$@"; }
NS=kvbench-smoke
t0=$(date +%s%N)
el() { local d=$(( ($(date +%s%N) - t0) / 100000000 )); printf 'smoke %4d.%ds %s\n' $((d/10)) $((d%10)) "$*"; }
kc delete ns $NS --ignore-not-found --wait=true >/dev/null
kc apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Namespace
metadata:
  name: $NS
  labels: {pod-security.kubernetes.io/enforce: restricted}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: lister, namespace: $NS}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: pod-lister, namespace: $NS}
rules: [{apiGroups: [""], resources: [pods], verbs: [list]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: lister, namespace: $NS}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-lister}
subjects: [{kind: ServiceAccount, name: lister, namespace: $NS}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: $NS}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
YAML
sc='securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}'
psc='securityContext: {runAsNonRoot: true, runAsUser: 65534, seccompProfile: {type: RuntimeDefault}}'
kc -n $NS apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web}}
spec:
  $psc
  containers:
  - {name: web, image: localhost/kvbench-testimg:v1, imagePullPolicy: Never, args: [serve, ":8080"], ports: [{containerPort: 8080}], $sc}
YAML
kc -n $NS apply -f - >/dev/null <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: hello}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      serviceAccountName: lister
      $psc
      volumes: [{name: cache, emptyDir: {medium: Memory, sizeLimit: 16Mi}}]
      initContainers:
      - {name: clusterip, image: localhost/kvbench-testimg:v1, imagePullPolicy: Never, args: [get, "http://\$(WEB_SERVICE_HOST):\$(WEB_SERVICE_PORT)/", "60"], $sc}
      - {name: apicheck, image: localhost/kvbench-testimg:v1, imagePullPolicy: Never, args: [apicheck], $sc}
      containers:
      - {name: hello, image: localhost/kvbench-testimg:v1, imagePullPolicy: Never, args: [hello], $sc, volumeMounts: [{name: cache, mountPath: /cache}]}
YAML
el "applied (namespace $NS enforces Pod Security restricted)"
kc -n $NS wait --for=condition=complete job/hello --timeout=120s >/dev/null
el "job/hello complete"
for c in clusterip apicheck hello; do echo "  [$c] $(kc -n $NS logs job/hello -c $c | tail -n 1)"; done
pod=$(kc -n $NS get pods -l job-name=hello -o jsonpath='{.items[0].metadata.name}')
echo "  termination message: $(kc -n $NS get pod "$pod" -o jsonpath='{.status.containerStatuses[0].state.terminated.message}')"
# a privileged pod must be refused by Pod Security admission
if kc -n $NS run priv --image=localhost/kvbench-testimg:v1 --image-pull-policy=Never --privileged -- sleep 1 >/dev/null 2>&1; then
  echo "FAIL: privileged pod admitted in a restricted namespace"; exit 1
fi
el "privileged pod rejected by Pod Security admission"
kc delete ns $NS --wait=true >/dev/null
el "OK: images, Jobs, restricted Pod Security (with a memory-backed emptyDir), in-cluster API and ClusterIP Services work"
