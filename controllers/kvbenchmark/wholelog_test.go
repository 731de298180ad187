package kvbenchmark

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/controllers/plan"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

// Issue 29: on a busy machine the hostile e2e runner's run ended Succeeded. Its log (a flood of
// phase lines, then a result line) passed the kubelet's containerLogMaxSize while it ran; the
// kubelet rotated it, and the logs endpoint serves only the current file. The read while it ran
// saw the flood (over the limits); the final read saw what was written after the rotation (no
// result line), replaced the first read's snapshot, and the run was decided Succeeded from the
// summary the runner wrote. These tests replay that sequence with a log source that rotates.

// rotatingLog serves a pod's log as the kubelet does: the current file only.
type rotatingLog struct{ current string }

func (r *rotatingLog) open(context.Context, string, string, string) (io.ReadCloser, error) {
	return io.NopCloser(strings.NewReader(r.current)), nil
}

// The reader: a final read of a rotated log keeps what an earlier read found over the limits,
// and says what the log lacks.
func TestLogReaderKeepsOverLimitsAcrossARotatedLog(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	flood := strings.Repeat(phaseLine(t, kvv1.PhaseResult{PhaseSummary: kvv1.PhaseSummary{Workload: "x", Threads: 1}}), 3)
	src := &rotatingLog{current: flood}
	l := NewLogReader(src.open)
	l.Clock, l.Limits.Phases = clocktesting.NewFakePassiveClock(t0), 2
	owner := types.NamespacedName{Namespace: "ns", Name: "b"}
	pod := runnerPod("p")
	l.Get(pod, owner, false)
	<-l.Events
	if s := l.Get(pod, owner, false); s == nil || s.Over == nil {
		t.Fatalf("the read while it runs: %+v, want over the limit of 2 phase lines", s)
	}

	src.current = "" // rotated after the result line: the current file holds nothing yet
	ended := pod.DeepCopy()
	ended.ResourceVersion = "2"
	l.Get(ended, owner, true)
	<-l.Final
	s := l.Get(ended, owner, true)
	if s == nil || !s.Final {
		t.Fatalf("no final snapshot: %+v", s)
	}
	if s.Over == nil || !strings.Contains(s.Over.Error(), "phase line(s) over the limit of 2") {
		t.Errorf("the final read of the rotated log dropped the over-limits verdict: Over = %v", s.Over)
	}
	if s.Incomplete == nil || !strings.Contains(s.Incomplete.Error(), "no result line") {
		t.Errorf("Incomplete = %v, want no result line", s.Incomplete)
	}
}

