// Package controllers holds the KVBenchmark reconciler: it reads the benchmark, its Jobs and pods,
// creates missing Jobs (desired state comes from the pure plan and render packages), deletes
// finished Jobs under the cleanup policy, and writes status once per pass.
package controllers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/controllers/archive"
	"github.com/kvbench/kvbench-operator/controllers/metrics"
	"github.com/kvbench/kvbench-operator/controllers/plan"
	"github.com/kvbench/kvbench-operator/controllers/render"
)

// Event reasons.
const (
	EventRunCreated   = "RunCreated"
	EventRunStarted   = "RunStarted"
	EventRunSucceeded = "RunSucceeded"
	EventRunFailed    = "RunFailed"
	EventRunWaiting   = "RunWaiting"
	EventJobDeleted   = "JobDeleted"
	EventPhase        = "BenchmarkPhaseChanged"
	EventNotArchived  = "ResultNotArchived"
)

// Archiving the full result from the runner's log: retried this often while the log cannot be
// read, given up this long after the run ended (cleanup waits for the outcome), and lines longer
// than maxResultLine are not read (the operator's memory bound).
const (
	archiveRetry  = 15 * time.Second
	archiveGiveUp = 5 * time.Minute
	maxResultLine = 32 << 20
)

// defaultSlotRetry is how often a benchmark held back by the concurrency limit looks again, as a
// safety net: a finishing runner Job also wakes every waiting benchmark.
const defaultSlotRetry = 15 * time.Second

// Config is the reconciler's operator-wide settings (manager flags).
type Config struct {
	Render render.Options
	// MaxConcurrentRuns bounds active runner Jobs across all benchmarks; 0 means no limit.
	MaxConcurrentRuns int
	// UnschedulableTimeout is how long a runner pod may stay unschedulable (for reasons other than
	// waiting for an exclusive node) before its run fails with the scheduler's message.
	UnschedulableTimeout time.Duration
	// SlotRetry is the safety-net requeue of a benchmark waiting for a concurrency slot (default 15s).
	SlotRetry time.Duration
	// StartFailureTimeout is how long a runner container may fail to start (image pull errors,
	// CreateContainerConfigError) before its run fails with the kubelet's message (default 2m).
	StartFailureTimeout time.Duration
	// MaxConcurrentReconciles is the number of reconcile workers (default 1).
	MaxConcurrentReconciles int
	// LogTimeout bounds one read of a runner's log; LogRefresh is how often a running runner's
	// log is read for its finished phases (defaults 30s and 15s).
	LogTimeout, LogRefresh time.Duration
}

// defaultStartFailureTimeout is Config.StartFailureTimeout's default.
const defaultStartFailureTimeout = 2 * time.Minute

func (r *KVBenchmarkReconciler) startFailureTimeout() time.Duration {
	if r.Config.StartFailureTimeout > 0 {
		return r.Config.StartFailureTimeout
	}
	return defaultStartFailureTimeout
}

// KVBenchmarkReconciler reconciles KVBenchmarks.
type KVBenchmarkReconciler struct {
	client.Client
	Recorder record.EventRecorder
	Clock    clock.PassiveClock
	Metrics  *metrics.Collector
	Config   Config
	// Logs opens a runner's log to stream its finished phases and archive its full result; nil
	// turns both off.
	Logs LogOpener
	// APIReader reads from the API server, not the cache: a run is declared terminal only after
	// its pods were read there, and nodes and ConfigMaps are read uncached. SetupWithManager
	// sets the manager's when nil.
	APIReader client.Reader

	logReader *LogReader
	results   resultCache
	// slotMu makes counting free slots and creating Jobs one step across workers.
	slotMu sync.Mutex
	// Nodes reads a runner's node for its provenance labels; nil leaves them out.
	Nodes NodeReader

	// created remembers Jobs this process created until the cache shows them, so the concurrency
	// limit also counts Jobs the informer has not delivered yet.
	mu      sync.Mutex
	created map[types.NamespacedName]time.Time
}

// +kubebuilder:rbac:groups=kvbench.io,resources=kvbenchmarks,verbs=get;list;watch
// +kubebuilder:rbac:groups=kvbench.io,resources=kvbenchmarks/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods/log,verbs=get
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;create
// +kubebuilder:rbac:groups="",resources=nodes,verbs=list
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// Leader election only: a Role in the operator's namespace (config/rbac, the chart), never cluster-wide Leases.
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=kvbench-system,resources=leases,verbs=get;list;watch;create;update;patch;delete

