package kvbenchmark

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/controllers/metrics"
	"github.com/kvbench/kvbench-operator/controllers/plan"
	"github.com/kvbench/kvbench-operator/controllers/render"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

// A pass that comes before the cache shows the operator's own last status write reads the
// benchmark from the API server: from the cache it would decide on the older status and lose its
// write to a conflict, whose retry waited seconds behind the queue at scale.
func TestAPassAfterAStatusWriteDoesNotReadTheStaleCache(t *testing.T) {
	b := w.MakeKVBenchmark("rw", "ns").Exclusive(false).UID("uid-rw").Obj()
	room := corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Gi")}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: corev1.NodeStatus{Allocatable: room,
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	// api is the API server; the cache answers a benchmark's Get with the copy it held before
	// the last status write while stale is set (its watch is behind).
	api := fakeAPI(t).WithObjects(b, node).Build()
	var stale *kvv1.KVBenchmark
	cache := interceptor.NewClient(api.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, o client.Object, opts ...client.GetOption) error {
			if kb, ok := o.(*kvv1.KVBenchmark); ok && stale != nil {
				stale.DeepCopyInto(kb)
				return nil
			}
			return c.Get(ctx, key, o, opts...)
		}})
	r := &KVBenchmarkReconciler{Client: cache, APIReader: api, Recorder: record.NewFakeRecorder(100), Clock: clocktesting.NewFakeClock(t0),
		Metrics: metrics.NewCollector(), Config: Config{Render: render.DefaultOptions(), UnschedulableTimeout: time.Minute}}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(b)}
	ctx := context.Background()

	before := &kvv1.KVBenchmark{}
	if err := api.Get(ctx, req.NamespacedName, before); err != nil {
		t.Fatal(err)
	}
	if res, err := r.Reconcile(ctx, req); err != nil || res.Requeue {
		t.Fatalf("first pass: %v, %+v", err, res)
	}
	after := &kvv1.KVBenchmark{}
	if err := api.Get(ctx, req.NamespacedName, after); err != nil || after.ResourceVersion == before.ResourceVersion {
		t.Fatalf("the first pass wrote no status (%v)", err)
	}
	stale = before
	if res, err := r.Reconcile(ctx, req); err != nil || res.Requeue {
		t.Fatalf("the pass after the write: %v, %+v; want no conflict (it reads the API server, not the stale cache)", err, res)
	}
	// Once a pass read after the write, the cache is trusted again.
	if r.written[req.NamespacedName] != "" {
		t.Fatalf("still waiting for the cache to show write %s", r.written[req.NamespacedName])
	}
}

// A run is decided on its pods as the API server has them: the cached pod read again by name, and
// the benchmark's pods listed when the cache has none.
func TestPodsNowReadsTheAPIServer(t *testing.T) {
	b := w.MakeKVBenchmark("now", "ns").Exclusive(false).UID("uid-now").Obj()
	job, err := render.Job(b, plan.Plan(b)[0], render.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	job.UID = "uid-job"
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: job.Name + "-x", UID: "uid-pod",
		Labels:          map[string]string{kvv1.LabelBenchmark: b.Name},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID, Controller: ptr.To(true)}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	ended := pod.DeepCopy()
	ended.Status.Phase = corev1.PodSucceeded
	api := fakeAPI(t).WithObjects(ended).Build()
	r := &KVBenchmarkReconciler{APIReader: api}
	for name, cached := range map[string][]corev1.Pod{"the cached pod, still running there": {*pod}, "no pod in the cache": nil} {
		got, err := r.podsNow(context.Background(), b, job, cached)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Status.Phase != corev1.PodSucceeded {
			t.Errorf("%s: %d pods %v, want the API server's ended pod", name, len(got), got)
		}
	}
	if err := api.Delete(context.Background(), ended); err != nil {
		t.Fatal(err)
	}
	if got, err := r.podsNow(context.Background(), b, job, []corev1.Pod{*pod}); err != nil || len(got) != 0 {
		t.Errorf("a cached pod the API server no longer has: %d pods (%v), want none", len(got), err)
	}
}
