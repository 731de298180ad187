package kvbenchmark

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/archive"
	"github.com/kvbench/kvbench-operator/controllers/plan"
	"github.com/kvbench/kvbench-operator/controllers/render"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

// Pure tests of observeRun and aggregate; the envtest suite covers the same paths end to end.

type jobW struct{ batchv1.Job }

func mkJob() *jobW { return &jobW{batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "b-rocksdb"}}} }
func (j *jobW) cond(t batchv1.JobConditionType, reason, msg string) *jobW {
	j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: msg})
	return j
}
func (j *jobW) obj() *batchv1.Job { return &j.Job }

type podW struct{ corev1.Pod }

func mkPod(node string) *podW {
	return &podW{corev1.Pod{Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: corev1.PodPending}}}
}
func (p *podW) phase(ph corev1.PodPhase) *podW { p.Status.Phase = ph; return p }
func (p *podW) state(s corev1.ContainerState) *podW {
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "runner", State: s}}
	return p
}
func (p *podW) terminated(exit int32, reason, msg string, start, end time.Time) *podW {
	return p.state(corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exit, Reason: reason, Message: msg,
		StartedAt: metav1.Time{Time: start}, FinishedAt: metav1.Time{Time: end}}})
}
func (p *podW) unschedulable(msg string, since time.Time) *podW {
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, Message: msg, LastTransitionTime: metav1.Time{Time: since}}}
	return p
}
func (p *podW) list() []corev1.Pod { return []corev1.Pod{p.Pod} }

