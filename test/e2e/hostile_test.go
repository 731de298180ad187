//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// hostileImage is the image of testdata/hostile-runner, built and imported by the spec.
const hostileImage = "localhost/kvbench-hostile-runner:v1"

// buildHostileImage builds testdata/hostile-runner (stdlib Go, static) into an image and imports it
// into the cluster's containerd, as hack/images.sh does for the cluster's test image.
func buildHostileImage() {
	GinkgoHelper()
	dir := GinkgoT().TempDir()
	bin, tar := filepath.Join(dir, "hostile-runner"), filepath.Join(dir, "hostile-runner.tar")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "./testdata/hostile-runner/main.go")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "go build: %s", out)
	run("../../hack/make-image.sh", "--entrypoint", "/hostile-runner", "--uid", "65532", bin, hostileImage, tar)
	run("../../hack/images.sh", "import", tar)
	run("../../hack/images.sh", "forget", tar) // a test image, not re-imported after a wipe
}

// operatorPod is the operator's pod.
func operatorPod() corev1.Pod {
	GinkgoHelper()
	var pods corev1.PodList
	Expect(k8s.List(ctx, &pods, client.InNamespace(releaseNS), client.MatchingLabelsSelector{Selector: mustSelector(managerSel)})).To(Succeed())
	Expect(pods.Items).To(HaveLen(1))
	return pods.Items[0]
}

// scrapeOperator GETs path of the operator's metrics server (/metrics, /metrics/results) as a
// service account bound to the chart's metrics-reader ClusterRole; it returns the HTTP status and
// the body.
func scrapeOperator(ns, path string) (string, string) {
	GinkgoHelper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "scraper", Namespace: ns}}
	if err := k8s.Create(ctx, sa); err != nil {
		Expect(client.IgnoreAlreadyExists(err)).To(Succeed())
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ns + "-scraper"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: release + "-kvbench-operator-metrics-reader"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa.Name, Namespace: ns}}}
	if err := k8s.Create(ctx, binding); err == nil {
		DeferCleanup(func() { _ = k8s.Delete(ctx, binding) })
	} else {
		Expect(client.IgnoreAlreadyExists(err)).To(Succeed())
	}
	token := strings.TrimSpace(run(kubectl, "-n", ns, "create", "token", sa.Name))
	body := filepath.Join(GinkgoT().TempDir(), "metrics")
	code, _ := tryRun("curl", "-ksS", "-o", body, "-w", "%{http_code}", "--max-time", "20",
		"-H", "Authorization: Bearer "+token, fmt.Sprintf("https://%s:8080%s", operatorPod().Status.PodIP, path))
	text, _ := os.ReadFile(body)
	return strings.TrimSpace(code), string(text)
}

// Issue 18: a runner image is its benchmark author's choice, and one writing hostile output took
// the operator down (out of memory, on every restart), made /metrics answer 500 for everyone and
// left status unwritable. With hack/e2e.sh's real cluster, Prometheus and runner image beside it.
// hostileRunner runs in the suite's Ordered container (scenarios_test.go), before helm uninstall.
func hostileRunner() {
	ns := restrictedNamespace("e2e-hostile")
	buildHostileImage()
	before := operatorPod()

	hostile := tmpfsBench(ns, "hostile", kvv1.EngineRocksDB)
	hostile.Spec.RunnerImage = hostileImage
	calm := tmpfsBench(ns, "calm", kvv1.EngineRocksDB)
	create(hostile)
	create(calm)

	By("Prometheus drops the hostile runner's scrape of 5,000 series: the PodMonitor's sampleLimit")
	Eventually(func(g Gomega) {
		targets, err := promTargets()
		g.Expect(err).NotTo(HaveOccurred())
		var errs []string
		for _, t := range targets {
			if t.Labels["namespace"] == ns && strings.HasPrefix(t.Labels["pod"], "hostile-") {
				errs = append(errs, t.LastError)
			}
		}
		g.Expect(errs).To(ContainElement(ContainSubstring("sample limit exceeded")))
	}, 45*time.Second, 2*time.Second).Should(Succeed())

	By("the benchmark alongside finishes")
	got := waitFinished(ns, calm.Name, 4*time.Minute)
	Expect(got.Status.Phase).To(Equal(kvv1.PhaseSucceeded), runsSummary(got))

	By("the hostile run ends Failed with what the limits left out, and keeps what fit")
	got = waitFinished(ns, hostile.Name, 4*time.Minute)
	Expect(got.Status.Phase).To(Equal(kvv1.PhaseFailed), runsSummary(got))
	r := got.Status.Runs[0]
	Expect(r.Reason).To(Equal(kvv1.ReasonResultOverLimits), runsSummary(got))
	Expect(r.Message).To(And(ContainSubstring("over the operator's limits"), ContainSubstring("phase line(s) over the limit of 10000")))
	Expect(len(r.Results) + int(r.Truncated)).To(BeNumerically("<=", kvv1.DefaultResultLimits.Phases))
	raw, err := json.Marshal(got.Status)
	Expect(err).NotTo(HaveOccurred())
	// A run's status keeps what its plan makes (at least 64 phases): 23 KiB here, where the 10,000
	// phase lines filled the whole budget before (893 KiB).
	Expect(len(raw)).To(BeNumerically("<", 64<<10))
	AddReportEntry("hostile run", fmt.Sprintf("%s: %s; status %d KiB", r.Reason, r.Message, len(raw)>>10))
	Eventually(func(g Gomega) {
		fr := get(ns, hostile.Name).Status.Runs[0].FullResult
		g.Expect(fr).NotTo(BeNil())
		g.Expect(fr.Error).To(BeEmpty())
		g.Expect(fr.Dropped).To(ContainElement("overLimits"))
	}, 2*time.Minute, time.Second).Should(Succeed())

	By("/metrics and /metrics/results answer 200, with the refused series counted, and the operator never restarted")
	Eventually(func(g Gomega) {
		code, body := scrapeOperator(ns, "/metrics")
		g.Expect(code).To(Equal("200"))
		g.Expect(body).To(ContainSubstring("kvbench_run_jobs_created_total"))
		code, body = scrapeOperator(ns, "/metrics/results")
		g.Expect(code).To(Equal("200"))
		g.Expect(body).To(MatchRegexp(`kvbench_result_series_refused\{benchmark="hostile",namespace="` + ns + `"\} [1-9]`))
		g.Expect(body).To(ContainSubstring(`kvbench_result_ops_per_second{benchmark="calm"`))
	}, time.Minute, 2*time.Second).Should(Succeed())
	after := operatorPod()
	Expect(after.UID).To(Equal(before.UID), "the operator pod was replaced")
	for _, cs := range after.Status.ContainerStatuses {
		Expect(cs.RestartCount).To(BeZero(), "container %s restarted: %+v", cs.Name, cs.LastTerminationState)
	}
}
