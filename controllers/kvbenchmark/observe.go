package kvbenchmark

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/archive"
	"github.com/kvbench/kvbench-operator/controllers/plan"
	"github.com/kvbench/kvbench-operator/controllers/render"
	"github.com/kvbench/kvbench-operator/stats"
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

// limits are how long a run may wait on a condition that may heal before it fails.
type limits struct {
	unschedulable time.Duration
	// startFailure bounds image pull errors and CreateContainerConfigError.
	startFailure time.Duration
	// finalLogPending: the pod has ended and the read of its whole log (logged, once Final) is
	// still to come; a run is not made terminal before it, as what the log holds can fail it.
	finalLogPending bool
	// logGiveUp bounds how long after the runner ended a log that cannot be read is tried again
	// before the run is decided without it (ResultIncomplete).
	logGiveUp time.Duration
}

// podGoneGrace is how long past its deletion deadline a terminating pod is still waited for (a
// pod on an unreachable node never reports that it ended).
const podGoneGrace = 2 * time.Minute

// observeRun derives one run's status from its persisted status, Job, pods and what the runner
// logged (its streamed phases; nil when not read). It is pure. A run that is already terminal in
// status stays as it is: results are final. A run is terminal only once its pod has ended or is
// gone: the Job's FailureTarget (deadline) and SuccessCriteriaMet come while the runner may still
// be writing its summary.
func observeRun(run plan.Run, prev *kvv1.RunStatus, job *batchv1.Job, pods []corev1.Pod, logged *logSnapshot, now time.Time, lim limits) (kvv1.RunStatus, observation) {
	st, obs := observeRunPhase(run, prev, job, pods, logged, now, lim)
	if st.Phase == kvv1.RunPending && prev != nil && prev.Phase == kvv1.RunRunning {
		// A run never goes back to Pending: whatever its pod does now, it has started.
		st.Phase, st.Reason, st.Message = kvv1.RunRunning, "", ""
	}
	return st, obs
}

