package kvbenchmark

import (
	"encoding/json"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/controllers/plan"
	"github.com/kvbench/kvbench-operator/controllers/render"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

// A trimmed runner Job or pod keeps what reconciling reads (labels, owner, pinned node, node name,
// status) and loses the runner config and managed fields that made up most of the cache.
func TestTrimmedKeepsWhatReconcilingReads(t *testing.T) {
	b := w.MakeKVBenchmark("b", "ns").UID("uid-b").Obj()
	run := plan.Plan(b)[0]
	run.Node = "node-7"
	job, err := render.Job(b, run, render.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	job.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kvbench-operator"}}
	// What the Job controller adds: its selector and labels on the template (and so on the pod).
	jobLabels := map[string]string{batchv1.ControllerUidLabel: "u", batchv1.JobNameLabel: job.Name, "controller-uid": "u", "job-name": job.Name}
	job.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{batchv1.ControllerUidLabel: "u"}}
	for k, v := range jobLabels {
		job.Spec.Template.Labels[k] = v
	}
	before := size(t, job)
	out, err := trimmed(job.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*batchv1.Job)
	if n := render.PinnedNode(&got.Spec.Template.Spec); n != "node-7" {
		t.Errorf("pinned node %q after trimming, want node-7", n)
	}
	if got.Labels[kvv1.LabelBenchmark] != "b" || !metav1.IsControlledBy(got, b) || got.ManagedFields != nil {
		t.Errorf("labels %v, owners %v, managed fields %v", got.Labels, got.OwnerReferences, got.ManagedFields)
	}
	if got.Spec.Selector != nil || got.Spec.Template.Labels[batchv1.JobNameLabel] != "" || got.Spec.Template.Labels[kvv1.LabelExclusive] == "" {
		t.Errorf("selector %v, template labels %v: want the Job controller's gone and the operator's kept", got.Spec.Selector, got.Spec.Template.Labels)
	}
	c := got.Spec.Template.Spec.Containers[0]
	if c.Args != nil || c.Env != nil || c.VolumeMounts != nil || got.Spec.Template.Spec.Volumes != nil || c.Resources.Limits != nil {
		t.Errorf("runner config kept: %+v", c)
	}
	if want := job.Spec.Template.Spec.Containers[0].Resources.Requests; len(want) == 0 || !equality.Semantic.DeepEqual(requestsOf(&got.Spec.Template.Spec), want) {
		t.Errorf("the Job's requests after trimming: %v, want %v (a node's fit reads them)", requestsOf(&got.Spec.Template.Spec), want)
	}
	args := size(t, job.Spec.Template.Spec.Containers[0].Args)
	if after := size(t, got); after+args > before {
		t.Errorf("trimmed Job is %d bytes of %d: expected at least the %d bytes of args less", after, before, args)
	}

	pod := &corev1.Pod{ObjectMeta: job.Spec.Template.ObjectMeta, Spec: *job.Spec.Template.Spec.DeepCopy(),
		Status: corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: []corev1.ContainerStatus{{Name: kvv1.ContainerName,
			ImageID: "sha256:abc", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: "summary"}}}}}}
	pod.Spec.NodeName = "node-7"
	pod.Status.PodIP, pod.Status.HostIP = "10.0.0.7", "192.168.0.7"
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodReady},
		{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "PreemptionByScheduler"}}
	running := pod.DeepCopy()
	running.Status.Phase = corev1.PodRunning
	out, _ = trimmed(pod)
	p := out.(*corev1.Pod)
	if p.Spec.NodeName != "node-7" || p.Spec.Containers != nil || p.Spec.Affinity != nil || p.Status.ContainerStatuses[0].State.Terminated.Message != "summary" {
		t.Errorf("trimmed pod: node %q, spec %+v, status %+v", p.Spec.NodeName, p.Spec, p.Status)
	}
	if p.Labels[batchv1.JobNameLabel] != "" || p.Labels["controller-uid"] != "" || p.Labels[kvv1.LabelBenchmark] != "b" || p.Status.PodIP != "" || p.Status.HostIP != "" {
		t.Errorf("trimmed pod: labels %v, pod IP %q, host IP %q: want the Job controller's labels and the addresses gone", p.Labels, p.Status.PodIP, p.Status.HostIP)
	}
	if len(p.Status.Conditions) != 1 || p.Status.Conditions[0].Type != corev1.DisruptionTarget {
		t.Errorf("an ended pod keeps conditions %v, want only DisruptionTarget (the failure reason reads it)", p.Status.Conditions)
	}
	out, _ = trimmed(running)
	if c := out.(*corev1.Pod).Status.Conditions; len(c) != 3 {
		t.Errorf("a running pod keeps conditions %v, want all three (an unschedulable pod's message is the scheduler's)", c)
	}
	// Tombstones and other objects pass through.
	if o, err := trimmed("tombstone"); o != "tombstone" || err != nil {
		t.Errorf("trimmed(tombstone) = %v, %v", o, err)
	}
}

func size(t *testing.T, o any) int {
	t.Helper()
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}