// Reconcile brings one KVBenchmark one step closer to done: observe every planned run, create
// the missing Jobs, archive and clean up finished runs, and write status (always, also when a
// step failed, so that nothing is stuck without a reason).
func (r *KVBenchmarkReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var b kvv1.KVBenchmark
	if err := r.Get(ctx, req.NamespacedName, &b); err != nil {
		if apierrors.IsNotFound(err) {
			// Owner references remove the Jobs; only our series are left to drop.
			r.Metrics.Delete(req.NamespacedName)
			r.forgetResults(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if !b.DeletionTimestamp.IsZero() {
		r.Metrics.Delete(req.NamespacedName)
		r.forgetResults(req.NamespacedName)
		return ctrl.Result{}, nil
	}
	runs, err := r.planRuns(ctx, &b)
	if err != nil {
		return ctrl.Result{}, err
	}
	p := &pass{b: &b, now: r.Clock.Now(), runs: runs}
	if len(runs) == 0 {
		p.want(nodeRetry) // spread EachNode and no matching node yet
	}
	if err := r.observe(ctx, p); err != nil {
		return ctrl.Result{}, err
	}
	createErr := r.createMissing(ctx, p)
	finishErr := r.finish(ctx, p)
	if res, err := r.writeStatus(ctx, p); err != nil || res.Requeue {
		return res, err
	}
	// Errors the status now explains are retried on the requeue; others by the rate limiter.
	if err := errors.Join(createErr, finishErr); err != nil {
		return ctrl.Result{}, err
	}
	logf.FromContext(ctx).V(1).Info("reconciled", "phase", b.Status.Phase, "progress", b.Status.Progress, "requeueAfter", p.requeue)
	return ctrl.Result{RequeueAfter: p.requeue}, nil
}

// pass is one reconcile of one benchmark: what it read and what it decided.
type pass struct {
	b        *kvv1.KVBenchmark
	now      time.Time
	runs     []plan.Run
	jobs     map[string]*batchv1.Job
	pods     []corev1.Pod
	prev     map[string]*kvv1.RunStatus
	statuses []kvv1.RunStatus
	missing  []int // runs whose Job is to be created
	requeue  time.Duration
}

// want asks for another pass within d (the earliest wish wins).
func (p *pass) want(d time.Duration) {
	if d > 0 && (p.requeue == 0 || d < p.requeue) {
		p.requeue = d
	}
}

func (p *pass) key() types.NamespacedName {
	return types.NamespacedName{Namespace: p.b.Namespace, Name: p.b.Name}
}

// observe reads the benchmark's Jobs and pods and derives every planned run's status.
func (r *KVBenchmarkReconciler) observe(ctx context.Context, p *pass) error {
	b := p.b
	mine := client.MatchingFields{benchmarkIndex: b.Name}
	var jobs batchv1.JobList
	if err := r.List(ctx, &jobs, client.InNamespace(b.Namespace), mine); err != nil {
		return err
	}
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(b.Namespace), mine); err != nil {
		return err
	}
	p.pods = pods.Items
	p.jobs = map[string]*batchv1.Job{}
	for i := range jobs.Items {
		p.jobs[jobs.Items[i].Name] = &jobs.Items[i]
	}
	p.prev = map[string]*kvv1.RunStatus{}
	for i := range b.Status.Runs {
		p.prev[b.Status.Runs[i].Name] = &b.Status.Runs[i]
	}
	p.statuses = make([]kvv1.RunStatus, len(p.runs))
	for i, run := range p.runs {
		job := p.jobs[run.JobName]
		prev := p.prev[run.Name]
		if job != nil && !metav1.IsControlledBy(job, b) && (prev == nil || !terminal(prev)) {
			// A Job of a deleted namesake still being garbage collected: wait for it to go.
			p.statuses[i] = kvv1.RunStatus{Name: run.Name, Engine: run.Engine.Name, JobName: run.JobName, Phase: kvv1.RunPending,
				Reason: "JobNameTaken", Message: fmt.Sprintf("Job %s exists and belongs to another object", run.JobName)}
			p.want(r.slotRetry())
			continue
		}
		if job != nil && !metav1.IsControlledBy(job, b) {
			job = nil // terminal: the status is final whatever Job now has the name
		}
		runPods := podsOf(p.pods, job)
		st, obs := r.observeRun(run, prev, job, runPods, p)
		if terminal(&st) && (prev == nil || !terminal(prev)) && job != nil {
			// About to decide for good: the cache may lag (a pod it has not delivered, or a
			// termination state it has not seen yet), so look at the pods as the API server has them.
			var fresh corev1.PodList
			if err := r.APIReader.List(ctx, &fresh, client.InNamespace(b.Namespace), client.MatchingLabels{render.LabelBenchmark: b.Name}); err != nil {
				return err
			}
			st, obs = r.observeRun(run, prev, job, podsOf(fresh.Items, job), p)
		}
		p.statuses[i] = st
		p.want(obs.requeueAfter)
		if job == nil && st.Phase == kvv1.RunPending {
			p.missing = append(p.missing, i)
		}
	}
	return nil
}

// observeRun is observeRun with what the runner logged so far (read in the background).
func (r *KVBenchmarkReconciler) observeRun(run plan.Run, prev *kvv1.RunStatus, job *batchv1.Job, pods []corev1.Pod, p *pass) (kvv1.RunStatus, observation) {
	var logged *logSnapshot
	pod := newestPod(pods)
	if r.logReader != nil && pod != nil && (prev == nil || !terminal(prev)) {
		ended := podEnded(pod, p.now)
		logged = r.logReader.Get(pod, p.key(), ended)
		if !ended && pod.Status.Phase == corev1.PodRunning {
			p.want(r.logReader.Refresh) // stream the finished phases into status
		}
	}
	return observeRun(run, prev, job, pods, logged, p.now, limits{unschedulable: r.Config.UnschedulableTimeout, startFailure: r.startFailureTimeout()})
}

// createMissing creates the missing Jobs within the concurrency limit. A Job the API server
// refuses fails its run with the server's message when retrying cannot help, and leaves it
// Pending with the reason while it can; the error returned is only for the retry.
func (r *KVBenchmarkReconciler) createMissing(ctx context.Context, p *pass) error {
	b := p.b
	// Engine order (placement.engines): which missing runs may start now, and the node each is pinned to.
	starts, waits := plan.Sequence(b.Spec.Placement.Engines, p.runs, p.statuses, p.missing)
	for _, w := range waits {
		p.statuses[w.Index].Reason, p.statuses[w.Index].Message = kvv1.ReasonWaitingForRun, w.Message
	}
	p.missing = p.missing[:0]
	for _, s := range starts {
		p.runs[s.Index].Node, p.statuses[s.Index].NodeName = s.Node, s.Node
		p.missing = append(p.missing, s.Index)
	}
	if len(p.missing) == 0 {
		return nil
	}
	// Counting and creating under one lock keeps the limit exact with several workers.
	r.slotMu.Lock()
	defer r.slotMu.Unlock()
	free, err := r.freeSlots(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, i := range p.missing {
		run, st := p.runs[i], &p.statuses[i]
		if free == 0 {
			st.Reason = kvv1.ReasonWaitingForSlot
			st.Message = fmt.Sprintf("the operator runs at most %d runner Jobs at a time", r.Config.MaxConcurrentRuns)
			p.want(r.slotRetry())
			continue
		}
		job, err := render.Job(b, run, r.Config.Render)
		if err != nil {
			st.Phase, st.Reason, st.Message = kvv1.RunFailed, "InvalidOperatorConfig", err.Error()
			st.CompletionTime = &metav1.Time{Time: p.now}
			continue
		}
		if err := r.Create(ctx, job); err != nil {
			switch {
			case apierrors.IsAlreadyExists(err):
				// The cache is behind; the next pass sees the Job.
				p.want(time.Second)
			case createPermanent(err):
				st.Phase, st.Reason = kvv1.RunFailed, kvv1.ReasonJobRejected
				st.Message = truncate(fmt.Sprintf("the API server refused Job %s: %s", job.Name, apiMessage(err)))
				st.CompletionTime = &metav1.Time{Time: p.now}
			default:
				st.Reason = kvv1.ReasonJobCreateRetrying
				st.Message = truncate(fmt.Sprintf("creating Job %s failed, retrying: %s", job.Name, apiMessage(err)))
				errs = append(errs, fmt.Errorf("create Job %s: %w", job.Name, err))
			}
			continue
		}
		r.expect(types.NamespacedName{Namespace: job.Namespace, Name: job.Name}, p.now)
		r.Metrics.JobsCreated.WithLabelValues(b.Namespace, b.Name, run.Name).Inc()
		r.Recorder.Eventf(b, corev1.EventTypeNormal, EventRunCreated, "Created Job %s for engine %s", job.Name, run.Name)
		if free > 0 {
			free--
		}
	}
	return errors.Join(errs...)
}

// createPermanent: the API server will refuse the same Job again (invalid, or forbidden by an
// admission policy or RBAC), so retrying cannot help. An exceeded quota may free up.
func createPermanent(err error) bool {
	switch {
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err), apierrors.IsRequestEntityTooLargeError(err):
		return true
	case apierrors.IsForbidden(err):
		msg := err.Error()
		return !strings.Contains(msg, "exceeded quota") && !strings.Contains(msg, "is being terminated")
	}
	return false
}

// apiMessage is the API server's own message of err.
func apiMessage(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Message != "" {
		return status.Status().Message
	}
	return err.Error()
}

// finish archives the full result of finished runs (terminal status already persisted) once the
// pod has ended, then cleans up the Job. Never before: the results must be in status, and the
// full result archived, before the pod that carries them goes.
func (r *KVBenchmarkReconciler) finish(ctx context.Context, p *pass) error {
	b := p.b
	for i, run := range p.runs {
		prev, job := p.prev[run.Name], p.jobs[run.JobName]
		if prev == nil || !terminal(prev) || job == nil || !metav1.IsControlledBy(job, b) {
			continue
		}
		pod := newestPod(podsOf(p.pods, job))
		if r.logReader != nil && p.statuses[i].FullResult == nil && !podActive(pod) {
			r.archiveRun(ctx, p, i, pod)
			continue // cleanup once the archive's outcome is persisted (the status write brings the next pass)
		}
		if !job.DeletionTimestamp.IsZero() {
			continue
		}
		// A run that failed while its pod was still pending or running (image pull, unschedulable)
		// is stopped now; a pod that already ended is kept for its logs until the TTL.
		del := !jobFinished(job) && podActive(pod)
		if !del && b.Spec.Cleanup.Policy != kvv1.CleanupKeep {
			ttl := time.Duration(600) * time.Second
			if b.Spec.Cleanup.TTLSecondsAfterFinished != nil {
				ttl = time.Duration(*b.Spec.Cleanup.TTLSecondsAfterFinished) * time.Second
			}
			if left := finishedAt(prev, p.now).Add(ttl).Sub(p.now); left > 0 {
				p.want(left)
			} else {
				del = true
			}
		}
		if del {
			if err := r.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("delete Job %s: %w", job.Name, err)
			}
			r.Recorder.Eventf(b, corev1.EventTypeNormal, EventJobDeleted, "Deleted Job %s of finished run %s", job.Name, run.Name)
		}
	}
	return nil
}

// archiveRun records the outcome of archiving run i's full result, read from its ended pod's log
// in the background: the archive, a retry while the log may still be read, or the reason there
// is none. Phases the bounded summary dropped are added to status from the full result.
func (r *KVBenchmarkReconciler) archiveRun(ctx context.Context, p *pass, i int, pod *corev1.Pod) {
	run, st, prev := p.runs[i], &p.statuses[i], p.prev[p.runs[i].Name]
	var snap *logSnapshot
	if pod != nil {
		snap = r.logReader.Get(pod, p.key(), true)
		if snap == nil || !snap.Final {
			p.want(archiveRetry) // the read's end reconciles at once; this is the safety net
			return
		}
	}
	archived, err := r.archive(ctx, p.b, run, pod, snap)
	sinceEnd := p.now.Sub(finishedAt(prev, p.now))
	switch {
	case err == nil:
		st.FullResult = archived
		if snap != nil && snap.Result != nil {
			full := make([]kvv1.PhaseSummary, len(snap.Result.Phases))
			for j := range snap.Result.Phases {
				full[j] = snap.Result.Phases[j].PhaseSummary
			}
			st.Results = capPhases(mergePhases(full, st.Results))
			st.Truncated = max(0, int32(len(full)-len(st.Results)))
		}
		if pod != nil {
			r.logReader.Forget(pod.UID)
		}
	case sinceEnd < archiveGiveUp:
		logf.FromContext(ctx).Info("cannot archive the full result yet", "run", run.Name, "error", err.Error())
		p.want(archiveRetryAfter(sinceEnd))
	default:
		st.FullResult = &kvv1.ResultArchive{Error: truncate(err.Error())}
	}
	if fr := st.FullResult; fr != nil && fr.Error != "" {
		r.Recorder.Eventf(p.b, corev1.EventTypeWarning, EventNotArchived, "The full result of run %s is not archived: %s", run.Name, fr.Error)
	}
}

// writeStatus writes the aggregated status when it changed, emits the transitions' events and
// refreshes the benchmark's series.
func (r *KVBenchmarkReconciler) writeStatus(ctx context.Context, p *pass) (ctrl.Result, error) {
	b := p.b
	newStatus := aggregate(b, p.statuses, p.now)
	p.want(r.compareBaseline(ctx, b, &newStatus, p.now))
	newStatus.Verdict = verdictColumn(newStatus.Conditions) // with the Regressed condition just set
	changed := !apiequality.Semantic.DeepEqual(b.Status, newStatus)
	if changed {
		old := b.DeepCopy()
		b.Status = newStatus
		if err := r.Status().Update(ctx, b); err != nil {
			if apierrors.IsConflict(err) {
				return ctrl.Result{Requeue: true}, nil
			}
			return ctrl.Result{}, err
		}
		r.emitTransitions(old, b)
		r.emitBaseline(old, b)
	}
	// The series follow status and the archives it names: rebuild them when either changed, or
	// an archive could not be read yet.
	if changed || !r.Metrics.Has(p.key()) || !r.haveArchivedResults(b) {
		r.Metrics.Set(b, r.archivedResults(ctx, b))
	}
	return ctrl.Result{}, nil
}

// nodeRetry is how often a spread EachNode benchmark without a matching node looks again.
const nodeRetry = 30 * time.Second

// planRuns expands b into runs. Spread EachNode runs on a node set fixed at the first pass that
// found matching nodes: the nodes of the runs in status once there are any, so a node joining or
// leaving later neither adds nor drops runs.
func (r *KVBenchmarkReconciler) planRuns(ctx context.Context, b *kvv1.KVBenchmark) ([]plan.Run, error) {
	if b.Spec.Placement.Spread != kvv1.SpreadEachNode {
		return plan.Plan(b), nil
	}
	var nodes []string
	for _, st := range b.Status.Runs {
		if _, node, ok := strings.Cut(st.Name, "@"); ok {
			nodes = append(nodes, node)
		}
	}
	if len(nodes) == 0 {
		sel, err := render.NodeSelector(b, r.Config.Render)
		if err != nil {
			return nil, err
		}
		// Uncached, once per benchmark: no cluster-wide Node informer.
		var list corev1.NodeList
		if err := r.APIReader.List(ctx, &list, client.MatchingLabels(sel)); err != nil {
			return nil, fmt.Errorf("list nodes for spread EachNode: %w", err)
		}
		for _, n := range list.Items {
			if !n.Spec.Unschedulable { // cordoned nodes are out of the fleet
				nodes = append(nodes, n.Name)
			}
		}
	}
	return plan.PlanOn(b, plan.SelectNodes(nodes, ptr.Deref(b.Spec.Placement.MaxNodes, 0))), nil
}

// archive copies the full result from the runner's log (snap, read after the pod ended) into a
// ConfigMap owned by the benchmark. It returns an error only when trying again may help (the log
// could not be read); a log without a result, or one too big to keep, is an archive with an Error.
func (r *KVBenchmarkReconciler) archive(ctx context.Context, b *kvv1.KVBenchmark, run plan.Run, pod *corev1.Pod, snap *logSnapshot) (*kvv1.ResultArchive, error) {
	switch {
	case pod == nil:
		return &kvv1.ResultArchive{Error: "the runner pod is gone; its log cannot be read"}, nil
	case snap.Bad != nil && errors.Is(snap.Bad, archive.ErrLineTooLong):
		return &kvv1.ResultArchive{Error: snap.Bad.Error() + "; kubectl kvbench save reads it from the pod log before cleanup"}, nil
	case snap.Bad != nil:
		return &kvv1.ResultArchive{Error: truncate(snap.Bad.Error())}, nil
	case snap.Err != nil:
		return nil, snap.Err
	case snap.Result == nil:
		return &kvv1.ResultArchive{Error: fmt.Sprintf("the log of pod %s has no result line (the runner did not get to write one)", pod.Name)}, nil
	}
	res := snap.Result
	if res.Engine == "" {
		res.Engine = run.Engine.Name
	}
	r.stampProvenance(ctx, res, pod)
	cm, dropped, err := archive.ConfigMap(b, run.Name, run.JobName, res)
	if err != nil {
		return &kvv1.ResultArchive{Error: truncate(err.Error())}, nil
	}
	return r.storeArchive(ctx, b, cm, dropped)
}

// LogOpener opens a container's log.
type LogOpener func(ctx context.Context, namespace, pod, container string) (io.ReadCloser, error)

// ClientsetLogs opens logs through the API server (the pods/log subresource).
func ClientsetLogs(cs kubernetes.Interface) LogOpener {
	return func(ctx context.Context, namespace, pod, container string) (io.ReadCloser, error) {
		return cs.CoreV1().Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{Container: container}).Stream(ctx)
	}
}