func observeRunPhase(run plan.Run, prev *kvv1.RunStatus, job *batchv1.Job, pods []corev1.Pod, logged *logSnapshot, now time.Time, lim limits) (kvv1.RunStatus, observation) {
	if prev != nil && terminal(prev) {
		return *prev.DeepCopy(), observation{}
	}
	st := carried(run, prev)
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
	term, waiting, running := podState(&st, pod)
	summary, summaryErr := parseSummary(term)
	refused := refuseImplausible(summary)
	mergeResults(&st, summary, logged)
	if summary != nil {
		st.Provenance = runProvenance(summary, pod)
	}

	complete := jobCondition(job, batchv1.JobComplete) || jobCondition(job, batchv1.JobSuccessCriteriaMet)
	failed := jobCondition(job, batchv1.JobFailed) || jobCondition(job, batchv1.JobFailureTarget)
	podFailed := pod != nil && pod.Status.Phase == corev1.PodFailed
	podSucceeded := pod != nil && pod.Status.Phase == corev1.PodSucceeded
	ended := podEnded(pod, now)
	over := overLimits(prev, logged, refused)
	sinceEnd := now.Sub(endedAt(term, job, now))
	finish := func(phase kvv1.RunPhase, reason, msg string) (kvv1.RunStatus, observation) {
		st.Phase, st.Reason, st.Message = phase, reason, truncate(msg)
		st.CompletionTime = &metav1.Time{Time: endedAt(term, job, now)}
		if st.StartTime == nil && (prev == nil || prev.Phase == kvv1.RunPending) && (pod == nil || pod.Spec.NodeName == "") {
			st.NodeName = run.Node // it never got a node: the pin was a plan, not where it ran
		}
		return st, observation{}
	}

	switch {
	case (complete || failed) && !ended:
		// Decided by the Job controller, but the runner still runs (it is being stopped, or
		// writes its summary): wait for the pod to end; its update brings the next pass.
		if running != nil || pod.Status.Phase == corev1.PodRunning {
			st.Phase = kvv1.RunRunning
		}
		return st, observation{requeueAfter: podGoneGrace}
	case lim.finalLogPending && (complete || podSucceeded || failed || podFailed),
		logUnreadable(logged) && sinceEnd < lim.logGiveUp &&
			(complete || podSucceeded && !failed) && summary != nil && summary.Error == "" && over == "":
		// Decided on the whole log only: a run decided before its final read, or on a read that
		// failed while only the log could still fail it, was Succeeded or Failed by when the read
		// came (issue 29).
		if running != nil || term != nil || prev != nil && prev.Phase == kvv1.RunRunning {
			st.Phase = kvv1.RunRunning
		}
		st.Reason, st.Message = overReason(over)
		if !lim.finalLogPending { // a failed read is tried again on the next pass: back off
			return st, observation{requeueAfter: archiveRetryAfter(sinceEnd)}
		}
		return st, observation{requeueAfter: time.Second} // the read's end reconciles at once; this is the safety net
	case (complete || podSucceeded && !failed) && over != "":
		return finish(kvv1.RunFailed, kvv1.ReasonResultOverLimits, over)
	case complete || (podSucceeded && !failed):
		// The runner exited 0: with one completion and no retries the Job can only complete too,
		// so the run is decided now, not when the Job controller gets to mark it (the next engine
		// of a comparison starts at once).
		if reason, msg := exitedZero(summary, summaryErr, logged, len(st.Results)); reason != "" {
			return finish(kvv1.RunFailed, reason, msg)
		}
		return finish(kvv1.RunSucceeded, "", "")
	case failed || podFailed:
		reason, msg := failureReason(job, pod, term, summary)
		return finish(kvv1.RunFailed, reason, msg)
	}

	// The Job is active.
	if reason, msg, wait := startFailure(waiting, pod, job, now, lim); reason != "" {
		if wait > 0 {
			st.Reason, st.Message = reason, truncate(msg)
			return st, observation{requeueAfter: wait}
		}
		return finish(kvv1.RunFailed, reason, msg)
	}
	if c := podCondition(pod, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
		// Bounded whatever the scheduler says: the operator keeps exclusive runs apart itself, so a
		// pod anti-affinity here is the user's (or a pod's that forged a runner label).
		st.Reason, st.Message = kvv1.ReasonUnschedulable, truncate(c.Message)
		since := c.LastTransitionTime.Time
		if since.IsZero() {
			since = job.CreationTimestamp.Time
		}
		if wait := since.Add(lim.unschedulable).Sub(now); wait > 0 {
			return st, observation{requeueAfter: wait}
		}
		return finish(kvv1.RunFailed, kvv1.ReasonUnschedulable, c.Message)
	}
	if running != nil || term != nil || (pod != nil && pod.Status.Phase == corev1.PodRunning) {
		// Running, or ended before the Job controller marked the Job (its verdict is on its way).
		st.Phase = kvv1.RunRunning
		st.Reason, st.Message = overReason(over) // recorded now, so that a restarted operator knows
	}
	return st, observation{}
}

// startFailure says why the runner container cannot start, and how long it may still wait ("" when
// it is not waiting for an image or its config): often a typo (fail soon, with the kubelet's
// words), sometimes a registry or Secret that is about to appear (wait a little).
func startFailure(waiting *corev1.ContainerStateWaiting, pod *corev1.Pod, job *batchv1.Job, now time.Time, lim limits) (string, string, time.Duration) {
	if waiting == nil || !imageWaitingReasons[waiting.Reason] && waiting.Reason != kvv1.ReasonContainerConfig {
		return "", "", 0
	}
	reason := kvv1.ReasonImagePull
	if waiting.Reason == kvv1.ReasonContainerConfig {
		reason = kvv1.ReasonContainerConfig
	}
	return reason, fmt.Sprintf("%s: %s", waiting.Reason, waiting.Message), startedWaiting(pod, job).Add(lim.startFailure).Sub(now)
}

// carried is the status a pass starts from: what a running run already reported stays, whatever
// happens to its pod.
func carried(run plan.Run, prev *kvv1.RunStatus) kvv1.RunStatus {
	st := kvv1.RunStatus{Name: run.Name, Engine: run.Engine.Name, JobName: run.JobName, Phase: kvv1.RunPending, NodeName: run.Node}
	if prev == nil {
		return st
	}
	st.StartTime = prev.StartTime.DeepCopy()
	if prev.NodeName != "" {
		st.NodeName = prev.NodeName
	}
	st.EngineVersion, st.Dataset, st.Load = prev.EngineVersion, prev.Dataset.DeepCopy(), prev.Load.DeepCopy()
	st.Results, st.Truncated = clonePhases(prev.Results), prev.Truncated
	return st
}

