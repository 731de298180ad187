package kvbenchmark

import (
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

// Slots and nodes: the operator's own ledger decides who runs where (placement.go, slots/).
var _ = Describe("Slots and nodes", func() {
	var op *operator
	AfterEach(func() {
		if op != nil {
			op.Stop()
			op = nil
		}
	})

	// fleet makes Ready nodes only this test's benchmarks select (by the label fleet returns).
	fleet := func(ns string, names ...string) map[string]string {
		sel := map[string]string{"kvbench.io/test-fleet": ns}
		for _, n := range names {
			node := readyNode(ns+"-"+n, sel)
			DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx, node))).To(Succeed()) })
		}
		return sel
	}
	on := func(sel map[string]string) func(*kvv1.KVBenchmarkSpec) {
		return func(s *kvv1.KVBenchmarkSpec) { s.Placement.NodeSelector = sel }
	}
	runPod := func(job *batchv1.Job, node string) *corev1.Pod {
		startJob(job, t0)
		pod := makePod(job, node)
		setPodStatus(pod, runningStatus(t0))
		return pod
	}
	endPod := func(pod *corev1.Pod, engine kvv1.EngineName) {
		setPodStatus(pod, terminatedStatus(corev1.PodSucceeded, t0, t0.Add(time.Minute), 0, "Completed",
			summary(engine, "", phase("readrandom", 1, 1000, 10))))
	}
	normalWait := func(ns, name, holder string) func(g Gomega) {
		return func(g Gomega) {
			var found bool
			for _, e := range eventsFor(ns, name) {
				if e.Reason == EventRunWaiting {
					g.Expect(e.Type).To(Equal(corev1.EventTypeNormal), "an ordinary wait: %s", e.Message)
					found = found || strings.Contains(e.Message, holder)
				}
			}
			g.Expect(found).To(BeTrue(), "no RunWaiting event naming %s", holder)
		}
	}

	It("places an exclusive run on a node where only a pod with forged runner labels runs", func() {
		op = startOperator(operatorOpts{})
		ns := newNamespace()
		sel := fleet(ns, "only")
		// Another tenant's pod carrying every label of an exclusive runner pod, on the only node,
		// and a Job with the operator's labels copied: neither is a runner the operator owns.
		other := newNamespace()
		labels := map[string]string{kvv1.LabelName: kvv1.RunnerAppName, kvv1.LabelManagedBy: kvv1.ManagerName,
			kvv1.LabelBenchmark: "squatter", kvv1.LabelRun: "rocksdb", kvv1.LabelExclusive: "true"}
		forged := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "squatter", Namespace: other, Labels: labels},
			Spec: corev1.PodSpec{NodeName: ns + "-only", Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36"}}}}
		Expect(k8s.Create(ctx, forged)).To(Succeed())
		setPodStatus(forged, runningStatus(t0))
		copied := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "squatter", Namespace: other, Labels: labels},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever, NodeName: ns + "-only",
				Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36"}}}}}}
		Expect(k8s.Create(ctx, copied)).To(Succeed())

		Expect(k8s.Create(ctx, w.MakeKVBenchmark("placed", ns).EditSpec(on(sel)).Obj())).To(Succeed())
		job := eventuallyJob(ns, "placed-rocksdb")
		Expect(pinnedNode(job)).To(Equal(ns+"-only"), "the operator's ledger counts only runners it owns")
		Expect(job.Spec.Template.Spec.Affinity.PodAntiAffinity).To(BeNil(), "no term a foreign pod's labels can satisfy")
	})

	It("gives a freed slot to the benchmark that waited longest, one at a time", func() {
		// SlotRetry of an hour: only the freed Job can wake the next benchmark in time.
		op = startOperator(operatorOpts{config: Config{MaxConcurrentRuns: 1, SlotRetry: time.Hour}})
		ns := newNamespace()
		Expect(k8s.Create(ctx, w.MakeKVBenchmark("holder", ns).Obj())).To(Succeed())
		job := eventuallyJob(ns, "holder-rocksdb")
		// Names in the reverse of their arrival (creation times are whole seconds).
		arrival := []string{"zz", "yy", "xx"}
		for _, name := range arrival {
			Expect(k8s.Create(ctx, w.MakeKVBenchmark(name, ns).Obj())).To(Succeed())
			eventuallyRun(client.ObjectKey{Namespace: ns, Name: name}, "rocksdb", func(r kvv1.RunStatus) bool { return r.Reason == kvv1.ReasonWaitingForSlot })
			time.Sleep(1100 * time.Millisecond)
		}
		got := getBench(client.ObjectKey{Namespace: ns, Name: "xx"})
		Expect(got.Status.Runs[0].Message).To(ContainSubstring("2 benchmark(s) ahead in the queue"))
		Expect(got.Status.Runs[0].WaitingSince).NotTo(BeNil())
		Eventually(normalWait(ns, "xx", "ahead in the queue"), timeout, interval).Should(Succeed())

		pod := runPod(job, "node-a")
		for _, name := range arrival {
			endPod(pod, kvv1.EngineRocksDB)
			setJobStatus(job, true, "", "", t0, t0.Add(time.Minute))
			job = eventuallyJob(ns, name+"-rocksdb")
			Consistently(func() int { return len(jobsIn(ns)) }, time.Second, interval).Should(Equal(2+slicesIndex(arrival, name)),
				"%s got the slot; no one else did", name)
			pod = runPod(job, "node-a")
		}
	})

	It("keeps a Sequential comparison's node from one engine to the next; who waits is told who holds it", func() {
		op = startOperator(operatorOpts{config: Config{SlotRetry: time.Hour}})
		ns := newNamespace()
		sel := fleet(ns, "n1")
		node := ns + "-n1"
		seq := w.MakeKVBenchmark("seq", ns).EngineNames(kvv1.EngineRocksDB, kvv1.EnginePebble).EditSpec(on(sel)).Obj()
		Expect(k8s.Create(ctx, seq)).To(Succeed())
		rocks := eventuallyJob(ns, "seq-rocksdb")
		Expect(pinnedNode(rocks)).To(Equal(node))
		rp := runPod(rocks, node)

		Expect(k8s.Create(ctx, w.MakeKVBenchmark("other", ns).EditSpec(on(sel)).Obj())).To(Succeed())
		other := client.ObjectKey{Namespace: ns, Name: "other"}
		got := eventuallyRun(other, "rocksdb", func(r kvv1.RunStatus) bool { return r.Reason == kvv1.ReasonWaitingForNode })
		Expect(got.Status.Runs[0].Message).To(ContainSubstring(node + " used by run rocksdb of " + ns + "/seq"))
		Eventually(normalWait(ns, "other", ns+"/seq"), timeout, interval).Should(Succeed())

		By("rocksdb's pod ends (the Job controller has not marked its Job): pebble starts on the node at once, other still waits")
		endPod(rp, kvv1.EngineRocksDB)
		pebble := eventuallyJob(ns, "seq-pebble")
		Expect(pinnedNode(pebble)).To(Equal(node))
		expectNoJob(ns, "other-rocksdb")
		setJobStatus(rocks, true, "", "", t0, t0.Add(time.Minute))
		expectNoJob(ns, "other-rocksdb")
		pp := runPod(pebble, node)
		endPod(pp, kvv1.EnginePebble)
		setJobStatus(pebble, true, "", "", t0, t0.Add(2*time.Minute))
		Expect(pinnedNode(eventuallyJob(ns, "other-rocksdb"))).To(Equal(node))
		eventuallyPhase(key(seq), kvv1.PhaseSucceeded)
	})

	It("keeps a Sequential comparison's slot from one engine to the next, from its first engine's start", func() {
		// One slot. seq's next pass after creating rocksdb's Job may come only when its pod has
		// ended; the slot that end frees was given to the benchmark waiting next (the scale run saw
		// 107 Jobs on 100 slots, or, with the limit kept, comparisons waiting between engines).
		op = startOperator(operatorOpts{config: Config{MaxConcurrentRuns: 1, SlotRetry: time.Hour}})
		ns := newNamespace()
		sel := fleet(ns, "n1", "n2")
		seq := w.MakeKVBenchmark("seq", ns).EngineNames(kvv1.EngineRocksDB, kvv1.EnginePebble).EditSpec(on(sel)).Obj()
		Expect(k8s.Create(ctx, seq)).To(Succeed())
		rocks := eventuallyJob(ns, "seq-rocksdb")
		rp := runPod(rocks, ns+"-n1")
		Expect(k8s.Create(ctx, w.MakeKVBenchmark("other", ns).EditSpec(on(sel)).Obj())).To(Succeed())
		// The hold is in the queue from the creation of rocksdb's Job, without waiting for a pass.
		Expect(op.heldJobs(key(seq))).To(ConsistOf(ns + "/seq-rocksdb"))
		eventuallyRun(client.ObjectKey{Namespace: ns, Name: "other"}, "rocksdb", func(r kvv1.RunStatus) bool { return r.Reason == kvv1.ReasonWaitingForSlot })

		By("rocksdb's pod ends: pebble gets the slot, other keeps waiting")
		endPod(rp, kvv1.EngineRocksDB)
		pebble := eventuallyJob(ns, "seq-pebble")
		expectNoJob(ns, "other-rocksdb")
		pp := runPod(pebble, ns+"-n1")
		setJobStatus(rocks, true, "", "", t0, t0.Add(time.Minute))
		expectNoJob(ns, "other-rocksdb")

		By("pebble's pod ends: the comparison is done, other gets the slot")
		endPod(pp, kvv1.EnginePebble)
		eventuallyJob(ns, "other-rocksdb")
		eventuallyPhase(key(seq), kvv1.PhaseSucceeded)
	})

	It("bounds a wait for a busy node by spec.deadline", func() {
		op = startOperator(operatorOpts{})
		ns := newNamespace()
		sel := fleet(ns, "n1")
		Expect(k8s.Create(ctx, w.MakeKVBenchmark("first", ns).EditSpec(on(sel)).Obj())).To(Succeed())
		runPod(eventuallyJob(ns, "first-rocksdb"), ns+"-n1")
		late := w.MakeKVBenchmark("late", ns).EditSpec(on(sel)).EditSpec(func(s *kvv1.KVBenchmarkSpec) {
			s.Deadline = &metav1.Duration{Duration: time.Hour}
		}).Obj()
		Expect(k8s.Create(ctx, late)).To(Succeed())
		eventuallyRun(key(late), "rocksdb", func(r kvv1.RunStatus) bool { return r.Reason == kvv1.ReasonWaitingForNode })
		op.clock.Step(61 * time.Minute)
		poke(key(late))
		got := eventuallyPhase(key(late), kvv1.PhaseFailed)
		Expect(got.Status.Runs[0].Reason).To(Equal(kvv1.ReasonDeadlineExceeded))
		Expect(got.Status.Runs[0].Message).To(HavePrefix("waited 1h1m0s (WaitingForNode): "))
		expectNoJob(ns, "late-rocksdb")
	})

	It("moves an exclusive run to another node when the scheduler refuses the one the operator chose", func() {
		op = startOperator(operatorOpts{})
		ns := newNamespace()
		sel := fleet(ns, "n1", "n2")
		Expect(k8s.Create(ctx, w.MakeKVBenchmark("moved", ns).EditSpec(on(sel)).Obj())).To(Succeed())
		job := eventuallyJob(ns, "moved-rocksdb")
		first, other := pinnedNode(job), ns+"-n2"
		Expect(first).To(BeElementOf(ns+"-n1", ns+"-n2"))
		if first == other {
			other = ns + "-n1"
		}
		pod := makePod(job, "")
		setPodStatus(pod, corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
			Message: "0/9 nodes are available: 1 Insufficient memory, 8 node(s) didn't match Pod's node affinity/selector.", LastTransitionTime: metav1.Now()}}})
		Eventually(func() string {
			var j batchv1.Job
			if err := k8s.Get(ctx, key(job), &j); err != nil || j.UID == job.UID {
				return ""
			}
			return pinnedNode(&j)
		}, timeout, interval).Should(Equal(other), "a new Job on the other node")
		got := getBench(client.ObjectKey{Namespace: ns, Name: "moved"})
		Expect(got.Status.Runs[0].Phase).To(Equal(kvv1.RunPending))
	})

	It("keeps the Job while its pod only waits for its ephemeral volume's claim (not a refusal of the node)", func() {
		op = startOperator(operatorOpts{})
		ns := newNamespace()
		sel := fleet(ns, "n1")
		Expect(k8s.Create(ctx, w.MakeKVBenchmark("claim", ns).EditSpec(on(sel)).Obj())).To(Succeed())
		job := eventuallyJob(ns, "claim-rocksdb")
		pod := makePod(job, "")
		// The scheduler's first attempt on a pod created before the ephemeral volume controller made its claim.
		setPodStatus(pod, corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
			Message: `0/1 nodes are available: waiting for ephemeral volume controller to create the persistentvolumeclaim "` +
				pod.Name + `-data". preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.`,
			LastTransitionTime: metav1.Now()}}})
		Eventually(func() string {
			return getBench(client.ObjectKey{Namespace: ns, Name: "claim"}).Status.Runs[0].Reason
		}, timeout, interval).Should(Equal(kvv1.ReasonUnschedulable), "the scheduler's message is observed")
		Consistently(func() types.UID {
			var j batchv1.Job
			if err := k8s.Get(ctx, key(job), &j); err != nil || !j.DeletionTimestamp.IsZero() {
				return ""
			}
			return j.UID
		}, 3*time.Second, interval).Should(Equal(job.UID), "the same Job, not deleted to choose another node")
	})

	It("fails the later engines fast when the node the first ran on is gone", func() {
		op = startOperator(operatorOpts{})
		ns := newNamespace()
		sel := fleet(ns, "n1")
		node := ns + "-n1"
		b := w.MakeKVBenchmark("orphan", ns).EngineNames(kvv1.EngineRocksDB, kvv1.EnginePebble).EditSpec(on(sel)).Obj()
		Expect(k8s.Create(ctx, b)).To(Succeed())
		rocks := eventuallyJob(ns, "orphan-rocksdb")
		pod := runPod(rocks, node)
		Expect(k8s.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}})).To(Succeed())
		endPod(pod, kvv1.EngineRocksDB)
		setJobStatus(rocks, true, "", "", t0, t0.Add(time.Minute))
		got := eventuallyPhase(key(b), kvv1.PhaseFailed)
		Expect(got.Status.Runs[0].Phase).To(Equal(kvv1.RunSucceeded))
		Expect(got.Status.Runs[1].Reason).To(Equal(kvv1.ReasonNodeUnavailable))
		Expect(got.Status.Runs[1].Message).To(HavePrefix(fmt.Sprintf("node %s no longer exists (the node the earlier engines ran on", node)))
		expectNoJob(ns, "orphan-pebble")
	})

	It("fails a run whose pod a ResourceQuota refuses, with the refusal, after a short retry", func() {
		// The clock starts at the wall clock: the pod refusal is looked for on Jobs older than a few seconds.
		op = startOperator(operatorOpts{clock: clocktesting.NewFakeClock(time.Now())})
		ns := newNamespace()
		quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "small", Namespace: ns},
			Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceRequestsMemory: resource.MustParse("512Mi")}}}
		Expect(k8s.Create(ctx, quota)).To(Succeed())
		quota.Status = corev1.ResourceQuotaStatus{Hard: quota.Spec.Hard, Used: corev1.ResourceList{corev1.ResourceRequestsMemory: resource.MustParse("0")}}
		Expect(k8s.Status().Update(ctx, quota)).To(Succeed()) // what the quota controller (absent here) publishes

		b := w.MakeKVBenchmark("quota", ns).Obj()
		Expect(k8s.Create(ctx, b)).To(Succeed())
		job := eventuallyJob(ns, "quota-rocksdb")
		// Play the Job controller: it tries to create the pod, and reports the API server's refusal
		// in a FailedCreate event on the Job.
		tmpl := job.Spec.Template.DeepCopy()
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: job.Name + "-", Namespace: ns, Labels: tmpl.Labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))}}, Spec: tmpl.Spec}
		var err error // (a dry run: a pod the quota let through would be a pod the Job has)
		Eventually(func() error { err = k8s.Create(ctx, pod.DeepCopy(), client.DryRunAll); return err }, timeout, interval).Should(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("exceeded quota"))
		Expect(k8s.Create(ctx, &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{GenerateName: job.Name + ".", Namespace: ns},
			InvolvedObject: corev1.ObjectReference{Kind: "Job", APIVersion: "batch/v1", Namespace: ns, Name: job.Name, UID: job.UID},
			Reason:         "FailedCreate", Message: "Error creating: " + err.Error(), Type: corev1.EventTypeWarning,
			Source: corev1.EventSource{Component: "job-controller"}, FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(), Count: 1,
		})).To(Succeed())
		op.clock.Step(10 * time.Second)
		poke(key(b))
		got := eventuallyRun(key(b), "rocksdb", func(r kvv1.RunStatus) bool { return r.Reason == kvv1.ReasonPodRejected })
		Expect(got.Status.Runs[0].Phase).To(Equal(kvv1.RunPending))
		Expect(got.Status.Runs[0].Message).To(ContainSubstring("exceeded quota: small"))

		op.clock.Step(3 * time.Minute) // past --start-failure-timeout
		poke(key(b))
		got = eventuallyPhase(key(b), kvv1.PhaseFailed)
		Expect(got.Status.Runs[0].Reason).To(Equal(kvv1.ReasonPodRejected))
		Expect(got.Status.Runs[0].Message).To(ContainSubstring("requested: requests.memory=1Gi"))
		Eventually(func() []batchv1.Job { return jobsIn(ns) }, timeout, interval).Should(BeEmpty(), "the Job is stopped")
	})

	It("never reports a run Pending after it was Running, and decides it when its pod ends", func() {
		op = startOperator(operatorOpts{})
		ns := newNamespace()
		b := w.MakeKVBenchmark("mono", ns).Obj()
		Expect(k8s.Create(ctx, b)).To(Succeed())
		job := eventuallyJob(ns, "mono-rocksdb")
		pod := runPod(job, pinnedNode(job))
		eventuallyRun(key(b), "rocksdb", func(r kvv1.RunStatus) bool { return r.Phase == kvv1.RunRunning })
		endPod(pod, kvv1.EngineRocksDB) // the Job controller has not marked the Job yet: decided from the pod
		got := eventuallyPhase(key(b), kvv1.PhaseSucceeded)
		Expect(got.Status.Runs[0].CompletionTime.Time).To(BeTemporally("==", t0.Add(time.Minute)), "the runner's end, not the Job's")
		Eventually(func(g Gomega) {
			var phases []string
			for _, e := range eventsFor(ns, "mono") {
				if e.Reason == EventPhase {
					phases = append(phases, fmt.Sprintf("%s x%d", e.Message, e.Count))
				}
			}
			g.Expect(phases).To(ConsistOf("Benchmark is Pending (0/1 runs finished) x1", "Benchmark is Running (0/1 runs finished) x1",
				"Benchmark is Succeeded (1/1 runs finished) x1"))
		}, timeout, interval).Should(Succeed())
	})
})

func slicesIndex(s []string, v string) int {
	for i := range s {
		if s[i] == v {
			return i
		}
	}
	return -1
}