func TestObserveRun(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	start, end := now.Add(-time.Hour), now.Add(-time.Minute)
	run := plan.Plan(w.MakeKVBenchmark("b", "ns").Obj())[0]
	okSummary := `{"schemaVersion":"kvbench.io/result/v1","engine":"rocksdb","phases":[{"workload":"readrandom","threads":4,"ops":10,"seconds":1,"opsPerSec":10,"microsPerOp":100000}]}`
	errSummary := `{"schemaVersion":"kvbench.io/result/v1","engine":"rocksdb","phases":[{"workload":"readrandom","threads":1,"ops":10,"seconds":1,"opsPerSec":10,"microsPerOp":100000}],"error":"boom"}`
	result := []kvv1.PhaseSummary{{Workload: "readrandom", Threads: 4, Ops: 10, Seconds: 1, OpsPerSec: 10, MicrosPerOp: 100000}}
	base := kvv1.RunStatus{Name: "rocksdb", Engine: "rocksdb", JobName: "b-rocksdb"}
	with := func(f func(*kvv1.RunStatus)) kvv1.RunStatus { s := *base.DeepCopy(); f(&s); return s }
	at := func(t time.Time) *metav1.Time { return &metav1.Time{Time: t} }

	cases := map[string]struct {
		prev    *kvv1.RunStatus
		job     *batchv1.Job
		pods    []corev1.Pod
		logged  *logSnapshot
		pending bool // the final log read is still to come
		want    kvv1.RunStatus
		requeue time.Duration
	}{
		"no Job yet: pending":  {want: with(func(s *kvv1.RunStatus) { s.Phase = kvv1.RunPending })},
		"Job, no pod: pending": {job: mkJob().obj(), want: with(func(s *kvv1.RunStatus) { s.Phase = kvv1.RunPending })},
		"running": {job: mkJob().obj(),
			pods: mkPod("n1").phase(corev1.PodRunning).state(corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Time{Time: start}}}).list(),
			want: with(func(s *kvv1.RunStatus) { s.Phase, s.NodeName, s.StartTime = kvv1.RunRunning, "n1", at(start) })},
		"succeeded with results": {job: mkJob().cond(batchv1.JobComplete, "", "").obj(),
			pods: mkPod("n1").phase(corev1.PodSucceeded).terminated(0, "Completed", okSummary, start, end).list(),
			want: with(func(s *kvv1.RunStatus) {
				s.Phase, s.NodeName, s.StartTime, s.CompletionTime, s.Results = kvv1.RunSucceeded, "n1", at(start), at(end), result
			})},
		"complete, its final log read still to come: running until it has been read": {job: mkJob().cond(batchv1.JobComplete, "", "").obj(),
			pods:    mkPod("n1").phase(corev1.PodSucceeded).terminated(0, "Completed", okSummary, start, end).list(),
			pending: true,
			want: with(func(s *kvv1.RunStatus) {
				s.Phase, s.NodeName, s.StartTime, s.Results = kvv1.RunRunning, "n1", at(start), result
			}),
			requeue: time.Second},
		"complete, but its log was over the limits on runner output": {job: mkJob().cond(batchv1.JobComplete, "", "").obj(),
			pods:   mkPod("n1").phase(corev1.PodSucceeded).terminated(0, "Completed", okSummary, start, end).list(),
			logged: &logSnapshot{Final: true, Over: &archive.LimitError{Left: []string{"20000 phase line(s) over the limit of 10000"}}},
			want: with(func(s *kvv1.RunStatus) {
				s.Phase, s.Reason, s.NodeName, s.StartTime, s.CompletionTime, s.Results = kvv1.RunFailed, kvv1.ReasonResultOverLimits, "n1", at(start), at(end), result
				s.Message = "the runner's output is over the operator's limits (docs/operator.md#limits-on-runner-output); left out: 20000 phase line(s) over the limit of 10000"
			})},
		"complete but the summary reports an error": {job: mkJob().cond(batchv1.JobComplete, "", "").obj(),
			pods: mkPod("n1").phase(corev1.PodSucceeded).terminated(0, "Completed", errSummary, start, end).list(),
			want: with(func(s *kvv1.RunStatus) {
				s.Phase, s.Reason, s.Message, s.NodeName, s.StartTime, s.CompletionTime = kvv1.RunFailed, kvv1.ReasonRunnerError, "boom", "n1", at(start), at(end)
				s.Results = []kvv1.PhaseSummary{{Workload: "readrandom", Threads: 1, Ops: 10, Seconds: 1, OpsPerSec: 10, MicrosPerOp: 100000}}
			})},
		"complete with a foreign schema": {job: mkJob().cond(batchv1.JobComplete, "", "").obj(),
			pods: mkPod("n1").phase(corev1.PodSucceeded).terminated(0, "Completed", `{"schemaVersion":"other/v9"}`, start, end).list(),
			want: with(func(s *kvv1.RunStatus) {
				s.Phase, s.Reason, s.NodeName, s.StartTime, s.CompletionTime = kvv1.RunFailed, kvv1.ReasonResultMissing, "n1", at(start), at(end)
				s.Message = `the runner exited 0 but left no result summary: result schema "other/v9", want "kvbench.io/result/v2"`
			})},
		"OOMKilled wins over the Job's backoff reason": {job: mkJob().cond(batchv1.JobFailed, "BackoffLimitExceeded", "x").obj(),
			pods: mkPod("n1").phase(corev1.PodFailed).terminated(137, "OOMKilled", "", start, end).list(),
			want: with(func(s *kvv1.RunStatus) {
				s.Phase, s.Reason, s.NodeName, s.StartTime, s.CompletionTime = kvv1.RunFailed, kvv1.ReasonOOMKilled, "n1", at(start), at(end)
				s.Message = "the runner exceeded its memory limit (exit code 137); for tmpfs the database counts against it"
			})},
		"deadline from the FailureTarget condition alone": {job: mkJob().cond(batchv1.JobFailureTarget, "DeadlineExceeded", "too long").obj(),
			want: with(func(s *kvv1.RunStatus) {
				s.Phase, s.Reason, s.Message, s.CompletionTime = kvv1.RunFailed, kvv1.ReasonDeadlineExceeded, "too long", at(now)
			})},
		"unschedulable within the grace period: pending, requeue at its end": {job: mkJob().obj(),
			pods: mkPod("").unschedulable("no NVMe node", now.Add(-time.Minute)).list(),
			want: with(func(s *kvv1.RunStatus) {
				s.Phase, s.Reason, s.Message = kvv1.RunPending, kvv1.ReasonUnschedulable, "no NVMe node"
			}),
			requeue: 9 * time.Minute},
		"unschedulable past the grace period: failed": {job: mkJob().obj(),
			pods: mkPod("").unschedulable("no NVMe node", now.Add(-11*time.Minute)).list(),
			want: with(func(s *kvv1.RunStatus) {
				s.Phase, s.Reason, s.Message, s.CompletionTime = kvv1.RunFailed, kvv1.ReasonUnschedulable, "no NVMe node", at(now)
			})},
		"terminal status is final even if the Job changes": {
			prev: ptrTo(with(func(s *kvv1.RunStatus) { s.Phase, s.Results = kvv1.RunSucceeded, result })),
			job:  mkJob().cond(batchv1.JobFailed, "X", "").obj(),
			want: with(func(s *kvv1.RunStatus) { s.Phase, s.Results = kvv1.RunSucceeded, result })},
		"a pending run whose Job is missing is created (not failed)": {
			prev: ptrTo(with(func(s *kvv1.RunStatus) { s.Phase, s.Reason = kvv1.RunPending, kvv1.ReasonWaitingForSlot })),
			want: with(func(s *kvv1.RunStatus) { s.Phase = kvv1.RunPending })},
		"the deadline's FailureTarget while the runner still writes its summary: not decided yet": {
			job:     mkJob().cond(batchv1.JobFailureTarget, "DeadlineExceeded", "too long").obj(),
			pods:    mkPod("n1").phase(corev1.PodRunning).state(corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Time{Time: start}}}).list(),
			want:    with(func(s *kvv1.RunStatus) { s.Phase, s.NodeName, s.StartTime = kvv1.RunRunning, "n1", at(start) }),
			requeue: podGoneGrace},
		"Complete before the pod's termination is seen: not decided yet": {
			job:     mkJob().cond(batchv1.JobSuccessCriteriaMet, "", "").cond(batchv1.JobComplete, "", "").obj(),
			pods:    mkPod("n1").phase(corev1.PodRunning).list(),
			want:    with(func(s *kvv1.RunStatus) { s.Phase, s.NodeName = kvv1.RunRunning, "n1" }),
			requeue: podGoneGrace},
		"a running run lists the phases it logged": {
			prev:   ptrTo(with(func(s *kvv1.RunStatus) { s.Phase, s.Results = kvv1.RunRunning, []kvv1.PhaseSummary{ph(0, 1, false)} })),
			job:    mkJob().obj(),
			pods:   mkPod("n1").phase(corev1.PodRunning).list(),
			logged: &logSnapshot{Phases: []kvv1.PhaseSummary{ph(0, 1, true), ph(1, 2, true)}},
			want: with(func(s *kvv1.RunStatus) {
				s.Phase, s.NodeName, s.Results = kvv1.RunRunning, "n1", []kvv1.PhaseSummary{ph(0, 1, true), ph(1, 2, true)}
			})},
		"OOM kill (no summary) keeps the phases logged before": {
			prev:   ptrTo(with(func(s *kvv1.RunStatus) { s.Phase, s.Results = kvv1.RunRunning, []kvv1.PhaseSummary{ph(0, 1, true)} })),
			job:    mkJob().cond(batchv1.JobFailed, "BackoffLimitExceeded", "x").obj(),
			pods:   mkPod("n1").phase(corev1.PodFailed).terminated(137, "OOMKilled", "", start, end).list(),
			logged: &logSnapshot{Phases: []kvv1.PhaseSummary{ph(0, 1, true), ph(1, 2, true)}},
			want: with(func(s *kvv1.RunStatus) {
				s.Phase, s.Reason, s.NodeName, s.StartTime, s.CompletionTime = kvv1.RunFailed, kvv1.ReasonOOMKilled, "n1", at(start), at(end)
				s.Message = "the runner exceeded its memory limit (exit code 137); for tmpfs the database counts against it"
				s.Results = []kvv1.PhaseSummary{ph(0, 1, true), ph(1, 2, true)}
			})},
		"deadline: a truncated summary and the logged phases together keep every phase": {
			prev: ptrTo(with(func(s *kvv1.RunStatus) { s.Phase = kvv1.RunRunning })),
			job:  mkJob().cond(batchv1.JobFailed, "DeadlineExceeded", "too long").obj(),
			pods: mkPod("n1").phase(corev1.PodFailed).terminated(143, "Error",
				`{"schemaVersion":"kvbench.io/result/v2","engine":"rocksdb","phases":[{"workload":"w","threads":1,"ops":1,"seconds":1,"opsPerSec":1,"microsPerOp":1},{"index":1,"workload":"w","threads":2,"ops":1,"seconds":1,"opsPerSec":1,"microsPerOp":1}],"truncated":1,"error":"interrupted by SIGTERM"}`,
				start, end).list(),
			logged: &logSnapshot{Phases: []kvv1.PhaseSummary{ph(0, 1, true)}},
			want: with(func(s *kvv1.RunStatus) {
				s.Phase, s.Reason, s.Message, s.NodeName, s.StartTime, s.CompletionTime = kvv1.RunFailed, kvv1.ReasonDeadlineExceeded, "too long", "n1", at(start), at(end)
				s.Results, s.Truncated = []kvv1.PhaseSummary{ph(0, 1, true), ph(1, 2, false)}, 1
			})},
		"image pull error within the start window: pending with the kubelet's message": {
			job:  func() *batchv1.Job { j := mkJob().obj(); j.Status.StartTime = at(now.Add(-time.Minute)); return j }(),
			pods: mkPod("n1").state(corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "not found"}}).list(),
			want: with(func(s *kvv1.RunStatus) {
				s.Phase, s.Reason, s.Message, s.NodeName = kvv1.RunPending, kvv1.ReasonImagePull, "ErrImagePull: not found", "n1"
			}),
			requeue: time.Minute},
		"CreateContainerConfigError past the start window: failed": {
			job:  func() *batchv1.Job { j := mkJob().obj(); j.Status.StartTime = at(now.Add(-3 * time.Minute)); return j }(),
			pods: mkPod("n1").state(corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CreateContainerConfigError", Message: `secret "x" not found`}}).list(),
			want: with(func(s *kvv1.RunStatus) {
				s.Phase, s.Reason, s.NodeName, s.CompletionTime = kvv1.RunFailed, kvv1.ReasonContainerConfig, "n1", at(now)
				s.Message = `CreateContainerConfigError: secret "x" not found`
			})},
		"the pod succeeded before its Job is marked Complete: decided from the pod, never back to Pending": {
			prev: ptrTo(with(func(s *kvv1.RunStatus) { s.Phase, s.NodeName, s.StartTime = kvv1.RunRunning, "n1", at(start) })),
			job:  mkJob().obj(),
			pods: mkPod("n1").phase(corev1.PodSucceeded).terminated(0, "Completed", okSummary, start, end).list(),
			want: with(func(s *kvv1.RunStatus) {
				s.Phase, s.NodeName, s.StartTime, s.CompletionTime, s.Results = kvv1.RunSucceeded, "n1", at(start), at(end), result
			})},
		"the runner exited but the pod's phase is not updated yet: Running, not Pending": {
			prev: ptrTo(with(func(s *kvv1.RunStatus) { s.Phase, s.NodeName, s.StartTime = kvv1.RunRunning, "n1", at(start) })),
			job:  mkJob().obj(),
			pods: mkPod("n1").phase(corev1.PodRunning).terminated(0, "Completed", okSummary, start, end).list(),
			want: with(func(s *kvv1.RunStatus) {
				s.Phase, s.NodeName, s.StartTime, s.Results = kvv1.RunRunning, "n1", at(start), result
			})},
		"the pod succeeded but the Job's deadline came first: the Job's verdict": {
			job:  mkJob().cond(batchv1.JobFailureTarget, "DeadlineExceeded", "too long").obj(),
			pods: mkPod("n1").phase(corev1.PodSucceeded).terminated(0, "Completed", okSummary, start, end).list(),
			want: with(func(s *kvv1.RunStatus) {
				s.Phase, s.Reason, s.Message, s.NodeName, s.StartTime, s.CompletionTime, s.Results = kvv1.RunFailed, kvv1.ReasonDeadlineExceeded, "too long", "n1", at(start), at(end), result
			})},
		"a running run whose pod the cache lost while its Job is active stays Running": {
			prev: ptrTo(with(func(s *kvv1.RunStatus) { s.Phase, s.NodeName, s.StartTime = kvv1.RunRunning, "n1", at(start) })),
			job:  mkJob().obj(),
			want: with(func(s *kvv1.RunStatus) { s.Phase, s.NodeName, s.StartTime = kvv1.RunRunning, "n1", at(start) })},
		"pod anti-affinity is bounded like any unschedulable reason": {job: mkJob().obj(),
			pods: mkPod("").unschedulable("0/10 nodes are available: 1 node(s) didn't match pod anti-affinity rules, 9 Insufficient memory.", now.Add(-11*time.Minute)).list(),
			want: with(func(s *kvv1.RunStatus) {
				s.Phase, s.Reason, s.CompletionTime = kvv1.RunFailed, kvv1.ReasonUnschedulable, at(now)
				s.Message = "0/10 nodes are available: 1 node(s) didn't match pod anti-affinity rules, 9 Insufficient memory."
			})},
		"a run that failed before it got a node does not claim its pin as its node": {
			prev: ptrTo(with(func(s *kvv1.RunStatus) { s.Phase, s.NodeName = kvv1.RunPending, "n2" })),
			job: func() *batchv1.Job {
				j := mkJob().cond(batchv1.JobFailed, "DeadlineExceeded", "too long").obj()
				j.Spec.Template.Spec.Affinity = pinnedAffinity("n2")
				return j
			}(),
			want: with(func(s *kvv1.RunStatus) {
				s.Phase, s.Reason, s.Message, s.CompletionTime = kvv1.RunFailed, kvv1.ReasonDeadlineExceeded, "too long", at(now)
			})},
		"a running run whose Job vanished fails": {
			prev: ptrTo(with(func(s *kvv1.RunStatus) { s.Phase, s.NodeName = kvv1.RunRunning, "n1" })),
			want: with(func(s *kvv1.RunStatus) {
				s.Phase, s.Reason, s.NodeName, s.CompletionTime = kvv1.RunFailed, kvv1.ReasonJobDeleted, "n1", at(now)
				s.Message = "the run's Job was deleted before it finished"
			})},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, obs := observeRun(run, tc.prev, tc.job, tc.pods, tc.logged, now, limits{unschedulable: 10 * time.Minute, startFailure: 2 * time.Minute, finalLogPending: tc.pending})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if obs.requeueAfter != tc.requeue {
				t.Errorf("requeueAfter = %v, want %v", obs.requeueAfter, tc.requeue)
			}
		})
	}
}

