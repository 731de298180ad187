package kvbenchmark

import (
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/controllers/plan"
	"github.com/kvbench/kvbench-operator/controllers/render"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

var _ = Describe("Job creation the API server refuses", func() {
	var op *operator
	AfterEach(func() {
		if op != nil {
			op.Stop()
			op = nil
		}
		deleteRunnerJobs() // no garbage collector here: a Job left active would take a later test's slot
	})

	warned := func(ns, name, reason string) func(g Gomega) {
		return func(g Gomega) {
			var ok bool
			for _, e := range eventsFor(ns, name) {
				ok = ok || (e.Reason == reason && e.Type == corev1.EventTypeWarning)
			}
			g.Expect(ok).To(BeTrue(), "no Warning event %s", reason)
		}
	}

	It("fails the run with the server's message when an admission policy refuses the Job", func() {
		ns := newNamespace()
		deleteBenchmarksAfter(ns)
		// A policy that refuses runner Jobs in namespaces labelled for it.
		var nsObj corev1.Namespace
		Expect(k8s.Get(ctx, client.ObjectKey{Name: ns}, &nsObj)).To(Succeed())
		nsObj.Labels = map[string]string{"kvbench-test/refuse-jobs": "true"}
		Expect(k8s.Update(ctx, &nsObj)).To(Succeed())
		policy := &admissionv1.ValidatingAdmissionPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "refuse-runner-jobs-" + ns},
			Spec: admissionv1.ValidatingAdmissionPolicySpec{
				FailurePolicy: ptr.To(admissionv1.Fail),
				MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionv1.RuleWithOperations{
						Operations: []admissionv1.OperationType{admissionv1.Create},
						Rule:       admissionv1.Rule{APIGroups: []string{"batch"}, APIVersions: []string{"v1"}, Resources: []string{"jobs"}},
					}}}},
				Validations: []admissionv1.Validation{{Expression: "false", Message: "runner Jobs are not allowed here (test policy)"}},
			},
		}
		binding := &admissionv1.ValidatingAdmissionPolicyBinding{
			ObjectMeta: metav1.ObjectMeta{Name: policy.Name},
			Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
				PolicyName:        policy.Name,
				ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
				MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
					MatchLabels: map[string]string{"kvbench-test/refuse-jobs": "true"}}},
			},
		}
		Expect(k8s.Create(ctx, policy)).To(Succeed())
		Expect(k8s.Create(ctx, binding)).To(Succeed())
		DeferCleanup(func() {
			Expect(k8s.Delete(ctx, binding)).To(Succeed())
			Expect(k8s.Delete(ctx, policy)).To(Succeed())
		})
		// The policy takes effect once the API server has loaded it: probe with a dry run.
		probe, err := render.Job(w.MakeKVBenchmark("probe", ns).UID("00000000-0000-0000-0000-000000000001").Obj(),
			plan.Plan(w.MakeKVBenchmark("probe", ns).Obj())[0], render.DefaultOptions())
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() error { return k8s.Create(ctx, probe.DeepCopy(), client.DryRunAll) }, timeout, interval).Should(HaveOccurred())

		op = startOperator(operatorOpts{})
		b := w.MakeKVBenchmark("refused", ns).Obj()
		Expect(k8s.Create(ctx, b)).To(Succeed())
		got := eventuallyPhase(key(b), kvv1.PhaseFailed)
		r := got.Status.Runs[0]
		Expect(r.Reason).To(Equal(kvv1.ReasonJobRejected))
		Expect(r.Message).To(ContainSubstring("runner Jobs are not allowed here (test policy)"))
		Expect(r.CompletionTime).NotTo(BeNil())
		Eventually(warned(ns, "refused", EventRunFailed), timeout, interval).Should(Succeed())
		Expect(jobsIn(ns)).To(BeEmpty())
	})

	It("keeps the run Pending with the reason and a Warning while a quota refuses the Job, and creates it once the quota allows", func() {
		ns := newNamespace()
		deleteBenchmarksAfter(ns)
		quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "no-jobs", Namespace: ns},
			Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/jobs.batch": resource.MustParse("0")}}}
		Expect(k8s.Create(ctx, quota)).To(Succeed())
		// No quota controller in envtest: publish the quota's status as it would.
		setQuota := func(n string) {
			Eventually(func() error {
				if err := k8s.Get(ctx, key(quota), quota); err != nil {
					return err
				}
				quota.Spec.Hard["count/jobs.batch"] = resource.MustParse(n)
				if err := k8s.Update(ctx, quota); err != nil {
					return err
				}
				quota.Status = corev1.ResourceQuotaStatus{Hard: quota.Spec.Hard,
					Used: corev1.ResourceList{"count/jobs.batch": resource.MustParse("0")}}
				return k8s.Status().Update(ctx, quota)
			}, timeout, interval).Should(Succeed())
		}
		setQuota("0")

		op = startOperator(operatorOpts{})
		b := w.MakeKVBenchmark("quota", ns).Obj()
		Expect(k8s.Create(ctx, b)).To(Succeed())
		got := eventuallyRun(key(b), "rocksdb", func(r kvv1.RunStatus) bool {
			return r.Phase == kvv1.RunPending && r.Reason == kvv1.ReasonJobCreateRetrying
		})
		Expect(got.Status.Runs[0].Message).To(ContainSubstring("exceeded quota"))
		Expect(got.Status.Phase).To(Equal(kvv1.PhasePending))
		Eventually(warned(ns, "quota", EventRunWaiting), timeout, interval).Should(Succeed())

		setQuota("1")
		eventuallyJob(ns, "quota-rocksdb")
		eventuallyRun(key(b), "rocksdb", func(r kvv1.RunStatus) bool { return r.Reason == "" })
	})
})

