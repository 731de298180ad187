package controllers

import (
	"context"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

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
	sch := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(sch); err != nil {
		t.Fatal(err)
	}
	if err := kvv1.AddToScheme(sch); err != nil {
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
			c = fake.NewClientBuilder().WithScheme(sch).
				WithIndex(&batchv1.Job{}, ownerIndex, ownerOf).WithIndex(&batchv1.Job{}, activeIndex, activeOf).
				WithIndex(&corev1.Pod{}, ownerIndex, ownerOf).WithIndex(&corev1.Pod{}, activeIndex, activeOf).
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
