//go:build e2e

package e2e

import (
	"fmt"
	"os/exec"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/archive"
	"github.com/kvbench/kvbench-operator/controllers/plan"
)

// operatorSA is the operator's service account as a user name for impersonation.
func operatorSA() string {
	GinkgoHelper()
	name := strings.TrimSpace(run(kubectl, "-n", releaseNS, "get", "deploy", "-l", managerSel,
		"-o", "jsonpath={.items[0].spec.template.spec.serviceAccountName}"))
	Expect(name).NotTo(BeEmpty())
	return "system:serviceaccount:" + releaseNS + ":" + name
}

// canI is `kubectl auth can-i` as the operator's service account: "yes" or "no".
func canI(as string, args ...string) string {
	GinkgoHelper()
	// The answer is stdout; kubectl warns on stderr (e.g. about a cluster-scoped resource).
	var stderr strings.Builder
	cmd := exec.Command(kubectl, append([]string{"auth", "can-i", "--as=" + as}, args...)...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	answer := strings.TrimSpace(string(out))
	if err != nil && answer == "" {
		answer = strings.TrimSpace(stderr.String())
	}
	if err != nil {
		Expect(answer).To(Equal("no"), "kubectl auth can-i %v: %v", args, err) // can-i exits 1 on "no"
	}
	return answer
}

// expectLeastPrivilege: the operator's RBAC holds Leases only in its own namespace and nothing it
// does not use.
func expectLeastPrivilege() {
	sa := operatorSA()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"update", "leases.coordination.k8s.io", "-n", "kube-node-lease"}, "no"},
		{[]string{"create", "leases.coordination.k8s.io", "-n", "kube-node-lease"}, "no"},
		{[]string{"get", "leases.coordination.k8s.io", "-n", "default"}, "no"},
		{[]string{"delete", "leases.coordination.k8s.io", "-n", "kube-system"}, "no"},
		{[]string{"update", "leases.coordination.k8s.io", "-n", releaseNS}, "yes"},
		{[]string{"get", "secrets", "-A"}, "no"},
		// a KVBenchmarkSchedule's history ConfigMap is updated in place (archives are only created)
		{[]string{"update", "configmaps", "-n", "default"}, "yes"},
		{[]string{"delete", "configmaps", "-n", "default"}, "no"},
		{[]string{"list", "configmaps", "-A"}, "no"},
		{[]string{"create", "configmaps", "-n", "default"}, "yes"},
		{[]string{"update", "kvbenchmarks.kvbench.io", "-n", "default"}, "no"},
		// blockOwnerDeletion on Jobs and archives (OwnerReferencesPermissionEnforcement); creating them
		// needs no delete on them, so the operator still cannot delete ConfigMaps (above).
		{[]string{"update", "kvbenchmarks.kvbench.io", "--subresource=finalizers", "-n", "default"}, "yes"},
		// a KVBenchmarkSchedule deletes its children beyond its history limits
		{[]string{"delete", "kvbenchmarks.kvbench.io", "-n", "default"}, "yes"},
		{[]string{"create", "pods", "-n", "default"}, "no"},
		{[]string{"create", "tokenreviews.authentication.k8s.io"}, "yes"},
		{[]string{"create", "subjectaccessreviews.authorization.k8s.io"}, "yes"},
	} {
		Expect(canI(sa, c.args...)).To(Equal(c.want), "kubectl auth can-i %s --as=%s", strings.Join(c.args, " "), sa)
	}
}

