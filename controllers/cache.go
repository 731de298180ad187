package controllers

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kvbench/kvbench-operator/controllers/render"
)

// CacheOptions limit the manager's Job and pod informers to objects this operator manages, so it
// does not cache every pod in the cluster, and keep of those only what reconciling reads: with a
// thousand benchmarks the runner config in every Job's and pod's args and the managed fields of
// every object were most of the operator's memory.
func CacheOptions() cache.Options {
	managed := labels.SelectorFromSet(labels.Set{render.LabelManagedBy: render.ManagerName})
	return cache.Options{
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&batchv1.Job{}: {Label: managed, Transform: trimmed},
			&corev1.Pod{}:  {Label: managed, Transform: trimmed},
		},
	}
}

// trimmed drops from a cached runner Job or pod the fields the operator never reads: managed
// fields, and each container's command, args, env and mounts and the pod's volumes. Kept: labels,
// owner references, the node affinity (the pinned node), nodeName and the whole status.
func trimmed(o any) (any, error) {
	var ps *corev1.PodSpec
	switch obj := o.(type) {
	case *batchv1.Job:
		obj.ManagedFields = nil
		ps = &obj.Spec.Template.Spec
	case *corev1.Pod:
		obj.ManagedFields = nil
		ps = &obj.Spec
	default:
		return o, nil // a tombstone: nothing to trim
	}
	ps.Volumes = nil
	for _, cs := range [][]corev1.Container{ps.InitContainers, ps.Containers} {
		for i := range cs {
			cs[i].Command, cs[i].Args, cs[i].Env, cs[i].EnvFrom, cs[i].VolumeMounts = nil, nil, nil, nil, nil
		}
	}
	return o, nil
}

var _ toolscache.TransformFunc = trimmed

// benchmarkIndex indexes runner Jobs and pods by the benchmark they run, so a reconcile reads its
// own objects from the cache instead of matching labels on every runner object of the namespace.
const benchmarkIndex = "kvbench.io/benchmark"

func benchmarkOf(o client.Object) []string {
	if v := o.GetLabels()[render.LabelBenchmark]; v != "" {
		return []string{v}
	}
	return nil
}

func indexByBenchmark(ctx context.Context, mgr ctrl.Manager) error {
	for _, o := range []client.Object{&batchv1.Job{}, &corev1.Pod{}} {
		if err := mgr.GetFieldIndexer().IndexField(ctx, o, benchmarkIndex, benchmarkOf); err != nil {
			return err
		}
	}
	return nil
}
