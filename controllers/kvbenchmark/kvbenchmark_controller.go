// Package kvbenchmark holds the KVBenchmark reconciler: it reads the benchmark, its Jobs and pods,
// creates missing Jobs (desired state comes from the pure plan and render packages), deletes
// finished Jobs under the cleanup policy, and writes status once per pass.
package kvbenchmark

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/archive"
	"github.com/kvbench/kvbench-operator/controllers/metrics"
	"github.com/kvbench/kvbench-operator/controllers/plan"
	"github.com/kvbench/kvbench-operator/controllers/render"
	"github.com/kvbench/kvbench-operator/controllers/slots"
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
	// EventStatusWriteFailed: the status could not be written (other than a conflict).
	EventStatusWriteFailed = "StatusWriteFailed"
)

// Archiving the full result from the runner's log: retried this often while the log cannot be
// read, and given up this long after the run ended (cleanup waits for the outcome).
const (
	archiveRetry  = 15 * time.Second
	archiveGiveUp = 5 * time.Minute
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
	// Nodes reads a runner's node for its provenance labels; nil leaves them out.
	Nodes NodeReader

	// slotMu makes deciding who may start (placement.go) and reserving their slots and nodes one
	// step across workers; it is never held across an API call. queue holds what every benchmark
	// that waits or holds a node wants and holds (nil until seeded from the cache).
	slotMu sync.Mutex
	queue  map[types.NamespacedName]*slots.Demand
	// wake reconciles benchmarks the queue lets start.
	wake chan event.GenericEvent

	mu sync.Mutex
	// created remembers Jobs this process created until the cache shows them, so the ledger of
	// slots and nodes also counts Jobs the informer has not delivered yet.
	created map[types.NamespacedName]createdJob
	// refused remembers, per run (namespace/benchmark/run), the nodes the scheduler refused for it.
	refused map[string]map[string]refusal
	// unsent are events of a pass whose status write lost a conflict: sent after the next write.
	unsent map[types.NamespacedName][]pendingEvent
	// written is, per benchmark, the resourceVersion of this operator's last status write, until
	// a pass read the benchmark after it (readBenchmark).
	written map[types.NamespacedName]string
}

// +kubebuilder:rbac:groups=kvbench.io,resources=kvbenchmarks,verbs=get;list;watch
// +kubebuilder:rbac:groups=kvbench.io,resources=kvbenchmarks/status,verbs=get;update;patch
// Runner Jobs and archive ConfigMaps are owned by their benchmark with blockOwnerDeletion; under the
// OwnerReferencesPermissionEnforcement admission plugin (OpenShift) that needs update on the owner's
// finalizers. Creating them needs nothing more: the plugin asks for delete on the object only when an
// existing object's owner references change, which the operator never does.
// +kubebuilder:rbac:groups=kvbench.io,resources=kvbenchmarks/finalizers,verbs=update
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods/log,verbs=get
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;create
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch;list
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// Leader election only: a Role in the operator's namespace (config/rbac, the chart), never cluster-wide Leases.
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=kvbench-system,resources=leases,verbs=get;list;watch;create;update;patch;delete

