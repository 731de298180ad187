package controllers

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kvbench/kvbench-operator/controllers/render"
)

// CacheOptions limit the manager's Job and pod informers to objects this operator manages, so it
// does not cache every pod in the cluster.
func CacheOptions() cache.Options {
	managed := labels.SelectorFromSet(labels.Set{render.LabelManagedBy: render.ManagerName})
	return cache.Options{ByObject: map[client.Object]cache.ByObject{
		&batchv1.Job{}: {Label: managed},
		&corev1.Pod{}:  {Label: managed},
	}}
}
