package controllers

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/controllers/plan"
	"github.com/kvbench/kvbench-operator/controllers/render"
)

// Container waiting reasons that mean the image will not arrive (no registry is reachable, so a
// back-off never heals).
var imageWaitingReasons = map[string]bool{
	"ErrImagePull": true, "ImagePullBackOff": true, "ErrImageNeverPull": true, "InvalidImageName": true,
}

// maxMessage bounds messages copied into status (scheduler and runner texts can be long).
const maxMessage = 1024

// observation is what observeRun learned besides the status.
type observation struct {
	// requeueAfter > 0 asks for another look (e.g. when an unschedulable grace period ends).
	requeueAfter time.Duration
}

// observeRun derives one run's status from its persisted status, Job and pods. It is pure.
// A run that is already terminal in status stays as it is: results are final.
func observeRun(run plan.Run, prev *kvv1.RunStatus, job *batchv1.Job, pods []corev1.Pod, now time.Time, unschedulableTimeout time.Duration) (kvv1.RunStatus, observation) {
	st := kvv1.RunStatus{Name: run.Name, Engine: run.Engine.Name, JobName: run.JobName, Phase: kvv1.RunPending, NodeName: run.Node}
	if prev != nil {
		if prev.Phase == kvv1.RunSucceeded || prev.Phase == kvv1.RunFailed {
			return *prev.DeepCopy(), observation{}
		}
		st.StartTime = prev.StartTime.DeepCopy()
		if prev.NodeName != "" {
			st.NodeName = prev.NodeName
		}
	}
	if job == nil {
		if prev != nil && prev.Phase == kvv1.RunRunning {
			// Never silently re-run a started benchmark: the numbers would mix two runs.
			st.Phase, st.Reason = kvv1.RunFailed, kvv1.ReasonJobDeleted
			st.Message = "the run's Job was deleted before it finished"
			st.CompletionTime = &metav1.Time{Time: now}
		}
		return st, observation{}
	}

	if st.NodeName == "" {
		// A later engine under Sequential is pinned when its Job is made; the Job says where.
		st.NodeName = render.PinnedNode(&job.Spec.Template.Spec)
	}
	pod := newestPod(pods)
	var term *corev1.ContainerStateTerminated
	var waiting *corev1.ContainerStateWaiting
	var running *corev1.ContainerStateRunning
	if pod != nil {
		if pod.Spec.NodeName != "" { // else the planned (pinned) node, if any
			st.NodeName = pod.Spec.NodeName
		}
		if cs := runnerStatus(pod); cs != nil {
			term, waiting, running = cs.State.Terminated, cs.State.Waiting, cs.State.Running
			if term == nil && cs.LastTerminationState.Terminated != nil {
				term = cs.LastTerminationState.Terminated
			}
		}
		switch {
		case running != nil:
			st.StartTime = timePtr(running.StartedAt)
		case term != nil && !term.StartedAt.IsZero():
			st.StartTime = timePtr(term.StartedAt)
		case st.StartTime == nil && pod.Status.StartTime != nil:
			st.StartTime = pod.Status.StartTime.DeepCopy()
		}
	}
	summary, summaryErr := parseSummary(term)
	if summary != nil {
		copySummary(&st, summary)
	}

	complete := jobCondition(job, batchv1.JobComplete) || jobCondition(job, batchv1.JobSuccessCriteriaMet)
	failed := jobCondition(job, batchv1.JobFailed) || jobCondition(job, batchv1.JobFailureTarget)
	podFailed := pod != nil && pod.Status.Phase == corev1.PodFailed
	finish := func(phase kvv1.RunPhase, reason, msg string) (kvv1.RunStatus, observation) {
		st.Phase, st.Reason, st.Message = phase, reason, truncate(msg)
		switch {
		case term != nil && !term.FinishedAt.IsZero():
			st.CompletionTime = timePtr(term.FinishedAt)
		case job.Status.CompletionTime != nil:
			st.CompletionTime = job.Status.CompletionTime.DeepCopy()
		default:
			st.CompletionTime = &metav1.Time{Time: now}
		}
		return st, observation{}
	}

	switch {
	case complete:
		if summary == nil {
			return finish(kvv1.RunFailed, kvv1.ReasonResultMissing, "the runner exited 0 but left no result summary: "+errText(summaryErr))
		}
		if summary.Error != "" {
			return finish(kvv1.RunFailed, kvv1.ReasonRunnerError, summary.Error)
		}
		return finish(kvv1.RunSucceeded, "", "")
	case failed || podFailed:
		reason, msg := failureReason(job, pod, term, summary)
		return finish(kvv1.RunFailed, reason, msg)
	}

	// The Job is active.
	if waiting != nil && imageWaitingReasons[waiting.Reason] {
		return finish(kvv1.RunFailed, kvv1.ReasonImagePull, fmt.Sprintf("%s: %s", waiting.Reason, waiting.Message))
	}
	if c := podCondition(pod, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
		st.Reason, st.Message = kvv1.ReasonUnschedulable, truncate(c.Message)
		if strings.Contains(c.Message, "anti-affinity") {
			// Waiting for an exclusive node to free up; the Job's deadline still bounds the wait.
			return st, observation{}
		}
		since := c.LastTransitionTime.Time
		if since.IsZero() {
			since = job.CreationTimestamp.Time
		}
		if wait := since.Add(unschedulableTimeout).Sub(now); wait > 0 {
			return st, observation{requeueAfter: wait}
		}
		return finish(kvv1.RunFailed, kvv1.ReasonUnschedulable, c.Message)
	}
	if running != nil || (pod != nil && pod.Status.Phase == corev1.PodRunning) {
		st.Phase = kvv1.RunRunning
	}
	return st, observation{}
}

