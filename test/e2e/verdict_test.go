//go:build e2e

package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// savedBaselineVerdict walks docs/report.md's saved-baseline path on the cluster: a reference
// whose spec leaves the seed unset, `kubectl kvbench save` (which pins the seed the run resolved),
// `kubectl create configmap --from-file=benchmark.yaml=...`, then the spec as written, slower by
// construction, with spec.baseline.configMap: a verdict (Regressed=True), where the seed alone used
// to make a BaselineMismatch. The same pair with repeat 1 has no verdict (TooFewRepeats), and the
// plugin's gate on it exits 3, never 0.
func savedBaselineVerdict(ns string) {
	GinkgoHelper()
	plugin := buildPlugin()
	ref := create(pebbleRepeats(ns, "verdict-ref", false, ""))
	Expect(ref.Spec.Dataset.Seed).To(BeZero())
	got := waitFinished(ns, ref.Name, 3*time.Minute)
	Expect(got.Status.Phase).To(Equal(kvv1.PhaseSucceeded), runsSummary(got))

	dir := GinkgoT().TempDir()
	run(plugin, "save", ref.Name, "-n", ns, "-d", dir)
	saved := filepath.Join(dir, ref.Name+".yaml")
	data, err := os.ReadFile(saved)
	Expect(err).NotTo(HaveOccurred())
	Expect(string(data)).To(MatchRegexp(`(?m)^    seed: [1-9][0-9]*$`), "save pins the resolved seed")
	run(kubectl, "create", "configmap", "verdict-ref", "-n", ns, "--from-file=benchmark.yaml="+saved)

	slow := pebbleRepeats(ns, "verdict-slow", true, "")
	slow.Spec.Baseline = &kvv1.BaselineRef{ConfigMap: "verdict-ref", Metrics: []kvv1.BaselineMetric{kvv1.BaselineOpsPerSec}}
	once := pebbleRepeats(ns, "verdict-once", true, "")
	once.Spec.Repeat = 1
	once.Spec.Baseline = slow.Spec.Baseline.DeepCopy()
	create(slow)
	create(once)
	verdict := func(name string, status metav1.ConditionStatus, reason string) *metav1.Condition {
		var c *metav1.Condition
		Eventually(func(g Gomega) {
			b := get(ns, name)
			c = condition(b, kvv1.ConditionRegressed)
			g.Expect(c).NotTo(BeNil(), "%s: phase %s, runs %s", name, b.Status.Phase, runsSummary(b))
			g.Expect(c.Reason).To(Equal(reason), "%s: %s", name, c.Message)
			g.Expect(c.Status).To(Equal(status), "%s: %s", name, c.Message)
		}, 3*time.Minute).Should(Succeed())
		return c
	}
	c := verdict("verdict-slow", metav1.ConditionTrue, "Regression")
	Expect(c.Message).To(HavePrefix("against configmap/verdict-ref: regressed: pebble readrandom threads=1 ops/s "))
	AddReportEntry("saved baseline: verdict-slow Regressed", c.Message)
	c = verdict("verdict-once", metav1.ConditionUnknown, "TooFewRepeats")
	Expect(c.Message).To(ContainSubstring("the U test needs at least 4 repeats a side"))
	AddReportEntry("repeat 1: verdict-once Regressed", c.Message)

	By("the plugin's gate agrees: 2 for the regression, 3 (no verdict) for repeat 1")
	for name, want := range map[string]int{"verdict-slow": 2, "verdict-once": 3} {
		out, err := tryRun(plugin, "compare", "-f", saved, name, "-n", ns, "--metrics", "ops", "--fail-on-regression")
		var exit *exec.ExitError
		Expect(errors.As(err, &exit)).To(BeTrue(), "compare exited %v:\n%s", err, out)
		Expect(exit.ExitCode()).To(Equal(want), out)
		Expect(out).To(ContainSubstring("A (old) = " + ns + "/verdict-ref (" + saved + "), B (new) = " + ns + "/" + name + " (cluster)"))
	}
}
