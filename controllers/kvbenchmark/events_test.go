package kvbenchmark

import (
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kvbench/kvbench-operator/controllers/metrics"
	"github.com/kvbench/kvbench-operator/controllers/render"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

// An event tells what a status says: it is sent after that status is written, not before a write
// that loses a conflict (and is decided again by the next pass).
func TestEventsWaitForTheStatusWrite(t *testing.T) {
	b := w.MakeKVBenchmark("ev", "ns").Exclusive(false).UID("uid-ev").Obj()
	conflicts := 1
	room := corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Gi")}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: corev1.NodeStatus{Allocatable: room,
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	c := fakeAPI(t).WithObjects(b, node).
		WithInterceptorFuncs(interceptor.Funcs{SubResourceUpdate: func(ctx context.Context, cl client.Client, sub string, o client.Object, opts ...client.SubResourceUpdateOption) error {
			if conflicts > 0 {
				conflicts--
				return apierrors.NewConflict(schema.GroupResource{Group: "kvbench.io", Resource: "kvbenchmarks"}, o.GetName(), nil)
			}
			return cl.SubResource(sub).Update(ctx, o, opts...)
		}}).Build()
	rec := record.NewFakeRecorder(100)
	r := &KVBenchmarkReconciler{Client: c, APIReader: c, Recorder: rec, Clock: clocktesting.NewFakeClock(t0),
		Metrics: metrics.NewCollector(), Config: Config{Render: render.DefaultOptions(), UnschedulableTimeout: time.Minute}}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(b)}

	res, err := r.Reconcile(context.Background(), req)
	if err != nil || !res.Requeue {
		t.Fatalf("first pass: %v, %+v; want a requeue after the conflict", err, res)
	}
	var jobs batchv1.JobList
	if err := c.List(context.Background(), &jobs); err != nil || len(jobs.Items) != 1 {
		t.Fatalf("jobs %d, %v: the first pass creates the Job", len(jobs.Items), err)
	}
	if got := drain(rec); len(got) != 0 {
		t.Fatalf("events before any status was written: %q", got)
	}
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	got := drain(rec)
	var created int
	for _, e := range got {
		if strings.Contains(e, EventRunCreated) {
			created++
		}
	}
	if created != 1 {
		t.Fatalf("RunCreated sent %d times after the status write, want 1: %q", created, got)
	}
}

func drain(rec *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}