// ph is a test phase at index i with threads; detailed phases carry latencies.
func ph(i, threads int32, detailed bool) kvv1.PhaseSummary {
	p := kvv1.PhaseSummary{Index: i, Workload: "w", Threads: threads, Ops: 1, Seconds: 1, OpsPerSec: 1, MicrosPerOp: 1}
	if detailed {
		p.LatencyMicros = &kvv1.Percentiles{P50: 1, P99: 2}
	}
	return p
}

func TestMergePhases(t *testing.T) {
	v1 := []kvv1.PhaseSummary{ph(0, 1, false), ph(0, 2, false), ph(0, 4, false)} // no indexes: positions
	got := mergePhases([]kvv1.PhaseSummary{ph(1, 2, true)}, v1)
	want := []kvv1.PhaseSummary{ph(0, 1, false), ph(1, 2, true), ph(2, 4, false)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if mergePhases(nil, nil) != nil {
		t.Error("no phases: want nil")
	}
}

// Merging keeps every phase any source knows, and counts those none of them holds.
func TestMergeResultsCountsTruncated(t *testing.T) {
	var many []kvv1.PhaseSummary
	for i := range 1050 {
		many = append(many, ph(int32(i), 1, true))
	}
	var st kvv1.RunStatus
	mergeResults(&st, &kvv1.Summary{Phases: many[:10], Truncated: int32(len(many) - 10)}, &logSnapshot{Phases: many[:1000]})
	if len(st.Results) != 1000 || st.Truncated != 50 {
		t.Errorf("%d phases kept, %d truncated", len(st.Results), st.Truncated)
	}
	// A later pass with the status a fitting kept (100 phases, 950 counted) and the same sources.
	st.Results, st.Truncated = st.Results[:100], 950
	mergeResults(&st, &kvv1.Summary{Phases: many[:10], Truncated: int32(len(many) - 10)}, &logSnapshot{Phases: many[:1000]})
	if len(st.Results) != 1000 || st.Truncated != 50 {
		t.Errorf("again: %d phases kept, %d truncated", len(st.Results), st.Truncated)
	}
}

// Issue 18: a runner reporting far more phases than its plan makes (10,000 tiny phase lines) kept
// them all in status, filling the benchmark's budget. Status keeps the plan's share, counting the rest.
func TestAggregateKeepsWhatThePlanMakes(t *testing.T) {
	b := w.MakeKVBenchmark("b", "ns").EngineNames(kvv1.EngineRocksDB).Obj()
	keep := statusPhases(plannedConfig(b))
	if keep != minStatusPhases {
		t.Fatalf("a one-workload plan keeps %d phases, want the floor %d", keep, minStatusPhases)
	}
	var many []kvv1.PhaseSummary
	for i := range 10000 {
		many = append(many, ph(int32(i), 1, true))
	}
	runs := []kvv1.RunStatus{{Name: "rocksdb", Engine: kvv1.EngineRocksDB, Phase: kvv1.RunRunning}}
	for pass := range 2 { // a later pass, from the status the first wrote and the same sources
		st := &runs[0]
		mergeResults(st, &kvv1.Summary{Phases: many[:10], Truncated: int32(len(many) - 10)}, &logSnapshot{Phases: many})
		got := aggregate(b, runs, t0)
		r := got.Runs[0]
		if len(r.Results) != keep || r.Truncated != int32(len(many)-keep) || r.Results[keep-1].Index != int32(keep-1) || got.PhaseProgress != "10000/10000" {
			t.Errorf("pass %d: %d phases kept (last %d), %d truncated, progress %s; want the first %d, %d and 10000/10000",
				pass, len(r.Results), r.Results[len(r.Results)-1].Index, r.Truncated, got.PhaseProgress, keep, len(many)-keep)
		}
		runs = got.Runs
	}
	// A plan larger than the floor keeps all of its phases: 8 thread counts x 10 repeats.
	big := w.MakeKVBenchmark("big", "ns").EngineNames(kvv1.EngineRocksDB).Threads(1, 2, 4, 8, 16, 32, 64, 128).
		EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.Repeat = 10 }).Obj()
	if got, want := statusPhases(plannedConfig(big)), 8*10*len(big.Spec.Workloads); got != want {
		t.Errorf("a plan of %d phases keeps %d in status", want, got)
	}
}

