package kvbenchmark

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/archive"
)

// controlledByBenchmark reports whether o's controller is a KVBenchmark. Labels can be copied by
// anyone who can create a Job; a controller reference to a KVBenchmark is what the operator sets.
func controlledByBenchmark(o metav1.Object) bool {
	ref := metav1.GetControllerOf(o)
	return ref != nil && ref.Kind == "KVBenchmark" && ref.APIVersion == kvv1.GroupVersion.String()
}

// storeArchive creates the archive ConfigMap and records its digest. A ConfigMap already under
// that name is the operator's own only if it passes archive.Verify against this content (an
// earlier pass created it and then failed to write status); anything else was planted, and the
// run's archive is an error rather than someone else's data.
func (r *KVBenchmarkReconciler) storeArchive(ctx context.Context, b *kvv1.KVBenchmark, cm *corev1.ConfigMap, dropped []string) (*kvv1.ResultArchive, error) {
	sha := archive.Digest(cm)
	err := r.Create(ctx, cm)
	if apierrors.IsAlreadyExists(err) {
		existing, gerr := r.getUncached(ctx, cm)
		if gerr != nil {
			return nil, fmt.Errorf("get ConfigMap %s: %w", cm.Name, gerr)
		}
		if verr := archive.Verify(existing, b, sha); verr != nil {
			return &kvv1.ResultArchive{Error: truncate(verr.Error() + "; delete it and create the benchmark anew to archive this run")}, nil
		}
		err = nil
	}
	if err != nil {
		return nil, fmt.Errorf("create ConfigMap %s: %w", cm.Name, err)
	}
	return &kvv1.ResultArchive{ConfigMap: cm.Name, SHA256: sha, Dropped: dropped}, nil
}

// getUncached reads a ConfigMap straight from the API server: the manager's client does not cache
// unstructured objects, so this needs only `get` on configmaps, no cluster-wide ConfigMap informer.
func (r *KVBenchmarkReconciler) getUncached(ctx context.Context, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	if err := r.Get(ctx, client.ObjectKeyFromObject(cm), u); err != nil {
		return nil, err
	}
	var out corev1.ConfigMap
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// The metrics endpoint (cmd/manager) authenticates scrapers with TokenReviews and authorizes them with
// SubjectAccessReviews.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create
