package kvbenchmark

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/controllers/plan"
	"github.com/kvbench/kvbench-operator/controllers/render"
	"github.com/kvbench/kvbench-operator/controllers/slots"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

// A Job this process created holds its slot in the ledger whatever moment the cache shows it,
// including between the ledger's list of Jobs and its look at what it created (CI's small scale
// run once had 41 runner Jobs active with 40 slots).
func TestLedgerCountsAJobThatReachesTheCacheDuringTheList(t *testing.T) {
	b := w.MakeKVBenchmark("race", "ns").Exclusive(false).UID("uid-race").Obj()
	job, err := render.Job(b, plan.Plan(b)[0], render.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, arrives := range []string{"before the list", "during the list", "after the list"} {
		t.Run(arrives, func(t *testing.T) {
			var c client.Client
			add := func(ctx context.Context) {
				if err := c.Create(ctx, job.DeepCopy()); err != nil {
					t.Fatal(err)
				}
			}
			lists := 0
			c = fakeAPI(t).
				WithInterceptorFuncs(interceptor.Funcs{List: func(ctx context.Context, cl client.WithWatch, l client.ObjectList, opts ...client.ListOption) error {
					err := cl.List(ctx, l, opts...)
					if _, ok := l.(*batchv1.JobList); ok && lists == 0 && arrives == "during the list" {
						add(ctx) // the informer delivers the Job just after the list was read
					}
					lists++
					return err
				}}).Build()
			r := &KVBenchmarkReconciler{Client: c, APIReader: c}
			r.expect(job, slots.Runner{Run: plan.Plan(b)[0].Name}, []string{"n1"}, t0)
			if arrives == "before the list" {
				add(context.Background())
			}
			l, err := r.ledger(context.Background(), t0)
			if err != nil {
				t.Fatal(err)
			}
			if l.Active != 1 {
				t.Fatalf("ledger: %d active Jobs, want 1 (the Job created, cached %s)", l.Active, arrives)
			}
			if arrives == "after the list" {
				add(context.Background())
			}
			if l, err = r.ledger(context.Background(), t0); err != nil || l.Active != 1 {
				t.Fatalf("next ledger: %d active Jobs (%v), want 1", l.Active, err)
			}
		})
	}
}

// A shared Sequential comparison holds the node its first engine's pod was bound to (the
// scheduler's choice) from the moment that pod ends, not from the comparison's next pass: at
// scale an exclusive run took the node in between, and the comparison's next engine waited for it.
func TestAHoldGetsTheNodeItsJobsPodRanOn(t *testing.T) {
	b := w.MakeKVBenchmark("shared", "ns").Exclusive(false).UID("uid-shared").Obj()
	job, err := render.Job(b, plan.Plan(b)[0], render.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	job.UID = "uid-job"
	jobKey := client.ObjectKeyFromObject(job)
	running := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: job.Name + "-x", UID: "uid-pod",
		Labels:          map[string]string{kvv1.LabelManagedBy: kvv1.ManagerName},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID, Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{NodeName: "n1"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	ended := running.DeepCopy()
	ended.Status.Phase = corev1.PodSucceeded
	excl := &slots.Demand{Benchmark: types.NamespacedName{Namespace: "ns", Name: "excl"}, Created: t0.Add(-time.Hour),
		Wants: []slots.Want{{Run: "rocksdb", Exclusive: true, Candidates: []string{"n1"}}}}

	for _, when := range []string{"the ledger sees the pod bound", "the pod ends"} {
		t.Run(when, func(t *testing.T) {
			c := fakeAPI(t).WithObjects(job.DeepCopy(), running.DeepCopy()).Build()
			r := &KVBenchmarkReconciler{Client: c, APIReader: c, Clock: clocktesting.NewFakeClock(t0), queue: map[types.NamespacedName]*slots.Demand{
				{Namespace: "ns", Name: "shared"}: {Benchmark: types.NamespacedName{Namespace: "ns", Name: "shared"}, Created: t0,
					Holds: []slots.Hold{{Job: jobKey}}}, // reserved with its first engine's Job: no node yet
			}}
			if when == "the ledger sees the pod bound" {
				if _, err := r.ledger(context.Background(), t0); err != nil {
					t.Fatal(err)
				}
			} else {
				r.freed().Update(context.Background(), event.UpdateEvent{ObjectOld: running, ObjectNew: ended}, nil)
			}
			hold := r.queue[types.NamespacedName{Namespace: "ns", Name: "shared"}].Holds[0]
			if hold.Node != "n1" {
				t.Fatalf("the hold's node is %q once %s, want n1", hold.Node, when)
			}
			// The pod has ended: the node is free but for the hold, which an exclusive run respects.
			dec := slots.Admit(0, slots.Ledger{Jobs: map[types.NamespacedName]bool{}}, append(r.queued(), excl), excl.Benchmark)
			if len(dec.Grants[excl.Benchmark]) != 0 {
				t.Fatalf("an exclusive run was granted %+v, the node the comparison holds between its engines", dec.Grants[excl.Benchmark])
			}
		})
	}
}
