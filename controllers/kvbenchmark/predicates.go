package kvbenchmark

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Updates that change nothing a pass reads bring no pass. At fleet scale every pass costs a
// worker about 0.1-0.2 s, and a benchmark woken for a freed slot waits behind the queued passes
// (issue 18's scale figures): the operator's own status writes, a pod's readiness or IP, a Job's
// active and ready counts were most of the queue.

// specChanged lets a benchmark's update through when what the user (or a tool) set changed, not
// its status: the reconciler asks for its own next pass (RequeueAfter) when a write leaves work.
func specChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld, e.ObjectNew
		return o.GetGeneration() != n.GetGeneration() ||
			!apiequality.Semantic.DeepEqual(o.GetLabels(), n.GetLabels()) ||
			!apiequality.Semantic.DeepEqual(o.GetAnnotations(), n.GetAnnotations()) ||
			!apiequality.Semantic.DeepEqual(o.GetDeletionTimestamp(), n.GetDeletionTimestamp()) ||
			!apiequality.Semantic.DeepEqual(o.GetFinalizers(), n.GetFinalizers())
	}}
}

// runnerChanged lets a runner Job's or pod's update through when it changes what observeRun,
// podRefused and finish read of it.
func runnerChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return !apiequality.Semantic.DeepEqual(runnerView(e.ObjectOld), runnerView(e.ObjectNew))
	}}
}

// jobView and podView are the fields of a runner Job and pod a pass reads.
type jobView struct {
	Deletion    *metav1.Time
	Annotations map[string]string
	Conditions  []batchv1.JobCondition
	Start, End  *metav1.Time
	Failed      int32
	Succeeded   int32
}

type podView struct {
	Deletion   *metav1.Time
	Node       string
	Phase      corev1.PodPhase
	Start      *metav1.Time
	Reason     string
	Message    string
	Containers []containerView
	Scheduled  *corev1.PodCondition
	Disruption *corev1.PodCondition
}

type containerView struct {
	Name             string
	State, LastEnded corev1.ContainerState
	RestartCount     int32
}

func runnerView(o client.Object) any {
	switch o := o.(type) {
	case *batchv1.Job:
		return jobView{Deletion: o.DeletionTimestamp, Annotations: o.Annotations, Conditions: o.Status.Conditions,
			Start: o.Status.StartTime, End: o.Status.CompletionTime, Failed: o.Status.Failed, Succeeded: o.Status.Succeeded}
	case *corev1.Pod:
		v := podView{Deletion: o.DeletionTimestamp, Node: o.Spec.NodeName, Phase: o.Status.Phase, Start: o.Status.StartTime,
			Reason: o.Status.Reason, Message: o.Status.Message,
			Scheduled: podCondition(o, corev1.PodScheduled), Disruption: podCondition(o, corev1.DisruptionTarget)}
		for _, cs := range o.Status.ContainerStatuses {
			v.Containers = append(v.Containers, containerView{Name: cs.Name, State: cs.State, LastEnded: cs.LastTerminationState, RestartCount: cs.RestartCount})
		}
		return v
	}
	return o // not a runner: any change counts
}

// Passes on a run's critical path — a benchmark a freed slot lets start, the read of an ended
// runner's log that decides its run — go ahead of the rest of the queue (controller-runtime's
// priority queue). They are at most about two per run, so the rest still moves; in a FIFO queue
// they waited behind a thousand benchmarks' other passes while the slots stood idle (issue 18).
const urgentPriority = 10

func addUrgent(q workqueue.TypedRateLimitingInterface[reconcile.Request], req reconcile.Request) {
	addAt(q, req, urgentPriority)
}

// addAt adds req at priority (a plain queue, in tests, just adds it).
func addAt(q workqueue.TypedRateLimitingInterface[reconcile.Request], req reconcile.Request, priority int) {
	if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
		pq.AddWithOpts(priorityqueue.AddOpts{Priority: priority}, req)
		return
	}
	q.Add(req)
}

// decided enqueues the benchmark whose ended runner's log was read ahead of the queue, and a
// Sequential comparison between its engines ahead of the other urgent passes: its slot and node
// wait, reserved, for the next engine this pass starts.
func (r *KVBenchmarkReconciler) decided() handler.Funcs {
	return handler.Funcs{GenericFunc: func(_ context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(e.Object)}
		priority := urgentPriority
		if r.holding(req.NamespacedName) {
			priority++
		}
		addAt(q, req, priority)
	}}
}

// urgent enqueues the benchmark of a channel source's event ahead of the queue.
func urgent() handler.Funcs {
	return handler.Funcs{GenericFunc: func(_ context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		addUrgent(q, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(e.Object)})
	}}
}

// podChanged reconciles a runner pod's benchmark when the pod changed (through its Job: the
// mapping trusts owners alone). A pod that ends starts the read of its whole log here, and no pass
// is queued while that read is pending: it would only find the read pending, and the read's end
// reconciles the benchmark ahead of the queue. At a thousand benchmarks those passes kept the
// workers busy while the deciding pass waited seconds in the queue (issue 18's gaps).
func (r *KVBenchmarkReconciler) podChanged() handler.EventHandler {
	mapped := handler.EnqueueRequestsFromMapFunc(r.benchmarkOfPod)
	if r.logReader == nil {
		return mapped
	}
	return handler.Funcs{
		CreateFunc:  mapped.Create,
		DeleteFunc:  mapped.Delete,
		GenericFunc: mapped.Generic,
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			old, pod := e.ObjectOld.(*corev1.Pod), e.ObjectNew.(*corev1.Pod)
			now := r.Clock.Now()
			if podEnded(pod, now) {
				if !podEnded(old, now) {
					for _, req := range r.benchmarkOfPod(ctx, pod) {
						r.logReader.Get(pod, req.NamespacedName, true)
					}
				}
				if r.logReader.FinalPending(pod.UID) {
					return
				}
			}
			mapped.Update(ctx, e, q)
		},
	}
}