// Reconcile brings one KVBenchmark one step closer to done: observe every planned run, create
// the missing Jobs, archive and clean up finished runs, and write status (always, also when a
// step failed, so that nothing is stuck without a reason).
func (r *KVBenchmarkReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	began := time.Now() // the pass's duration, for the debug log
	var b kvv1.KVBenchmark
	if err := r.readBenchmark(ctx, req.NamespacedName, &b); err != nil {
		if apierrors.IsNotFound(err) {
			// Owner references remove the Jobs; only our series and bookkeeping are left to drop.
			r.Metrics.Delete(req.NamespacedName)
			r.forgetResults(req.NamespacedName)
			r.forgetPlacement(ctx, req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if !b.DeletionTimestamp.IsZero() {
		r.Metrics.Delete(req.NamespacedName)
		r.forgetResults(req.NamespacedName)
		r.forgetPlacement(ctx, req.NamespacedName)
		return ctrl.Result{}, nil
	}
	runs, err := r.planRuns(ctx, &b)
	if err != nil {
		return ctrl.Result{}, err
	}
	p := &pass{b: &b, now: r.Clock.Now(), runs: runs, events: r.takeUnsent(req.NamespacedName)}
	if len(runs) == 0 {
		p.want(nodeRetry) // spread EachNode and no matching node yet
	}
	if err := r.observe(ctx, p); err != nil {
		return ctrl.Result{}, err
	}
	releaseErr := r.releaseRefused(ctx, p)
	createErr := r.createMissing(ctx, p)
	finishErr := r.finish(ctx, p)
	if res, err := r.writeStatus(ctx, p); err != nil || res.Requeue {
		return res, err
	}
	// Errors the status now explains are retried on the requeue; others by the rate limiter.
	if err := errors.Join(releaseErr, createErr, finishErr); err != nil {
		return ctrl.Result{}, err
	}
	logf.FromContext(ctx).V(1).Info("reconciled", "phase", b.Status.Phase, "progress", b.Status.Progress, "requeueAfter", p.requeue, "took", time.Since(began).Seconds())
	return ctrl.Result{RequeueAfter: p.requeue}, nil
}

// readBenchmark reads the benchmark from the cache, or from the API server when the cache does not
// show this operator's last status write yet (the pass that follows a write often comes within
// 0.1 s of it): a pass over the older status would decide again and lose its write to a conflict,
// whose retry waited up to 10 s behind the queue at a thousand benchmarks (issue 18).
func (r *KVBenchmarkReconciler) readBenchmark(ctx context.Context, key types.NamespacedName, b *kvv1.KVBenchmark) error {
	r.mu.Lock()
	rv, ok := r.written[key]
	delete(r.written, key)
	r.mu.Unlock()
	if err := r.Get(ctx, key, b); err != nil {
		return err
	}
	if !ok || rv == b.ResourceVersion {
		return nil
	}
	return r.APIReader.Get(ctx, key, b)
}

// wrote remembers the resourceVersion of a status write ("": it failed, nothing to wait for).
func (r *KVBenchmarkReconciler) wrote(key types.NamespacedName, rv string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rv == "" {
		delete(r.written, key)
		return
	}
	if r.written == nil {
		r.written = map[types.NamespacedName]string{}
	}
	r.written[key] = rv
}

// podsNow are a run's pods as the API server has them now: the cached pod read again by name (a
// runner Job has one pod: backoffLimit 0), or, when the cache has none, the benchmark's pods by
// label — a List the API server answers by reading every pod of the namespace, once per decided
// run (at a thousand benchmarks).
func (r *KVBenchmarkReconciler) podsNow(ctx context.Context, b *kvv1.KVBenchmark, job *batchv1.Job, cached []corev1.Pod) ([]corev1.Pod, error) {
	if len(cached) == 0 {
		var list corev1.PodList
		if err := r.APIReader.List(ctx, &list, client.InNamespace(b.Namespace), client.MatchingLabels{kvv1.LabelBenchmark: b.Name}); err != nil {
			return nil, err
		}
		return podsOf(list.Items, job), nil
	}
	var fresh []corev1.Pod
	for _, c := range cached {
		var pod corev1.Pod
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(&c), &pod); apierrors.IsNotFound(err) {
			continue // gone since
		} else if err != nil {
			return nil, err
		}
		fresh = append(fresh, pod)
	}
	return podsOf(fresh, job), nil
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
	release  []int // runs whose Job goes because the scheduler refused the node the operator chose
	requeue  time.Duration
	// events are sent once the status that explains them is written.
	events []pendingEvent
	// persisted are the pods whose archive outcome this pass's status holds: their log snapshots
	// are dropped once it is written.
	persisted []types.UID
}

// pendingEvent is an event on the benchmark, sent after the status write.
type pendingEvent struct{ typ, reason, message string }

// event queues an event for after the status write.
func (p *pass) event(typ, reason, format string, args ...any) {
	e := pendingEvent{typ, reason, fmt.Sprintf(format, args...)}
	for _, have := range p.events {
		if have == e {
			return // a pass that repeats a decision after a lost write does not say it twice
		}
	}
	p.events = append(p.events, e)
}

// index is the position of the run named name.
func (p *pass) index(name string) int {
	for i := range p.runs {
		if p.runs[i].Name == name {
			return i
		}
	}
	panic("no run " + name) // Admit answers only for runs the pass asked about
}

// fail ends run i now with reason and message (it never started: no Job, or none is made).
func (p *pass) fail(i int, reason, msg string) {
	st := &p.statuses[i]
	st.Phase, st.Reason, st.Message = kvv1.RunFailed, reason, truncate(msg)
	st.CompletionTime, st.WaitingSince = &metav1.Time{Time: p.now}, nil
}

// waitBounded keeps run i Pending for reason, at most bound after it began waiting for it; then
// it fails (DeadlineExceeded for queue waits, else reason).
func (p *pass) waitBounded(i int, reason, msg string, bound time.Duration) {
	since := waitingSince(p.prev[p.runs[i].Name], reason, p.now)
	waited := p.now.Sub(since)
	if waited >= bound {
		failReason := reason
		if reason == kvv1.ReasonWaitingForSlot || reason == kvv1.ReasonWaitingForNode {
			failReason = kvv1.ReasonDeadlineExceeded
		}
		p.fail(i, failReason, fmt.Sprintf("waited %s (%s): %s", waited.Round(time.Second), reason, msg))
		return
	}
	st := &p.statuses[i]
	st.Reason, st.Message, st.WaitingSince = reason, truncate(msg), &metav1.Time{Time: since}
	p.want(bound - waited)
}

// waitingSince is when a run began waiting for reason: kept from its previous status while the
// reason is the same, else now.
func waitingSince(prev *kvv1.RunStatus, reason string, now time.Time) time.Time {
	if prev != nil && prev.Phase == kvv1.RunPending && prev.Reason == reason && prev.WaitingSince != nil {
		return prev.WaitingSince.Time
	}
	return now
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

// observe reads the benchmark's Jobs and pods and derives every planned run's status. Jobs and pods
// are found by their controller's UID (a field index), never by a label anyone can copy.
func (r *KVBenchmarkReconciler) observe(ctx context.Context, p *pass) error {
	b := p.b
	var jobs batchv1.JobList
	if err := r.List(ctx, &jobs, client.InNamespace(b.Namespace), client.MatchingFields{ownerIndex: string(b.UID)}); err != nil {
		return err
	}
	p.jobs = map[string]*batchv1.Job{}
	for i := range jobs.Items {
		j := &jobs.Items[i]
		p.jobs[j.Name] = j
		var pods corev1.PodList
		if err := r.List(ctx, &pods, client.InNamespace(b.Namespace), client.MatchingFields{ownerIndex: string(j.UID)}); err != nil {
			return err
		}
		p.pods = append(p.pods, pods.Items...)
	}
	p.prev = map[string]*kvv1.RunStatus{}
	for i := range b.Status.Runs {
		p.prev[b.Status.Runs[i].Name] = &b.Status.Runs[i]
	}
	p.statuses = make([]kvv1.RunStatus, len(p.runs))
	for i, run := range p.runs {
		job := p.jobs[run.JobName]
		prev := p.prev[run.Name]
		if job == nil && (prev == nil || !terminal(prev)) {
			// Not ours: a Job of a deleted namesake still being garbage collected, or someone else's.
			var other batchv1.Job
			if err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: run.JobName}, &other); err == nil {
				p.statuses[i] = kvv1.RunStatus{Name: run.Name, Engine: run.Engine.Name, JobName: run.JobName, Phase: kvv1.RunPending,
					Reason: "JobNameTaken", Message: fmt.Sprintf("Job %s exists and belongs to another object", run.JobName)}
				p.want(r.slotRetry())
				continue
			} else if !apierrors.IsNotFound(err) {
				return err
			}
		}
		runPods := podsOf(p.pods, job)
		st, obs := r.observeRun(run, prev, job, runPods, p)
		if terminal(&st) && (prev == nil || !terminal(prev)) && job != nil {
			// About to decide for good: the cache may lag (a pod it has not delivered, or a
			// termination state it has not seen yet), so look at the pods as the API server has them.
			fresh, err := r.podsNow(ctx, b, job, runPods)
			if err != nil {
				return err
			}
			st, obs = r.observeRun(run, prev, job, fresh, p)
		}
		p.statuses[i] = st
		p.want(obs.requeueAfter)
		if job != nil && !terminal(&st) && len(runPods) == 0 {
			if err := r.podRefused(ctx, p, i, job); err != nil {
				return err
			}
		}
		if job != nil && job.Annotations[kvv1.AnnotationPickedNode] != "" && !job.DeletionTimestamp.IsZero() && st.StartTime == nil && !terminal(&st) && prev != nil {
			// Going because the scheduler refused the chosen node: it waits, as it did, for the next one.
			st.Reason, st.Message, st.NodeName = prev.Reason, prev.Message, ""
			p.statuses[i] = st
			continue
		}
		if job != nil && job.DeletionTimestamp.IsZero() && st.Reason == kvv1.ReasonUnschedulable && job.Annotations[kvv1.AnnotationPickedNode] != "" && st.StartTime == nil &&
			!waitingForClaim(st.Message) {
			p.release = append(p.release, i) // the scheduler refused the node the operator chose: choose another
		}
		if job == nil && st.Phase == kvv1.RunPending {
			p.missing = append(p.missing, i)
		}
	}
	return nil
}

// podRefusalGrace is how long a new Job may have no pod before the operator looks for the Job
// controller's FailedCreate events (it creates the pod within a second when it can).
const podRefusalGrace = 5 * time.Second

// podRefused explains run i, whose Job has no pod: when the API server refuses the pod (a
// ResourceQuota, an admission policy), the Job controller says so only in FailedCreate events on
// the Job. The run is Pending with the refusal's message, and fails with it after
// --start-failure-timeout (a quota may free up, a policy will not change its mind).
func (r *KVBenchmarkReconciler) podRefused(ctx context.Context, p *pass, i int, job *batchv1.Job) error {
	age := max(0, p.now.Sub(job.CreationTimestamp.Time))
	if age < podRefusalGrace || jobFinished(job) || !job.DeletionTimestamp.IsZero() {
		if age < podRefusalGrace {
			p.want(podRefusalGrace - age)
		}
		return nil
	}
	var events corev1.EventList
	if err := r.APIReader.List(ctx, &events, client.InNamespace(job.Namespace), client.MatchingFieldsSelector{Selector: fields.AndSelectors(
		fields.OneTermEqualSelector("involvedObject.uid", string(job.UID)), fields.OneTermEqualSelector("reason", "FailedCreate"))}); err != nil {
		return fmt.Errorf("read the events of Job %s: %w", job.Name, err)
	}
	msg := newestEventMessage(events.Items)
	if msg == "" {
		p.want(r.slotRetry())
		return nil
	}
	p.waitBounded(i, kvv1.ReasonPodRejected, "the API server refuses the runner pod: "+msg, r.startFailureTimeout())
	p.want(r.slotRetry()) // the quota may free up: look again
	return nil
}

// newestEventMessage is the message of the most recent event ("" when none).
func newestEventMessage(evs []corev1.Event) string {
	var newest *corev1.Event
	at := func(e *corev1.Event) time.Time {
		switch {
		case e.Series != nil:
			return e.Series.LastObservedTime.Time
		case !e.LastTimestamp.IsZero():
			return e.LastTimestamp.Time
		case !e.EventTime.IsZero():
			return e.EventTime.Time
		}
		return e.CreationTimestamp.Time
	}
	for i := range evs {
		if newest == nil || at(&evs[i]).After(at(newest)) {
			newest = &evs[i]
		}
	}
	if newest == nil {
		return ""
	}
	return newest.Message
}

// waitingForClaim says whether the scheduler's message is only that the pod's generic ephemeral
// volume has no claim yet: the pod was created before the ephemeral volume controller made its claim
// (a race on every localNVMe run), the scheduler tries again when the claim appears, and the node
// has not been refused. Deleting the Job then would refuse the only node of a one-node cluster.
func waitingForClaim(msg string) bool {
	return strings.Contains(msg, "waiting for ephemeral volume controller to create the persistentvolumeclaim")
}

// releaseRefused deletes the Jobs of runs the scheduler refused on the node the operator chose for
// them (before they started), and remembers the refusal, so that createMissing chooses another node.
func (r *KVBenchmarkReconciler) releaseRefused(ctx context.Context, p *pass) error {
	for _, i := range p.release {
		run, st, job := p.runs[i], &p.statuses[i], p.jobs[p.runs[i].JobName]
		node := job.Annotations[kvv1.AnnotationPickedNode]
		if err := r.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete Job %s: %w", job.Name, err)
		}
		r.refuse(refusalKey(p.b, run.Name), node, st.Message, p.now)
		st.Reason, st.Message = kvv1.ReasonWaitingForNode, truncate(fmt.Sprintf("the scheduler refused node %s (%s); choosing another node", node, st.Message))
		st.NodeName = ""
		p.want(time.Second)
	}
	return nil
}