// Every spec the CRD accepts renders Jobs the API server accepts: CRD validation and Job
// validity cannot drift apart. Specs come from a seeded generator over the fields that reach
// the Job; the server validates each Job in a dry run.
var _ = Describe("rendered Jobs of accepted specs", func() {
	It("pass the API server's validation (server-side dry run)", func() {
		seed := propertySeed()
		rng := rand.New(rand.NewSource(seed))
		By(fmt.Sprintf("seed %d", seed))
		ns := newNamespace()
		deleteBenchmarksAfter(ns)
		accepted := 0
		for i := 0; accepted < 120 && i < 1000; i++ {
			b := randomSpec(rng, fmt.Sprintf("gen-%d", i), ns)
			if err := k8s.Create(ctx, b); err != nil {
				Expect(err.Error()).To(ContainSubstring("KVBenchmark.kvbench.io"), "spec %d: not a validation error", i)
				continue // the CRD refused it: outside the property
			}
			accepted++
			for j, run := range plan.Plan(b) {
				// Each placement the operator gives a run: none, a node it chose or planned, nodes to avoid.
				switch (i + j) % 3 {
				case 1:
					run.Node, run.Picked = "node-a.example.com", j%2 == 0
				case 2:
					run.Avoid = []string{"node-a", "node-b.example.com"}[:1+j%2]
				}
				job, err := render.Job(b, run, render.DefaultOptions())
				Expect(err).NotTo(HaveOccurred(), "spec %d run %s: %+v", i, run.Name, b.Spec)
				Expect(k8s.Create(ctx, job, client.DryRunAll)).To(Succeed(), "seed %d spec %d run %s: %+v", seed, i, run.Name, b.Spec)
			}
			// Not left for the operators of later tests to run.
			Expect(k8s.Delete(ctx, b)).To(Succeed())
		}
		Expect(accepted).To(BeNumerically(">=", 120), "too few generated specs were accepted to mean much")
	})
})

// propertySeed is the generator's seed: fixed, so CI is repeatable; KVBENCH_PROPERTY_SEED sets
// another, or "random" explores a new one each run (the seed is in the spec's output).
func propertySeed() int64 {
	switch v := os.Getenv("KVBENCH_PROPERTY_SEED"); v {
	case "":
		return 1
	case "random":
		return time.Now().UnixNano()
	default:
		seed, err := strconv.ParseInt(v, 10, 64)
		Expect(err).NotTo(HaveOccurred(), "KVBENCH_PROPERTY_SEED")
		return seed
	}
}