// expectForgedArchiveReported: a ConfigMap planted under a run's archive name, even with a
// controller reference to the benchmark, is reported in status and left alone, not read.
func expectForgedArchiveReported(ns string) {
	b := tmpfsBench(ns, "forged-archive", kvv1.EngineRocksDB)
	b.Spec.Threads = []int32{1}
	create(b)
	got := get(ns, b.Name)
	name := archive.Name(plan.JobName(b.Name, "rocksdb"))
	planted := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(got, kvv1.GroupVersion.WithKind("KVBenchmark"))}},
		BinaryData: map[string][]byte{archive.DataKey: []byte("forged")},
	}
	Expect(k8s.Create(ctx, planted)).To(Succeed())
	got = waitFinished(ns, b.Name, 3*time.Minute)
	Expect(got.Status.Phase).To(Equal(kvv1.PhaseSucceeded), runsSummary(got))
	Eventually(func(g Gomega) {
		fr := get(ns, b.Name).Status.Runs[0].FullResult
		g.Expect(fr).NotTo(BeNil())
		g.Expect(fr.ConfigMap).To(BeEmpty())
		g.Expect(fr.Error).To(ContainSubstring("not an archive the operator wrote"))
	}, time.Minute).Should(Succeed())
	var cm corev1.ConfigMap
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(planted), &cm)).To(Succeed())
	Expect(cm.BinaryData[archive.DataKey]).To(Equal([]byte("forged")), "the operator leaves a ConfigMap it did not write alone")
}

// expectOperatorTargetUpOverHTTPS: Prometheus scrapes the operator over HTTPS with its token.
func expectOperatorTargetUpOverHTTPS() {
	Eventually(func(g Gomega) {
		targets, err := promTargets()
		g.Expect(err).NotTo(HaveOccurred())
		var found []string
		for _, t := range targets {
			if t.Labels["namespace"] == releaseNS && strings.HasSuffix(t.Labels["service"], "-metrics") {
				found = append(found, fmt.Sprintf("%s %s %s", t.ScrapeURL, t.Health, t.LastError))
				g.Expect(t.ScrapeURL).To(HavePrefix("https://"))
				g.Expect(t.Health).To(Equal("up"), t.LastError)
			}
		}
		g.Expect(found).To(ConsistOf(MatchRegexp(`/metrics `), MatchRegexp(`/metrics/results `)), "the operator's metrics targets: its own series and the results")
	}, 90*time.Second, 3*time.Second).Should(Succeed())
	By("plain HTTP and anonymous HTTPS are refused")
	var pods corev1.PodList
	Expect(k8s.List(ctx, &pods, client.InNamespace(releaseNS), client.MatchingLabelsSelector{Selector: mustSelector(managerSel)})).To(Succeed())
	Expect(pods.Items).NotTo(BeEmpty())
	for _, path := range []string{"/metrics", "/metrics/results"} {
		url := fmt.Sprintf("https://%s:8080%s", pods.Items[0].Status.PodIP, path)
		out, _ := exec.Command("curl", "-ksS", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10", url).Output()
		Expect(string(out)).To(Equal("401"), "anonymous scrape of %s", url)
	}
}

// expectEveryEngineAndMediumAccepted: one small valid spec per engine and medium passes admission
// (server-side dry run), so the new rules lost nothing valid.
func expectEveryEngineAndMediumAccepted(ns string) {
	for _, engine := range []kvv1.EngineName{kvv1.EngineRocksDB, kvv1.EngineLevelDB, kvv1.EnginePebble} {
		for _, medium := range []kvv1.StorageMedium{kvv1.MediumTmpfs, kvv1.MediumLocalNVMe, kvv1.MediumPersistentVolume} {
			b := tmpfsBench(ns, fmt.Sprintf("valid-%s-%s", engine, strings.ToLower(string(medium))), engine)
			b.Spec.Storage = kvv1.StorageSpec{Medium: medium}
			if medium != kvv1.MediumTmpfs {
				b.Spec.Storage.Size = ptr.To(resource.MustParse("1Gi"))
			}
			if medium == kvv1.MediumPersistentVolume {
				b.Spec.Storage.StorageClassName = ptr.To("standard")
			}
			if engine == kvv1.EngineRocksDB && medium != kvv1.MediumTmpfs {
				b.Spec.CacheMode = kvv1.CacheDirect
			}
			Expect(k8s.Create(ctx, b, client.DryRunAll)).To(Succeed(), "%s on %s", engine, medium)
		}
	}
}

func mustSelector(s string) labels.Selector {
	GinkgoHelper()
	sel, err := labels.Parse(s)
	Expect(err).NotTo(HaveOccurred())
	return sel
}