// observeRun is observeRun with what the runner logged so far (read in the background).
func (r *KVBenchmarkReconciler) observeRun(run plan.Run, prev *kvv1.RunStatus, job *batchv1.Job, pods []corev1.Pod, p *pass) (kvv1.RunStatus, observation) {
	var logged *logSnapshot
	lim := limits{unschedulable: r.Config.UnschedulableTimeout, startFailure: r.startFailureTimeout(), logGiveUp: archiveGiveUp}
	pod := newestPod(pods)
	if r.logReader != nil && pod != nil && (prev == nil || !terminal(prev)) {
		ended := podEnded(pod, p.now)
		logged = r.logReader.Get(pod, p.key(), ended)
		if !ended && pod.Status.Phase == corev1.PodRunning {
			p.want(r.logReader.Refresh) // stream the finished phases into status
		}
		lim.finalLogPending = ended && (logged == nil || !logged.Final)
	}
	return observeRun(run, prev, job, pods, logged, p.now, lim)
}

// createMissing creates the Jobs of the missing runs that may start: the engine order
// (plan.Sequence) and the checks of demand say which the benchmark wants, the queue of every
// waiting benchmark (slots.Admit, under slotMu) which of those may start now and on which node.
// A Job the API server refuses fails its run with the server's message when retrying cannot
// help, and leaves it Pending with the reason while it can; the error returned is only for the retry.
func (r *KVBenchmarkReconciler) createMissing(ctx context.Context, p *pass) error {
	b := p.b
	d, jobs, err := r.demand(ctx, p)
	if err != nil {
		return err
	}
	p.missing = nil
	// Decided under slotMu with every other benchmark, reserved in the ledger, created after.
	starts, err := r.admitted(ctx, p, d, jobs)
	if err != nil {
		return err
	}
	var errs []error
	for _, s := range starts {
		run, st, job := p.runs[s.index], &p.statuses[s.index], s.job
		if missing, err := r.optionsFileMissing(ctx, b.Namespace, run.Engine.OptionsFrom); missing != "" || err != nil {
			if err != nil {
				p.waitBounded(s.index, kvv1.ReasonJobCreateRetrying, "reading the optionsFrom ConfigMap failed, retrying: "+apiMessage(err), r.startFailureTimeout())
				errs = append(errs, err)
			} else {
				p.fail(s.index, kvv1.ReasonOptionsFileMissing, missing)
			}
			r.unexpect(job)
			continue
		}
		if err := r.Create(ctx, job); err != nil {
			switch {
			case apierrors.IsAlreadyExists(err):
				// The cache is behind; the next pass sees the Job (the reservation stands for it).
				p.want(time.Second)
				continue
			case createPermanent(err):
				p.fail(s.index, kvv1.ReasonJobRejected, fmt.Sprintf("the API server refused Job %s: %s", job.Name, apiMessage(err)))
			default:
				p.waitBounded(s.index, kvv1.ReasonJobCreateRetrying, fmt.Sprintf("creating Job %s failed, retrying: %s", job.Name, apiMessage(err)), r.startFailureTimeout())
				errs = append(errs, fmt.Errorf("create Job %s: %w", job.Name, err))
			}
			r.unexpect(job)
			continue
		}
		r.Metrics.JobsCreated.WithLabelValues(b.Namespace, b.Name, run.Name).Inc()
		logf.FromContext(ctx).V(1).Info("created Job", "job", job.Name)
		where := ""
		if st.NodeName != "" {
			where = " on node " + st.NodeName
		}
		p.event(corev1.EventTypeNormal, EventRunCreated, "Created Job %s for engine %s%s", job.Name, run.Name, where)
	}
	return errors.Join(errs...)
}

