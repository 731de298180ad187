package kvbenchmark

import (
	"encoding/json"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/archive"
	"github.com/kvbench/kvbench-operator/controllers/plan"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// series returns the gathered series of one family as "label=value,..." -> value.
func series(reg *prometheus.Registry, family string) map[string]float64 {
	mfs, err := reg.Gather()
	Expect(err).NotTo(HaveOccurred())
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != family {
			continue
		}
		for _, m := range mf.GetMetric() {
			out[labelString(m.GetLabel())] = value(m)
		}
	}
	return out
}

func labelString(ls []*dto.LabelPair) string {
	s := ""
	for _, l := range ls { // client_golang sorts label pairs by name
		s += l.GetName() + "=" + l.GetValue() + ","
	}
	return s
}

func value(m *dto.Metric) float64 {
	if m.GetGauge() != nil {
		return m.GetGauge().GetValue()
	}
	return m.GetCounter().GetValue()
}

// expectMetricsMatchStatus checks that every result in status is exported with its value, and nothing else.
func expectMetricsMatchStatus(reg *prometheus.Registry, b *kvv1.KVBenchmark) {
	wantOps, wantP99 := map[string]float64{}, map[string]float64{}
	dataset := strconv.FormatInt(plan.DatasetBytes(b.Spec.Dataset), 10)
	for _, r := range b.Status.Runs {
		phases := r.Results
		labels := make([]string, len(phases))
		for i, p := range phases {
			labels[i] = strconv.Itoa(int(p.Index))
		}
		if r.Load != nil {
			phases = append(append([]kvv1.PhaseSummary{}, phases...), *r.Load)
			labels = append(labels, "load")
		}
		for i, p := range phases {
			l := "benchmark=" + b.Name + ",dataset_bytes=" + dataset + ",engine=" + string(r.Engine) + ",iteration=" + strconv.Itoa(int(p.Iteration)) +
				",medium=" + string(b.Spec.Storage.Medium) + ",namespace=" + b.Namespace + ",node=,phase=" + labels[i] + ","
			wantOps[l+"threads="+strconv.Itoa(int(p.Threads))+",workload="+p.Workload+","] = p.OpsPerSec
			if p.LatencyMicros != nil {
				wantP99[l+"quantile=0.99,threads="+strconv.Itoa(int(p.Threads))+",workload="+p.Workload+","] = p.LatencyMicros.P99 / 1e6
			}
		}
	}
	Expect(onlyBenchmark(series(reg, "kvbench_result_ops_per_second"), b)).To(Equal(wantOps))
	p99 := map[string]float64{}
	for k, v := range onlyBenchmark(series(reg, "kvbench_result_latency_seconds"), b) {
		if containsLabel(k, "quantile=0.99") {
			p99[k] = v
		}
	}
	Expect(p99).To(Equal(wantP99))
	phases := onlyBenchmark(series(reg, "kvbench_benchmark_phase"), b)
	Expect(phases["benchmark="+b.Name+",namespace="+b.Namespace+",phase="+string(b.Status.Phase)+","]).To(Equal(1.0))
}

func onlyBenchmark(m map[string]float64, b *kvv1.KVBenchmark) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		if containsLabel(k, "benchmark="+b.Name) && containsLabel(k, "namespace="+b.Namespace) {
			out[k] = v
		}
	}
	return out
}

func containsLabel(s, l string) bool {
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != ',' {
			i++
		}
		if s[:i] == l {
			return true
		}
		if i == len(s) {
			break
		}
		s = s[i+1:]
	}
	return false
}

