package kvbenchmark

import (
	"fmt"
	"testing"

	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/archive"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

// directNodes reads Nodes without a cache, as ClientsetNodes does.
func directNodes(ctx context.Context, name string) (*corev1.Node, error) {
	n := &corev1.Node{}
	return n, k8s.Get(ctx, client.ObjectKey{Name: name}, n)
}

const testDigest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

var _ = Describe("provenance", func() {
	var op *operator
	AfterEach(func() {
		if op != nil {
			op.Stop()
		}
	})

	It("records the image digest the pod ran in status and the node's labels in the archive", func() {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-prov", Labels: map[string]string{
			corev1.LabelInstanceTypeStable: "m6id.large", corev1.LabelTopologyZone: "eu-west-1a"}}}
		Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, node))).To(Succeed())
		op = startOperator(operatorOpts{})
		ns := newNamespace()
		b := w.MakeKVBenchmark("prov", ns).EngineNames(kvv1.EngineRocksDB).Obj()
		Expect(k8s.Create(ctx, b)).To(Succeed())
		k := key(b)
		job := eventuallyJob(ns, "prov-rocksdb")
		Expect(job.Spec.Template.Spec.Containers[0].Env).To(ContainElement(HaveField("Name", "NODE_NAME")))
		startJob(job, t0)
		pod := makePod(job, "node-prov")

		prov := &kvv1.ProvenanceSummary{RunnerRevision: "abc123", Seed: 301, SpecHash: "sha256:feed", Node: "cpu x 2, kernel 6.1"}
		var s kvv1.Summary
		Expect(json.Unmarshal([]byte(summary(kvv1.EngineRocksDB, "", phase("readrandom", 1, 100000, 10))), &s)).To(Succeed())
		s.Provenance = prov
		raw, _ := json.Marshal(s)
		st := terminatedStatus(corev1.PodSucceeded, t0, t0.Add(time.Minute), 0, "Completed", string(raw))
		st.ContainerStatuses[0].ImageID = "docker-pullable://kvbench/runner@" + testDigest
		full := fullResult(kvv1.EngineRocksDB, 1)
		full.Provenance = &kvv1.Provenance{RunnerRevision: "abc123", Seed: 301, SpecHash: "sha256:feed",
			Node: &kvv1.NodeFingerprint{NodeName: "node-prov", CPUs: 2}}
		op.logs.set(pod, runnerLog(full)) // before the pod ends, so its final log read finds it
		setPodStatus(pod, st)
		setJobStatus(job, true, "", "", t0, t0.Add(time.Minute))

		got := eventuallyRun(k, "rocksdb", func(r kvv1.RunStatus) bool { return r.FullResult != nil })
		p := got.Status.Runs[0].Provenance
		Expect(p).NotTo(BeNil())
		Expect(p.ImageDigest).To(Equal(testDigest))
		Expect(p.Seed).To(Equal(int64(301)))
		Expect(p.Node).To(Equal(prov.Node))

		cm := &corev1.ConfigMap{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: got.Status.Runs[0].FullResult.ConfigMap}, cm)).To(Succeed())
		res, err := archive.FromConfigMap(cm, got, got.Status.Runs[0].FullResult.SHA256)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Provenance.ImageDigest).To(Equal(testDigest))
		Expect(res.Provenance.Node.InstanceType).To(Equal("m6id.large"))
		Expect(res.Provenance.Node.Zone).To(Equal("eu-west-1a"))
		Expect(res.Provenance.Node.CPUs).To(Equal(int32(2)), "the runner's fingerprint is kept")
	})
})