// podState sets st's node and start from the runner pod and returns its runner container's state
// (a restarted container's last termination when it has none of its own).
func podState(st *kvv1.RunStatus, pod *corev1.Pod) (*corev1.ContainerStateTerminated, *corev1.ContainerStateWaiting, *corev1.ContainerStateRunning) {
	if pod == nil {
		return nil, nil, nil
	}
	var term *corev1.ContainerStateTerminated
	var waiting *corev1.ContainerStateWaiting
	var running *corev1.ContainerStateRunning
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
	return term, waiting, running
}

// overLimits says why the run's output is over the limits ("" when it is not). Once is for good:
// a read found it (logged.Over stays in the reader), an earlier pass recorded it (an operator
// restarted since), or the summary holds it.
func overLimits(prev *kvv1.RunStatus, logged *logSnapshot, refused error) string {
	switch {
	case logged != nil && logged.Over != nil:
		return logged.Over.Error()
	case prev != nil && prev.Reason == kvv1.ReasonResultOverLimits:
		return prev.Message
	case refused != nil:
		return refused.Error()
	}
	return ""
}

// exitedZero decides a run whose runner exited 0 (within the limits): the failure reason and
// message, or "" when it succeeded: a summary without an error, and the whole log read.
func exitedZero(summary *kvv1.Summary, summaryErr error, logged *logSnapshot, known int) (string, string) {
	switch {
	case summary == nil:
		return kvv1.ReasonResultMissing, "the runner exited 0 but left no result summary: " + errText(summaryErr)
	case summary.Error != "":
		return kvv1.ReasonRunnerError, summary.Error
	}
	if missed := logged.missed(); missed != "" {
		return kvv1.ReasonResultIncomplete, fmt.Sprintf("the runner exited 0, but %s; %d phase(s) known from its summary "+
			"and earlier reads are kept (docs/operator.md#run-failure-reasons)", missed, known)
	}
	return "", ""
}

// overReason is a running run's reason and message while its output is over the limits.
func overReason(over string) (string, string) {
	if over == "" {
		return "", ""
	}
	return kvv1.ReasonResultOverLimits, truncate(over)
}

// logUnreadable: the final read of the pod's log failed (it is tried again).
func logUnreadable(s *logSnapshot) bool { return s != nil && s.Final && s.Err != nil }

// missed says what the final read of a runner's log missed of the whole log ("" when it read it
// whole, or when no log reader runs: the unit tests' pure observation).
func (s *logSnapshot) missed() string {
	switch {
	case s == nil || !s.Final:
		return ""
	case s.Err != nil:
		return "its log could not be read: " + s.Err.Error()
	case s.Bad != nil:
		return "its result line cannot be used: " + s.Bad.Error()
	case s.Incomplete != nil:
		return "the log the kubelet served is not the whole log it wrote: " + s.Incomplete.Error() +
			"; the kubelet rotates a container log at containerLogMaxSize (10Mi by default) and serves only the current file"
	}
	return ""
}

// endedAt is when the runner ended (its container's finish, else the Job's completion, else now):
// a run's completion time, and where the wait for its log counts from.
func endedAt(term *corev1.ContainerStateTerminated, job *batchv1.Job, now time.Time) time.Time {
	switch {
	case term != nil && !term.FinishedAt.IsZero():
		return term.FinishedAt.Time
	case job.Status.CompletionTime != nil:
		return job.Status.CompletionTime.Time
	}
	return now
}

// refuseImplausible removes from s the phases whose numbers no engine reaches, and says which (nil
// when none): they are refused as in the runner's log (archive.Decoder.Refused), as output over
// the limits is.
func refuseImplausible(s *kvv1.Summary) error {
	if s == nil {
		return nil
	}
	d := archive.NewDecoder(kvv1.DefaultResultLimits) // only what it leaves out is used
	if s.Load != nil && d.Refused(s.Load) {
		s.Load = nil
	}
	s.Phases = slices.DeleteFunc(s.Phases, func(p kvv1.PhaseSummary) bool { return d.Refused(&p) })
	return d.Over()
}

// podEnded: the runner can write nothing more. Nil (no pod, or gone) has ended; Reconcile
// confirms a missing pod with the API server before it makes a run terminal.
func podEnded(pod *corev1.Pod, now time.Time) bool {
	if pod == nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return true
	}
	if cs := runnerStatus(pod); cs != nil && cs.State.Terminated != nil {
		return true
	}
	return pod.DeletionTimestamp != nil && now.After(pod.DeletionTimestamp.Add(podGoneGrace))
}