// optionsFileMissing says why an engine's optionsFrom cannot be mounted ("" when it can): a pod
// whose ConfigMap volume is missing waits for it instead of failing, so the run fails here, before
// its Job exists. Read from the API server: the operator does not cache ConfigMaps.
func (r *KVBenchmarkReconciler) optionsFileMissing(ctx context.Context, ns string, from *kvv1.OptionsFromSource) (string, error) {
	if from == nil {
		return "", nil
	}
	ref := from.ConfigMapKeyRef
	var cm corev1.ConfigMap
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, &cm); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Sprintf("engines[].optionsFrom: ConfigMap %s/%s does not exist: create it with the OPTIONS file under key %q (kubectl create configmap %s --from-file=%s=<file>)",
				ns, ref.Name, ref.Key, ref.Name, ref.Key), nil
		}
		return "", fmt.Errorf("get ConfigMap %s/%s: %w", ns, ref.Name, err)
	}
	_, inData := cm.Data[ref.Key]
	if _, inBinary := cm.BinaryData[ref.Key]; !inData && !inBinary {
		keys := make([]string, 0, len(cm.Data)+len(cm.BinaryData))
		for k := range cm.Data {
			keys = append(keys, k)
		}
		for k := range cm.BinaryData {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return fmt.Sprintf("engines[].optionsFrom: ConfigMap %s/%s has no key %q (it has: %s)", ns, ref.Name, ref.Key, strings.Join(keys, ", ")), nil
	}
	return "", nil
}