var _ = Describe("KVBenchmark controller", func() {
	var op *operator
	AfterEach(func() {
		if op != nil {
			op.Stop()
			op = nil
		}
		deleteRunnerJobs()
	})

	It("runs one Job per engine, copies results into status and metrics, and cleans up after the TTL", func() {
		op = startOperator(operatorOpts{})
		ns := newNamespace()
		b := w.MakeKVBenchmark("happy", ns).EngineNames(kvv1.EngineRocksDB, kvv1.EnginePebble).EnginePlacement(kvv1.EnginesParallel).Obj()
		Expect(k8s.Create(ctx, b)).To(Succeed())
		k := key(b)

		rocks, pebble := eventuallyJob(ns, "happy-rocksdb"), eventuallyJob(ns, "happy-pebble")
		Expect(metav1.IsControlledBy(rocks, getBench(k))).To(BeTrue())
		Expect(rocks.Spec.BackoffLimit).To(Equal(ptrTo[int32](0)))
		eventuallyPhase(k, kvv1.PhasePending)

		// rocksdb starts.
		startJob(rocks, t0)
		rp := makePod(rocks, "node-a")
		setPodStatus(rp, runningStatus(t0.Add(time.Second)))
		got := eventuallyRun(k, "rocksdb", func(r kvv1.RunStatus) bool { return r.Phase == kvv1.RunRunning })
		Expect(got.Status.Phase).To(Equal(kvv1.PhaseRunning))
		run := got.Status.Runs[0]
		Expect(run.NodeName).To(Equal("node-a"))
		Expect(run.StartTime.Time).To(BeTemporally("==", t0.Add(time.Second)))
		Expect(meta.IsStatusConditionTrue(got.Status.Conditions, kvv1.ConditionRunning)).To(BeTrue())

		// Both finish with results in their termination messages and their logs (pebble's is the one
		// a runner writes for its summary: summaryLog).
		rocksPhases := []kvv1.PhaseSummary{phase("readrandom", 1, 130339, 12.5), phase("readrandom", 4, 401000, 20)}
		rocksFull := fullResultOf(kvv1.EngineRocksDB, 3, rocksPhases...)
		op.logs.set(rp, runnerLog(rocksFull))
		setPodStatus(rp, terminatedStatus(corev1.PodSucceeded, t0.Add(time.Second), t0.Add(time.Hour), 0, "Completed",
			summary(kvv1.EngineRocksDB, "", rocksPhases...)))
		setJobStatus(rocks, true, "", "", t0, t0.Add(time.Hour))
		startJob(pebble, t0)
		pp := makePod(pebble, "node-b")
		setPodStatus(pp, terminatedStatus(corev1.PodSucceeded, t0.Add(time.Second), t0.Add(2*time.Hour), 0, "Completed",
			summary(kvv1.EnginePebble, "", phase("readrandom", 1, 110000, 15), phase("readrandom", 4, 350000, 25.5))))
		setJobStatus(pebble, true, "", "", t0, t0.Add(2*time.Hour))

		got = eventuallyPhase(k, kvv1.PhaseSucceeded)
		Expect(got.Status.Runs).To(HaveLen(2))
		for _, r := range got.Status.Runs {
			Expect(r.Phase).To(Equal(kvv1.RunSucceeded))
			Expect(r.Results).To(HaveLen(2))
			Expect(r.Load).NotTo(BeNil())
			Expect(r.EngineVersion).To(Equal(string(r.Engine) + " 1.0"))
		}
		Expect(got.Status.Runs[0].Results[0].OpsPerSec).To(Equal(130339.0))
		Expect(got.Status.Runs[0].Results[0].LatencyMicros.P99).To(Equal(12.5))
		Expect(got.Status.Headline).To(Equal(&kvv1.Headline{Engine: kvv1.EnginePebble, Workload: "readrandom", Threads: 4, OpsPerSec: 350000, P99Micros: ptrTo(25.5),
			Label: "pebble readrandom threads=4: 350000 ops/s"}))
		Expect(got.Status.PhaseProgress).To(Equal("4/4"))
		Expect(got.Status.Reason).To(BeEmpty())
		Expect(got.Status.Progress).To(Equal("2/2"))
		Expect(got.Status.Engines).To(Equal("rocksdb,pebble"))
		Expect(got.Status.CompletionTime.Time).To(BeTemporally("==", t0.Add(2*time.Hour)))
		for _, c := range got.Status.Conditions {
			Expect(c.ObservedGeneration).To(Equal(got.Generation), "condition %s", c.Type)
		}
		Expect(meta.IsStatusConditionTrue(got.Status.Conditions, kvv1.ConditionSucceeded)).To(BeTrue())
		Expect(meta.IsStatusConditionFalse(got.Status.Conditions, kvv1.ConditionFailed)).To(BeTrue())
		Expect(meta.IsStatusConditionFalse(got.Status.Conditions, kvv1.ConditionRunning)).To(BeTrue())

		By("the full results are archived in ConfigMaps owned by the benchmark")
		eventuallyRun(k, "rocksdb", func(r kvv1.RunStatus) bool { return r.FullResult != nil })
		got = eventuallyRun(k, "pebble", func(r kvv1.RunStatus) bool { return r.FullResult != nil })
		Expect(got.Status.Runs[0].FullResult.ConfigMap).To(Equal("happy-rocksdb-result"))
		Expect(got.Status.Runs[0].FullResult.Error).To(BeEmpty())
		var cm corev1.ConfigMap
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "happy-rocksdb-result"}, &cm)).To(Succeed())
		Expect(metav1.IsControlledBy(&cm, got)).To(BeTrue())
		Expect(got.Status.Runs[0].FullResult.SHA256).To(Equal(archive.Digest(&cm)), "status records the stored bytes' sha256")
		archived, err := archive.FromConfigMap(&cm, got, got.Status.Runs[0].FullResult.SHA256)
		Expect(err).NotTo(HaveOccurred())
		Expect(apiequality.Semantic.DeepEqual(archived, rocksFull)).To(BeTrue(), "the archive holds the runner's full result")
		Expect(got.Status.Runs[1].FullResult.ConfigMap).To(Equal("happy-pebble-result"))

		// Metrics equal status.
		Eventually(func(g Gomega) { expectMetricsMatchStatus(op.registry, getBench(k)) }, timeout, interval).Should(Succeed())
		Expect(onlyBenchmark(series(op.registry, "kvbench_result_ops_per_second"), got)).To(HaveLen(6)) // 2 runs x (2 phases + load)
		Expect(series(op.registry, "kvbench_run_jobs_created_total")).To(HaveLen(2))

		// Events for the transitions.
		Eventually(func(g Gomega) {
			reasons := map[string]bool{}
			for _, e := range eventsFor(ns, "happy") {
				reasons[e.Reason] = true
			}
			g.Expect(reasons).To(HaveKey(EventRunCreated))
			g.Expect(reasons).To(HaveKey(EventRunStarted))
			g.Expect(reasons).To(HaveKey(EventRunSucceeded))
			g.Expect(reasons).To(HaveKey(EventPhase))
		}, timeout, interval).Should(Succeed())

		// Jobs stay until the TTL (600s after each run finished) ...
		op.clock.SetTime(t0.Add(2*time.Hour + 5*time.Minute))
		poke(k)
		Eventually(func() []batchv1.Job { return jobsIn(ns) }, timeout, interval).Should(HaveLen(1)) // rocksdb finished at 1h
		op.clock.SetTime(t0.Add(2*time.Hour + 11*time.Minute))
		poke(k)
		Eventually(func() []batchv1.Job { return jobsIn(ns) }, timeout, interval).Should(BeEmpty())
		// ... and the results outlive them.
		got = getBench(k)
		Expect(got.Status.Phase).To(Equal(kvv1.PhaseSucceeded))
		Expect(got.Status.Runs[1].Results).To(HaveLen(2))
		Expect(jobsIn(ns)).To(BeEmpty(), "a finished run's Job must not be recreated")

		// Deleting the benchmark drops its series.
		Expect(k8s.Delete(ctx, got)).To(Succeed())
		Eventually(func() map[string]float64 {
			return onlyBenchmark(series(op.registry, "kvbench_benchmark_phase"), got)
		}, timeout, interval).Should(BeEmpty())
		Expect(onlyBenchmark(series(op.registry, "kvbench_result_ops_per_second"), got)).To(BeEmpty())
		Expect(onlyBenchmark(series(op.registry, "kvbench_run_jobs_created_total"), got)).To(BeEmpty())
	})

	It("decides and archives a run on its whole log, retrying a log it cannot read yet, before cleanup deletes the pod", func() {
		op = startOperator(operatorOpts{})
		ns := newNamespace()
		b := w.MakeKVBenchmark("archive", ns).EngineNames(kvv1.EngineRocksDB, kvv1.EngineLevelDB).EnginePlacement(kvv1.EnginesParallel).
			EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.Cleanup.TTLSecondsAfterFinished = ptrTo[int32](0) }).Obj()
		Expect(k8s.Create(ctx, b)).To(Succeed())
		k := key(b)
		for _, name := range []string{"archive-rocksdb", "archive-leveldb"} {
			job := eventuallyJob(ns, name)
			startJob(job, t0)
			pod := makePod(job, "node-a")
			engine := kvv1.EngineRocksDB
			if name == "archive-leveldb" {
				engine = kvv1.EngineLevelDB
			}
			op.logs.set(pod, unreadableLog)
			setPodStatus(pod, terminatedStatus(corev1.PodSucceeded, t0, t0.Add(time.Minute), 0, "Completed",
				summary(engine, "", phase("readrandom", 1, 100000, 10))))
			setJobStatus(job, true, "", "", t0, t0.Add(time.Minute))
		}
		op.clock.SetTime(t0.Add(time.Minute + time.Second)) // past the TTL of both runs
		poke(k)
		By("while their logs cannot be read, the runs are not decided (issue 29) and the Jobs stay")
		Consistently(func() []batchv1.Job { return jobsIn(ns) }, 2*time.Second, interval).Should(HaveLen(2))
		got := getBench(k)
		Expect(got.Status.Phase).To(Equal(kvv1.PhaseRunning), "%+v", got.Status.Runs)
		Expect(got.Status.Runs[0].Phase).To(Equal(kvv1.RunRunning))
		Expect(got.Status.Runs[0].FullResult).To(BeNil())

		By("the rocksdb log becomes readable: decided Succeeded, archived, then its Job is deleted")
		full := fullResult(kvv1.EngineRocksDB, 2)
		op.logs.set(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "archive-rocksdb-x1"}}, runnerLog(full))
		op.clock.SetTime(t0.Add(time.Minute + archiveRetry + time.Second))
		poke(k)
		got = eventuallyRun(k, "rocksdb", func(r kvv1.RunStatus) bool { return r.FullResult != nil })
		Expect(got.Status.Runs[0].Phase).To(Equal(kvv1.RunSucceeded))
		Expect(got.Status.Runs[0].FullResult.ConfigMap).To(Equal("archive-rocksdb-result"))
		Eventually(func() []string {
			var names []string
			for _, j := range jobsIn(ns) {
				names = append(names, j.Name)
			}
			return names
		}, timeout, interval).Should(Equal([]string{"archive-leveldb"}))

		By("the leveldb log never does: given up 5 minutes after the run ended, Failed ResultIncomplete with its phases, then its Job is deleted")
		op.clock.SetTime(t0.Add(time.Minute + archiveGiveUp + time.Second))
		poke(k)
		got = eventuallyRun(k, "leveldb", func(r kvv1.RunStatus) bool { return r.FullResult != nil })
		Expect(got.Status.Runs[1].FullResult.Error).To(ContainSubstring("log not available"))
		Eventually(func() []batchv1.Job { return jobsIn(ns) }, timeout, interval).Should(BeEmpty())
		got = eventuallyPhase(k, kvv1.PhaseFailed)
		Expect(got.Status.Runs[1].Reason).To(Equal(kvv1.ReasonResultIncomplete))
		Expect(got.Status.Runs[1].Message).To(ContainSubstring("its log could not be read"))
		Expect(got.Status.Runs[1].Results).To(HaveLen(1))
		Expect(got.Status.Runs[0].Phase).To(Equal(kvv1.RunSucceeded))
	})

	Describe("a failed run carries its reason and the benchmark ends Failed, never Succeeded", func() {
		type failure struct {
			simulate    func(job *batchv1.Job)
			reason      string
			message     string
			keptResults int
			step        time.Duration // fake clock step before a second look
		}
		DescribeTable("failure reasons",
			func(f failure) {
				op = startOperator(operatorOpts{config: Config{UnschedulableTimeout: 5 * time.Minute}})
				ns := newNamespace()
				// Not exclusive: the scheduler places it (an exclusive run on a node the operator chose
				// and the scheduler refuses is moved to another node: slots_test.go).
				b := w.MakeKVBenchmark("fail", ns).Exclusive(false).Obj()
				Expect(k8s.Create(ctx, b)).To(Succeed())
				k := key(b)
				job := eventuallyJob(ns, "fail-rocksdb")
				f.simulate(job)
				if f.step > 0 {
					op.clock.Step(f.step)
					poke(k)
				}
				got := eventuallyPhase(k, kvv1.PhaseFailed)
				r := got.Status.Runs[0]
				Expect(r.Phase).To(Equal(kvv1.RunFailed))
				Expect(r.Reason).To(Equal(f.reason))
				Expect(r.Message).To(ContainSubstring(f.message))
				Expect(r.Results).To(HaveLen(f.keptResults))
				Expect(r.CompletionTime).NotTo(BeNil())
				Expect(meta.IsStatusConditionTrue(got.Status.Conditions, kvv1.ConditionFailed)).To(BeTrue())
				Expect(meta.IsStatusConditionTrue(got.Status.Conditions, kvv1.ConditionSucceeded)).To(BeFalse())
				Expect(meta.FindStatusCondition(got.Status.Conditions, kvv1.ConditionFailed).Message).To(ContainSubstring(f.reason))
				Eventually(func(g Gomega) {
					var warned bool
					for _, e := range eventsFor(ns, "fail") {
						warned = warned || (e.Reason == EventRunFailed && e.Type == corev1.EventTypeWarning)
					}
					g.Expect(warned).To(BeTrue())
				}, timeout, interval).Should(Succeed())
				Eventually(func(g Gomega) { expectMetricsMatchStatus(op.registry, getBench(k)) }, timeout, interval).Should(Succeed())
			},
			Entry("OOMKilled", failure{
				simulate: func(job *batchv1.Job) {
					startJob(job, t0)
					pod := makePod(job, "node-a")
					setPodStatus(pod, terminatedStatus(corev1.PodFailed, t0, t0.Add(time.Minute), 137, "OOMKilled", ""))
					setJobStatus(job, false, "BackoffLimitExceeded", "Job has reached the specified backoff limit", t0, t0.Add(time.Minute))
				},
				reason: kvv1.ReasonOOMKilled, message: "memory limit",
			}),
			Entry("Evicted", failure{
				simulate: func(job *batchv1.Job) {
					startJob(job, t0)
					pod := makePod(job, "node-a")
					st := terminatedStatus(corev1.PodFailed, t0, t0.Add(time.Minute), 137, "Error", "")
					st.Reason, st.Message = "Evicted", "The node was low on resource: ephemeral-storage."
					setPodStatus(pod, st)
					setJobStatus(job, false, "BackoffLimitExceeded", "Job has reached the specified backoff limit", t0, t0.Add(time.Minute))
				},
				reason: kvv1.ReasonEvicted, message: "low on resource",
			}),
			Entry("DeadlineExceeded (the Job controller deleted the pod)", failure{
				simulate: func(job *batchv1.Job) {
					startJob(job, t0)
					setJobStatus(job, false, batchv1.JobReasonDeadlineExceeded, "Job was active longer than specified deadline", t0, t0.Add(24*time.Hour))
				},
				reason: kvv1.ReasonDeadlineExceeded, message: "longer than specified deadline",
			}),
			Entry("runner error text, completed phases kept", failure{
				simulate: func(job *batchv1.Job) {
					startJob(job, t0)
					pod := makePod(job, "node-a")
					setPodStatus(pod, terminatedStatus(corev1.PodFailed, t0, t0.Add(time.Minute), 1, "Error",
						summary(kvv1.EngineRocksDB, "readrandom at 4 threads: IO error: No space left on device", phase("readrandom", 1, 1000, 10))))
					setJobStatus(job, false, "BackoffLimitExceeded", "Job has reached the specified backoff limit", t0, t0.Add(time.Minute))
				},
				reason: kvv1.ReasonRunnerError, message: "No space left on device", keptResults: 1,
			}),
			Entry("runner crashed without a summary", failure{
				simulate: func(job *batchv1.Job) {
					startJob(job, t0)
					pod := makePod(job, "node-a")
					setPodStatus(pod, terminatedStatus(corev1.PodFailed, t0, t0.Add(time.Minute), 2, "Error", "panic: runtime error"))
					setJobStatus(job, false, "BackoffLimitExceeded", "Job has reached the specified backoff limit", t0, t0.Add(time.Minute))
				},
				reason: kvv1.ReasonRunnerError, message: "exited with code 2: panic: runtime error",
			}),
			Entry("exit 0 without a result is not a success", failure{
				simulate: func(job *batchv1.Job) {
					startJob(job, t0)
					pod := makePod(job, "node-a")
					setPodStatus(pod, terminatedStatus(corev1.PodSucceeded, t0, t0.Add(time.Minute), 0, "Completed", ""))
					setJobStatus(job, true, "", "", t0, t0.Add(time.Minute))
				},
				reason: kvv1.ReasonResultMissing, message: "no result summary",
			}),
			Entry("image missing", failure{
				simulate: func(job *batchv1.Job) {
					startJob(job, t0)
					pod := makePod(job, "node-a")
					setPodStatus(pod, corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
						Name: "runner", Image: "localhost/kvbench-runner:v0.1.0",
						State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImageNeverPull",
							Message: `Container image "localhost/kvbench-runner:v0.1.0" is not present with pull policy of Never`}}}}})
				},
				step:   3 * time.Minute, // past the start-failure window
				reason: kvv1.ReasonImagePull, message: "ErrImageNeverPull: Container image",
			}),
			Entry("unschedulable past the timeout, with the scheduler's message", failure{
				simulate: func(job *batchv1.Job) {
					pod := makePod(job, "")
					setPodStatus(pod, corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
						Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
						Message:            "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.",
						LastTransitionTime: metav1.Time{Time: t0}}}})
					// Before the timeout the run waits and says why, and so does the benchmark's condition.
					got := eventuallyRun(client.ObjectKey{Namespace: job.Namespace, Name: "fail"}, "rocksdb", func(r kvv1.RunStatus) bool {
						return r.Phase == kvv1.RunPending && r.Reason == kvv1.ReasonUnschedulable
					})
					Expect(got.Status.Phase).To(Equal(kvv1.PhasePending))
					running := meta.FindStatusCondition(got.Status.Conditions, kvv1.ConditionRunning)
					Expect(running).NotTo(BeNil())
					Expect(running.Status).To(Equal(metav1.ConditionFalse))
					Expect(running.Reason).To(Equal(kvv1.ReasonUnschedulable))
					Expect(running.Message).To(ContainSubstring("didn't match Pod's node affinity/selector"))
				},
				step:   6 * time.Minute,
				reason: kvv1.ReasonUnschedulable, message: "didn't match Pod's node affinity/selector",
			}),
		)

		It("stops the Job of a run that failed while its pod was still pending", func() {
			op = startOperator(operatorOpts{})
			ns := newNamespace()
			Expect(k8s.Create(ctx, w.MakeKVBenchmark("stop", ns).Obj())).To(Succeed())
			job := eventuallyJob(ns, "stop-rocksdb")
			startJob(job, t0)
			pod := makePod(job, "node-a")
			setPodStatus(pod, corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
				Name: "runner", Image: "x", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}}}})
			// Within the start-failure window the run waits and says why, with a Warning.
			k := client.ObjectKey{Namespace: ns, Name: "stop"}
			eventuallyRun(k, "rocksdb", func(r kvv1.RunStatus) bool {
				return r.Phase == kvv1.RunPending && r.Reason == kvv1.ReasonImagePull
			})
			Eventually(func(g Gomega) {
				var warned bool
				for _, e := range eventsFor(ns, "stop") {
					warned = warned || (e.Reason == EventRunWaiting && e.Type == corev1.EventTypeWarning)
				}
				g.Expect(warned).To(BeTrue())
			}, timeout, interval).Should(Succeed())
			op.clock.Step(3 * time.Minute)
			poke(k)
			eventuallyPhase(k, kvv1.PhaseFailed)
			Eventually(func() []batchv1.Job { return jobsIn(ns) }, timeout, interval).Should(BeEmpty())
		})

		It("fails a started run whose Job was deleted instead of running it again", func() {
			op = startOperator(operatorOpts{})
			ns := newNamespace()
			Expect(k8s.Create(ctx, w.MakeKVBenchmark("gone", ns).Obj())).To(Succeed())
			k := client.ObjectKey{Namespace: ns, Name: "gone"}
			job := eventuallyJob(ns, "gone-rocksdb")
			startJob(job, t0)
			pod := makePod(job, "node-a")
			setPodStatus(pod, runningStatus(t0))
			eventuallyRun(k, "rocksdb", func(r kvv1.RunStatus) bool { return r.Phase == kvv1.RunRunning })
			Expect(k8s.Delete(ctx, pod)).To(Succeed())
			Expect(k8s.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
			got := eventuallyPhase(k, kvv1.PhaseFailed)
			Expect(got.Status.Runs[0].Reason).To(Equal(kvv1.ReasonJobDeleted))
			Expect(jobsIn(ns)).To(BeEmpty())
		})
	})

	It("does not adopt a Job of the same name that belongs to something else", func() {
		op = startOperator(operatorOpts{})
		ns := newNamespace()
		foreign := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: "taken-rocksdb", Namespace: ns, Labels: map[string]string{
				"app.kubernetes.io/managed-by": "kvbench-operator", "kvbench.io/benchmark": "taken"}},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "img:v1"}}}}},
		}
		Expect(k8s.Create(ctx, foreign)).To(Succeed())
		Expect(k8s.Create(ctx, w.MakeKVBenchmark("taken", ns).Obj())).To(Succeed())
		got := eventuallyRun(client.ObjectKey{Namespace: ns, Name: "taken"}, "rocksdb", func(r kvv1.RunStatus) bool {
			return r.Phase == kvv1.RunPending && r.Reason == "JobNameTaken"
		})
		Expect(got.Status.Phase).To(Equal(kvv1.PhasePending))
		Expect(jobsIn(ns)).To(HaveLen(1))
	})

	It("ignores a leftover pod of an earlier namesake Job", func() {
		op = startOperator(operatorOpts{})
		ns := newNamespace()
		Expect(k8s.Create(ctx, w.MakeKVBenchmark("again", ns).Obj())).To(Succeed())
		k := client.ObjectKey{Namespace: ns, Name: "again"}
		job := eventuallyJob(ns, "again-rocksdb")
		eventuallyPhase(k, kvv1.PhasePending)
		stale := job.DeepCopy()
		stale.UID = "uid-of-the-deleted-job"
		setPodStatus(makePod(stale, "node-a"), terminatedStatus(corev1.PodFailed, t0, t0.Add(time.Minute), 137, "OOMKilled", ""))
		Consistently(func() kvv1.RunPhase { return getBench(k).Status.Runs[0].Phase }, 2*time.Second, interval).
			Should(Equal(kvv1.RunPending), "a pod of another Job decided the run")

		current := job.DeepCopy()
		current.Name = job.Name + "-new"
		setPodStatus(makePod(current, "node-b"), runningStatus(t0.Add(time.Hour)))
		got := eventuallyRun(k, "rocksdb", func(r kvv1.RunStatus) bool { return r.Phase == kvv1.RunRunning })
		Expect(got.Status.Runs[0].NodeName).To(Equal("node-b"))
	})

	It("lets a second manager take over mid-run without duplicating Jobs", func() {
		first := startOperator(operatorOpts{leaderElect: true})
		ns := newNamespace()
		b := w.MakeKVBenchmark("takeover", ns).EngineNames(kvv1.EngineRocksDB, kvv1.EngineLevelDB).EnginePlacement(kvv1.EnginesParallel).Obj()
		Expect(k8s.Create(ctx, b)).To(Succeed())
		k := key(b)
		rocks := eventuallyJob(ns, "takeover-rocksdb")
		eventuallyJob(ns, "takeover-leveldb")
		startJob(rocks, t0)
		pod := makePod(rocks, "node-a")
		setPodStatus(pod, runningStatus(t0))
		eventuallyRun(k, "rocksdb", func(r kvv1.RunStatus) bool { return r.Phase == kvv1.RunRunning })
		first.Stop()

		op = startOperator(operatorOpts{leaderElect: true})
		setPodStatus(pod, terminatedStatus(corev1.PodSucceeded, t0, t0.Add(time.Hour), 0, "Completed",
			summary(kvv1.EngineRocksDB, "", phase("readrandom", 1, 5000, 30))))
		setJobStatus(rocks, true, "", "", t0, t0.Add(time.Hour))
		got := eventuallyRun(k, "rocksdb", func(r kvv1.RunStatus) bool { return r.Phase == kvv1.RunSucceeded })
		Expect(got.Status.Runs[0].Results).To(HaveLen(1))
		Expect(jobsIn(ns)).To(HaveLen(2))
		// The new leader created nothing: it found both Jobs by their deterministic names.
		Expect(series(op.registry, "kvbench_run_jobs_created_total")).To(BeEmpty())
		Eventually(func(g Gomega) { expectMetricsMatchStatus(op.registry, getBench(k)) }, timeout, interval).Should(Succeed())
	})

	It("keeps active runner Jobs within the global concurrency limit", func() {
		op = startOperator(operatorOpts{config: Config{MaxConcurrentRuns: 1}})
		ns := newNamespace()
		b := w.MakeKVBenchmark("limited", ns).EngineNames(kvv1.EngineRocksDB, kvv1.EngineLevelDB, kvv1.EnginePebble).EnginePlacement(kvv1.EnginesParallel).Obj()
		Expect(k8s.Create(ctx, b)).To(Succeed())
		k := key(b)
		got := eventuallyRun(k, "leveldb", func(r kvv1.RunStatus) bool { return r.Reason == kvv1.ReasonWaitingForSlot })
		Expect(got.Status.Runs[2].Reason).To(Equal(kvv1.ReasonWaitingForSlot))
		Expect(jobsIn(ns)).To(HaveLen(1))

		for i, engine := range []string{"rocksdb", "leveldb", "pebble"} {
			job := eventuallyJob(ns, "limited-"+engine)
			Expect(jobsIn(ns)).To(HaveLen(i + 1))
			startJob(job, t0)
			pod := makePod(job, "node-a")
			setPodStatus(pod, terminatedStatus(corev1.PodSucceeded, t0, t0.Add(time.Minute), 0, "Completed",
				summary(kvv1.EngineName(engine), "", phase("readrandom", 1, 1000, 10))))
			setJobStatus(job, true, "", "", t0, t0.Add(time.Minute))
		}
		eventuallyPhase(k, kvv1.PhaseSucceeded)
	})

	It("starts a benchmark waiting for a slot as soon as another benchmark's run finishes", func() {
		// SlotRetry of an hour: only the Job watch can wake the waiting benchmark in time.
		op = startOperator(operatorOpts{config: Config{MaxConcurrentRuns: 1, SlotRetry: time.Hour}})
		ns := newNamespace()
		Expect(k8s.Create(ctx, w.MakeKVBenchmark("first", ns).Obj())).To(Succeed())
		first := eventuallyJob(ns, "first-rocksdb")
		Expect(k8s.Create(ctx, w.MakeKVBenchmark("second", ns).Obj())).To(Succeed())
		eventuallyRun(client.ObjectKey{Namespace: ns, Name: "second"}, "rocksdb", func(r kvv1.RunStatus) bool {
			return r.Reason == kvv1.ReasonWaitingForSlot
		})
		Expect(jobsIn(ns)).To(HaveLen(1))
		startJob(first, t0)
		pod := makePod(first, "node-a")
		setPodStatus(pod, terminatedStatus(corev1.PodSucceeded, t0, t0.Add(time.Minute), 0, "Completed",
			summary(kvv1.EngineRocksDB, "", phase("readrandom", 1, 1000, 10))))
		setJobStatus(first, true, "", "", t0, t0.Add(time.Minute))
		eventuallyJob(ns, "second-rocksdb")
	})

	It("reports a ConfigMap planted under the archive's name instead of trusting it", func() {
		op = startOperator(operatorOpts{})
		ns := newNamespace()
		b := w.MakeKVBenchmark("forged", ns).Obj()
		Expect(k8s.Create(ctx, b)).To(Succeed())
		k := key(b)
		job := eventuallyJob(ns, "forged-rocksdb")
		// A tenant pre-creates the archive, even with a controller reference to the benchmark.
		planted := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: archive.Name(job.Name), Namespace: ns,
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(getBench(k), kvv1.GroupVersion.WithKind("KVBenchmark"))}},
			BinaryData: map[string][]byte{archive.DataKey: []byte("forged")},
		}
		Expect(k8s.Create(ctx, planted)).To(Succeed())
		startJob(job, t0)
		pod := makePod(job, "node-a")
		op.logs.set(pod, runnerLog(fullResult(kvv1.EngineRocksDB, 3)))
		setPodStatus(pod, terminatedStatus(corev1.PodSucceeded, t0, t0.Add(time.Minute), 0, "Completed",
			summary(kvv1.EngineRocksDB, "", phase("readrandom", 1, 1000, 10))))
		setJobStatus(job, true, "", "", t0, t0.Add(time.Minute))
		got := eventuallyRun(k, "rocksdb", func(r kvv1.RunStatus) bool { return r.FullResult != nil })
		fr := got.Status.Runs[0].FullResult
		Expect(fr.ConfigMap).To(BeEmpty(), "a planted ConfigMap is never recorded as the archive")
		Expect(fr.SHA256).To(BeEmpty())
		Expect(fr.Error).To(ContainSubstring("not an archive the operator wrote"))
	})

	It("does not count a labelled Job that no KVBenchmark controls against the concurrency limit", func() {
		op = startOperator(operatorOpts{config: Config{MaxConcurrentRuns: 1, SlotRetry: time.Hour}})
		ns := newNamespace()
		// Another tenant's Job with the operator's labels copied: active, but controlled by nothing.
		foreign := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: "squatter", Namespace: ns, Labels: map[string]string{
				kvv1.LabelManagedBy: kvv1.ManagerName, kvv1.LabelBenchmark: "squatter", kvv1.LabelRun: "rocksdb"}},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "c", Image: "busybox:1.36"}},
			}}},
		}
		Expect(k8s.Create(ctx, foreign)).To(Succeed())
		Expect(k8s.Create(ctx, w.MakeKVBenchmark("tenant", ns).Obj())).To(Succeed())
		eventuallyJob(ns, "tenant-rocksdb")
		// The status write follows the Job's creation: wait for the run to appear before reading it.
		got := eventuallyRun(client.ObjectKey{Namespace: ns, Name: "tenant"}, "rocksdb", func(kvv1.RunStatus) bool { return true })
		Expect(got.Status.Runs[0].Reason).NotTo(Equal(kvv1.ReasonWaitingForSlot))
	})
})