func terminal(st *kvv1.RunStatus) bool {
	return st.Phase == kvv1.RunSucceeded || st.Phase == kvv1.RunFailed
}

// archiveRetryAfter is how long to wait before archiving a run again, elapsed after it ended:
// archiveRetry, then doubling (a log that cannot be read now rarely can a few seconds later), with
// a last try at archiveGiveUp. About 6 tries instead of one every archiveRetry.
func archiveRetryAfter(elapsed time.Duration) time.Duration {
	return min(max(archiveRetry, elapsed), max(archiveGiveUp-elapsed, time.Second))
}

// finishedAt is when a terminal run ended (now when it has no completion time).
func finishedAt(st *kvv1.RunStatus, now time.Time) time.Time {
	if st.CompletionTime != nil {
		return st.CompletionTime.Time
	}
	return now
}

// freeSlots is how many more runner Jobs may start; -1 means unlimited.
func (r *KVBenchmarkReconciler) freeSlots(ctx context.Context) (int, error) {
	if r.Config.MaxConcurrentRuns <= 0 {
		return -1, nil
	}
	var all batchv1.JobList
	if err := r.List(ctx, &all, client.MatchingLabels{render.LabelManagedBy: render.ManagerName}); err != nil {
		return 0, err
	}
	seen := map[types.NamespacedName]bool{}
	active := 0
	for _, j := range all.Items {
		if !controlledByBenchmark(&j) {
			continue // a copied label does not take a slot
		}
		seen[types.NamespacedName{Namespace: j.Namespace, Name: j.Name}] = true
		if !jobFinished(&j) && j.DeletionTimestamp.IsZero() {
			active++
		}
	}
	r.mu.Lock()
	for k, at := range r.created {
		// Observed by the cache, or old enough that the cache must have caught up.
		if seen[k] || r.Clock.Since(at) > time.Minute {
			delete(r.created, k)
			continue
		}
		active++
	}
	r.mu.Unlock()
	return max(0, r.Config.MaxConcurrentRuns-active), nil
}

