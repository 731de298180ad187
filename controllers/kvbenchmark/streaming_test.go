package kvbenchmark

import (
	"encoding/json"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/archive"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

// streamedLog is a runner log with its load and phases as the runner streams them, no result line.
func streamedLog(phases ...kvv1.PhaseSummary) string {
	out := "Engine:     rocksdb 7.8.3\n"
	line := func(p kvv1.PhaseResult) {
		b, err := json.Marshal(p)
		Expect(err).NotTo(HaveOccurred())
		out += kvv1.ResultPhaseLogPrefix + string(b) + "\n"
	}
	line(kvv1.PhaseResult{PhaseSummary: kvv1.PhaseSummary{Workload: "load", Threads: 1, Ops: 1000, Seconds: 1, OpsPerSec: 1000, MicrosPerOp: 1000}})
	for i, p := range phases {
		p.Index = int32(i)
		line(kvv1.PhaseResult{PhaseSummary: p})
	}
	return out
}

var _ = Describe("phases the runner streams", func() {
	var op *operator
	AfterEach(func() {
		if op != nil {
			op.Stop()
			op = nil
		}
		var jobs batchv1.JobList
		Expect(k8s.List(ctx, &jobs)).To(Succeed())
		for i := range jobs.Items {
			_ = k8s.Delete(ctx, &jobs.Items[i])
		}
	})

	It("are in status while the run goes, and survive an OOM kill that leaves no summary, into status, the archive and metrics", func() {
		op = startOperator(operatorOpts{config: Config{LogRefresh: 200 * time.Millisecond}})
		ns := newNamespace()
		deleteBenchmarksAfter(ns)
		b := w.MakeKVBenchmark("stream", ns).Threads(1, 2, 4).Obj()
		Expect(k8s.Create(ctx, b)).To(Succeed())
		k := key(b)
		job := eventuallyJob(ns, "stream-rocksdb")
		startJob(job, t0)
		pod := makePod(job, "node-a")
		op.logs.set(pod, streamedLog(phase("readrandom", 1, 1000, 10)))
		setPodStatus(pod, runningStatus(t0))

		By("running: the finished phase is listed and counted")
		got := eventuallyRun(k, "rocksdb", func(r kvv1.RunStatus) bool { return r.Phase == kvv1.RunRunning && len(r.Results) == 1 })
		Expect(got.Status.PhaseProgress).To(Equal("1/3"))
		Expect(got.Status.Runs[0].Load).NotTo(BeNil())
		op.logs.set(pod, streamedLog(phase("readrandom", 1, 1000, 10), phase("readrandom", 2, 2000, 12)))
		got = eventuallyRun(k, "rocksdb", func(r kvv1.RunStatus) bool { return len(r.Results) == 2 })
		Expect(got.Status.PhaseProgress).To(Equal("2/3"))

		By("OOM-killed in the third phase, without a termination message")
		setPodStatus(pod, terminatedStatus(corev1.PodFailed, t0, t0.Add(time.Minute), 137, "OOMKilled", ""))
		setJobStatus(job, false, "BackoffLimitExceeded", "Job has reached the specified backoff limit", t0, t0.Add(time.Minute))
		got = eventuallyPhase(k, kvv1.PhaseFailed)
		r := got.Status.Runs[0]
		Expect(r.Reason).To(Equal(kvv1.ReasonOOMKilled))
		Expect(r.Results).To(HaveLen(2))
		Expect(r.Results[1].OpsPerSec).To(Equal(2000.0))

		By("the archive is assembled from the phase lines and the metrics equal status")
		got = eventuallyRun(k, "rocksdb", func(r kvv1.RunStatus) bool { return r.FullResult != nil })
		Expect(got.Status.Runs[0].FullResult.ConfigMap).To(Equal("stream-rocksdb-result"))
		var cm corev1.ConfigMap
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "stream-rocksdb-result"}, &cm)).To(Succeed())
		full, err := archive.FromConfigMap(&cm, got, got.Status.Runs[0].FullResult.SHA256)
		Expect(err).NotTo(HaveOccurred())
		Expect(full.Phases).To(HaveLen(2))
		Expect(full.Error).To(ContainSubstring("without its result line"))
		Eventually(func(g Gomega) { expectMetricsMatchStatus(op.registry, getBench(k)) }, timeout, interval).Should(Succeed())
	})

	It("keep the concurrency limit exact with several reconcile workers", func() {
		op = startOperator(operatorOpts{config: Config{MaxConcurrentRuns: 1, MaxConcurrentReconciles: 4}})
		ns := newNamespace()
		deleteBenchmarksAfter(ns)
		for _, name := range []string{"w1", "w2", "w3", "w4", "w5", "w6"} {
			Expect(k8s.Create(ctx, w.MakeKVBenchmark(name, ns).Obj())).To(Succeed())
		}
		Eventually(func() []batchv1.Job { return jobsIn(ns) }, timeout, interval).Should(HaveLen(1))
		Consistently(func() []batchv1.Job { return jobsIn(ns) }, 3*time.Second, 50*time.Millisecond).Should(HaveLen(1))
	})
})

// deleteBenchmarksAfter deletes the test's benchmarks when it ends, so that the operators of later
// tests (which see every namespace) do not run them.
func deleteBenchmarksAfter(ns string) {
	DeferCleanup(func() {
		Expect(k8s.DeleteAllOf(ctx, &kvv1.KVBenchmark{}, client.InNamespace(ns))).To(Succeed())
	})
}
