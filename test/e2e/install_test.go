//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// chartWithoutCRDField copies the chart and deletes one property from the CRD's spec schema, with the spec-level
// CEL rules that read it (the API server refuses a CRD whose rule names an unknown field): the chart as it was
// before that field existed.
func chartWithoutCRDField(field string) string {
	GinkgoHelper()
	dir := filepath.Join(GinkgoT().TempDir(), "kvbench-operator")
	Expect(os.CopyFS(dir, os.DirFS(chartDir))).To(Succeed())
	file := filepath.Join(dir, "files", "crds", "kvbench.io_kvbenchmarks.yaml")
	raw, err := os.ReadFile(file)
	Expect(err).NotTo(HaveOccurred())
	var crd apiextensionsv1.CustomResourceDefinition
	Expect(yaml.UnmarshalStrict(raw, &crd)).To(Succeed())
	Expect(crd.Spec.Versions).To(HaveLen(1))
	spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	Expect(spec.Properties).To(HaveKey(field))
	delete(spec.Properties, field)
	spec.XValidations = slices.DeleteFunc(spec.XValidations, func(r apiextensionsv1.ValidationRule) bool {
		return strings.Contains(r.Rule, "self."+field)
	})
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
	out, err := yaml.Marshal(&crd)
	Expect(err).NotTo(HaveOccurred())
	var doc map[string]any // as generated: without the empty status the typed object brings
	Expect(yaml.Unmarshal(out, &doc)).To(Succeed())
	delete(doc, "status")
	out, err = yaml.Marshal(doc)
	Expect(err).NotTo(HaveOccurred())
	// The chart's template concatenates the CRD files: each is its own YAML document.
	Expect(os.WriteFile(file, append([]byte("---\n"), out...), 0o644)).To(Succeed())
	return dir
}

// expectChartUpgradeAddsCRDField: the CRD is a chart template (helm.sh/resource-policy: keep), so helm upgrade
// changes it. Helm's crds/ directory never upgrades a CRD, and the API server silently prunes the unknown field.
func expectChartUpgradeAddsCRDField(ns string) {
	const rel, relNS, oldVersion = "kvb-upgrade", "kvb-upgrade", "0.0.1-e2e.crd"
	By("a chart " + oldVersion + " whose CRD lacks spec.runnerImage, pushed to the registry and installed from it")
	oldRef, v := pushChart(chartWithoutCRDField("runnerImage"), oldVersion)
	Expect(oldRef).To(Equal(chart))
	Expect(v).To(Equal(oldVersion))
	DeferCleanup(func() {
		_, _ = tryRun(helm, "uninstall", rel, "-n", relNS, "--wait", "--timeout", "2m")
		_, _ = tryRun(kubectl, "delete", "crd", crdName, scheduleCRD, "--ignore-not-found", "--wait=true", "--timeout=60s")
		_, _ = tryRun(kubectl, "delete", "namespace", relNS, "--ignore-not-found", "--wait=false")
	})
	helmFromRegistry("install", rel, relNS, chart, oldVersion)
	b := tmpfsBench(ns, "crd-upgrade", kvv1.EngineRocksDB)
	b.Spec.RunnerImage = *runnerImage
	err := k8s.Create(ctx, b.DeepCopy(), client.DryRunAll, client.FieldValidation("Strict"))
	Expect(err).To(MatchError(ContainSubstring(`unknown field "spec.runnerImage"`)), "the old CRD must not know the field")
	pruned := b.DeepCopy()
	Expect(k8s.Create(ctx, pruned, client.DryRunAll, client.FieldValidation("Ignore"))).To(Succeed())
	Expect(pruned.Spec.RunnerImage).To(BeEmpty(), "without strict validation the old schema drops the field silently")

	By("helm upgrade to the chart under test (" + chartVersion + ")")
	start := time.Now()
	helmFromRegistry("upgrade", rel, relNS, chart, chartVersion)
	GinkgoWriter.Printf("helm upgrade %s -> %s --wait took %s\n", oldVersion, chartVersion, time.Since(start).Round(100*time.Millisecond))
	Eventually(func(g Gomega) {
		kept := b.DeepCopy()
		g.Expect(k8s.Create(ctx, kept, client.DryRunAll, client.FieldValidation("Strict"))).To(Succeed())
		g.Expect(kept.Spec.RunnerImage).To(Equal(*runnerImage), "the upgraded CRD stores the field")
	}, 30*time.Second).Should(Succeed())
	Expect(run(helm, "history", rel, "-n", relNS, "-o", "yaml")).To(ContainSubstring("chart: kvbench-operator-" + chartVersion))

	By("helm uninstall keeps the upgraded CRD (resource-policy keep)")
	run(helm, "uninstall", rel, "-n", relNS, "--wait", "--timeout", "2m")
	Expect(run(kubectl, "get", "crd", crdName, "-o", "jsonpath={.metadata.annotations.helm\\.sh/resource-policy}")).To(Equal("keep"))
}