func (r *KVBenchmarkReconciler) slotRetry() time.Duration {
	if r.Config.SlotRetry > 0 {
		return r.Config.SlotRetry
	}
	return defaultSlotRetry
}

// waitingForSlot maps a runner Job event to the benchmarks that wait for a concurrency slot, so a
// finished run elsewhere lets them start at once.
func (r *KVBenchmarkReconciler) waitingForSlot(ctx context.Context, o client.Object) []reconcile.Request {
	job, ok := o.(*batchv1.Job)
	if !ok || r.Config.MaxConcurrentRuns <= 0 || (!jobFinished(job) && job.DeletionTimestamp.IsZero()) {
		return nil
	}
	var list kvv1.KVBenchmarkList
	if err := r.List(ctx, &list); err != nil {
		logf.FromContext(ctx).Error(err, "list KVBenchmarks waiting for a slot")
		return nil
	}
	var out []reconcile.Request
	for _, b := range list.Items {
		for _, run := range b.Status.Runs {
			if run.Reason == kvv1.ReasonWaitingForSlot {
				out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: b.Namespace, Name: b.Name}})
				break
			}
		}
	}
	return out
}

func (r *KVBenchmarkReconciler) expect(key types.NamespacedName, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.created == nil {
		r.created = map[types.NamespacedName]time.Time{}
	}
	r.created[key] = now
}