// createPermanent: the API server will refuse the same Job again (invalid, or forbidden by an
// admission policy or RBAC), so retrying cannot help. An exceeded quota may free up.
func createPermanent(err error) bool {
	switch {
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err), apierrors.IsRequestEntityTooLargeError(err):
		return true
	case apierrors.IsForbidden(err):
		// Transient: a quota may free up, a namespace ends, and an API server that has not yet
		// discovered a just-installed CRD refuses blockOwnerDeletion ("cannot find RESTMapping").
		msg := err.Error()
		return !strings.Contains(msg, "exceeded quota") && !strings.Contains(msg, "is being terminated") &&
			!strings.Contains(msg, "cannot find RESTMapping")
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

// finish archives the full result of the runs that are terminal (decided in this pass or
// before) once the pod has ended, then cleans up the Job. Archiving in the pass that decides saves
// a pass per run (issue 18's scale figures); a retried pass stores the same archive. Cleanup waits
// until the decision and the archive's outcome are persisted: the results must be in status, and
// the full result archived, before the pod that carries them goes.
func (r *KVBenchmarkReconciler) finish(ctx context.Context, p *pass) error {
	b := p.b
	for i, run := range p.runs {
		st, prev, job := &p.statuses[i], p.prev[run.Name], p.jobs[run.JobName]
		if !terminal(st) {
			continue
		}
		var pod *corev1.Pod
		if job != nil {
			pod = newestPod(podsOf(p.pods, job))
		}
		if r.logReader != nil && st.FullResult == nil && st.StartTime != nil && (pod == nil || !podActive(pod)) {
			if pod == nil {
				// The runner ran and its pod is gone (its Job deleted, or the pod): confirm with the API
				// server, then record that its log cannot be read.
				gone, err := r.podGone(ctx, p, run, job)
				if err != nil || !gone {
					return err
				}
			}
			r.archiveRun(ctx, p, i, pod)
			if st.FullResult != nil && pod != nil {
				p.persisted = append(p.persisted, pod.UID)
			}
			if st.FullResult != nil && job != nil && b.Spec.Cleanup.Policy != kvv1.CleanupKeep {
				p.want(max(time.Second, cleanupLeft(b, st, p.now))) // cleanup, once the archive's outcome is persisted
			}
			continue
		}
		if prev == nil || !terminal(prev) {
			p.want(time.Second) // decided in this pass: cleanup once that is persisted
			continue
		}
		if r.logReader != nil && pod != nil {
			p.persisted = append(p.persisted, pod.UID) // the archive's outcome is in status
		}
		if job == nil {
			continue
		}
		if !job.DeletionTimestamp.IsZero() {
			continue
		}
		// A run that failed while its pod was still pending or running (image pull, unschedulable)
		// is stopped now; a pod that already ended is kept for its logs until the TTL.
		del := !jobFinished(job) && podActive(pod)
		if !del && b.Spec.Cleanup.Policy != kvv1.CleanupKeep {
			if left := cleanupLeft(b, prev, p.now); left > 0 {
				p.want(left)
			} else {
				del = true
			}
		}
		if del {
			if err := r.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("delete Job %s: %w", job.Name, err)
			}
			p.event(corev1.EventTypeNormal, EventJobDeleted, "Deleted Job %s of finished run %s", job.Name, run.Name)
		}
	}
	return nil
}