// failureReason explains a failed run, most specific cause first.
func failureReason(job *batchv1.Job, pod *corev1.Pod, term *corev1.ContainerStateTerminated, summary *kvv1.Summary) (string, string) {
	if term != nil && term.Reason == "OOMKilled" {
		return kvv1.ReasonOOMKilled, fmt.Sprintf("the runner exceeded its memory limit (exit code %d); for tmpfs the database counts against it", term.ExitCode)
	}
	if pod != nil && (pod.Status.Reason == "Evicted" || podConditionTrue(pod, corev1.DisruptionTarget)) {
		msg := pod.Status.Message
		if c := podCondition(pod, corev1.DisruptionTarget); msg == "" && c != nil {
			msg = c.Reason + ": " + c.Message
		}
		return kvv1.ReasonEvicted, msg
	}
	for _, t := range []batchv1.JobConditionType{batchv1.JobFailed, batchv1.JobFailureTarget} {
		if c := jobConditionGet(job, t); c != nil && c.Reason == batchv1.JobReasonDeadlineExceeded {
			return kvv1.ReasonDeadlineExceeded, c.Message
		}
	}
	if summary != nil && summary.Error != "" {
		return kvv1.ReasonRunnerError, summary.Error
	}
	if term != nil && term.ExitCode != 0 {
		msg := fmt.Sprintf("the runner exited with code %d", term.ExitCode)
		if term.Reason != "" && term.Reason != "Error" {
			msg += " (" + term.Reason + ")"
		}
		if summary == nil && term.Message != "" {
			msg += ": " + term.Message
		}
		return kvv1.ReasonRunnerError, msg
	}
	for _, t := range []batchv1.JobConditionType{batchv1.JobFailed, batchv1.JobFailureTarget} {
		if c := jobConditionGet(job, t); c != nil && c.Status == corev1.ConditionTrue {
			return kvv1.ReasonJobFailed, c.Reason + ": " + c.Message
		}
	}
	return kvv1.ReasonJobFailed, "the runner pod failed"
}