// Issue 18 (by reading): the log snapshot was forgotten as soon as the archive was stored, before
// the status naming it was written; when that write failed, the next pass read the log again and
// stamped the node's labels anew, and an archive with other labels failed its own digest check.
var _ = It("archives the same bytes again when the status write after archiving failed, whatever the node's labels became", func() {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-relabel", Labels: map[string]string{corev1.LabelInstanceTypeStable: "m6id.large"}}}
	Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, node))).To(Succeed())
	var failed atomic.Bool
	op := startOperator(operatorOpts{intercept: &interceptor.Funcs{
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if b, ok := obj.(*kvv1.KVBenchmark); ok && b.Name == "relabel" && len(b.Status.Runs) > 0 &&
				b.Status.Runs[0].FullResult != nil && failed.CompareAndSwap(false, true) {
				// The archive is stored; its status write fails, and the node changes meanwhile.
				n := &corev1.Node{}
				Expect(k8s.Get(ctx, client.ObjectKey{Name: "node-relabel"}, n)).To(Succeed())
				n.Labels[corev1.LabelInstanceTypeStable] = "m7i.xlarge"
				Expect(k8s.Update(ctx, n)).To(Succeed())
				return apierrors.NewConflict(kvv1.GroupVersion.WithResource("kvbenchmarks").GroupResource(), b.Name, errors.New("injected"))
			}
			return c.SubResource(sub).Update(ctx, obj, opts...)
		}}})
	defer op.Stop()
	ns := newNamespace()
	b := w.MakeKVBenchmark("relabel", ns).EngineNames(kvv1.EngineRocksDB).Obj()
	Expect(k8s.Create(ctx, b)).To(Succeed())
	job := eventuallyJob(ns, "relabel-rocksdb")
	startJob(job, t0)
	pod := makePod(job, "node-relabel")
	full := fullResult(kvv1.EngineRocksDB, 1)
	full.Provenance = &kvv1.Provenance{Seed: 1, Node: &kvv1.NodeFingerprint{NodeName: "node-relabel"}}
	op.logs.set(pod, runnerLog(full))
	setPodStatus(pod, terminatedStatus(corev1.PodSucceeded, t0, t0.Add(time.Minute), 0, "Completed", summary(kvv1.EngineRocksDB, "", phase("readrandom", 1, 100000, 10))))
	setJobStatus(job, true, "", "", t0, t0.Add(time.Minute))

	got := eventuallyRun(key(b), "rocksdb", func(r kvv1.RunStatus) bool { return r.FullResult != nil })
	Expect(failed.Load()).To(BeTrue(), "the write after archiving was not failed")
	fr := got.Status.Runs[0].FullResult
	Expect(fr.Error).To(BeEmpty())
	cm := &corev1.ConfigMap{}
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: fr.ConfigMap}, cm)).To(Succeed())
	res, err := archive.FromConfigMap(cm, got, fr.SHA256)
	Expect(err).NotTo(HaveOccurred())
	Expect(res.Provenance.Node.InstanceType).To(Equal("m6id.large"), "stamped when first archived")
})

var _ = DescribeTable("imageDigest takes the sha256 part of any imageID form",
	func(imageID, want string) {
		pod := &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "runner", ImageID: imageID}}}}
		Expect(imageDigest(pod)).To(Equal(want))
	},
	Entry("docker-pullable", "docker-pullable://kvbench/runner@"+testDigest, testDigest),
	Entry("containerd", "docker.io/kvbench/runner@"+testDigest, testDigest),
	Entry("bare", testDigest, testDigest),
	Entry("kind's locally loaded image", "import-2024-01-01@"+testDigest, testDigest),
	Entry("none", "", ""),
)

// Issue 34: rocksjava's status provenance lacked the node that rocksdb's has.
func TestRunProvenanceHasTheNodeForEveryEngine(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{NodeName: "n1"}}
	java := &kvv1.Summary{Engine: kvv1.EngineRocksJava, Provenance: &kvv1.ProvenanceSummary{}}
	if p := runProvenance(java, pod); p == nil || p.Node != "n1" {
		t.Fatalf("rocksjava's provenance: %+v, want node n1", p)
	}
	goRunner := &kvv1.Summary{Engine: kvv1.EngineRocksDB, Provenance: &kvv1.ProvenanceSummary{Node: "reported"}}
	if p := runProvenance(goRunner, pod); p.Node != "reported" {
		t.Fatalf("a reported node was replaced: %+v", p)
	}
}

// A runner's summary is tenant input: its provenance lists are cut to the CRD's MaxItems.
func TestRunProvenanceBoundsTheRunnersLists(t *testing.T) {
	many := make([]string, 20)
	for i := range many {
		many[i] = fmt.Sprintf("line %d", i)
	}
	hostile := &kvv1.Summary{Engine: kvv1.EngineRocksDB, Provenance: &kvv1.ProvenanceSummary{OptionsOverrides: many, Builds: many}}
	p := runProvenance(hostile, nil)
	if len(p.OptionsOverrides) != kvv1.MaxSummaryOverrides+1 || len(p.Builds) != kvv1.MaxSummaryBuilds {
		t.Fatalf("kept %d overrides and %d builds, want %d and %d", len(p.OptionsOverrides), len(p.Builds),
			kvv1.MaxSummaryOverrides+1, kvv1.MaxSummaryBuilds)
	}
	if p.Builds[0] != "line 0" || len(hostile.Provenance.Builds) != 20 {
		t.Fatalf("builds %q; the summary's own list has %d", p.Builds, len(hostile.Provenance.Builds))
	}
}
