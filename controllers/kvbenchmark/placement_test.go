package kvbenchmark

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/controllers/render"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

// pinnedNode is the node a Job's pods are pinned to by required node affinity ("" when none).
func pinnedNode(job *batchv1.Job) string { return render.PinnedNode(&job.Spec.Template.Spec) }

func expectNoJob(ns, name string) {
	Consistently(func() bool {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &batchv1.Job{})
		return apierrors.IsNotFound(err)
	}, time.Second, interval).Should(BeTrue(), "Job %s exists", name)
}

// finishRun plays the scheduler, kubelet and Job controller for one successful run on node.
func finishRunOn(job *batchv1.Job, node string, engine kvv1.EngineName, started, finished time.Time) {
	startJob(job, started)
	pod := makePod(job, node)
	setPodStatus(pod, runningStatus(started))
	setPodStatus(pod, terminatedStatus(corev1.PodSucceeded, started, finished, 0, "Completed",
		summary(engine, "", phase("readrandom", 1, 100000, 10))))
	setJobStatus(job, true, "", "", started, finished)
}

var _ = Describe("Placement", func() {
	var op *operator
	AfterEach(func() {
		if op != nil {
			op.Stop()
			op = nil
		}
		deleteRunnerJobs()
	})

	It("runs the engines one after another on the node the scheduler chose for the first (the default)", func() {
		op = startOperator(operatorOpts{})
		ns := newNamespace()
		b := w.MakeKVBenchmark("seq", ns).EngineNames(kvv1.EngineRocksDB, kvv1.EnginePebble, kvv1.EngineLevelDB).Obj()
		Expect(k8s.Create(ctx, b)).To(Succeed())
		k := key(b)

		rocks := eventuallyJob(ns, "seq-rocksdb")
		node := pinnedNode(rocks)
		Expect(node).NotTo(BeEmpty(), "an exclusive run goes to a free node the operator chose")
		Expect(rocks.Annotations).To(HaveKeyWithValue("kvbench.io/picked-node", node))
		eventuallyRun(k, "pebble", func(r kvv1.RunStatus) bool {
			return r.Reason == kvv1.ReasonWaitingForRun && r.Message == "placement.engines Sequential: runs after rocksdb on node "+node
		})
		expectNoJob(ns, "seq-pebble")

		By("the first engine is scheduled and runs: the others still wait")
		startJob(rocks, t0)
		rp := makePod(rocks, node)
		setPodStatus(rp, runningStatus(t0))
		eventuallyRun(k, "rocksdb", func(r kvv1.RunStatus) bool { return r.Phase == kvv1.RunRunning })
		expectNoJob(ns, "seq-pebble")
		expectNoJob(ns, "seq-leveldb")

		By("it finishes: the second starts, pinned to the same node; the third waits for it")
		setPodStatus(rp, terminatedStatus(corev1.PodSucceeded, t0, t0.Add(time.Minute), 0, "Completed",
			summary(kvv1.EngineRocksDB, "", phase("readrandom", 1, 100000, 10))))
		setJobStatus(rocks, true, "", "", t0, t0.Add(time.Minute))
		pebble := eventuallyJob(ns, "seq-pebble")
		Expect(pinnedNode(pebble)).To(Equal(node))
		Expect(pebble.Annotations).NotTo(HaveKey("kvbench.io/picked-node"), "the node of the earlier engines is not a choice to revisit")
		Expect(pebble.Spec.Template.Spec.NodeName).To(BeEmpty(), "the scheduler still places (and checks) the pod")
		eventuallyRun(k, "pebble", func(r kvv1.RunStatus) bool { return r.NodeName == node && r.Reason == "" })
		expectNoJob(ns, "seq-leveldb")

		finishRunOn(pebble, node, kvv1.EnginePebble, t0.Add(2*time.Minute), t0.Add(3*time.Minute))
		level := eventuallyJob(ns, "seq-leveldb")
		Expect(pinnedNode(level)).To(Equal(node))
		finishRunOn(level, node, kvv1.EngineLevelDB, t0.Add(4*time.Minute), t0.Add(5*time.Minute))

		got := eventuallyPhase(k, kvv1.PhaseSucceeded)
		Expect(got.Status.Nodes).To(Equal(int32(1)))
		Expect(got.Status.Engines).To(Equal("rocksdb,pebble,leveldb"))
		for i := 1; i < len(got.Status.Runs); i++ {
			prev, cur := got.Status.Runs[i-1], got.Status.Runs[i]
			Expect(cur.NodeName).To(Equal(node))
			Expect(cur.StartTime.Time).NotTo(BeTemporally("<", prev.CompletionTime.Time), "%s overlaps %s", cur.Name, prev.Name)
		}
	})

	It("starts every engine at once with engines: Parallel, each exclusive run on a node of its own", func() {
		op = startOperator(operatorOpts{})
		ns := newNamespace()
		b := w.MakeKVBenchmark("par", ns).EngineNames(kvv1.EngineRocksDB, kvv1.EnginePebble).EnginePlacement(kvv1.EnginesParallel).Obj()
		Expect(k8s.Create(ctx, b)).To(Succeed())
		r, p := pinnedNode(eventuallyJob(ns, "par-rocksdb")), pinnedNode(eventuallyJob(ns, "par-pebble"))
		Expect(r).NotTo(BeEmpty())
		Expect(p).NotTo(BeEmpty())
		Expect(r).NotTo(Equal(p))

		By("not exclusive: the scheduler places them")
		shared := w.MakeKVBenchmark("par-shared", ns).EngineNames(kvv1.EngineRocksDB, kvv1.EnginePebble).EnginePlacement(kvv1.EnginesParallel).Exclusive(false).Obj()
		Expect(k8s.Create(ctx, shared)).To(Succeed())
		Expect(pinnedNode(eventuallyJob(ns, "par-shared-rocksdb"))).To(BeEmpty())
		job := eventuallyJob(ns, "par-shared-pebble")
		Expect(pinnedNode(job)).To(BeEmpty())
		Expect(render.AvoidedNodes(&job.Spec.Template.Spec)).To(ContainElements(r, p), "kept off the nodes of exclusive runs")
	})

	It("runs one runner per matching node per engine with spread: EachNode, at most maxNodes", func() {
		op = startOperator(operatorOpts{})
		ns := newNamespace()
		fleet := map[string]string{"kvbench.io/test-fleet": ns}
		node := func(name string, labels map[string]string, cordoned bool) {
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{Unschedulable: cordoned}}
			Expect(k8s.Create(ctx, n)).To(Succeed())
			DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx, n))).To(Succeed()) })
		}
		node(ns+"-c", fleet, false)
		node(ns+"-a", fleet, false)
		node(ns+"-b.example.com", fleet, false)
		node(ns+"-0-cordoned", fleet, true)
		node(ns+"-other", nil, false)

		b := w.MakeKVBenchmark("fleet", ns).EngineNames(kvv1.EngineRocksDB, kvv1.EnginePebble).EditSpec(func(s *kvv1.KVBenchmarkSpec) {
			s.Placement.NodeSelector = fleet
			s.Placement.Spread = kvv1.SpreadEachNode
			s.Placement.MaxNodes = ptr.To[int32](2)
		}).Obj()
		Expect(k8s.Create(ctx, b)).To(Succeed())
		k := key(b)

		By("the first two schedulable matching nodes by name, rocksdb first on each")
		ra := eventuallyJob(ns, "fleet-rocksdb-"+ns+"-a")
		rb := eventuallyJob(ns, "fleet-rocksdb-"+ns+"-b-example-com")
		Expect(pinnedNode(ra)).To(Equal(ns + "-a"))
		Expect(pinnedNode(rb)).To(Equal(ns + "-b.example.com"))
		Expect(ra.Spec.Template.Labels["kvbench.io/run"]).To(Equal(ra.Name), "run names with @ are not label values")
		expectNoJob(ns, "fleet-pebble-"+ns+"-a")
		got := eventuallyRun(k, "pebble@"+ns+"-a", func(r kvv1.RunStatus) bool { return r.Reason == kvv1.ReasonWaitingForRun })
		var names []string
		for _, r := range got.Status.Runs {
			names = append(names, r.Name)
		}
		Expect(names).To(Equal([]string{"rocksdb@" + ns + "-a", "pebble@" + ns + "-a", "rocksdb@" + ns + "-b.example.com", "pebble@" + ns + "-b.example.com"}))
		Expect(got.Status.Nodes).To(Equal(int32(2)))
		Expect(got.Status.Engines).To(Equal("rocksdb,pebble"))

		By("a node that joins later does not change the fleet of a started benchmark")
		node(ns+"-0-late", fleet, false)
		finishRunOn(ra, ns+"-a", kvv1.EngineRocksDB, t0, t0.Add(time.Minute))
		pa := eventuallyJob(ns, "fleet-pebble-"+ns+"-a")
		Expect(pinnedNode(pa)).To(Equal(ns + "-a"))
		finishRunOn(pa, ns+"-a", kvv1.EnginePebble, t0.Add(2*time.Minute), t0.Add(3*time.Minute))
		finishRunOn(rb, ns+"-b.example.com", kvv1.EngineRocksDB, t0, t0.Add(time.Minute))
		pb := eventuallyJob(ns, "fleet-pebble-"+ns+"-b-example-com")
		finishRunOn(pb, ns+"-b.example.com", kvv1.EnginePebble, t0.Add(2*time.Minute), t0.Add(3*time.Minute))
		got = eventuallyPhase(k, kvv1.PhaseSucceeded)
		Expect(got.Status.Runs).To(HaveLen(4))
		Expect(got.Status.Progress).To(Equal("4/4"))
		expectNoJob(ns, "fleet-rocksdb-"+ns+"-0-late")
	})
})