// cleanupLeft is how long the Job of terminal run st is kept after now (its TTL after the run ended).
func cleanupLeft(b *kvv1.KVBenchmark, st *kvv1.RunStatus, now time.Time) time.Duration {
	ttl := time.Duration(600) * time.Second
	if b.Spec.Cleanup.TTLSecondsAfterFinished != nil {
		ttl = time.Duration(*b.Spec.Cleanup.TTLSecondsAfterFinished) * time.Second
	}
	return finishedAt(st, now).Add(ttl).Sub(now)
}

// archiveRun records the outcome of archiving run i's full result, read from its ended pod's log
// in the background: the archive, a retry while the log may still be read, or the reason there
// is none. Phases the bounded summary dropped are added to status from the full result.
func (r *KVBenchmarkReconciler) archiveRun(ctx context.Context, p *pass, i int, pod *corev1.Pod) {
	run, st := p.runs[i], &p.statuses[i]
	var snap *logSnapshot
	if pod != nil {
		snap = r.logReader.Get(pod, p.key(), true)
		if snap == nil || !snap.Final {
			p.want(archiveRetry) // the read's end reconciles at once; this is the safety net
			return
		}
	}
	archived, err := r.archive(ctx, p.b, run, pod, snap)
	sinceEnd := p.now.Sub(finishedAt(st, p.now))
	switch {
	case err == nil:
		st.FullResult = archived
		if snap != nil && snap.Result != nil {
			full := make([]kvv1.PhaseSummary, len(snap.Result.Phases))
			for j := range snap.Result.Phases {
				full[j] = snap.Result.Phases[j].PhaseSummary
			}
			known := max(int32(len(full)), int32(len(st.Results))+st.Truncated)
			st.Results = mergePhases(full, st.Results)
			st.Truncated = max(0, known-int32(len(st.Results)))
		}
	case sinceEnd < archiveGiveUp:
		logf.FromContext(ctx).Info("cannot archive the full result yet", "run", run.Name, "error", err.Error())
		p.want(archiveRetryAfter(sinceEnd))
	default:
		st.FullResult = &kvv1.ResultArchive{Error: truncate(err.Error())}
	}
	if fr := st.FullResult; fr != nil && fr.Error != "" {
		p.event(corev1.EventTypeWarning, EventNotArchived, "The full result of run %s is not archived: %s", run.Name, fr.Error)
	}
}

// writeStatus writes the aggregated status when it changed, emits the transitions' events and
// refreshes the benchmark's series.
func (r *KVBenchmarkReconciler) writeStatus(ctx context.Context, p *pass) (ctrl.Result, error) {
	b := p.b
	for i := range p.statuses {
		st := &p.statuses[i]
		if st.Phase != kvv1.RunPending || st.Reason == "" {
			st.WaitingSince = nil
		} else if st.WaitingSince == nil {
			st.WaitingSince = &metav1.Time{Time: waitingSince(p.prev[st.Name], st.Reason, p.now)}
		}
	}
	newStatus := aggregate(b, p.statuses, p.now)
	p.want(r.compareBaseline(ctx, b, &newStatus, p.now))
	newStatus.Verdict = verdictColumn(newStatus.Conditions) // with the Regressed condition just set
	fitStatus(&newStatus, b.Generation, metav1.Time{Time: p.now})
	meta.RemoveStatusCondition(&newStatus.Conditions, ConditionStatusWriteFailed) // this write clears it
	changed := !apiequality.Semantic.DeepEqual(b.Status, newStatus)
	if changed {
		old := b.DeepCopy()
		b.Status = newStatus
		if err := r.Status().Update(ctx, b); err != nil {
			r.wrote(p.key(), "")
			// The events wait for a status that explains them; the next pass decides again.
			r.keepUnsent(p)
			if apierrors.IsConflict(err) {
				logf.FromContext(ctx).V(1).Info("status write conflict", "resourceVersion", old.ResourceVersion)
				return ctrl.Result{Requeue: true}, nil
			}
			r.statusWriteFailed(ctx, old, err, p.now)
			return ctrl.Result{}, fmt.Errorf("write status: %w", err) // retried with the rate limiter's backoff
		}
		r.wrote(p.key(), b.ResourceVersion)
		r.emitTransitions(old, b)
		r.emitBaseline(old, b)
	}
	if r.logReader != nil {
		for _, uid := range p.persisted {
			r.logReader.Forget(uid)
		}
	}
	for _, e := range p.events {
		r.Recorder.Event(b, e.typ, e.reason, e.message)
	}
	// The series follow status and the archives it names: rebuild them when either changed, or
	// an archive could not be read yet.
	if changed || !r.Metrics.Has(p.key()) || !r.haveArchivedResults(b) {
		r.Metrics.SetSeries(b, r.archivedSeries(ctx, b))
		if !r.haveArchivedResults(b) {
			p.want(archiveRetry) // no pass follows the operator's own status writes (SetupWithManager)
		}
	}
	return ctrl.Result{}, nil
}

