//go:build e2e

package e2e

import (
	"errors"
	"fmt"
	"os/exec"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// pebbleRepeats is a tiny Pebble benchmark on tmpfs: 20000 keys bulk-loaded, 50000 random reads at
// one thread, repeated 5 times (the U test needs 4 a side to call a difference significant). The
// fast variant reads uncompressed tables through a 64 MiB block cache (every read hits); the slow
// variant zstd tables through a 64 KiB cache, so nearly every read decompresses a block: several
// times slower by construction, far beyond this machine's noise (test/gate measured 5x).
func pebbleRepeats(ns, name string, slow bool, baseline string) *kvv1.KVBenchmark {
	b := tmpfsBench(ns, name, kvv1.EnginePebble)
	opts := kvv1.EngineOptions{CacheSize: ptr.To(resource.MustParse("64Mi")), Compression: ptr.To(kvv1.CompressionNone)}
	if slow {
		opts = kvv1.EngineOptions{CacheSize: ptr.To(resource.MustParse("64Ki")), Compression: ptr.To(kvv1.CompressionZstd)}
	}
	b.Spec.Engines = []kvv1.EngineSpec{{Name: kvv1.EnginePebble, Options: opts}}
	b.Spec.Dataset = kvv1.DatasetSpec{Num: ptr.To[int64](20000), KeySize: 16, ValueSize: 100, LoadMode: kvv1.LoadBulk}
	b.Spec.Workloads = []kvv1.WorkloadSpec{{Name: kvv1.WorkloadReadRandom, Num: ptr.To[int64](50000)}}
	b.Spec.Threads = []int32{1}
	b.Spec.Repeat = 5
	if baseline != "" {
		b.Spec.Baseline = &kvv1.BaselineRef{Name: baseline}
	}
	return b
}

// baselineScenario: "slow-vs-fast" (slow by construction, baseline "fast") ends Regressed=True
// naming its point; "fast-vs-slow" (baseline "slow-vs-fast") ends Regressed=False. All three run at
// once, so fast-vs-slow usually ends before its baseline and shows BaselineNotFinished first (the
// operator looks again every 30s). The change ratio gauge reaches Prometheus, and
// `kubectl kvbench compare --fail-on-regression` gives the same verdict from outside (exit 2).
func baselineScenario(ns string) {
	GinkgoHelper()
	create(pebbleRepeats(ns, "fast", false, ""))
	create(pebbleRepeats(ns, "slow-vs-fast", true, "fast"))
	create(pebbleRepeats(ns, "fast-vs-slow", false, "slow-vs-fast"))

	regressed := func(name string, want metav1.ConditionStatus) *kvv1.KVBenchmark {
		var b *kvv1.KVBenchmark
		Eventually(func(g Gomega) {
			b = get(ns, name)
			c := condition(b, kvv1.ConditionRegressed)
			g.Expect(c).NotTo(BeNil(), "%s: phase %s, runs %s, conditions %v", name, b.Status.Phase, runsSummary(b), b.Status.Conditions)
			g.Expect(c.Status).To(Equal(want), "%s: %s: %s", name, c.Reason, c.Message)
		}, 3*time.Minute).Should(Succeed())
		return b
	}
	slow := regressed("slow-vs-fast", metav1.ConditionTrue)
	c := condition(slow, kvv1.ConditionRegressed)
	Expect(c.Reason).To(Equal("Regression"))
	Expect(c.Message).To(HavePrefix("against kvbenchmark/fast: regressed: pebble readrandom threads=1 "))
	Expect(slow.Status.Runs[0].Points).To(HaveLen(1))
	Expect(slow.Status.Runs[0].Points[0].OpsPerSec.N).To(Equal(int32(5)))
	var ops *kvv1.PointChange
	for i, ch := range slow.Status.Baseline.Changes {
		if ch.Metric == "opsPerSec" {
			ops = &slow.Status.Baseline.Changes[i]
		}
	}
	Expect(ops).NotTo(BeNil(), "changes %+v", slow.Status.Baseline.Changes)
	Expect(ops.Regressed).To(BeTrue(), "%+v", *ops)
	Expect(ops.Ratio).To(BeNumerically("<", 0.7), "%+v", *ops)
	AddReportEntry("slow-vs-fast Regressed", c.Message)

	fast := regressed("fast-vs-slow", metav1.ConditionFalse)
	c = condition(fast, kvv1.ConditionRegressed)
	Expect(c.Reason).To(Equal("NoRegression"))
	Expect(c.Message).To(HavePrefix("against kvbenchmark/slow-vs-fast: no significant regression beyond 5% in 1 point(s)"))
	AddReportEntry("fast-vs-slow Regressed", c.Message)

	By("Prometheus has the change ratio of the regressed point")
	Eventually(func(g Gomega) {
		got, err := promQuery(fmt.Sprintf(`kvbench_result_change_ratio{namespace=%q,benchmark="slow-vs-fast",metric="opsPerSec"}`, ns))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(HaveLen(1))
		g.Expect(got[0].Metric["regressed"]).To(Equal("true"))
		g.Expect(got[0].Metric["baseline"]).To(Equal("kvbenchmark/fast"))
		g.Expect(got[0].float()).To(BeNumerically("~", ops.Ratio, 1e-9))
	}, 90*time.Second, 3*time.Second).Should(Succeed())

	By("kubectl kvbench compare --fail-on-regression agrees from outside the cluster")
	plugin := buildPlugin()
	out, err := tryRun(plugin, "compare", "fast", "slow-vs-fast", "-n", ns, "--fail-on-regression")
	var exit *exec.ExitError
	Expect(errors.As(err, &exit)).To(BeTrue(), "compare exited %v:\n%s", err, out)
	Expect(exit.ExitCode()).To(Equal(2), out)
	Expect(out).To(ContainSubstring("regression: " + ns + "/slow-vs-fast regressed against " + ns + "/fast beyond 5%"))
	Expect(out).To(ContainSubstring("pebble readrandom threads=1 ops/s"))
	out = run(plugin, "compare", "slow-vs-fast", "fast-vs-slow", "-n", ns, "--fail-on-regression")
	AddReportEntry("kubectl kvbench compare slow-vs-fast fast-vs-slow", out)
}