// expectInstallerRoundTrip: make build-installer's dist/install.yaml, applied as a user would, runs a benchmark
// (its runner image by digest from the file, its result archived under the file's RBAC), and `kubectl delete -f`
// removes everything it created.
func expectInstallerRoundTrip(ns string) {
	Expect(run(kubectl, "get", "crd", "-o", "name")).NotTo(ContainSubstring("kvbench.io"), "the chart's CRD must be gone first")
	file := filepath.Join(GinkgoT().TempDir(), "install.yaml")
	cmd := exec.Command("../../hack/build-installer.sh")
	cmd.Env = append(os.Environ(), "IMG="+*operatorImage, "RUNNER_IMG="+*runnerImage, "JAVA_RUNNER_IMG="+*javaImage, "OUT="+file, "KUBECTL="+kubectl)
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "build-installer.sh:\n%s", out)
	DeferCleanup(func() { _, _ = tryRun(kubectl, "delete", "-f", file, "--ignore-not-found", "--wait=false") })

	By("kubectl apply --server-side -f install.yaml")
	run(kubectl, "apply", "--server-side", "-f", file)
	run(kubectl, "wait", "--for=condition=Established", "crd/"+crdName, "--timeout=60s")
	run(kubectl, "-n", "kvbench-system", "rollout", "status", "deployment/kvbench-operator", "--timeout=2m")

	b := tmpfsBench(ns, "installer", kvv1.EngineRocksDB)
	b.Spec.Threads = []int32{1}
	create(b)
	got := waitFinished(ns, b.Name, 3*time.Minute)
	Expect(got.Status.Phase).To(Equal(kvv1.PhaseSucceeded), runsSummary(got))
	archivedResult(ns, b.Name, "rocksdb")
	var jobs batchv1.JobList
	Expect(k8s.List(ctx, &jobs, client.InNamespace(ns), client.MatchingLabels{"kvbench.io/benchmark": b.Name})).To(Succeed())
	Expect(jobs.Items).To(HaveLen(1))
	Expect(jobs.Items[0].Spec.Template.Spec.Containers[0].Image).To(Equal(*runnerImage), "the installer's --runner-image")

	By("kubectl delete -f install.yaml (the benchmark first: deleting the CRD would delete it with its results)")
	Expect(k8s.Delete(ctx, got)).To(Succeed())
	Eventually(func(g Gomega) {
		var l kvv1.KVBenchmarkList
		g.Expect(k8s.List(ctx, &l, client.InNamespace(ns))).To(Succeed())
		g.Expect(l.Items).To(BeEmpty())
	}, time.Minute).Should(Succeed())
	run(kubectl, "delete", "-f", file, "--wait=true", "--timeout=3m")
	Eventually(func() []string {
		var left []string
		o, _ := tryRun(kubectl, "get", "crd,clusterrole,clusterrolebinding,namespace", "-o", "name")
		for _, l := range strings.Fields(o) {
			if regexp.MustCompile(`kvbench-operator|kvbenchmark|kvbench\.io|namespace/kvbench-system`).MatchString(l) {
				left = append(left, l)
			}
		}
		o, _ = tryRun(kubectl, "get", "pods,jobs,pvc,configmaps", "-A", "-l", "app.kubernetes.io/managed-by=kvbench-operator", "-o", "name")
		return append(left, strings.Fields(o)...)
	}, 2*time.Minute, 2*time.Second).Should(BeEmpty())
	var pods corev1.PodList
	Expect(k8s.List(ctx, &pods, client.InNamespace(ns))).To(Succeed())
	Expect(pods.Items).To(BeEmpty())
}