func (r *KVBenchmarkReconciler) emitTransitions(old, b *kvv1.KVBenchmark) {
	prev := map[string]kvv1.RunStatus{}
	for _, s := range old.Status.Runs {
		prev[s.Name] = s
	}
	for _, s := range b.Status.Runs {
		p, ok := prev[s.Name]
		if ok && p.Phase == s.Phase && p.Reason == s.Reason {
			continue
		}
		switch s.Phase {
		case kvv1.RunRunning:
			r.Recorder.Eventf(b, corev1.EventTypeNormal, EventRunStarted, "Run %s started on node %s", s.Name, s.NodeName)
		case kvv1.RunSucceeded:
			r.Recorder.Eventf(b, corev1.EventTypeNormal, EventRunSucceeded, "Run %s succeeded with %d result(s)", s.Name, len(s.Results))
		case kvv1.RunFailed:
			r.Recorder.Eventf(b, corev1.EventTypeWarning, EventRunFailed, "Run %s failed: %s: %s", s.Name, s.Reason, s.Message)
		case kvv1.RunPending:
			if s.Reason != "" {
				// Waiting for a slot is by design; every other wait is something to look at.
				typ := corev1.EventTypeWarning
				if s.Reason == kvv1.ReasonWaitingForSlot {
					typ = corev1.EventTypeNormal
				}
				r.Recorder.Eventf(b, typ, EventRunWaiting, "Run %s waits: %s: %s", s.Name, s.Reason, s.Message)
			}
		}
	}
	if old.Status.Phase != b.Status.Phase {
		typ := corev1.EventTypeNormal
		if b.Status.Phase == kvv1.PhaseFailed {
			typ = corev1.EventTypeWarning
		}
		r.Recorder.Eventf(b, typ, EventPhase, "Benchmark is %s (%s runs finished)", b.Status.Phase, b.Status.Progress)
	}
}