func TestPhaseProgress(t *testing.T) {
	b := w.MakeKVBenchmark("b", "ns").EngineNames(kvv1.EngineRocksDB, kvv1.EnginePebble).Obj()
	per := plannedPhases(plan.Plan(b)[0].Config)
	if per < 1 {
		t.Fatalf("planned phases %d", per)
	}
	runs := []kvv1.RunStatus{{Results: []kvv1.PhaseSummary{ph(0, 1, false)}, Truncated: 1}, {}}
	if got, want := aggregate(b, runs, time.Now()).PhaseProgress, fmt.Sprintf("2/%d", max(2, 2*per)); got != want {
		t.Errorf("phase progress %q, want %q", got, want)
	}
}

// Issue 21: progress is right for every workload kind. dbbench counts the benchmarks of its
// --benchmarks that report a result (it read "0/4" and then "8/8"), pseudo-benchmarks nothing, and
// spread EachNode counts every engine on every node (it always read "1/1").
func TestPhaseProgressEveryKind(t *testing.T) {
	dbbench := func(args ...string) kvv1.WorkloadSpec {
		return kvv1.WorkloadSpec{Name: kvv1.WorkloadDBBench, DBBenchArgs: args, Threads: []int32{1}}
	}
	withResults := func(n int) kvv1.RunStatus {
		r := kvv1.RunStatus{}
		for i := range n {
			r.Results = append(r.Results, ph(int32(i), 1, false))
		}
		return r
	}
	for name, tc := range map[string]struct {
		b    *kvv1.KVBenchmark
		runs []kvv1.RunStatus
		want string
	}{
		"dbbench: fillseq,readrandom x 2 workloads x 2 repeats, nothing run yet": {
			w.MakeKVBenchmark("b", "ns").Threads(1).EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.Repeat = 2 }).
				Workloads(dbbench("--benchmarks=fillseq,readrandom"), dbbench("--benchmarks=overwrite,readseq")).Obj(),
			[]kvv1.RunStatus{{}}, "0/8"},
		"dbbench: pseudo-benchmarks print no result, [X3] three": {
			w.MakeKVBenchmark("b", "ns").Threads(1).Workloads(dbbench("--benchmarks=fillseq,stats,compact,waitforcompaction,readrandom[X3],levelstats")).Obj(),
			[]kvv1.RunStatus{withResults(2)}, "2/5"},
		"runner pseudo-benchmarks make no phase": {
			w.MakeKVBenchmark("b", "ns").Threads(1, 2).Workloads(kvv1.WorkloadSpec{Name: kvv1.WorkloadFillSeq, Threads: []int32{1}},
				kvv1.WorkloadSpec{Name: kvv1.WorkloadStats}, kvv1.WorkloadSpec{Name: kvv1.WorkloadReadRandom}).Obj(),
			[]kvv1.RunStatus{withResults(1)}, "1/3"},
		"spread EachNode: one engine on 12 nodes": {
			w.MakeKVBenchmark("b", "ns").Threads(1).EditSpec(func(s *kvv1.KVBenchmarkSpec) {
				s.Placement.Spread, s.Placement.MaxNodes = kvv1.SpreadEachNode, ptrTo[int32](12)
			}).Obj(),
			append([]kvv1.RunStatus{withResults(1)}, make([]kvv1.RunStatus, 11)...), "1/12"},
		"spread EachNode before the nodes are known: the engines": {
			w.MakeKVBenchmark("b", "ns").Threads(1).EngineNames(kvv1.EngineRocksDB, kvv1.EnginePebble).EditSpec(func(s *kvv1.KVBenchmarkSpec) {
				s.Placement.Spread, s.Placement.MaxNodes = kvv1.SpreadEachNode, ptrTo[int32](12)
			}).Obj(),
			nil, "0/2"},
	} {
		if got := aggregate(tc.b, tc.runs, time.Now()).PhaseProgress; got != tc.want {
			t.Errorf("%s: progress %q, want %q", name, got, tc.want)
		}
	}
}

