package kvbenchmark

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/controllers/plan"
	"github.com/kvbench/kvbench-operator/controllers/render"
	"github.com/kvbench/kvbench-operator/controllers/slots"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

func TestUpdatesThatBringAPass(t *testing.T) {
	bench := &kvv1.KVBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "b", Generation: 1}}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j"}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{NodeName: "n1"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "runner",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}}}
	now := metav1.NewTime(time.Now())
	cases := []struct {
		name   string
		old    client.Object
		update func(client.Object)
		pass   bool
	}{
		{"benchmark status only (the operator's own write)", bench, func(o client.Object) {
			o.(*kvv1.KVBenchmark).Status.Phase = kvv1.PhaseRunning
			o.SetResourceVersion("2")
		}, false},
		{"benchmark spec (new generation)", bench, func(o client.Object) { o.SetGeneration(2) }, true},
		{"benchmark annotation", bench, func(o client.Object) { o.SetAnnotations(map[string]string{"a": "b"}) }, true},
		{"benchmark label", bench, func(o client.Object) { o.SetLabels(map[string]string{"a": "b"}) }, true},
		{"benchmark being deleted", bench, func(o client.Object) { o.SetDeletionTimestamp(&now) }, true},
		{"Job active and ready counts", job, func(o client.Object) {
			o.(*batchv1.Job).Status.Active, o.(*batchv1.Job).Status.Ready = 1, ptr.To[int32](1)
		}, false},
		{"Job complete", job, func(o client.Object) {
			o.(*batchv1.Job).Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
		}, true},
		{"Job annotation (the picked node)", job, func(o client.Object) { o.SetAnnotations(map[string]string{"x": "y"}) }, true},
		{"Job being deleted", job, func(o client.Object) { o.SetDeletionTimestamp(&now) }, true},
		{"pod ready and IP", pod, func(o client.Object) {
			p := o.(*corev1.Pod)
			p.Status.PodIP = "10.0.0.1"
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue})
			p.Status.ContainerStatuses[0].Ready = true
		}, false},
		{"pod ended", pod, func(o client.Object) { o.(*corev1.Pod).Status.Phase = corev1.PodSucceeded }, true},
		{"runner container terminated", pod, func(o client.Object) {
			o.(*corev1.Pod).Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: "{}"}}
		}, true},
		{"pod unschedulable", pod, func(o client.Object) {
			p := o.(*corev1.Pod)
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable})
		}, true},
		{"pod evicted", pod, func(o client.Object) { o.(*corev1.Pod).Status.Reason = "Evicted" }, true},
		{"pod bound to a node", pod, func(o client.Object) { o.(*corev1.Pod).Spec.NodeName = "n2" }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := c.old.DeepCopyObject().(client.Object)
			c.update(n)
			pred := runnerChanged()
			if _, ok := c.old.(*kvv1.KVBenchmark); ok {
				pred = specChanged()
			}
			if got := pred.Update(event.UpdateEvent{ObjectOld: c.old, ObjectNew: n}); got != c.pass {
				t.Errorf("brings a pass = %v, want %v", got, c.pass)
			}
		})
	}
}

