package kvbenchmark

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

// repeats are one point (readrandom at 1 thread) repeated: ops/s around ops, p99 around p99.
func repeats(ops, p99 float64) []kvv1.PhaseSummary {
	var out []kvv1.PhaseSummary
	for i, f := range []float64{1, 1.01, 0.99, 1.02, 0.98} {
		p := phase("readrandom", 1, ops*f, p99/f)
		p.Iteration = int32(i)
		out = append(out, p)
	}
	return out
}

// finishRun plays the Job controller and kubelet for a run that ends with these phases.
func finishRun(ns, job string, engine kvv1.EngineName, phases []kvv1.PhaseSummary) {
	j := eventuallyJob(ns, job)
	startJob(j, t0)
	pod := makePod(j, "node-a")
	setPodStatus(pod, terminatedStatus(corev1.PodSucceeded, t0.Add(time.Second), t0.Add(time.Hour), 0, "Completed",
		summary(engine, "", phases...)))
	setJobStatus(j, true, "", "", t0, t0.Add(time.Hour))
}

// benchmarkSpec is a one-engine, one-point benchmark repeated 5 times.
func benchmarkSpec(name, ns string) *w.KVBenchmarkWrapper {
	return w.MakeKVBenchmark(name, ns).EngineNames(kvv1.EnginePebble).Threads(1).
		EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.Repeat = 5 })
}

// savedBaseline is a ConfigMap holding a benchmark as `kubectl kvbench save` writes it.
func savedBaseline(ns, name string, b *kvv1.KVBenchmark) *corev1.ConfigMap {
	data, err := yaml.Marshal(b)
	Expect(err).NotTo(HaveOccurred())
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string]string{BaselineConfigMapKey: string(data)}}
	Expect(k8s.Create(ctx, cm)).To(Succeed())
	return cm
}

func eventuallyRegressed(k client.ObjectKey, status metav1.ConditionStatus, reason string) *kvv1.KVBenchmark {
	var out *kvv1.KVBenchmark
	Eventually(func(g Gomega) {
		b := &kvv1.KVBenchmark{}
		g.Expect(k8s.Get(ctx, k, b)).To(Succeed())
		c := meta.FindStatusCondition(b.Status.Conditions, kvv1.ConditionRegressed)
		g.Expect(c).NotTo(BeNil(), "no Regressed condition: %+v", b.Status.Conditions)
		g.Expect(c.Status).To(Equal(status), "Regressed: %+v", c)
		g.Expect(c.Reason).To(Equal(reason), "Regressed: %+v", c)
		out = b
	}, timeout, interval).Should(Succeed())
	return out
}