// randomSpec varies the fields that reach the runner Job, within and just outside what the CRD
// allows.
func randomSpec(rng *rand.Rand, name, ns string) *kvv1.KVBenchmark {
	pick := func(xs ...string) string { return xs[rng.Intn(len(xs))] }
	b := w.MakeKVBenchmark(name, ns).Obj()
	s := &b.Spec
	engines := []kvv1.EngineName{kvv1.EngineRocksDB, kvv1.EngineLevelDB, kvv1.EnginePebble}
	rng.Shuffle(len(engines), func(i, j int) { engines[i], engines[j] = engines[j], engines[i] })
	s.Engines = nil
	for _, e := range engines[:1+rng.Intn(3)] {
		es := kvv1.EngineSpec{Name: e}
		if rng.Intn(3) == 0 {
			es.Options.CacheSize = ptr.To(resource.MustParse(pick("8Mi", "1Gi")))
		}
		s.Engines = append(s.Engines, es)
	}
	s.Resources.Memory = resource.MustParse(pick("64Mi", "1Gi", "1500M", "3Gi", "16Gi", "100Gi", "100Gi"))
	if rng.Intn(2) == 0 {
		q := resource.MustParse(pick("100m", "1", "2", "0.5", "16"))
		s.Resources.CPU = &q
	}
	s.Dataset.Size = ptr.To(resource.MustParse(pick("1Mi", "64Mi", "1Gi", "10Gi")))
	switch pick("tmpfs", "localNVMe", "persistentVolume") {
	case "localNVMe":
		s.Storage = kvv1.StorageSpec{Medium: kvv1.MediumLocalNVMe, Size: ptr.To(resource.MustParse(pick("10Gi", "100Gi")))}
	case "persistentVolume":
		s.Storage = kvv1.StorageSpec{Medium: kvv1.MediumPersistentVolume, Size: ptr.To(resource.MustParse(pick("10Gi", "1Ti"))),
			StorageClassName: ptr.To(pick("standard", "fast.ssd", "local-path", "a"))}
	}
	s.Threads = []int32{int32(1 + rng.Intn(64))}
	if rng.Intn(2) == 0 {
		s.Threads = append(s.Threads, int32(1+rng.Intn(256)))
	}
	s.Repeat = int32(1 + rng.Intn(5))
	s.CacheMode = kvv1.CacheMode(pick("warm", "cold"))
	if rng.Intn(2) == 0 {
		s.Deadline = &metav1.Duration{Duration: time.Duration(1+rng.Intn(48*60)) * time.Minute}
	} else {
		s.Deadline = nil
	}
	if rng.Intn(3) == 0 {
		s.ReportInterval = &metav1.Duration{Duration: time.Duration(100+rng.Intn(10000)) * time.Millisecond}
	}
	if rng.Intn(3) == 0 {
		s.RunnerImage = pick("localhost/kvbench-runner:v0.1.0", "registry.example.com:5000/team/runner:1.2.3",
			"runner@sha256:"+strings.Repeat("a", 64), "r:x")
	}
	s.Placement.Exclusive = ptr.To(rng.Intn(2) == 0)
	if rng.Intn(2) == 0 {
		s.Placement.NodeSelector = map[string]string{
			pick("disk", "kubernetes.io/hostname", "example.com/nvme", "topology.kubernetes.io/zone"): pick("true", "node-1", "a.b-c_d", ""),
		}
	}
	if rng.Intn(3) == 0 {
		op := corev1.TolerationOperator(pick("Exists", "Equal"))
		// Valid and invalid combinations alike: the CRD must refuse what a pod may not have.
		t := corev1.Toleration{Key: pick("dedicated", "example.com/bench", ""), Operator: op,
			Value:  pick("bench", ""),
			Effect: corev1.TaintEffect(pick("NoSchedule", "NoExecute", "PreferNoSchedule", "", "Sometimes"))}
		if rng.Intn(2) == 0 {
			t.TolerationSeconds = ptr.To(int64(rng.Intn(3600)))
		}
		s.Placement.Tolerations = []corev1.Toleration{t}
	}
	s.Cleanup.Policy = kvv1.CleanupPolicy(pick("DeleteJobs", "Keep"))
	s.Cleanup.TTLSecondsAfterFinished = ptr.To(int32(rng.Intn(100000)))
	workloads := []kvv1.WorkloadName{kvv1.WorkloadReadRandom, kvv1.WorkloadFillRandom, kvv1.WorkloadReadSeq, kvv1.WorkloadReadWhileWriting}
	s.Workloads = nil
	for range 1 + rng.Intn(4) {
		s.Workloads = append(s.Workloads, kvv1.WorkloadSpec{Name: workloads[rng.Intn(len(workloads))]})
	}
	return b
}