// parseSummary decodes the runner's termination message. Nil with an error when missing or foreign.
func parseSummary(term *corev1.ContainerStateTerminated) (*kvv1.Summary, error) {
	if term == nil || strings.TrimSpace(term.Message) == "" {
		return nil, fmt.Errorf("no termination message")
	}
	var s kvv1.Summary
	if err := json.Unmarshal([]byte(term.Message), &s); err != nil {
		return nil, fmt.Errorf("termination message is not a result summary: %v", err)
	}
	if !kvv1.KnownResultSchema(s.SchemaVersion) {
		return nil, fmt.Errorf("result schema %q, want %q", s.SchemaVersion, kvv1.ResultSchemaVersion)
	}
	return &s, nil
}

func copySummary(st *kvv1.RunStatus, s *kvv1.Summary) {
	st.EngineVersion = s.EngineVersion
	st.Dataset = s.Dataset.DeepCopy()
	st.Load = s.Load.DeepCopy()
	st.Results = nil
	for i := range s.Phases {
		st.Results = append(st.Results, *s.Phases[i].DeepCopy())
	}
	st.Truncated = s.Truncated
}

// datasetColumn is the dataset's size as given, else its key count.
func datasetColumn(d kvv1.DatasetSpec) string {
	switch {
	case d.Size != nil:
		return d.Size.String()
	case d.Num != nil:
		return fmt.Sprintf("%d keys", *d.Num)
	}
	return ""
}

// aggregate computes the benchmark status from its runs. A failed run makes the benchmark Failed
// once every run has finished; it is never Succeeded with a failed run.
func aggregate(b *kvv1.KVBenchmark, runs []kvv1.RunStatus, now time.Time) kvv1.KVBenchmarkStatus {
	prev := b.Status
	st := kvv1.KVBenchmarkStatus{
		ObservedGeneration: b.Generation,
		Conditions:         append([]metav1.Condition(nil), prev.Conditions...),
		Runs:               runs,
		StartTime:          prev.StartTime.DeepCopy(),
		CompletionTime:     prev.CompletionTime.DeepCopy(),
	}
	var finished, succeeded, running int
	var failedRuns []string
	var lastFinish *metav1.Time
	var waiting *kvv1.RunStatus // the first pending run that carries a reason
	for i, r := range runs {
		if r.Phase == kvv1.RunPending && r.Reason != "" && waiting == nil {
			waiting = &runs[i]
		}
		switch r.Phase {
		case kvv1.RunSucceeded:
			finished++
			succeeded++
		case kvv1.RunFailed:
			finished++
			failedRuns = append(failedRuns, fmt.Sprintf("%s: %s", r.Name, r.Reason))
		case kvv1.RunRunning:
			running++
		}
		if r.CompletionTime != nil && (lastFinish == nil || lastFinish.Before(r.CompletionTime)) {
			lastFinish = r.CompletionTime
		}
		if r.StartTime != nil && (st.StartTime == nil || r.StartTime.Before(st.StartTime)) {
			st.StartTime = r.StartTime.DeepCopy()
		}
	}
	st.Progress = fmt.Sprintf("%d/%d", finished, len(runs))
	names := make([]string, 0, len(runs))
	nodes := map[string]bool{}
	for _, r := range runs {
		if !slices.Contains(names, string(r.Engine)) { // EachNode repeats each engine per node
			names = append(names, string(r.Engine))
		}
		if r.NodeName != "" {
			nodes[r.NodeName] = true
		}
	}
	st.Nodes = int32(len(nodes))
	st.Engines = strings.Join(names, ",")
	st.Dataset = datasetColumn(b.Spec.Dataset)
	allDone := finished == len(runs) && len(runs) > 0
	switch {
	case allDone && len(failedRuns) > 0:
		st.Phase = kvv1.PhaseFailed
	case allDone:
		st.Phase = kvv1.PhaseSucceeded
	case running > 0 || finished > 0:
		st.Phase = kvv1.PhaseRunning
	default:
		st.Phase = kvv1.PhasePending
	}
	if allDone && st.CompletionTime == nil {
		st.CompletionTime = lastFinish
		if st.CompletionTime == nil {
			st.CompletionTime = &metav1.Time{Time: now}
		}
	}

	set := func(t string, ok bool, reason, msg string) {
		status := metav1.ConditionFalse
		if ok {
			status = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{
			Type: t, Status: status, Reason: reason, Message: truncate(msg),
			ObservedGeneration: b.Generation, LastTransitionTime: metav1.Time{Time: now},
		})
	}
	switch {
	case running > 0:
		set(kvv1.ConditionRunning, true, "RunsActive", fmt.Sprintf("%d run(s) running, %d of %d finished", running, finished, len(runs)))
	case allDone:
		set(kvv1.ConditionRunning, false, "Finished", fmt.Sprintf("all %d run(s) finished", len(runs)))
	case waiting != nil:
		// Say why nothing runs (Unschedulable with the scheduler's message, WaitingForSlot, ...), so
		// that the benchmark's own conditions explain a Pending phase.
		set(kvv1.ConditionRunning, false, waiting.Reason, fmt.Sprintf("run %s: %s", waiting.Name, waiting.Message))
	default:
		set(kvv1.ConditionRunning, false, "Waiting", fmt.Sprintf("%d of %d run(s) finished, none running", finished, len(runs)))
	}
	if len(failedRuns) > 0 {
		set(kvv1.ConditionFailed, true, "RunFailed", "failed runs: "+strings.Join(failedRuns, ", "))
	} else {
		set(kvv1.ConditionFailed, false, "NoFailures", "no run has failed")
	}
	if st.Phase == kvv1.PhaseSucceeded {
		set(kvv1.ConditionSucceeded, true, "AllRunsSucceeded", fmt.Sprintf("all %d run(s) succeeded", len(runs)))
	} else {
		set(kvv1.ConditionSucceeded, false, string(st.Phase), fmt.Sprintf("%d of %d run(s) succeeded", succeeded, len(runs)))
	}
	st.Headline = headline(runs)
	return st
}