var _ = Describe("spec.baseline", func() {
	var op *operator
	BeforeEach(func() { op = startOperator(operatorOpts{}) })
	AfterEach(func() {
		op.Stop()
		deleteRunnerJobs()
	})

	It("finds a slower run regressed against a faster baseline KVBenchmark, with the worst point, an event and the gauge", func() {
		ns := newNamespace()
		base := benchmarkSpec("base", ns).Obj()
		Expect(k8s.Create(ctx, base)).To(Succeed())
		finishRun(ns, "base-pebble", kvv1.EnginePebble, repeats(100000, 10))
		eventuallyPhase(key(base), kvv1.PhaseSucceeded)

		cur := benchmarkSpec("slower", ns).EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.Baseline = &kvv1.BaselineRef{Name: "base"} }).Obj()
		Expect(k8s.Create(ctx, cur)).To(Succeed())
		finishRun(ns, "slower-pebble", kvv1.EnginePebble, repeats(50000, 20))
		got := eventuallyRegressed(key(cur), metav1.ConditionTrue, ReasonRegression)
		Expect(got.Status.Verdict).To(HavePrefix("Regressed"), "the Verdict column, written with the condition")

		c := meta.FindStatusCondition(got.Status.Conditions, kvv1.ConditionRegressed)
		Expect(c.Message).To(HavePrefix("against kvbenchmark/base: regressed: pebble readrandom threads=1 "))
		bl := got.Status.Baseline
		Expect(bl.Baseline).To(Equal("kvbenchmark/base"))
		Expect(bl.Error).To(BeEmpty())
		Expect(bl.ComparedAt).NotTo(BeNil())
		Expect(bl.Changes).To(HaveLen(4)) // ops/s, p50, p99, p99.9 of the one point
		byMetric := map[string]kvv1.PointChange{}
		for _, ch := range bl.Changes {
			byMetric[ch.Metric] = ch
		}
		ops := byMetric["opsPerSec"]
		Expect(ops.Ratio).To(BeNumerically("~", 0.5, 1e-9))
		Expect(ops.Old).To(BeNumerically("~", 100000, 1e-6))
		Expect(ops.Regressed).To(BeTrue())
		Expect(*ops.P).To(BeNumerically("~", 2.0/252, 1e-9)) // 5 vs 5, fully separated: exact U test
		Expect(byMetric["p99Micros"].Regressed).To(BeTrue())
		Expect(byMetric["p50Micros"].Significant).To(BeFalse()) // p50 is 4 us in every repeat
		// The repeats are summarised in status, none noisy (CoV 1.6%).
		Expect(got.Status.Runs[0].Points).To(HaveLen(1))
		Expect(got.Status.Runs[0].Points[0].OpsPerSec.N).To(Equal(int32(5)))
		Expect(meta.IsStatusConditionFalse(got.Status.Conditions, kvv1.ConditionNoisy)).To(BeTrue())

		Eventually(func() []string {
			var reasons []string
			for _, e := range eventsFor(ns, "slower") {
				reasons = append(reasons, e.Reason+": "+e.Message)
			}
			return reasons
		}, timeout, interval).Should(ContainElement(HavePrefix("Regressed: against kvbenchmark/base: regressed: pebble readrandom threads=1")))
		Eventually(func() error {
			return testutil.GatherAndCompare(op.registry, strings.NewReader(`
# HELP kvbench_result_change_ratio A point's median against spec.baseline's (new / old); regressed=true marks a significant change beyond the threshold in the bad direction.
# TYPE kvbench_result_change_ratio gauge
kvbench_result_change_ratio{baseline="kvbenchmark/base",benchmark="slower",engine="pebble",metric="opsPerSec",namespace="`+ns+`",regressed="true",threads="1",workload="readrandom"} 0.5
kvbench_result_change_ratio{baseline="kvbenchmark/base",benchmark="slower",engine="pebble",metric="p50Micros",namespace="`+ns+`",regressed="false",threads="1",workload="readrandom"} 1
kvbench_result_change_ratio{baseline="kvbenchmark/base",benchmark="slower",engine="pebble",metric="p999Micros",namespace="`+ns+`",regressed="true",threads="1",workload="readrandom"} 2
kvbench_result_change_ratio{baseline="kvbenchmark/base",benchmark="slower",engine="pebble",metric="p99Micros",namespace="`+ns+`",regressed="true",threads="1",workload="readrandom"} 2
`), "kvbench_result_change_ratio")
		}, timeout, interval).Should(Succeed())
	})

	It("finds no regression against a slower saved baseline in a ConfigMap, and waits for a baseline that has not finished", func() {
		ns := newNamespace()
		saved := benchmarkSpec("nightly-1", ns).Obj()
		saved.Status = kvv1.KVBenchmarkStatus{Phase: kvv1.PhaseSucceeded, Runs: []kvv1.RunStatus{{
			Name: "pebble", Engine: kvv1.EnginePebble, Phase: kvv1.RunSucceeded, Results: repeats(50000, 20)}}}
		savedBaseline(ns, "nightly-1", saved)

		cur := benchmarkSpec("faster", ns).EditSpec(func(s *kvv1.KVBenchmarkSpec) {
			s.Baseline = &kvv1.BaselineRef{ConfigMap: "nightly-1", ThresholdPercent: ptrTo[int32](10)}
		}).Obj()
		Expect(k8s.Create(ctx, cur)).To(Succeed())
		finishRun(ns, "faster-pebble", kvv1.EnginePebble, repeats(100000, 10))
		got := eventuallyRegressed(key(cur), metav1.ConditionFalse, ReasonNoRegression)
		Expect(meta.FindStatusCondition(got.Status.Conditions, kvv1.ConditionRegressed).Message).
			To(Equal("against configmap/nightly-1: no significant regression beyond 10% in 1 point(s) (worst: pebble readrandom threads=1 p50 (us) +0.00% (p=1.000, n=5+5)); compared ops, p50, p99, p999 at alpha 0.05, threshold 10%"))
		Expect(got.Status.Baseline.Baseline).To(Equal("configmap/nightly-1"))
		// Worst first: p50 (4 us in every repeat, unchanged), then p99 and p99.9 halved (-50%),
		// then ops/s doubled (-100% worse).
		var order []string
		for _, ch := range got.Status.Baseline.Changes {
			order = append(order, ch.Metric)
			Expect(ch.Regressed).To(BeFalse())
		}
		Expect(order).To(Equal([]string{"p50Micros", "p99Micros", "p999Micros", "opsPerSec"}))
		ops := got.Status.Baseline.Changes[3]
		Expect(ops.Ratio).To(BeNumerically("~", 2, 1e-9))
		Expect(ops.Significant).To(BeTrue())

		By("a baseline KVBenchmark still running: Unknown, then the verdict once it has finished")
		running := benchmarkSpec("running", ns).Obj()
		Expect(k8s.Create(ctx, running)).To(Succeed())
		early := benchmarkSpec("early", ns).EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.Baseline = &kvv1.BaselineRef{Name: "running"} }).Obj()
		Expect(k8s.Create(ctx, early)).To(Succeed())
		finishRun(ns, "early-pebble", kvv1.EnginePebble, repeats(100000, 10))
		got = eventuallyRegressed(key(early), metav1.ConditionUnknown, ReasonBaselineNotFinished)
		Expect(got.Status.Baseline.Error).To(Equal("baseline kvbenchmark/running is Pending; compared once it has finished"))
		finishRun(ns, "running-pebble", kvv1.EnginePebble, repeats(100000, 10))
		eventuallyPhase(key(running), kvv1.PhaseSucceeded)
		poke(key(early)) // the operator looks again every 30s; do not wait for it
		got = eventuallyRegressed(key(early), metav1.ConditionFalse, ReasonNoRegression)
		Expect(got.Status.Baseline.Error).To(BeEmpty())
	})

	It("gates on spec.baseline's metrics and alpha: a latency-only regression passes an ops-only gate; a stricter alpha than 5 repeats can reach has no verdict", func() {
		ns := newNamespace()
		fast := benchmarkSpec("fast", ns).Obj()
		fast.Status = kvv1.KVBenchmarkStatus{Phase: kvv1.PhaseSucceeded, Runs: []kvv1.RunStatus{{
			Name: "pebble", Engine: kvv1.EnginePebble, Phase: kvv1.RunSucceeded, Results: repeats(100000, 10)}}}
		savedBaseline(ns, "fast", fast)
		// Same ops/s, p99 and p99.9 doubled: fully separated 5 against 5, p = 2/252 = 0.0079.
		create := func(name string, ref kvv1.BaselineRef) client.ObjectKey {
			cur := benchmarkSpec(name, ns).EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.Baseline = &ref }).Obj()
			Expect(k8s.Create(ctx, cur)).To(Succeed())
			finishRun(ns, name+"-pebble", kvv1.EnginePebble, repeats(100000, 20))
			return key(cur)
		}
		defaults := create("defaults", kvv1.BaselineRef{ConfigMap: "fast"})
		opsOnly := create("ops-only", kvv1.BaselineRef{ConfigMap: "fast", Metrics: []kvv1.BaselineMetric{kvv1.BaselineOpsPerSec}})
		strict := create("strict", kvv1.BaselineRef{ConfigMap: "fast", Alpha: ptrTo(0.005)})
		tail := create("tail", kvv1.BaselineRef{ConfigMap: "fast", Metrics: []kvv1.BaselineMetric{kvv1.BaselineP99, kvv1.BaselineOpsPerSec}, Alpha: ptrTo(0.01)})

		got := eventuallyRegressed(defaults, metav1.ConditionTrue, ReasonRegression)
		msg := meta.FindStatusCondition(got.Status.Conditions, kvv1.ConditionRegressed).Message
		Expect(msg).To(HavePrefix("against configmap/fast: regressed: pebble readrandom threads=1 p99 (us) +100.00% (p=0.008, n=5+5), and 1 more"))
		Expect(msg).To(HaveSuffix("; compared ops, p50, p99, p999 at alpha 0.05, threshold 5%"))

		got = eventuallyRegressed(opsOnly, metav1.ConditionFalse, ReasonNoRegression)
		Expect(meta.FindStatusCondition(got.Status.Conditions, kvv1.ConditionRegressed).Message).To(Equal(
			"against configmap/fast: no significant regression beyond 5% in 1 point(s) (worst: pebble readrandom threads=1 ops/s +0.00% (p=1.000, n=5+5)); compared ops at alpha 0.05, threshold 5%"))
		Expect(got.Status.Baseline.Changes).To(HaveLen(1))
		Expect(got.Status.Baseline.Changes[0].Metric).To(Equal("opsPerSec"))

		// 5 repeats a side can reach p = 0.0079 at best: at alpha 0.005 that is no verdict, not a pass.
		got = eventuallyRegressed(strict, metav1.ConditionUnknown, ReasonTooFewRepeats)
		msg = meta.FindStatusCondition(got.Status.Conditions, kvv1.ConditionRegressed).Message
		Expect(msg).To(ContainSubstring("the U test needs at least 6 repeats a side to find a difference at alpha 0.005"))
		Expect(msg).To(HaveSuffix("; compared ops, p50, p99, p999 at alpha 0.005, threshold 5%"))
		Expect(got.Status.Baseline.Changes).To(HaveLen(4))
		for _, ch := range got.Status.Baseline.Changes {
			Expect(ch.Significant).To(BeFalse(), "%s: p=%v is not below alpha 0.005", ch.Metric, *ch.P)
		}

		got = eventuallyRegressed(tail, metav1.ConditionTrue, ReasonRegression)
		msg = meta.FindStatusCondition(got.Status.Conditions, kvv1.ConditionRegressed).Message
		Expect(msg).To(Equal("against configmap/fast: regressed: pebble readrandom threads=1 p99 (us) +100.00% (p=0.008, n=5+5); compared ops, p99 at alpha 0.01, threshold 5%"))
		var metrics []string
		for _, ch := range got.Status.Baseline.Changes {
			metrics = append(metrics, ch.Metric)
		}
		Expect(metrics).To(ConsistOf("opsPerSec", "p99Micros"))
	})

	// With repeat 1 (the default) the U test cannot call any difference significant: a verdict of
	// NoRegression would pass every gate. (It gave Regressed=False NoRegression for a 19.9% drop.)
	It("has no verdict below the repeats the U test needs: Unknown TooFewRepeats, the changes with their size", func() {
		ns := newNamespace()
		once := func(name string) *kvv1.KVBenchmark {
			return benchmarkSpec(name, ns).EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.Repeat = 1 }).Obj()
		}
		base := once("once")
		Expect(k8s.Create(ctx, base)).To(Succeed())
		finishRun(ns, "once-pebble", kvv1.EnginePebble, []kvv1.PhaseSummary{phase("readrandom", 1, 151699, 10)})
		eventuallyPhase(key(base), kvv1.PhaseSucceeded)
		cur := once("once-slower")
		cur.Spec.Baseline = &kvv1.BaselineRef{Name: "once", Metrics: []kvv1.BaselineMetric{kvv1.BaselineOpsPerSec}}
		Expect(k8s.Create(ctx, cur)).To(Succeed())
		finishRun(ns, "once-slower-pebble", kvv1.EnginePebble, []kvv1.PhaseSummary{phase("readrandom", 1, 48944, 10)})
		got := eventuallyRegressed(key(cur), metav1.ConditionUnknown, ReasonTooFewRepeats)
		Expect(meta.FindStatusCondition(got.Status.Conditions, kvv1.ConditionRegressed).Message).To(Equal(
			"against kvbenchmark/once: no verdict: too few repeats in 1 of 1 point(s) (n=1+1): the U test needs at least 4 repeats a side to find a difference at alpha 0.05 (spec.repeat: 4 or more); largest change: pebble readrandom threads=1 ops/s -67.74% (n=1+1); compared ops at alpha 0.05, threshold 5%"))
		Expect(got.Status.Baseline.Error).To(BeEmpty())
		Expect(got.Status.Baseline.ComparedAt).NotTo(BeNil())
		Expect(got.Status.Baseline.Changes).To(HaveLen(1))
		ch := got.Status.Baseline.Changes[0]
		Expect(ch.Ratio).To(BeNumerically("~", 48944.0/151699, 1e-9))
		Expect(ch.Regressed).To(BeFalse())
		Expect(ch.Significant).To(BeFalse())
		Eventually(func() []string {
			var reasons []string
			for _, e := range eventsFor(ns, "once-slower") {
				reasons = append(reasons, e.Type+" "+e.Reason)
			}
			return reasons
		}, timeout, interval).Should(ContainElement("Warning " + EventNoVerdict))
	})

	It("walks save -> kubectl create configmap -> spec.baseline.configMap to a verdict, not a mismatch over the pinned seed", func() {
		savedBaselinePath()
	})

	It("says why a baseline cannot be compared: different dataset, no common point, missing, not a benchmark", func() {
		ns := newNamespace()
		other := benchmarkSpec("other-dataset", ns).DatasetSize("128Mi").Obj()
		other.Status = kvv1.KVBenchmarkStatus{Phase: kvv1.PhaseSucceeded, Runs: []kvv1.RunStatus{{
			Name: "pebble", Engine: kvv1.EnginePebble, Phase: kvv1.RunSucceeded, Results: repeats(50000, 20)}}}
		savedBaseline(ns, "other-dataset", other)
		otherPoints := benchmarkSpec("other-points", ns).Obj()
		otherPoints.Status = kvv1.KVBenchmarkStatus{Phase: kvv1.PhaseSucceeded, Runs: []kvv1.RunStatus{{
			Name: "pebble", Engine: kvv1.EnginePebble, Phase: kvv1.RunSucceeded, Results: []kvv1.PhaseSummary{phase("fillrandom", 1, 1000, 10)}}}}
		savedBaseline(ns, "other-points", otherPoints)
		Expect(k8s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "garbage", Namespace: ns},
			Data: map[string]string{"benchmark.yml": "x"}})).To(Succeed())

		for _, c := range []struct {
			name    string
			ref     kvv1.BaselineRef
			reason  string
			message string
		}{
			{"vs-dataset", kvv1.BaselineRef{ConfigMap: "other-dataset"}, ReasonBaselineMismatch,
				"baseline configmap/other-dataset is not comparable with this benchmark (baseline vs this): dataset.size: 128Mi vs 64Mi"},
			{"vs-points", kvv1.BaselineRef{ConfigMap: "other-points"}, ReasonBaselineMismatch,
				"baseline configmap/other-points has no point in common with this benchmark (engine, workload, threads): baseline pebble fillrandom threads=1; this pebble readrandom threads=1"},
			{"vs-missing", kvv1.BaselineRef{Name: "nope"}, ReasonBaselineNotFound,
				"baseline kvbenchmark/nope: KVBenchmark nope not found in namespace " + ns},
			{"vs-garbage", kvv1.BaselineRef{ConfigMap: "garbage"}, ReasonBaselineInvalid,
				"baseline configmap/garbage: ConfigMap garbage: no key benchmark.yaml (create it with: kubectl create configmap garbage --from-file=benchmark.yaml=saved/NAME.yaml)"},
		} {
			cur := benchmarkSpec(c.name, ns).EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.Baseline = &c.ref }).Obj()
			Expect(k8s.Create(ctx, cur)).To(Succeed())
			finishRun(ns, c.name+"-pebble", kvv1.EnginePebble, repeats(100000, 10))
			got := eventuallyRegressed(key(cur), metav1.ConditionUnknown, c.reason)
			Expect(meta.FindStatusCondition(got.Status.Conditions, kvv1.ConditionRegressed).Message).To(Equal(c.message), c.name)
			Expect(got.Status.Baseline.Error).To(Equal(c.message), c.name)
			Expect(got.Status.Baseline.Changes).To(BeEmpty())
			Eventually(func() []string {
				var reasons []string
				for _, e := range eventsFor(ns, c.name) {
					reasons = append(reasons, e.Reason)
				}
				return reasons
			}, timeout, interval).Should(ContainElement(EventBaselineUnusable), c.name)
		}
	})
})
