package kvbenchmark

import (
	"encoding/json"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/archive"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

// hostileLog is what issue 18's hostile runner writes: 10 MiB of tiny phase lines, then a ~31 MiB
// result line whose first phase is a pulse with duplicate round numbers, values of 1e308 and an
// overlong workload name, followed by 10.8 million phases of "{}".
func hostileLog() string {
	var b strings.Builder
	for b.Len() < 10<<20 {
		b.WriteString(kvv1.ResultPhaseLogPrefix + `{"workload":"x","threads":1}` + "\n")
	}
	pulse := kvv1.PhaseResult{PhaseSummary: kvv1.PhaseSummary{Workload: "pulse", Threads: 1, Ops: 10, Seconds: 1, OpsPerSec: 1e308, MicrosPerOp: 1e308,
		Pulse: &kvv1.PulseSummary{Rounds: 2, MeanRoundSeconds: 1e308, MaxRoundSeconds: 1e308}},
		PulseRounds: []kvv1.PulseRound{{Round: 1, TotalSeconds: 1}, {Round: 1, TotalSeconds: 2}}}
	long := kvv1.PhaseResult{PhaseSummary: kvv1.PhaseSummary{Index: 1, Workload: strings.Repeat("w", 5000) + `"{}\`, Threads: 1, OpsPerSec: 1,
		Operations: []kvv1.OperationSummary{{Name: "read", OpsPerSec: 1}, {Name: "read", OpsPerSec: 2}, {Name: strings.Repeat("o", 500), OpsPerSec: 3}}}}
	head, _ := json.Marshal([]kvv1.PhaseResult{pulse, long})
	b.WriteString(kvv1.ResultLogPrefix + `{"schemaVersion":"` + kvv1.ResultSchemaVersion + `","engine":"rocksdb","phases":` +
		strings.TrimSuffix(string(head), "]") + "," + strings.Repeat("{},", 31<<20/3) + "{}]}\n")
	return b.String()
}

// Issue 18: a hostile runner took the operator down, and again after every restart. Now the
// hostile run fails with what the limits left out, the operator stays up across a restart, a
// benchmark alongside finishes, and the metrics gather.
var _ = Describe("a hostile runner", func() {
	It("fails its own run with the limits it broke, and no other benchmark notices, across an operator restart", func() {
		op := startOperator(operatorOpts{config: Config{LogRefresh: 200 * time.Millisecond}})
		ns := newNamespace()
		deleteBenchmarksAfter(ns)
		hostile := w.MakeKVBenchmark("hostile", ns).EngineNames(kvv1.EngineRocksDB).Obj()
		calm := w.MakeKVBenchmark("calm", ns).EngineNames(kvv1.EngineRocksDB).Obj()
		Expect(k8s.Create(ctx, hostile)).To(Succeed())
		Expect(k8s.Create(ctx, calm)).To(Succeed())
		hjob, cjob := eventuallyJob(ns, "hostile-rocksdb"), eventuallyJob(ns, "calm-rocksdb")
		startJob(hjob, t0)
		startJob(cjob, t0)
		hpod, cpod := makePod(hjob, "node-a"), makePod(cjob, "node-b")
		log := hostileLog()
		op.logs.set(hpod, log)
		setPodStatus(hpod, runningStatus(t0))

		By("while it runs, its phase lines are read as summaries, at most the limit of them")
		got := eventuallyRun(key(hostile), "rocksdb", func(r kvv1.RunStatus) bool { return r.Phase == kvv1.RunRunning && len(r.Results) > 0 })
		Expect(len(got.Status.Runs[0].Results) + int(got.Status.Runs[0].Truncated)).To(BeNumerically("<=", kvv1.DefaultResultLimits.Phases))
		// Status keeps what the plan makes (at least minStatusPhases); the rest are counted. Before,
		// the 10,000 filled the status budget: a 1 MiB status carried by etcd, every watcher and
		// each of the operator's passes.
		keep := statusPhases(plannedConfig(hostile))
		Expect(got.Status.Runs[0].Results).To(HaveLen(keep))
		Expect(statusBytes(GinkgoT(), &got.Status)).To(BeNumerically("<", 64<<10))

		By("the operator restarts while the hostile pod ends; the new one reads its whole log")
		op.Stop()
		op = startOperator(operatorOpts{config: Config{LogRefresh: 200 * time.Millisecond}})
		defer op.Stop()
		op.logs.set(hpod, log)
		op.logs.set(cpod, runnerLog(fullResult(kvv1.EngineRocksDB, 1)))
		setPodStatus(hpod, terminatedStatus(corev1.PodSucceeded, t0, t0.Add(time.Minute), 0, "Completed", summary(kvv1.EngineRocksDB, "", phase("readrandom", 1, 1000, 10))))
		setJobStatus(hjob, true, "", "", t0, t0.Add(time.Minute))
		setPodStatus(cpod, terminatedStatus(corev1.PodSucceeded, t0, t0.Add(time.Minute), 0, "Completed", summary(kvv1.EngineRocksDB, "", phase("readrandom", 1, 100000, 10))))
		setJobStatus(cjob, true, "", "", t0, t0.Add(time.Minute))

		Expect(eventuallyPhase(key(calm), kvv1.PhaseSucceeded).Status.Runs[0].Results).NotTo(BeEmpty())
		got = eventuallyPhase(key(hostile), kvv1.PhaseFailed)
		r := got.Status.Runs[0]
		Expect(r.Reason).To(Equal(kvv1.ReasonResultOverLimits))
		Expect(r.Message).To(And(ContainSubstring("phase line(s) over the limit of 10000"), ContainSubstring("phases item(s) over the limit of 10000")))
		// Events follow the status write that explains them, through the recorder's own goroutine.
		Eventually(func() []corev1.Event { return eventsFor(ns, "hostile") }).Should(
			ContainElement(And(HaveField("Reason", EventRunFailed), HaveField("Message", ContainSubstring(kvv1.ReasonResultOverLimits)))))

		By("what fit is archived, saying what was left out; status keeps the plan's share and counts the rest")
		got = eventuallyRun(key(hostile), "rocksdb", func(r kvv1.RunStatus) bool { return r.FullResult != nil })
		Expect(got.Status.Runs[0].Results).To(HaveLen(keep))
		Expect(len(got.Status.Runs[0].Results) + int(got.Status.Runs[0].Truncated)).To(Equal(kvv1.DefaultResultLimits.Phases))
		Expect(statusBytes(GinkgoT(), &got.Status)).To(BeNumerically("<", 64<<10))
		fr := got.Status.Runs[0].FullResult
		Expect(fr.Error).To(BeEmpty())
		Expect(fr.Dropped).To(ContainElement(archive.DroppedOverLimits))
		var cm corev1.ConfigMap
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: fr.ConfigMap}, &cm)).To(Succeed())
		res, err := archive.FromConfigMap(&cm, got, fr.SHA256)
		Expect(err).NotTo(HaveOccurred())
		// The first 10,000 phases, less the pulse phase and its 1e308 (refused: issue 29).
		Expect(res.Phases).To(HaveLen(kvv1.DefaultResultLimits.Phases - 1))
		Expect(res.Error).To(And(ContainSubstring("over the operator's limits"), ContainSubstring(`numbers no engine reaches (the first: phase 0 ("pulse" threads=1)`)))
		Expect(len(res.Phases[0].Workload)).To(Equal(kvv1.DefaultResultLimits.String))

		By("the metrics gather, with the hostile benchmark's valid series")
		Eventually(func(g Gomega) {
			families, err := op.registry.Gather()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(families).NotTo(BeEmpty())
		}, timeout, interval).Should(Succeed())
	})
})

// Issue 29: the hostile e2e runner's run ended Succeeded on a busy machine. The kubelet rotated
// its log (containerLogMaxSize) after the result line; the final read saw only the current file,
// with no result line and no flood, and the run was decided from the summary. Here the log source
// rotates on cue, deterministically.
var _ = Describe("a runner log the kubelet rotated", func() {
	flood := strings.Repeat(kvv1.ResultPhaseLogPrefix+`{"workload":"x","threads":1,"opsPerSec":1e308}`+"\n", kvv1.DefaultResultLimits.Phases+5)
	valid := summary(kvv1.EngineRocksDB, "", phase("readrandom", 1, 1000, 10))

	It("keeps the over-limits verdict a read found before the rotation, across an operator restart", func() {
		op := startOperator(operatorOpts{config: Config{LogRefresh: 200 * time.Millisecond}})
		ns := newNamespace()
		deleteBenchmarksAfter(ns)
		b := w.MakeKVBenchmark("rotated", ns).EngineNames(kvv1.EngineRocksDB).Obj()
		Expect(k8s.Create(ctx, b)).To(Succeed())
		job := eventuallyJob(ns, "rotated-rocksdb")
		startJob(job, t0)
		pod := makePod(job, "node-a")
		op.logs.set(pod, flood)
		setPodStatus(pod, runningStatus(t0))

		By("a read while it runs finds the flood; status records it")
		got := eventuallyRun(key(b), "rocksdb", func(r kvv1.RunStatus) bool { return r.Reason == kvv1.ReasonResultOverLimits })
		Expect(got.Status.Runs[0].Phase).To(Equal(kvv1.RunRunning))
		Expect(got.Status.Runs[0].Message).To(ContainSubstring("numbers no engine reaches"))

		By("the operator restarts; the log is rotated; the runner writes a valid summary and exits 0")
		op.Stop()
		op = startOperator(operatorOpts{config: Config{LogRefresh: 200 * time.Millisecond}})
		defer op.Stop()
		op.logs.set(pod, "") // the current file, after a rotation that followed the result line
		setPodStatus(pod, terminatedStatus(corev1.PodSucceeded, t0, t0.Add(time.Minute), 0, "Completed", valid))
		setJobStatus(job, true, "", "", t0, t0.Add(time.Minute))

		got = eventuallyPhase(key(b), kvv1.PhaseFailed)
		Expect(got.Status.Runs[0].Reason).To(Equal(kvv1.ReasonResultOverLimits))
		Expect(got.Status.Runs[0].Message).To(ContainSubstring("over the limit of 10000"))
	})

	It("fails a run whose final read is not the whole log: ResultIncomplete, never Succeeded", func() {
		op := startOperator(operatorOpts{})
		defer op.Stop()
		ns := newNamespace()
		deleteBenchmarksAfter(ns)
		b := w.MakeKVBenchmark("cut", ns).EngineNames(kvv1.EngineRocksDB).Obj()
		Expect(k8s.Create(ctx, b)).To(Succeed())
		job := eventuallyJob(ns, "cut-rocksdb")
		startJob(job, t0)
		pod := makePod(job, "node-a")
		// No read while it ran; after the rotation the current file holds the last phase line only.
		op.logs.set(pod, "rocksdb stats\n"+kvv1.ResultPhaseLogPrefix+`{"index":0,"workload":"readrandom","threads":1,"ops":100000,"seconds":100,"opsPerSec":1000,"microsPerOp":1000}`+"\n")
		setPodStatus(pod, terminatedStatus(corev1.PodSucceeded, t0, t0.Add(time.Minute), 0, "Completed", valid))
		setJobStatus(job, true, "", "", t0, t0.Add(time.Minute))

		got := eventuallyPhase(key(b), kvv1.PhaseFailed)
		r := got.Status.Runs[0]
		Expect(r.Reason).To(Equal(kvv1.ReasonResultIncomplete))
		Expect(r.Message).To(And(ContainSubstring("no result line"), ContainSubstring("containerLogMaxSize")))
		Expect(r.Results).To(HaveLen(1), "the phases known are kept")
		Eventually(func() []corev1.Event { return eventsFor(ns, "cut") }).Should(
			ContainElement(And(HaveField("Reason", EventRunFailed), HaveField("Message", ContainSubstring(kvv1.ReasonResultIncomplete)))))
	})
})