// startedWaiting is when the runner container began to wait for its start: the pod's start on
// the node, else the Job's start, else the pod's creation.
func startedWaiting(pod *corev1.Pod, job *batchv1.Job) time.Time {
	switch {
	case pod.Status.StartTime != nil:
		return pod.Status.StartTime.Time
	case job.Status.StartTime != nil:
		return job.Status.StartTime.Time
	}
	return pod.CreationTimestamp.Time
}

// mergeResults sets st's results from the termination message's summary and the phases the
// runner logged, on top of what st already has (the previous status): every phase any of them
// knows, by index, the most detailed copy of each. The summary is bounded (it drops detail,
// then phases), the phase lines by the limits on runner output; aggregate keeps what the plan
// makes, and fitStatus bounds the whole status.
func mergeResults(st *kvv1.RunStatus, summary *kvv1.Summary, logged *logSnapshot) {
	var fromSummary []kvv1.PhaseSummary
	var sumLoad *kvv1.PhaseSummary
	if summary != nil {
		st.EngineVersion = summary.EngineVersion
		st.Dataset = summary.Dataset.DeepCopy()
		fromSummary, sumLoad = summary.Phases, summary.Load
	}
	var fromLog []kvv1.PhaseSummary
	var logLoad *kvv1.PhaseSummary
	if logged != nil {
		fromLog, logLoad = logged.Phases, logged.Load
	}
	// Phases known to exist: the most any source knows of, counting what it left out.
	known := int32(len(st.Results)) + st.Truncated
	if summary != nil {
		known = max(known, int32(len(summary.Phases))+summary.Truncated)
	}
	st.Results = mergePhases(fromLog, st.Results, fromSummary)
	st.Truncated = max(0, max(known, int32(len(fromLog)))-int32(len(st.Results)))
	for _, l := range []*kvv1.PhaseSummary{logLoad, st.Load, sumLoad} {
		if l != nil && (st.Load == nil || detail(l) > detail(st.Load)) {
			st.Load = l.DeepCopy()
		}
	}
}