// headline is the last measured phase of the last run that has results.
func headline(runs []kvv1.RunStatus) *kvv1.Headline {
	for i := len(runs) - 1; i >= 0; i-- {
		r := runs[i]
		if len(r.Results) == 0 {
			continue
		}
		p := r.Results[len(r.Results)-1]
		h := &kvv1.Headline{Engine: r.Engine, Workload: p.Workload, Threads: p.Threads, OpsPerSec: int64(math.Round(p.OpsPerSec))}
		if p.LatencyMicros != nil {
			v := p.LatencyMicros.P99
			h.P99Micros = &v
		}
		return h
	}
	return nil
}

func newestPod(pods []corev1.Pod) *corev1.Pod {
	if len(pods) == 0 {
		return nil
	}
	sorted := append([]corev1.Pod(nil), pods...)
	sort.SliceStable(sorted, func(i, j int) bool {
		return sorted[j].CreationTimestamp.Before(&sorted[i].CreationTimestamp)
	})
	return &sorted[0]
}

func runnerStatus(pod *corev1.Pod) *corev1.ContainerStatus {
	for i := range pod.Status.ContainerStatuses {
		if pod.Status.ContainerStatuses[i].Name == render.ContainerName {
			return &pod.Status.ContainerStatuses[i]
		}
	}
	return nil
}

func jobConditionGet(job *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range job.Status.Conditions {
		if job.Status.Conditions[i].Type == t {
			return &job.Status.Conditions[i]
		}
	}
	return nil
}

func jobCondition(job *batchv1.Job, t batchv1.JobConditionType) bool {
	c := jobConditionGet(job, t)
	return c != nil && c.Status == corev1.ConditionTrue
}

// jobFinished reports whether the Job controller has finished the Job.
func jobFinished(job *batchv1.Job) bool {
	return jobCondition(job, batchv1.JobComplete) || jobCondition(job, batchv1.JobFailed)
}

func podCondition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	if pod == nil {
		return nil
	}
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

func podConditionTrue(pod *corev1.Pod, t corev1.PodConditionType) bool {
	c := podCondition(pod, t)
	return c != nil && c.Status == corev1.ConditionTrue
}

func timePtr(t metav1.Time) *metav1.Time { return &metav1.Time{Time: t.Time} }

func truncate(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	return s[:maxMessage-3] + "..."
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