// The default columns explain: the headline says what it measured, Reason why nothing runs or
// why it failed, Verdict what the conditions concluded.
func TestColumnsThatExplain(t *testing.T) {
	b := w.MakeKVBenchmark("b", "ns").EngineNames(kvv1.EngineRocksDB, kvv1.EnginePebble).Obj()
	p := phase("fillrandom", 4, 108419.6, 35.9)
	st := aggregate(b, []kvv1.RunStatus{{Name: "rocksdb", Engine: kvv1.EngineRocksDB, Phase: kvv1.RunSucceeded, Results: []kvv1.PhaseSummary{p}},
		{Name: "pebble", Engine: kvv1.EnginePebble, Phase: kvv1.RunPending, Reason: kvv1.ReasonWaitingForRun}}, t0)
	if st.Headline.Label != "rocksdb fillrandom threads=4: 108420 ops/s" || st.Reason != kvv1.ReasonWaitingForRun {
		t.Errorf("headline %q, reason %q", st.Headline.Label, st.Reason)
	}
	r := func(name string, ph kvv1.RunPhase, reason string) kvv1.RunStatus {
		return kvv1.RunStatus{Name: name, Phase: ph, Reason: reason}
	}
	for name, tc := range map[string]struct {
		runs []kvv1.RunStatus
		want string
	}{
		"running: no reason":        {[]kvv1.RunStatus{r("a", kvv1.RunRunning, ""), r("b", kvv1.RunPending, kvv1.ReasonWaitingForRun)}, ""},
		"waiting for a slot":        {[]kvv1.RunStatus{r("a", kvv1.RunPending, kvv1.ReasonWaitingForSlot), r("b", kvv1.RunPending, kvv1.ReasonWaitingForRun)}, kvv1.ReasonWaitingForSlot},
		"failed: the runs' reasons": {[]kvv1.RunStatus{r("a", kvv1.RunFailed, kvv1.ReasonOOMKilled), r("b", kvv1.RunSucceeded, ""), r("c", kvv1.RunFailed, kvv1.ReasonOOMKilled)}, kvv1.ReasonOOMKilled},
		"succeeded":                 {[]kvv1.RunStatus{r("a", kvv1.RunSucceeded, "")}, ""},
	} {
		if got := aggregate(b, tc.runs, t0).Reason; got != tc.want {
			t.Errorf("%s: reason %q, want %q", name, got, tc.want)
		}
	}
	cond := func(t, s, reason string) metav1.Condition {
		return metav1.Condition{Type: t, Status: metav1.ConditionStatus(s), Reason: reason}
	}
	for want, conds := range map[string][]metav1.Condition{
		"":                     {cond(kvv1.ConditionSucceeded, "True", "AllRunsSucceeded"), cond(kvv1.ConditionNoisy, "False", "Steady")},
		"Regressed,Noisy":      {cond(kvv1.ConditionRegressed, "True", "Regression"), cond(kvv1.ConditionNoisy, "True", "NoisyPoints")},
		"NoRegression":         {cond(kvv1.ConditionRegressed, "False", "NoRegression")},
		"BaselineMismatch":     {cond(kvv1.ConditionRegressed, "Unknown", "BaselineMismatch")},
		"StateDrift":           {cond(kvv1.ConditionNoisy, "True", ReasonStateDrift)},
		"Regressed,StateDrift": {cond(kvv1.ConditionRegressed, "True", "Regression"), cond(kvv1.ConditionNoisy, "True", ReasonStateDrift)},
	} {
		if got := verdictColumn(conds); got != want {
			t.Errorf("verdict %q, want %q", got, want)
		}
	}
}