// mergePhases returns the union of phase lists by Index in index order, keeping for each index
// the first of the most detailed copies. Lists without indexes (schema v1, where all are 0) are
// numbered by position, which is their index.
func mergePhases(lists ...[]kvv1.PhaseSummary) []kvv1.PhaseSummary {
	byIndex := map[int32]kvv1.PhaseSummary{}
	for _, l := range lists {
		indexed := true
		for i := 1; i < len(l); i++ {
			indexed = indexed && l[i].Index > l[i-1].Index
		}
		for i, p := range l {
			if !indexed {
				p.Index = int32(i)
			}
			if have, ok := byIndex[p.Index]; !ok || detail(&p) > detail(&have) {
				byIndex[p.Index] = *p.DeepCopy()
			}
		}
	}
	if len(byIndex) == 0 {
		return nil
	}
	out := make([]kvv1.PhaseSummary, 0, len(byIndex))
	for _, p := range byIndex {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out
}

// detail ranks copies of a phase by what the summary's truncation keeps.
func detail(p *kvv1.PhaseSummary) int {
	n := 0
	if p.LatencyMicros != nil {
		n += 2
		if p.LatencyMicros.P75 != 0 || p.LatencyMicros.P9999 != 0 {
			n++
		}
	}
	if p.Pulse != nil {
		n++
	}
	if len(p.Operations) > 0 {
		n++
	}
	return n
}

func clonePhases(in []kvv1.PhaseSummary) []kvv1.PhaseSummary {
	if in == nil {
		return nil
	}
	out := make([]kvv1.PhaseSummary, len(in))
	for i := range in {
		in[i].DeepCopyInto(&out[i])
	}
	return out
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

// aggregate computes the benchmark status from its runs, each keeping at most the phases its plan
// makes (statusPhases). A failed run makes the benchmark Failed once every run has finished; it is
// never Succeeded with a failed run.
func aggregate(b *kvv1.KVBenchmark, runs []kvv1.RunStatus, now time.Time) kvv1.KVBenchmarkStatus {
	prev := b.Status
	keep := statusPhases(plannedConfig(b))
	for i := range runs {
		capPhases(&runs[i], keep)
	}
	stats.FillPoints(runs) // status.runs[].points: median, CI and CoV over the repeats
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
	st.PhaseProgress = phaseProgress(b, runs)
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
	if c := noisyCondition(&b.Spec, runs); c != nil {
		set(c.Type, c.Status == metav1.ConditionTrue, c.Reason, c.Message)
	}
	st.Headline = headline(runs)
	st.Reason = reasonColumn(st.Phase, runs)
	st.Verdict = verdictColumn(st.Conditions)
	return st
}

// phaseProgress is "finished/planned" measured phases over all runs. Every run plans the same
// phases (one run per engine, or per engine and node under EachNode, whose runs exist once the
// nodes are known). A run that ended keeps its finished phases; the ones it never ran still count
// as planned.
func phaseProgress(b *kvv1.KVBenchmark, runs []kvv1.RunStatus) string {
	n := len(runs)
	if n == 0 {
		n = len(b.Spec.Engines)
	}
	planned, done := n*plannedPhases(plannedConfig(b)), 0
	for _, r := range runs {
		done += len(r.Results) + int(r.Truncated)
	}
	return fmt.Sprintf("%d/%d", done, max(planned, done))
}

// plannedConfig is what decides the phases of every run of b.
func plannedConfig(b *kvv1.KVBenchmark) kvv1.RunnerConfig {
	return kvv1.RunnerConfig{Workloads: b.Spec.Workloads, Threads: b.Spec.Threads, Repeat: b.Spec.Repeat}
}

// minStatusPhases is the least number of phases a run's status keeps, whatever its plan says: a
// db_bench passthrough without --benchmarks runs db_bench's default list (about 50), which the
// plan counts as one.
const minStatusPhases = 64

// statusPhases is how many phases the status of a run of cfg keeps (aggregate): those its plan
// makes, and at least minStatusPhases. A runner reporting more (a broken or hostile image; issue
// 18's logs 10,000) has the rest counted in truncated and kept in the archive only: in status they
// filled the benchmark's whole budget (1 MiB), which etcd, every watcher and each of the
// operator's passes then carried (1.5 MiB of the operator's cache per such benchmark).
func statusPhases(cfg kvv1.RunnerConfig) int { return max(plannedPhases(cfg), minStatusPhases) }

// capPhases keeps the first n of a run's phases, counting the others in its truncated.
func capPhases(st *kvv1.RunStatus, n int) {
	if len(st.Results) > n {
		st.Truncated += int32(len(st.Results) - n)
		st.Results = slices.Clip(st.Results[:n])
	}
}

// plannedPhases is how many measured phases a runner config makes: each workload at each of its
// thread counts, per repeat; a db_bench passthrough as many as dbBenchPhases; pseudo-benchmarks
// (stats, levelstats, waitforcompaction) none.
func plannedPhases(cfg kvv1.RunnerConfig) int {
	n := 0
	for _, w := range cfg.Workloads {
		switch {
		case w.Name == kvv1.WorkloadStats || w.Name == kvv1.WorkloadLevelStats || w.Name == kvv1.WorkloadWaitForCompaction:
		case w.Name == kvv1.WorkloadDBBench:
			n += dbBenchPhases(w.DBBenchArgs)
		case len(w.Threads) > 0:
			n += len(w.Threads)
		case len(cfg.Threads) > 0:
			n += len(cfg.Threads)
		default:
			n++
		}
	}
	return n * max(1, int(cfg.Repeat))
}

// dbBenchNoResult are db_bench 7.8.3 benchmarks that print no result line (so make no phase).
var dbBenchNoResult = map[string]bool{
	"stats": true, "levelstats": true, "sstables": true, "stats_history": true, "memstats": true,
	"printstats": true, "resetstats": true, "flush": true, "compactall": true, "compact0": true,
	"compact1": true, "waitforcompaction": true, "replay": true, "block_cache_entry_stats": true,
	"cache_report_problems": true, "openandcompact": true,
}

// dbBenchRepeat is db_bench's "name[XN]" (run N times, a result line each) and "[WN]" (N warm-up
// runs, no result) suffix.
var dbBenchRepeat = regexp.MustCompile(`\[X(\d+)\]`)

// dbBenchPhases is how many result lines (phases) db_bench prints for these arguments: one per
// benchmark of --benchmarks, N for name[XN], none for the ones that report nothing. Without
// --benchmarks db_bench runs its long default list; it counts as one (progress then grows as the
// phases come).
func dbBenchPhases(args []string) int {
	list := ""
	for _, a := range args {
		if v, ok := strings.CutPrefix(strings.TrimLeft(a, "-"), "benchmarks="); ok {
			list = v
		}
	}
	if list == "" {
		return 1
	}
	n := 0
	for _, b := range strings.Split(list, ",") {
		name, _, _ := strings.Cut(b, "[")
		switch {
		case name == "" || dbBenchNoResult[name]:
		case dbBenchRepeat.MatchString(b):
			x, _ := strconv.Atoi(dbBenchRepeat.FindStringSubmatch(b)[1])
			n += max(x, 1)
		default:
			n++
		}
	}
	return n
}

// headline is the last measured point of the last run that has results, labelled with what it
// measured: the point's median over its repeats (status.runs[].points) when it was repeated, so
// that the RESULT and OPS/S columns never show one iteration as the result.
func headline(runs []kvv1.RunStatus) *kvv1.Headline {
	for i := len(runs) - 1; i >= 0; i-- {
		r := runs[i]
		if len(r.Results) == 0 {
			continue
		}
		p := r.Results[len(r.Results)-1]
		h := &kvv1.Headline{Engine: r.Engine, Workload: p.Workload, Threads: p.Threads, OpsPerSec: roundInt64(p.OpsPerSec)}
		if p.LatencyMicros != nil {
			v := p.LatencyMicros.P99
			h.P99Micros = &v
		}
		h.Label = fmt.Sprintf("%s %s threads=%d: %d ops/s", r.Engine, p.Workload, p.Threads, h.OpsPerSec)
		for _, pt := range r.Points {
			if pt.Workload != p.Workload || pt.Threads != p.Threads || pt.OpsPerSec.N < 2 {
				continue
			}
			h.OpsPerSec = roundInt64(pt.OpsPerSec.Median)
			h.P99Micros = nil
			if pt.P99Micros != nil {
				h.P99Micros = ptr.To(pt.P99Micros.Median)
			}
			h.Label = fmt.Sprintf("%s %s threads=%d: %d ops/s (median of %d)", r.Engine, p.Workload, p.Threads, h.OpsPerSec, pt.OpsPerSec.N)
		}
		return h
	}
	return nil
}

// roundInt64 rounds x to an int64, clamped to its range (a runner's 1e308 converts to none).
func roundInt64(x float64) int64 {
	switch x = math.Round(stats.Finite(x)); {
	case x >= 1<<63:
		return math.MaxInt64
	case x < -(1 << 63):
		return math.MinInt64
	}
	return int64(x)
}

// reasonColumn is status.reason: why nothing runs (the first waiting run's reason) or, once the
// benchmark failed, why (the failed runs' distinct reasons).
func reasonColumn(phase kvv1.BenchmarkPhase, runs []kvv1.RunStatus) string {
	var reasons []string
	for _, r := range runs {
		switch {
		case phase == kvv1.PhaseFailed && r.Phase == kvv1.RunFailed && r.Reason != "":
			if !slices.Contains(reasons, r.Reason) {
				reasons = append(reasons, r.Reason)
			}
		case phase != kvv1.PhaseFailed && r.Phase == kvv1.RunRunning:
			return ""
		case phase != kvv1.PhaseFailed && r.Phase == kvv1.RunPending && r.Reason != "" && len(reasons) == 0:
			reasons = append(reasons, r.Reason)
		}
	}
	return strings.Join(reasons, ",")
}

// verdictColumn is status.verdict from the Regressed and Noisy conditions: Regressed or
// NoRegression, or the reason there is no verdict (the baseline is missing, mismatched, ...);
// and Noisy or StateDrift when they are True. Empty when there is neither condition.
func verdictColumn(conds []metav1.Condition) string {
	var out []string
	if c := meta.FindStatusCondition(conds, kvv1.ConditionRegressed); c != nil {
		switch c.Status {
		case metav1.ConditionTrue:
			out = append(out, kvv1.ConditionRegressed)
		case metav1.ConditionFalse:
			out = append(out, "NoRegression")
		default:
			out = append(out, c.Reason)
		}
	}
	if c := meta.FindStatusCondition(conds, kvv1.ConditionNoisy); c != nil && c.Status == metav1.ConditionTrue {
		if c.Reason == ReasonStateDrift {
			out = append(out, ReasonStateDrift)
		} else {
			out = append(out, kvv1.ConditionNoisy)
		}
	}
	return strings.Join(out, ",")
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
		if pod.Status.ContainerStatuses[i].Name == kvv1.ContainerName {
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