// podActive: the pod may still run (or start) the benchmark; nil (no pod) counts as active, so a
// terminal run's Job that never made a pod is stopped.
func podActive(p *corev1.Pod) bool {
	return p == nil || (p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed)
}

// podsOf returns the pods the Job controls (by UID: pods of an earlier namesake Job are not its).
func podsOf(pods []corev1.Pod, job *batchv1.Job) []corev1.Pod {
	if job == nil {
		return nil
	}
	var out []corev1.Pod
	for _, p := range pods {
		if metav1.IsControlledBy(&p, job) {
			out = append(out, p)
		}
	}
	return out
}

// SetupWithManager registers the controller. Several workers may reconcile different benchmarks
// at once: the concurrency limit stays exact because counting and creating hold slotMu. Log reads
// run outside the workers; a finished read reconciles its benchmark through a channel source.
func (r *KVBenchmarkReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	if r.Logs != nil {
		r.logReader = NewLogReader(r.Logs)
		if r.Config.LogTimeout > 0 {
			r.logReader.Timeout = r.Config.LogTimeout
		}
		if r.Config.LogRefresh > 0 {
			r.logReader.Refresh = r.Config.LogRefresh
		}
	}
	if err := indexByBenchmark(context.Background(), mgr); err != nil {
		return err
	}
	managed, err := predicate.LabelSelectorPredicate(metav1.LabelSelector{MatchLabels: map[string]string{render.LabelManagedBy: render.ManagerName}})
	if err != nil {
		return err
	}
	bld := ctrl.NewControllerManagedBy(mgr).
		For(&kvv1.KVBenchmark{}).
		Owns(&batchv1.Job{}, builder.WithPredicates(managed)).
		// Pods belong to Jobs, not to the benchmark; map them back by label.
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			name := o.GetLabels()[render.LabelBenchmark]
			if name == "" {
				return nil
			}
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
		}), builder.WithPredicates(managed)).
		Watches(&batchv1.Job{}, handler.EnqueueRequestsFromMapFunc(r.waitingForSlot), builder.WithPredicates(managed))
	if r.logReader != nil {
		bld = bld.WatchesRawSource(source.Channel(r.logReader.Events, &handler.EnqueueRequestForObject{}))
	}
	return bld.
		WithOptions(controller.Options{MaxConcurrentReconciles: max(1, r.Config.MaxConcurrentReconciles)}).
		Named("kvbenchmark").
		Complete(r)
}