// Noisy says when the variation comes from state: repeats of a sweep that writes, with reset none,
// each ran on the database the previous one left (issue 21: readrandom 194,956 / 40,154 / 48,944
// ops/s after fillrandom, CoV 91.8%).
func TestNoisyStateDrift(t *testing.T) {
	var results []kvv1.PhaseSummary
	for i, ops := range []float64{194956, 40154, 48944} {
		p := phase("readrandom", 1, ops, 10)
		p.Iteration = int32(i)
		results = append(results, p)
	}
	runs := []kvv1.RunStatus{{Name: "pebble", Engine: kvv1.EnginePebble, Phase: kvv1.RunSucceeded, Results: results}}
	sweep := []kvv1.WorkloadSpec{{Name: kvv1.WorkloadReadRandom}, {Name: kvv1.WorkloadFillRandom}}
	for reset, want := range map[kvv1.ResetMode]string{kvv1.ResetNone: ReasonStateDrift, kvv1.ResetPerIteration: "NoisyPoints", "": "NoisyPoints"} {
		verdict := map[string]string{ReasonStateDrift: ReasonStateDrift, "NoisyPoints": kvv1.ConditionNoisy}[want]
		b := w.MakeKVBenchmark("b", "ns").EngineNames(kvv1.EnginePebble).Workloads(sweep...).
			EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.Repeat, s.Reset = 3, reset }).Obj()
		st := aggregate(b, slices.Clone(runs), t0)
		c := meta.FindStatusCondition(st.Conditions, kvv1.ConditionNoisy)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != want || st.Verdict != verdict {
			t.Errorf("reset %q: Noisy %+v, verdict %q, want reason %s", reset, c, st.Verdict, want)
		}
	}
}