// The decision: every way the final read can see less than the whole log, and the summary's
// impossible numbers, each deterministic.
func TestObserveRunDecidesOnTheWholeLog(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	start, end := now.Add(-time.Hour), now.Add(-time.Minute)
	run := plan.Plan(w.MakeKVBenchmark("b", "ns").Obj())[0]
	// What the hostile runner's summary says: one valid phase, success.
	okSummary := `{"schemaVersion":"kvbench.io/result/v2","engine":"rocksdb","phases":[{"workload":"readrandom","threads":1,"ops":10,"seconds":1,"opsPerSec":10,"microsPerOp":100000}]}`
	hugeSummary := `{"schemaVersion":"kvbench.io/result/v2","engine":"rocksdb","phases":[{"workload":"readrandom","threads":1,"ops":1,"seconds":1,"opsPerSec":1e308,"microsPerOp":1e308}]}`
	complete := func() (*batchv1.Job, []corev1.Pod) {
		return mkJob().cond(batchv1.JobComplete, "", "").obj(), mkPod("n1").phase(corev1.PodSucceeded).terminated(0, "Completed", okSummary, start, end).list()
	}
	// The phases status kept from the reads while it ran (workload "x", 1e308 ops/s in the e2e).
	streamed := []kvv1.PhaseSummary{{Workload: "x", Threads: 1}}
	overLimits := fmt.Errorf("the runner's output is over the operator's limits (docs/operator.md#limits-on-runner-output); left out: 85000 phase line(s) over the limit of 10000")
	lim := limits{unschedulable: 10 * time.Minute, startFailure: 2 * time.Minute, logGiveUp: archiveGiveUp}

	cases := map[string]struct {
		prev       *kvv1.RunStatus
		pods       []corev1.Pod
		logged     *logSnapshot
		wantPhase  kvv1.RunPhase
		wantReason string
		wantIn     string // in the message
		requeue    bool
	}{
		"the final read of a rotated log has no result line: ResultIncomplete, not Succeeded": {
			logged:    &logSnapshot{Final: true, Phases: streamed, Incomplete: fmt.Errorf("no result line (the runner writes it last)")},
			wantPhase: kvv1.RunFailed, wantReason: kvv1.ReasonResultIncomplete, wantIn: "no result line",
		},
		"an earlier read found the log over the limits, the final read of the rotated log did not": {
			logged:    &logSnapshot{Final: true, Phases: streamed, Over: overLimits, Incomplete: fmt.Errorf("no result line")},
			wantPhase: kvv1.RunFailed, wantReason: kvv1.ReasonResultOverLimits, wantIn: "85000 phase line(s) over the limit",
		},
		"a restarted operator's reader lost the earlier read; status recorded it while the run went on": {
			prev:      &kvv1.RunStatus{Name: "rocksdb", Phase: kvv1.RunRunning, Reason: kvv1.ReasonResultOverLimits, Message: overLimits.Error()},
			logged:    &logSnapshot{Final: true, Incomplete: fmt.Errorf("no result line")},
			wantPhase: kvv1.RunFailed, wantReason: kvv1.ReasonResultOverLimits, wantIn: "85000 phase line(s) over the limit",
		},
		"phase lines rotated away, result line whole: not the whole log": {
			logged:    &logSnapshot{Final: true, Result: &kvv1.Result{}, Incomplete: fmt.Errorf("2 of the result line's 2 phases have no phase line")},
			wantPhase: kvv1.RunFailed, wantReason: kvv1.ReasonResultIncomplete, wantIn: "containerLogMaxSize",
		},
		"the final read failed: not decided while it is retried": {
			logged:    &logSnapshot{Final: true, Phases: streamed, Err: fmt.Errorf("kubelet: connection refused")},
			wantPhase: kvv1.RunRunning, requeue: true,
		},
		"the final read still fails at the give-up: ResultIncomplete": {
			pods:      mkPod("n1").phase(corev1.PodSucceeded).terminated(0, "Completed", okSummary, start, now.Add(-archiveGiveUp)).list(),
			logged:    &logSnapshot{Final: true, Phases: streamed, Err: fmt.Errorf("kubelet: connection refused")},
			wantPhase: kvv1.RunFailed, wantReason: kvv1.ReasonResultIncomplete, wantIn: "its log could not be read: kubelet: connection refused",
		},
		"a result line that is not a result": {
			logged:    &logSnapshot{Final: true, Bad: fmt.Errorf("result line: invalid character")},
			wantPhase: kvv1.RunFailed, wantReason: kvv1.ReasonResultIncomplete, wantIn: "result line cannot be used",
		},
		"impossible numbers in the summary are refused, naming the phase": {
			pods:      mkPod("n1").phase(corev1.PodSucceeded).terminated(0, "Completed", hugeSummary, start, end).list(),
			logged:    &logSnapshot{Final: true, Result: &kvv1.Result{}},
			wantPhase: kvv1.RunFailed, wantReason: kvv1.ReasonResultOverLimits, wantIn: `phase 0 ("readrandom" threads=1): ops/s 1e+308`,
		},
		"the whole log": {
			logged:    &logSnapshot{Final: true, Result: &kvv1.Result{}},
			wantPhase: kvv1.RunSucceeded,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job, pods := complete()
			if tc.pods != nil {
				pods = tc.pods
			}
			got, obs := observeRun(run, tc.prev, job, pods, tc.logged, now, lim)
			if got.Phase != tc.wantPhase || got.Reason != tc.wantReason || !strings.Contains(got.Message, tc.wantIn) {
				t.Errorf("got %s %q %q; want %s %q with %q", got.Phase, got.Reason, got.Message, tc.wantPhase, tc.wantReason, tc.wantIn)
			}
			if (obs.requeueAfter > 0) != tc.requeue {
				t.Errorf("requeueAfter = %v, want one: %v", obs.requeueAfter, tc.requeue)
			}
			for _, p := range got.Results {
				if p.OpsPerSec > kvv1.MaxOpsPerSecPerThread {
					t.Errorf("an impossible phase reached status: %+v", p)
				}
			}
		})
	}
}

// A running run whose log was found over the limits says so in status, where a restarted
// operator reads it.
func TestObserveRunRecordsOverLimitsWhileRunning(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	run := plan.Plan(w.MakeKVBenchmark("b", "ns").Obj())[0]
	pods := mkPod("n1").phase(corev1.PodRunning).state(corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Time{Time: now}}}).list()
	over := &logSnapshot{Over: fmt.Errorf("left out: 3 phase line(s) over the limit of 2")}
	got, _ := observeRun(run, nil, mkJob().obj(), pods, over, now, limits{})
	if got.Phase != kvv1.RunRunning || got.Reason != kvv1.ReasonResultOverLimits || !strings.Contains(got.Message, "over the limit of 2") {
		t.Fatalf("got %s %q %q; want Running, ResultOverLimits", got.Phase, got.Reason, got.Message)
	}
	// The next pass, by a new operator whose reader has not read the log yet.
	got, _ = observeRun(run, &got, mkJob().obj(), pods, nil, now, limits{})
	if got.Reason != kvv1.ReasonResultOverLimits {
		t.Fatalf("the next pass lost the verdict: %s %q", got.Phase, got.Reason)
	}
}