// ConditionStatusWriteFailed is True while the operator cannot write a benchmark's status (for a
// reason other than a conflict); its message is the API server's.
const ConditionStatusWriteFailed = "StatusWriteFailed"

// statusWriteFailed makes a failed status write visible: a Warning event, and the condition
// StatusWriteFailed on the status last written (a small change, which can succeed where the full
// write failed). The failed write itself is retried with backoff by the caller's error.
func (r *KVBenchmarkReconciler) statusWriteFailed(ctx context.Context, old *kvv1.KVBenchmark, err error, now time.Time) {
	msg := truncate("the operator cannot write this benchmark's status, and retries with backoff: " + apiMessage(err))
	logf.FromContext(ctx).Error(err, "cannot write status")
	r.Recorder.Eventf(old, corev1.EventTypeWarning, EventStatusWriteFailed, "%s", msg)
	if c := meta.FindStatusCondition(old.Status.Conditions, ConditionStatusWriteFailed); c != nil && c.Message == msg {
		return
	}
	b := old.DeepCopy()
	meta.SetStatusCondition(&b.Status.Conditions, metav1.Condition{Type: ConditionStatusWriteFailed, Status: metav1.ConditionTrue,
		Reason: "WriteFailed", Message: msg, ObservedGeneration: b.Generation, LastTransitionTime: metav1.Time{Time: now}})
	if err := r.Status().Update(ctx, b); err != nil {
		logf.FromContext(ctx).Error(err, "cannot record that status cannot be written")
	}
}

// keepUnsent keeps the events of a pass whose status write failed for the next pass.
func (r *KVBenchmarkReconciler) keepUnsent(p *pass) {
	if len(p.events) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.unsent == nil {
		r.unsent = map[types.NamespacedName][]pendingEvent{}
	}
	r.unsent[p.key()] = p.events
}

// takeUnsent returns (and forgets) the events kept for key.
func (r *KVBenchmarkReconciler) takeUnsent(key types.NamespacedName) []pendingEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	ev := r.unsent[key]
	delete(r.unsent, key)
	return ev
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
	case snap.Bad != nil:
		return &kvv1.ResultArchive{Error: truncate(snap.Bad.Error())}, nil
	case snap.Err != nil:
		return nil, snap.Err
	case snap.Result == nil:
		return &kvv1.ResultArchive{Error: fmt.Sprintf("the log of pod %s has no result line (the runner did not get to write one)", pod.Name)}, nil
	}
	if snap.built == nil {
		// Built once per snapshot: when the status write after storing it fails, the retry
		// stores the same bytes (the node's labels may have changed meanwhile).
		res := snap.Result.DeepCopy()
		if res.Engine == "" {
			res.Engine = run.Engine.Name
		}
		r.stampProvenance(ctx, res, pod)
		var over []string
		if snap.Over != nil {
			// What fits is archived, and says what the limits left out.
			res.Error = strings.TrimPrefix(res.Error+"; "+snap.Over.Error(), "; ")
			over = []string{archive.DroppedOverLimits}
		}
		cm, dropped, err := archive.ConfigMap(b, run.Name, run.JobName, res)
		if err != nil {
			return &kvv1.ResultArchive{Error: truncate(err.Error())}, nil
		}
		snap.built = &builtArchive{cm: cm, dropped: append(over, dropped...)}
		if len(snap.built.dropped) == 0 {
			snap.built.res = res
		}
		r.logReader.keepBuilt(pod.UID, snap.built)
	}
	archived, err := r.storeArchive(ctx, b, snap.built.cm.DeepCopy(), snap.built.dropped)
	if err == nil && archived.ConfigMap != "" && snap.built.res != nil {
		// The series read it next: no need to read back and decode what was just written.
		r.cacheResult(types.NamespacedName{Namespace: b.Namespace, Name: archived.ConfigMap}, b, run.Name, run.Engine.Name, snap.built.res)
	}
	return archived, err
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