// A runner pod's end starts the read of its whole log at once, before any pass runs, and queues no
// pass while that read is pending (the read's end reconciles the benchmark); other updates start
// no read and queue a pass.
func TestAPodsEndStartsItsFinalReadAndQueuesNoPassUntilItEnds(t *testing.T) {
	b := w.MakeKVBenchmark("ends", "ns").UID("uid-ends").Obj()
	job, err := render.Job(b, plan.Plan(b)[0], render.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	job.UID = "uid-job"
	sch := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(sch); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(sch).WithObjects(job).Build()
	var mu sync.Mutex
	var opened []string
	release := make(chan struct{})
	r := &KVBenchmarkReconciler{Client: c, Clock: clock.RealClock{}, logReader: NewLogReader(func(_ context.Context, ns, pod, _ string) (io.ReadCloser, error) {
		mu.Lock()
		opened = append(opened, ns+"/"+pod)
		mu.Unlock()
		<-release
		return io.NopCloser(strings.NewReader("")), nil
	})}
	running := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ends-pod", UID: "uid-pod", ResourceVersion: "1",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID, Controller: ptr.To(true)}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	ready := running.DeepCopy()
	ready.ResourceVersion = "2"
	ready.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	terminated := ready.DeepCopy()
	terminated.ResourceVersion = "3"
	terminated.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: kvv1.ContainerName,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}}}
	succeeded := terminated.DeepCopy()
	succeeded.ResourceVersion = "4"
	succeeded.Status.Phase = corev1.PodSucceeded
	deleting := succeeded.DeepCopy()
	deleting.ResourceVersion = "5"
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}

	q := &recordingQueue{}
	h := r.podChanged()
	update := func(old, pod *corev1.Pod) {
		t.Helper()
		h.Update(context.Background(), event.UpdateEvent{ObjectOld: old, ObjectNew: pod}, q)
	}
	update(running, ready)
	mu.Lock()
	if len(opened) != 0 {
		t.Fatalf("a running pod's update started reads: %v", opened)
	}
	mu.Unlock()
	if got := q.take(); len(got) != 1 || got[0] != "ns/ends" {
		t.Fatalf("a running pod's update queued %v, want the benchmark", got)
	}
	update(ready, terminated)
	update(terminated, succeeded) // the pod's phase follows its container's end: the read still runs
	if got := q.take(); len(got) != 0 {
		t.Fatalf("passes %v queued while the ended pod's final read runs", got)
	}
	close(release)
	select {
	case ev := <-r.logReader.Final:
		if ev.Object.GetName() != "ends" {
			t.Fatalf("the read reconciles %s, want the benchmark", ev.Object.GetName())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no final read after the pod ended")
	}
	mu.Lock()
	if len(opened) != 1 || opened[0] != "ns/ends-pod" {
		t.Fatalf("reads %v, want the ended pod's, once", opened)
	}
	mu.Unlock()
	// With the final snapshot in, the pod's updates queue passes again, and start no read.
	for deadline := time.Now().Add(10 * time.Second); r.logReader.FinalPending(succeeded.UID); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the final read ended, but is still pending")
		}
	}
	update(succeeded, deleting)
	if got := q.take(); len(got) != 1 || got[0] != "ns/ends" {
		t.Fatalf("an ended pod's update after its final read queued %v, want the benchmark", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(opened) != 1 {
		t.Fatalf("reads %v after the final read, want none", opened)
	}
}

// recordingQueue records the requests a handler adds (a plain queue: no priorities).
type recordingQueue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	mu    sync.Mutex
	added []string
}

func (q *recordingQueue) Add(req reconcile.Request) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.added = append(q.added, req.String())
}

// take returns what was added since the last take.
func (q *recordingQueue) take() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	got := q.added
	q.added = nil
	return got
}

// The pass after the read of an ended runner's log goes ahead of the queue, and a Sequential
// comparison's (which holds a slot and node for its next engine) ahead of the other such passes.
func TestADecidedComparisonGoesAheadOfOtherUrgentPasses(t *testing.T) {
	r := &KVBenchmarkReconciler{queue: map[types.NamespacedName]*slots.Demand{
		{Namespace: "ns", Name: "cmp"}: {Benchmark: types.NamespacedName{Namespace: "ns", Name: "cmp"}, Holds: []slots.Hold{{Node: "n1"}}},
	}}
	q := priorityqueue.New[reconcile.Request]("test")
	defer q.ShutDown()
	q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "other"}})
	h := r.decided()
	for _, name := range []string{"plain", "cmp"} {
		h.Generic(context.Background(), event.GenericEvent{Object: &kvv1.KVBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}}, q)
	}
	for _, want := range []struct {
		name     string
		priority int
	}{{"cmp", urgentPriority + 1}, {"plain", urgentPriority}, {"other", 0}} {
		req, priority, _ := q.GetWithPriority()
		if req.Name != want.name || priority != want.priority {
			t.Fatalf("got %s at priority %d, want %s at %d", req.Name, priority, want.name, want.priority)
		}
		q.Done(req)
	}
}