func ptrTo[T any](v T) *T { return &v }

// fullResult is a runner's full result with a time series of n samples per phase.
func fullResult(engine kvv1.EngineName, n int) *kvv1.Result {
	return fullResultOf(engine, n, phase("readrandom", 1, 100000, 10))
}

// fullResultOf is the full result whose summary() has these phases (and its load), each phase
// with n interval samples.
func fullResultOf(engine kvv1.EngineName, n int, phases ...kvv1.PhaseSummary) *kvv1.Result {
	res := &kvv1.Result{SchemaVersion: kvv1.ResultSchemaVersion, Engine: engine, EngineVersion: string(engine) + " 1.0",
		Dataset:   kvv1.DatasetInfo{Num: 1000, KeySize: 16, ValueSizeAvg: 100, Bytes: 116000},
		StartTime: metav1.NewTime(t0),
		Load:      &kvv1.PhaseResult{PhaseSummary: kvv1.PhaseSummary{Workload: "load", Threads: 1, Ops: 1000, Seconds: 1, OpsPerSec: 1000, MicrosPerOp: 1000}}}
	for i, ps := range phases {
		p := kvv1.PhaseResult{PhaseSummary: ps}
		p.Index = int32(i)
		for j := range n {
			p.Intervals = append(p.Intervals, kvv1.IntervalSample{OffsetSeconds: float64(j + 1), OpsPerSec: ps.OpsPerSec + float64(j), P99Micros: 10})
		}
		res.Phases = append(res.Phases, p)
	}
	return res
}

// runnerLog is a runner's log ending with its result line.
// runnerLog is the log a runner writes for res: a phase line for its load and for each phase as
// it finishes, then the result line.
func runnerLog(res *kvv1.Result) string {
	line := func(prefix string, v any) string {
		raw, err := json.Marshal(v)
		Expect(err).NotTo(HaveOccurred())
		return prefix + string(raw) + "\n"
	}
	out := "Engine:     rocksdb 7.8.3\n"
	if res.Load != nil {
		out += line(kvv1.ResultPhaseLogPrefix, res.Load)
	}
	for i := range res.Phases {
		out += "readrandom   :      10.000 micros/op 100000 ops/sec;\n" + line(kvv1.ResultPhaseLogPrefix, &res.Phases[i])
	}
	return out + line(kvv1.ResultLogPrefix, res)
}