func (r *KVBenchmarkReconciler) slotRetry() time.Duration {
	if r.Config.SlotRetry > 0 {
		return r.Config.SlotRetry
	}
	return defaultSlotRetry
}

// waitRetry is the safety-net look of a benchmark waiting for a slot or a node, among queued
// waiting ones. What starts it is the wake-up when a runner ends; the safety net alone, every 15 s
// for each of 900 waiting benchmarks, was most of the operator's work in the scale test (issue 18),
// so it stretches with the queue: 250 ms per waiting benchmark, at most 5 minutes.
func (r *KVBenchmarkReconciler) waitRetry(queued int) time.Duration {
	return max(r.slotRetry(), min(time.Duration(queued)*250*time.Millisecond, 5*time.Minute))
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
				// Waiting for a slot, a node or the previous engine is by design (Normal, naming what
				// is in the way); every other wait is something to look at.
				typ := corev1.EventTypeWarning
				if ordinaryWait[s.Reason] {
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

// ordinaryWait are the waits a shared cluster has by design.
var ordinaryWait = map[string]bool{kvv1.ReasonWaitingForSlot: true, kvv1.ReasonWaitingForNode: true, kvv1.ReasonWaitingForRun: true}

// podGone: no pod of run is left on the API server (the cache may lag behind a new one).
func (r *KVBenchmarkReconciler) podGone(ctx context.Context, p *pass, run plan.Run, job *batchv1.Job) (bool, error) {
	var pods corev1.PodList
	if err := r.APIReader.List(ctx, &pods, client.InNamespace(p.b.Namespace), client.MatchingLabels{
		kvv1.LabelBenchmark: p.b.Name, kvv1.LabelRun: kvv1.RunLabelValue(run.Name, run.JobName)}); err != nil {
		return false, err
	}
	for i := range pods.Items {
		ref := metav1.GetControllerOf(&pods.Items[i])
		if ref != nil && ref.Name == run.JobName && (job == nil || ref.UID == job.UID) {
			return false, nil
		}
	}
	return true, nil
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

// benchmarkOfPod maps a runner pod to the benchmark that controls its Job (the label, which anyone
// can set, only when the Job is gone: it only asks for a reconcile, which trusts owners alone).
func (r *KVBenchmarkReconciler) benchmarkOfPod(ctx context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[kvv1.LabelBenchmark]
	if ref := metav1.GetControllerOf(o); ref != nil && ref.Kind == "Job" {
		var job batchv1.Job
		if err := r.Get(ctx, client.ObjectKey{Namespace: o.GetNamespace(), Name: ref.Name}, &job); err == nil {
			owner := metav1.GetControllerOf(&job)
			if job.UID != ref.UID || owner == nil || !controlledByBenchmark(&job) {
				return nil
			}
			name = owner.Name
		}
	}
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
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
		r.logReader.Ahead = r.holding
		if r.Config.LogTimeout > 0 {
			r.logReader.Timeout = r.Config.LogTimeout
		}
		if r.Config.LogRefresh > 0 {
			r.logReader.Refresh = r.Config.LogRefresh
		}
	}
	if err := indexRunners(context.Background(), mgr); err != nil {
		return err
	}
	// Exclusive runs are placed from the cached nodes (trimmed: CacheOptions).
	if _, err := mgr.GetCache().GetInformer(context.Background(), &corev1.Node{}); err != nil {
		return err
	}
	r.wake = make(chan event.GenericEvent, 1024)
	managed, err := predicate.LabelSelectorPredicate(metav1.LabelSelector{MatchLabels: map[string]string{kvv1.LabelManagedBy: kvv1.ManagerName}})
	if err != nil {
		return err
	}
	bld := ctrl.NewControllerManagedBy(mgr).
		For(&kvv1.KVBenchmark{}, builder.WithPredicates(specChanged())).
		Owns(&batchv1.Job{}, builder.WithPredicates(managed, runnerChanged())).
		// Pods belong to Jobs, not to the benchmark: map them back through their Job.
		Watches(&corev1.Pod{}, r.podChanged(), builder.WithPredicates(managed, runnerChanged())).
		// A Job or pod that stops holding a slot or node reconciles the benchmarks that may start now.
		Watches(&batchv1.Job{}, r.freed(), builder.WithPredicates(managed)).
		Watches(&corev1.Pod{}, r.freed(), builder.WithPredicates(managed)).
		WatchesRawSource(source.Channel(r.wake, urgent()))
	if r.logReader != nil {
		bld = bld.WatchesRawSource(source.Channel(r.logReader.Events, &handler.EnqueueRequestForObject{})).
			WatchesRawSource(source.Channel(r.logReader.Final, r.decided()))
	}
	return bld.
		WithOptions(controller.Options{MaxConcurrentReconciles: max(1, r.Config.MaxConcurrentReconciles), UsePriorityQueue: ptr.To(true), NewQueue: newPriorityQueue}).
		Named("kvbenchmark").
		Complete(r)
}