func TestAggregateDatasetColumn(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for want, b := range map[string]*kvv1.KVBenchmark{
		"10Gi":         w.MakeKVBenchmark("b", "ns").DatasetSize("10Gi").Obj(),
		"1000000 keys": w.MakeKVBenchmark("b", "ns").DatasetNum(1000000).Obj(),
	} {
		if got := aggregate(b, nil, now).Dataset; got != want {
			t.Errorf("dataset column %q, want %q", got, want)
		}
	}
}

func TestAggregatePhase(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := func(p kvv1.RunPhase) kvv1.RunStatus { return kvv1.RunStatus{Name: string(p), Phase: p} }
	cases := map[string]struct {
		runs []kvv1.RunStatus
		want kvv1.BenchmarkPhase
	}{
		"all pending":                            {[]kvv1.RunStatus{r(kvv1.RunPending), r(kvv1.RunPending)}, kvv1.PhasePending},
		"one running":                            {[]kvv1.RunStatus{r(kvv1.RunRunning), r(kvv1.RunPending)}, kvv1.PhaseRunning},
		"one failed, one still running: Running": {[]kvv1.RunStatus{r(kvv1.RunFailed), r(kvv1.RunRunning)}, kvv1.PhaseRunning},
		"one failed, one succeeded: Failed":      {[]kvv1.RunStatus{r(kvv1.RunFailed), r(kvv1.RunSucceeded)}, kvv1.PhaseFailed},
		"all succeeded":                          {[]kvv1.RunStatus{r(kvv1.RunSucceeded), r(kvv1.RunSucceeded)}, kvv1.PhaseSucceeded},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := w.MakeKVBenchmark("b", "ns").Obj()
			b.Generation = 3
			got := aggregate(b, tc.runs, now)
			if got.Phase != tc.want {
				t.Errorf("phase = %s, want %s", got.Phase, tc.want)
			}
			for _, c := range got.Conditions {
				if c.ObservedGeneration != 3 {
					t.Errorf("condition %s observedGeneration = %d", c.Type, c.ObservedGeneration)
				}
				if c.Type == kvv1.ConditionSucceeded && (c.Status == metav1.ConditionTrue) != (tc.want == kvv1.PhaseSucceeded) {
					t.Errorf("Succeeded condition %s with phase %s", c.Status, got.Phase)
				}
			}
		})
	}
}

