package kvbenchmark

import (
	"context"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// CacheOptions limit the manager's Job and pod informers to objects this operator manages, so it
// does not cache every pod in the cluster, and keep of those only what reconciling reads: with a
// thousand benchmarks the runner config in every Job's and pod's args and the managed fields of
// every object were most of the operator's memory, and then the 1,859 pods' specs.
func CacheOptions() cache.Options {
	managed := labels.SelectorFromSet(labels.Set{kvv1.LabelManagedBy: kvv1.ManagerName})
	return cache.Options{
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&batchv1.Job{}: {Label: managed, Transform: trimmed},
			&corev1.Pod{}:  {Label: managed, Transform: trimmed},
			&corev1.Node{}: {Transform: trimmedNode},
		},
	}
}

// trimmed drops from a cached runner Job or pod the fields the operator never reads: managed
// fields and the labels and selector the Job controller adds; of a Job's pod template, each
// container's command, args, env, mounts and limits and the volumes (kept: the node affinity, the
// pinned node, and the requests a node's fit reads); of a pod's spec, all but nodeName (its Job's
// template says the rest), its addresses, and once it ended its conditions but DisruptionTarget
// (the scheduler's only matter before it runs). Kept: the operator's labels, owner references and
// the rest of the status. The pass that decides a run reads its pod whole from the API server.
func trimmed(o any) (any, error) {
	switch obj := o.(type) {
	case *batchv1.Job:
		obj.ManagedFields = nil
		obj.Spec.Selector = nil
		dropJobLabels(obj.Spec.Template.Labels)
		ps := &obj.Spec.Template.Spec
		ps.Volumes = nil
		for _, cs := range [][]corev1.Container{ps.InitContainers, ps.Containers} {
			for i := range cs {
				cs[i].Command, cs[i].Args, cs[i].Env, cs[i].EnvFrom, cs[i].VolumeMounts = nil, nil, nil, nil, nil
				cs[i].Resources = corev1.ResourceRequirements{Requests: cs[i].Resources.Requests}
			}
		}
	case *corev1.Pod:
		obj.ManagedFields = nil
		obj.Spec = corev1.PodSpec{NodeName: obj.Spec.NodeName}
		dropJobLabels(obj.Labels)
		st := &obj.Status
		st.PodIP, st.PodIPs, st.HostIP, st.HostIPs, st.QOSClass = "", nil, "", nil, ""
		if st.Phase == corev1.PodSucceeded || st.Phase == corev1.PodFailed {
			st.Conditions = slices.DeleteFunc(st.Conditions, func(c corev1.PodCondition) bool { return c.Type != corev1.DisruptionTarget })
		}
	}
	return o, nil // anything else (a tombstone): nothing to trim
}

// jobLabels are the labels the Job controller puts on a Job's pods (and their template).
var jobLabels = []string{batchv1.ControllerUidLabel, batchv1.JobNameLabel, "controller-uid", "job-name"}

func dropJobLabels(l map[string]string) {
	for _, k := range jobLabels {
		delete(l, k)
	}
}

var (
	_ toolscache.TransformFunc = trimmed
	_ toolscache.TransformFunc = trimmedNode
)

// trimmedNode keeps of a Node what choosing a node for an exclusive run reads: labels, taints,
// cordon, allocatable and conditions; a node's image list alone can be tens of kilobytes.
func trimmedNode(o any) (any, error) {
	if n, ok := o.(*corev1.Node); ok {
		n.ManagedFields, n.Annotations = nil, nil
		n.Status.Images, n.Status.VolumesAttached, n.Status.VolumesInUse = nil, nil, nil
		n.Status.Capacity, n.Status.NodeInfo = nil, corev1.NodeSystemInfo{}
	}
	return o, nil
}

// Field indexes of runner Jobs and pods. ownerIndex: the UID of the controlling owner (a Job's
// KVBenchmark, a pod's Job), so a reconcile finds its children by ownership rather than by a label
// anyone can copy (kubernetes-sigs/jobset does the same). activeIndex: "true" for the Jobs that
// hold a concurrency slot and for pods bound to a node and not ended, the ledger of slots and nodes.
const (
	ownerIndex  = "kvbench.io/owner-uid"
	activeIndex = "kvbench.io/active"
)

func ownerOf(o client.Object) []string {
	if ref := metav1.GetControllerOf(o); ref != nil {
		return []string{string(ref.UID)}
	}
	return nil
}

func activeOf(o client.Object) []string {
	switch obj := o.(type) {
	case *batchv1.Job:
		if !jobFinished(obj) && obj.DeletionTimestamp.IsZero() && controlledByBenchmark(obj) {
			return []string{"true"}
		}
	case *corev1.Pod:
		if obj.Spec.NodeName != "" && obj.Status.Phase != corev1.PodSucceeded && obj.Status.Phase != corev1.PodFailed {
			return []string{"true"}
		}
	}
	return nil
}

func indexRunners(ctx context.Context, mgr ctrl.Manager) error {
	for _, o := range []client.Object{&batchv1.Job{}, &corev1.Pod{}} {
		if err := mgr.GetFieldIndexer().IndexField(ctx, o, ownerIndex, ownerOf); err != nil {
			return err
		}
		if err := mgr.GetFieldIndexer().IndexField(ctx, o, activeIndex, activeOf); err != nil {
			return err
		}
	}
	return nil
}
