package kvbenchmark

import (
	"bytes"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/test/envtest"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

// generatedClusterRole is the ClusterRole `make manifests` writes from the +kubebuilder:rbac markers
// (config/rbac/role.yaml), which the chart and the installer bind to the operator.
func generatedClusterRole() *rbacv1.ClusterRole {
	GinkgoHelper()
	raw, err := os.ReadFile(filepath.Join(envtest.RepoRoot(), "config", "rbac", "role.yaml"))
	Expect(err).NotTo(HaveOccurred())
	for _, doc := range bytes.Split(raw, []byte("\n---")) {
		var cr rbacv1.ClusterRole
		Expect(yaml.Unmarshal(doc, &cr)).To(Succeed())
		if cr.Kind == "ClusterRole" {
			return &cr
		}
	}
	Fail("config/rbac/role.yaml has no ClusterRole")
	return nil
}

// The API server here runs OwnerReferencesPermissionEnforcement (test/envtest), as OpenShift does:
// a Job or ConfigMap whose owner reference sets blockOwnerDeletion is refused unless its creator
// may update the owner's finalizers. The other specs run the operator as system:masters, which
// passes every check; this one runs it as a service account holding only the generated RBAC.
var _ = Describe("the operator with only its generated RBAC, under OwnerReferencesPermissionEnforcement", func() {
	It("creates its runner Job and archives the full result (both owned by the benchmark with blockOwnerDeletion)", func() {
		const user = "system:serviceaccount:kvbench-system:kvbench-operator-rbac-test"
		role := generatedClusterRole()
		role.ObjectMeta = metav1.ObjectMeta{Name: "kvbench-operator-rbac-test"}
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: role.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		}
		Expect(k8s.Create(ctx, role)).To(Succeed())
		Expect(k8s.Create(ctx, binding)).To(Succeed())
		DeferCleanup(func() {
			Expect(k8s.Delete(ctx, binding)).To(Succeed())
			Expect(k8s.Delete(ctx, role)).To(Succeed())
		})
		asOperator := rest.CopyConfig(cfg)
		asOperator.Impersonate = rest.ImpersonationConfig{UserName: user}
		op := startOperator(operatorOpts{restConfig: asOperator})
		DeferCleanup(func() { op.Stop(); deleteRunnerJobs() })

		ns := newNamespace()
		deleteBenchmarksAfter(ns)
		b := w.MakeKVBenchmark("ownerrefs", ns).EngineNames(kvv1.EngineRocksDB).Obj()
		Expect(k8s.Create(ctx, b)).To(Succeed())
		k := key(b)
		var job batchv1.Job
		Eventually(func(g Gomega) {
			for _, r := range getBench(k).Status.Runs {
				if r.Reason == kvv1.ReasonJobRejected {
					StopTrying("run " + r.Name + " is JobRejected: " + r.Message).Now()
				}
			}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ownerrefs-rocksdb"}, &job)).To(Succeed())
		}, timeout, interval).Should(Succeed())
		Expect(*job.OwnerReferences[0].BlockOwnerDeletion).To(BeTrue())

		phases := []kvv1.PhaseSummary{phase("readrandom", 1, 100000, 12)}
		startJob(&job, t0)
		pod := makePod(&job, "node-a")
		op.logs.set(pod, runnerLog(fullResultOf(kvv1.EngineRocksDB, 3, phases...)))
		setPodStatus(pod, terminatedStatus(corev1.PodSucceeded, t0.Add(time.Second), t0.Add(time.Minute), 0, "Completed",
			summary(kvv1.EngineRocksDB, "", phases...)))
		setJobStatus(&job, true, "", "", t0, t0.Add(time.Minute))
		eventuallyPhase(k, kvv1.PhaseSucceeded)
		got := eventuallyRun(k, "rocksdb", func(r kvv1.RunStatus) bool { return r.FullResult != nil })
		Expect(got.Status.Runs[0].FullResult.Error).To(BeEmpty())
		var cm corev1.ConfigMap
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: got.Status.Runs[0].FullResult.ConfigMap}, &cm)).To(Succeed())
		Expect(*cm.OwnerReferences[0].BlockOwnerDeletion).To(BeTrue())
	})
})
