package kvbenchmark

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

// Issue 34: with repeat > 1 the RESULT and OPS/S columns showed the last iteration (182,944 ops/s
// where the point's median was 146,036). The headline of a repeated point is its median.
var _ = Describe("the headline of a repeated point", func() {
	It("is the median of its repeats, labelled so", func() {
		op := startOperator(operatorOpts{})
		defer op.Stop()
		ns := newNamespace()
		deleteBenchmarksAfter(ns)
		b := w.MakeKVBenchmark("median", ns).EngineNames(kvv1.EngineRocksDB).EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.Repeat = 3 }).Obj()
		Expect(k8s.Create(ctx, b)).To(Succeed())
		job := eventuallyJob(ns, "median-rocksdb")
		startJob(job, t0)
		pod := makePod(job, "node-a")
		var repeats []kvv1.PhaseSummary
		for i, ops := range []float64{146036, 281950, 120000} {
			p := phase("readrandom", 1, ops, 10+float64(i))
			p.Index, p.Iteration = int32(i), int32(i)
			repeats = append(repeats, p)
		}
		setPodStatus(pod, terminatedStatus(corev1.PodSucceeded, t0, t0.Add(time.Minute), 0, "Completed", summary(kvv1.EngineRocksDB, "", repeats...)))
		setJobStatus(job, true, "", "", t0, t0.Add(time.Minute))
		got := eventuallyPhase(key(b), kvv1.PhaseSucceeded)
		Expect(got.Status.Runs[0].Points).To(HaveLen(1))
		median := got.Status.Runs[0].Points[0].OpsPerSec.Median
		Expect(median).To(Equal(146036.0))
		Expect(got.Status.Headline.OpsPerSec).To(Equal(int64(median)), "the last iteration was 120000")
		Expect(got.Status.Headline.Label).To(Equal("rocksdb readrandom threads=1: 146036 ops/s (median of 3)"))
		Expect(*got.Status.Headline.P99Micros).To(Equal(got.Status.Runs[0].Points[0].P99Micros.Median))
	})
})
