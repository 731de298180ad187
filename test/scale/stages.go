package main

import (
	"encoding/json"
	"fmt"
	"strings"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// summaryTemplate is the runner's termination message for a simulated run: a real api.Summary
// (so the operator parses it as it parses the runner's), with the engine filled in by KWOK's
// template from the pod's engine label.
func summaryTemplate() (string, error) {
	ptr := func(v int64) *int64 { return &v }
	s := kvv1.Summary{
		SchemaVersion: kvv1.ResultSchemaVersion, Engine: "ENGINE", EngineVersion: "simulated (kwok)",
		Dataset: &kvv1.DatasetInfo{Num: 1000, KeySize: 16, ValueSizeAvg: 100, Bytes: 116000},
		Load:    &kvv1.PhaseSummary{Workload: "load", Threads: 1, Ops: 1000, Seconds: 1, OpsPerSec: 1000, MicrosPerOp: 1000},
		Phases: []kvv1.PhaseSummary{{Workload: "readrandom", Threads: 1, Ops: 100000, Seconds: 1, OpsPerSec: 100000,
			MicrosPerOp: 10, Found: ptr(100000), LatencyMicros: &kvv1.Percentiles{Mean: 10, P50: 9, P99: 20, P999: 40, Max: 100}}},
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return "", err
	}
	if strings.Contains(string(raw), "`") || strings.Contains(string(raw), "%") {
		return "", fmt.Errorf("summary JSON cannot go into a template raw string: %s", raw)
	}
	return strings.Replace(string(raw), `"engine":"ENGINE"`, `"engine":"%s"`, 1), nil
}

// stages are KWOK's node and pod lifecycles for the scenario: nodes become Ready at once (with a
// kubelet endpoint on 127.0.0.1 that nobody listens on, and no Hostname address, so log reads fail
// at once, whatever the machine's DNS);
// runner pods start, run for runFor, then end Succeeded with a runner summary as the termination
// message; deleted pods go.
func stages(runForMs int64, kubeletPort int) (string, error) {
	msg, err := summaryTemplate()
	if err != nil {
		return "", err
	}
	return strings.Join([]string{
		fmt.Sprintf(nodeInitialize, kubeletPort),
		podStage("pod-ready", "DoesNotExist", `
    - key: '.status.podIP'
      operator: DoesNotExist
  delay:
    durationMilliseconds: 200
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - {lastTransitionTime: {{ $now | Quote }}, status: "True", type: Initialized}
      - {lastTransitionTime: {{ $now | Quote }}, status: "True", type: Ready}
      - {lastTransitionTime: {{ $now | Quote }}, status: "True", type: ContainersReady}
      - {lastTransitionTime: {{ $now | Quote }}, status: "True", type: PodScheduled}
`+containerStatuses(true, `
          running:
            startedAt: {{ $now | Quote }}`)+`
      hostIP: 127.0.0.1
      podIP: {{ PodIPWith .spec.nodeName false ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) | Quote }}
      phase: Running
      startTime: {{ $now | Quote }}
`),
		podStage("pod-complete", "DoesNotExist", fmt.Sprintf(`
    - key: '.status.phase'
      operator: In
      values: [Running]
    - key: '.metadata.ownerReferences.[].kind'
      operator: In
      values: [Job]
  delay:
    durationMilliseconds: %d
  next:
    statusTemplate: |
      {{ $now := Now }}
      {{ $started := .status.startTime }}
      {{ $msg := printf `+"`%s`"+` ( index .metadata.labels "kvbench.io/engine" ) }}
`, runForMs, msg)+containerStatuses(false, `
          terminated:
            exitCode: 0
            reason: Completed
            message: {{ $msg | Quote }}
            startedAt: {{ $started | Quote }}
            finishedAt: {{ $now | Quote }}`)+`
      phase: Succeeded
`),
		podStage("pod-delete", "Exists", `
    - key: '.metadata.finalizers'
      operator: DoesNotExist
  next:
    delete: true
`),
	}, "---\n"), nil
}

// nodeInitialize makes a node Ready at once, its kubelet endpoint on port %d of 127.0.0.1.
const nodeInitialize = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: node-initialize
spec:
  resourceRef: {apiGroup: v1, kind: Node}
  selector:
    matchExpressions:
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: NotIn
      values: ['True']
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      {{ range NodeConditions }}
      - lastHeartbeatTime: {{ $now | Quote }}
        lastTransitionTime: {{ $now | Quote }}
        message: {{ .message | Quote }}
        reason: {{ .reason | Quote }}
        status: {{ .status | Quote }}
        type: {{ .type | Quote }}
      {{ end }}
      addresses:
      - address: 127.0.0.1
        type: InternalIP
      daemonEndpoints:
        kubeletEndpoint:
          Port: %d
      allocatable:
        cpu: "32"
        memory: 128Gi
        pods: "110"
      capacity:
        cpu: "32"
        memory: 128Gi
        pods: "110"
      nodeInfo:
        architecture: amd64
        kubeletVersion: kwok
        operatingSystem: linux
      phase: Running
`

// podStage is a KWOK Stage for pods whose deletionTimestamp matches deleting (Exists or
// DoesNotExist); rest goes on from there: further matchExpressions, then delay and next.
func podStage(name, deleting, rest string) string {
	return `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: ` + name + `
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: ` + deleting + rest
}

// containerStatuses are statusTemplate lines that give each of the pod's containers the same
// status, started and ready as running says, in state (the lines under "state:").
func containerStatuses(running bool, state string) string {
	return fmt.Sprintf(`      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        imageID: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: %[1]t
        restartCount: 0
        started: %[1]t
        state:%[2]s
      {{ end }}`, running, state)
}
