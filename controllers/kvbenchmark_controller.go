// Package controllers holds the KVBenchmark reconciler: it reads the benchmark, its Jobs and pods,
// creates missing Jobs (desired state comes from the pure plan and render packages), deletes
// finished Jobs under the cleanup policy, and writes status once per pass.
package controllers

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

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
}

// KVBenchmarkReconciler reconciles KVBenchmarks.
type KVBenchmarkReconciler struct {
	client.Client
	Recorder record.EventRecorder
	Clock    clock.PassiveClock
	Metrics  *metrics.Collector
	Config   Config
	// Logs opens a runner's log to archive its full result; nil turns archiving off.
	Logs LogOpener

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
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=create;get
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// Leader election only: a Role in the operator's namespace (config/rbac, the chart), never cluster-wide Leases.
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=kvbench-system,resources=leases,verbs=get;list;watch;create;update;patch;delete

// Reconcile brings one KVBenchmark one step closer to done.
func (r *KVBenchmarkReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)
	var b kvv1.KVBenchmark
	if err := r.Get(ctx, req.NamespacedName, &b); err != nil {
		if apierrors.IsNotFound(err) {
			// Owner references remove the Jobs; only our series are left to drop.
			r.Metrics.Delete(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if !b.DeletionTimestamp.IsZero() {
		r.Metrics.Delete(req.NamespacedName)
		return ctrl.Result{}, nil
	}
	now := r.Clock.Now()

	// Read.
	var jobs batchv1.JobList
	if err := r.List(ctx, &jobs, client.InNamespace(b.Namespace), client.MatchingLabels{render.LabelBenchmark: b.Name}); err != nil {
		return ctrl.Result{}, err
	}
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(b.Namespace), client.MatchingLabels{render.LabelBenchmark: b.Name}); err != nil {
		return ctrl.Result{}, err
	}
	jobByName := map[string]*batchv1.Job{}
	for i := range jobs.Items {
		jobByName[jobs.Items[i].Name] = &jobs.Items[i]
	}
	prevRuns := map[string]*kvv1.RunStatus{}
	for i := range b.Status.Runs {
		prevRuns[b.Status.Runs[i].Name] = &b.Status.Runs[i]
	}

	// Compare: observe every planned run.
	var requeue time.Duration
	want := func(d time.Duration) {
		if d > 0 && (requeue == 0 || d < requeue) {
			requeue = d
		}
	}
	runs := plan.Plan(&b)
	statuses := make([]kvv1.RunStatus, len(runs))
	var missing []int
	for i, run := range runs {
		job := jobByName[run.JobName]
		prev := prevRuns[run.Name]
		if job != nil && !metav1.IsControlledBy(job, &b) && (prev == nil || !terminal(prev)) {
			// A Job of a deleted namesake still being garbage collected: wait for it to go.
			st := kvv1.RunStatus{Name: run.Name, Engine: run.Engine.Name, JobName: run.JobName, Phase: kvv1.RunPending,
				Reason: "JobNameTaken", Message: fmt.Sprintf("Job %s exists and belongs to another object", run.JobName)}
			statuses[i] = st
			want(r.slotRetry())
			continue
		}
		if job != nil && !metav1.IsControlledBy(job, &b) {
			job = nil // terminal: the status is final whatever Job now has the name
		}
		st, obs := observeRun(run, prev, job, podsOf(pods.Items, job), now, r.Config.UnschedulableTimeout)
		statuses[i] = st
		want(obs.requeueAfter)
		if job == nil && st.Phase == kvv1.RunPending {
			missing = append(missing, i)
		}
	}

	// Create missing Jobs, within the concurrency limit.
	if len(missing) > 0 {
		free, err := r.freeSlots(ctx)
		if err != nil {
			return ctrl.Result{}, err
		}
		for _, i := range missing {
			run := runs[i]
			if free == 0 {
				statuses[i].Reason = kvv1.ReasonWaitingForSlot
				statuses[i].Message = fmt.Sprintf("the operator runs at most %d runner Jobs at a time", r.Config.MaxConcurrentRuns)
				want(r.slotRetry())
				continue
			}
			job, err := render.Job(&b, run, r.Config.Render)
			if err != nil {
				statuses[i].Phase, statuses[i].Reason, statuses[i].Message = kvv1.RunFailed, "InvalidOperatorConfig", err.Error()
				statuses[i].CompletionTime = &metav1.Time{Time: now}
				continue
			}
			if err := r.Create(ctx, job); err != nil {
				if apierrors.IsAlreadyExists(err) {
					// The cache is behind; the next pass sees the Job.
					want(time.Second)
					continue
				}
				return ctrl.Result{}, fmt.Errorf("create Job %s: %w", job.Name, err)
			}
			r.expect(types.NamespacedName{Namespace: job.Namespace, Name: job.Name}, now)
			r.Metrics.JobsCreated.WithLabelValues(b.Namespace, b.Name, run.Name).Inc()
			r.Recorder.Eventf(&b, corev1.EventTypeNormal, EventRunCreated, "Created Job %s for engine %s", job.Name, run.Name)
			if free > 0 {
				free--
			}
		}
	}

	// Finished runs (terminal status already persisted): archive the full result once the pod has
	// ended, then clean up the Job. Never before: the results must be in status, and the full
	// result archived, before the pod that carries them goes.
	for i, run := range runs {
		prev, job := prevRuns[run.Name], jobByName[run.JobName]
		if prev == nil || !terminal(prev) || job == nil || !metav1.IsControlledBy(job, &b) {
			continue
		}
		pod := newestPod(podsOf(pods.Items, job))
		if r.Logs != nil && statuses[i].FullResult == nil && !podActive(pod) {
			archived, err := r.archive(ctx, &b, run, pod)
			switch {
			case err == nil:
				statuses[i].FullResult = archived
			case now.Sub(finishedAt(prev, now)) < archiveGiveUp:
				log.Info("cannot archive the full result yet", "run", run.Name, "error", err.Error())
				want(archiveRetry)
			default:
				statuses[i].FullResult = &kvv1.ResultArchive{Error: truncate(err.Error())}
			}
			if fr := statuses[i].FullResult; fr != nil && fr.Error != "" {
				r.Recorder.Eventf(&b, corev1.EventTypeWarning, EventNotArchived, "The full result of run %s is not archived: %s", run.Name, fr.Error)
			}
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
			if left := finishedAt(prev, now).Add(ttl).Sub(now); left > 0 {
				want(left)
			} else {
				del = true
			}
		}
		if del {
			if err := r.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
				return ctrl.Result{}, fmt.Errorf("delete Job %s: %w", job.Name, err)
			}
			r.Recorder.Eventf(&b, corev1.EventTypeNormal, EventJobDeleted, "Deleted Job %s of finished run %s", job.Name, run.Name)
		}
	}

	// Write status once.
	newStatus := aggregate(&b, statuses, now)
	if !apiequality.Semantic.DeepEqual(b.Status, newStatus) {
		old := b.DeepCopy()
		b.Status = newStatus
		if err := r.Status().Update(ctx, &b); err != nil {
			if apierrors.IsConflict(err) {
				return ctrl.Result{Requeue: true}, nil
			}
			return ctrl.Result{}, err
		}
		r.emitTransitions(old, &b)
	}
	r.Metrics.Set(&b)
	log.V(1).Info("reconciled", "phase", b.Status.Phase, "progress", b.Status.Progress, "requeueAfter", requeue)
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// archive copies the full result from the runner's log into a ConfigMap owned by the benchmark.
// It returns an error only when trying again may help (the log could not be read); a log without
// a result, or one too big to keep, is an archive with an Error.
func (r *KVBenchmarkReconciler) archive(ctx context.Context, b *kvv1.KVBenchmark, run plan.Run, pod *corev1.Pod) (*kvv1.ResultArchive, error) {
	rc, err := r.Logs(ctx, pod.Namespace, pod.Name, render.ContainerName)
	if err != nil {
		return nil, fmt.Errorf("reading the log of pod %s: %w", pod.Name, err)
	}
	res, err := archive.FromLog(rc, maxResultLine)
	rc.Close()
	switch {
	case errors.Is(err, archive.ErrLineTooLong):
		return &kvv1.ResultArchive{Error: err.Error() + "; kubectl kvbench save reads it from the pod log before cleanup"}, nil
	case err != nil:
		return &kvv1.ResultArchive{Error: truncate(err.Error())}, nil
	case res == nil:
		return &kvv1.ResultArchive{Error: fmt.Sprintf("the log of pod %s has no result line (the runner did not get to write one)", pod.Name)}, nil
	}
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
				r.Recorder.Eventf(b, corev1.EventTypeNormal, EventRunWaiting, "Run %s waits: %s: %s", s.Name, s.Reason, s.Message)
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

// SetupWithManager registers the controller. One reconcile at a time keeps the global concurrency
// limit exact without locking across benchmarks.
func (r *KVBenchmarkReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	managed, err := predicate.LabelSelectorPredicate(metav1.LabelSelector{MatchLabels: map[string]string{render.LabelManagedBy: render.ManagerName}})
	if err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
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
		Watches(&batchv1.Job{}, handler.EnqueueRequestsFromMapFunc(r.waitingForSlot), builder.WithPredicates(managed)).
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).
		Named("kvbenchmark").
		Complete(r)
}