// A pinned run (EachNode, or a later engine under Sequential) shows its node before its pod is
// scheduled, and the scheduler's node once it is.
func TestObserveRunPinnedNode(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	run := plan.Plan(w.MakeKVBenchmark("b", "ns").Obj())[0]
	run.Node = "n1"
	for name, tc := range map[string]struct {
		job  *batchv1.Job
		pods []corev1.Pod
		want string
	}{
		"no Job":          {want: "n1"},
		"pod unscheduled": {job: mkJob().obj(), pods: mkPod("").unschedulable("0/3 nodes are available", now).list(), want: "n1"},
		"pod scheduled":   {job: mkJob().obj(), pods: mkPod("n1").list(), want: "n1"},
	} {
		got, _ := observeRun(run, nil, tc.job, tc.pods, nil, now, limits{unschedulable: 10 * time.Minute})
		if got.NodeName != tc.want {
			t.Errorf("%s: nodeName = %q, want %q", name, got.NodeName, tc.want)
		}
	}
	run.Node = ""
	if got, _ := observeRun(run, nil, mkJob().obj(), mkPod("").list(), nil, now, limits{unschedulable: time.Minute}); got.NodeName != "" {
		t.Errorf("unpinned, unscheduled: nodeName = %q", got.NodeName)
	}
	// Sequential pins a later engine when its Job is made (the plan does not know the node): a
	// status write lost after the create must not lose the node, so the Job says it.
	pinnedJob, err := render.Job(w.MakeKVBenchmark("b", "ns").Obj(), plan.Run{Name: "pebble", JobName: "b-pebble", Node: "n2"}, render.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := observeRun(run, nil, pinnedJob, nil, nil, now, limits{unschedulable: time.Minute}); got.NodeName != "n2" {
		t.Errorf("pinned Job, no pod, no status: nodeName = %q, want n2", got.NodeName)
	}
}

func TestArchiveRetryAfterBacksOff(t *testing.T) {
	// Simulate the retries of a run whose log never becomes readable.
	var tries []time.Duration
	for at := time.Duration(0); at < archiveGiveUp; at += archiveRetryAfter(at) {
		tries = append(tries, at)
	}
	want := []time.Duration{0, 15 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute}
	if !slices.Equal(tries, want) {
		t.Fatalf("tries at %v, want %v", tries, want)
	}
	if got := archiveRetryAfter(archiveGiveUp - 10*time.Millisecond); got != time.Second {
		t.Fatalf("just before giving up: wait %v, want 1s", got)
	}
}

// Issue 18: two repeats at 1e200 and 3e200 ops/s made status.runs[].points' standard deviation
// +Inf; json.Marshal failed and the status could never be written. Over extreme values (also NaN
// and ±Inf, which a runner cannot send in JSON but a bug could compute) the aggregated status
// marshals, and the headline is a sane integer.
func TestAggregateOfExtremeValuesMarshals(t *testing.T) {
	extremes := []float64{1e308, -1e308, math.MaxFloat64, 3e200, 1e200, 0, -1, 5e-324, 1e-310, math.NaN(), math.Inf(1), math.Inf(-1)}
	b := w.MakeKVBenchmark("b", "ns").Obj()
	for _, x := range extremes {
		for _, y := range extremes {
			runs := []kvv1.RunStatus{{Name: "rocksdb", Engine: kvv1.EngineRocksDB, Phase: kvv1.RunSucceeded, Results: []kvv1.PhaseSummary{
				{Workload: "readrandom", Threads: 1, OpsPerSec: x, Iteration: 0, LatencyMicros: &kvv1.Percentiles{P99: y}},
				{Index: 1, Workload: "readrandom", Threads: 1, OpsPerSec: y, Iteration: 1, LatencyMicros: &kvv1.Percentiles{P99: x}},
			}}}
			st := aggregate(b, runs, t0)
			if _, err := json.Marshal(st.Runs[0].Points); err != nil {
				t.Fatalf("points of %g, %g: %v", x, y, err)
			}
			// The headline is the two repeats' median (issue 34).
			if h := st.Headline; h == nil || (x >= 1 && y >= 1 && h.OpsPerSec <= 0) || (x <= -1 && y <= -1 && h.OpsPerSec >= 0) {
				t.Fatalf("headline of %g, %g: %+v", x, y, h)
			}
		}
	}
}

// pinnedAffinity is the node affinity render gives a run pinned to node.
func pinnedAffinity(node string) *corev1.Affinity {
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}}}}}}
}
