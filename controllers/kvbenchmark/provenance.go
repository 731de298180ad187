package kvbenchmark

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// Provenance the runner cannot see from inside its pod: the image digest the kubelet resolved
// and the node's instance-type and zone labels. Everything else comes from the runner.

// +kubebuilder:rbac:groups="",resources=nodes,verbs=get

// NodeReader reads a Node by name (nil: node labels are not recorded).
type NodeReader func(ctx context.Context, name string) (*corev1.Node, error)

// ClientsetNodes reads Nodes through the API server directly: one GET per finished run, no
// cluster-wide Node informer.
func ClientsetNodes(cs kubernetes.Interface) NodeReader {
	return func(ctx context.Context, name string) (*corev1.Node, error) {
		return cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	}
}

// runProvenance is the run's provenance summary for status: the runner's, with the image digest
// of the container that ran.
func runProvenance(s *kvv1.Summary, pod *corev1.Pod) *kvv1.ProvenanceSummary {
	if s == nil || s.Provenance == nil {
		return nil
	}
	p := s.Provenance.DeepCopy()
	// The runner's lists are tenant input: never more items than the CRD admits (MaxItems), which
	// would make every status write of the benchmark fail. OverrideLines' last line counts the rest.
	p.OptionsOverrides = p.OptionsOverrides[:min(len(p.OptionsOverrides), kvv1.MaxSummaryOverrides+1)]
	p.Builds = p.Builds[:min(len(p.Builds), kvv1.MaxSummaryBuilds)]
	if d := imageDigest(pod); d != "" {
		p.ImageDigest = d
	}
	if p.Node == "" && pod != nil {
		// The Java runner does not report its node; where the pod ran is the operator's to say
		// for every engine alike (issue 34).
		p.Node = pod.Spec.NodeName
	}
	return p
}

// imageDigest is the "sha256:..." part of the runner container's imageID
// ("docker-pullable://repo@sha256:...", "docker.io/library/x@sha256:...", or a bare "sha256:...").
func imageDigest(pod *corev1.Pod) string {
	if pod == nil {
		return ""
	}
	cs := runnerStatus(pod)
	if cs == nil {
		return ""
	}
	if i := strings.LastIndex(cs.ImageID, "sha256:"); i >= 0 {
		return cs.ImageID[i:]
	}
	return ""
}

// stampProvenance adds the operator's facts to a full result before it is archived.
func (r *KVBenchmarkReconciler) stampProvenance(ctx context.Context, res *kvv1.Result, pod *corev1.Pod) {
	if res == nil || res.Provenance == nil {
		return
	}
	if d := imageDigest(pod); d != "" {
		res.Provenance.ImageDigest = d
	}
	if r.Nodes == nil || pod.Spec.NodeName == "" {
		return
	}
	node, err := r.Nodes(ctx, pod.Spec.NodeName)
	if err != nil {
		return // labels are a nicety; a forbidden or vanished node must not block the archive
	}
	applyNodeLabels(res.Provenance, node)
}

// applyNodeLabels copies the well-known instance-type and zone labels into the fingerprint.
func applyNodeLabels(p *kvv1.Provenance, node *corev1.Node) {
	if p.Node == nil {
		p.Node = &kvv1.NodeFingerprint{}
	}
	if p.Node.NodeName == "" {
		p.Node.NodeName = node.Name
	}
	p.Node.InstanceType = node.Labels[corev1.LabelInstanceTypeStable]
	p.Node.Zone = node.Labels[corev1.LabelTopologyZone]
}
