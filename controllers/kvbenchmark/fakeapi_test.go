package kvbenchmark

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// fakeAPI is a fake client builder with the operator's types and the field indexes a pass reads
// through: owners and the ledger's active index on Jobs and pods, and the API server's own field
// selectors on events.
func fakeAPI(t *testing.T) *fake.ClientBuilder {
	t.Helper()
	sch := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(sch); err != nil {
		t.Fatal(err)
	}
	if err := kvv1.AddToScheme(sch); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(sch).WithStatusSubresource(&kvv1.KVBenchmark{}).
		WithIndex(&batchv1.Job{}, ownerIndex, ownerOf).WithIndex(&batchv1.Job{}, activeIndex, activeOf).
		WithIndex(&corev1.Pod{}, ownerIndex, ownerOf).WithIndex(&corev1.Pod{}, activeIndex, activeOf).
		WithIndex(&corev1.Event{}, "involvedObject.uid", func(o client.Object) []string { return []string{string(o.(*corev1.Event).InvolvedObject.UID)} }).
		WithIndex(&corev1.Event{}, "reason", func(o client.Object) []string { return []string{o.(*corev1.Event).Reason} })
}
