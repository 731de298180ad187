package kvbenchmark

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

var _ = Describe("status budget", func() {
	// Issue 18: this spec (1 node x 3 engines x 32 workloads x 16 threads x 2 repeats) made a
	// status etcd refuses; every write failed, and the benchmark never ended.
	It("writes the status of 3 runs x 1,024 phases to the API server, within the budget, with every phase", func() {
		op := startOperator(operatorOpts{})
		defer op.Stop()
		ns := newNamespace()
		deleteBenchmarksAfter(ns)
		b := planOf(3, 32, 16, 2, 0)
		b.Name, b.Namespace = "wide", ns
		b.Spec.Placement.Engines = kvv1.EnginesParallel
		Expect(k8s.Create(ctx, b)).To(Succeed())
		for _, r := range finishedRuns(b) {
			job := eventuallyJob(ns, r.JobName)
			startJob(job, t0)
			pod := makePod(job, "node-a")
			res := &kvv1.Result{SchemaVersion: kvv1.ResultSchemaVersion, Engine: r.Engine}
			for _, p := range r.Results {
				res.Phases = append(res.Phases, kvv1.PhaseResult{PhaseSummary: p})
			}
			op.logs.set(pod, runnerLog(res))
			setPodStatus(pod, terminatedStatus(corev1.PodSucceeded, t0, t0.Add(time.Minute), 0, "Completed", summary(r.Engine, "", r.Results[:3]...)))
			setJobStatus(job, true, "", "", t0, t0.Add(time.Minute))
		}
		got := eventuallyPhase(key(b), kvv1.PhaseSucceeded)
		Eventually(func(g Gomega) {
			got = getBench(key(b))
			for _, r := range got.Status.Runs {
				g.Expect(r.FullResult).NotTo(BeNil())
			}
		}, timeout, interval).Should(Succeed())
		raw, err := json.Marshal(got.Status)
		Expect(err).NotTo(HaveOccurred())
		GinkgoWriter.Printf("status: %d KiB\n", len(raw)>>10)
		Expect(len(raw)).To(BeNumerically("<=", kvv1.StatusBudgetBytes))
		Expect(meta.IsStatusConditionTrue(got.Status.Conditions, ConditionCompacted)).To(BeTrue())
		for _, r := range got.Status.Runs {
			Expect(r.Results).To(HaveLen(1024), "run %s", r.Name)
			Expect(r.Truncated).To(BeZero())
		}
	})

	// A status write that fails for another reason than a conflict was only logged, pass after pass.
	It("makes a failing status write visible as a condition and an event, and clears it once a write succeeds", func() {
		var failing atomic.Bool
		failing.Store(true)
		op := startOperator(operatorOpts{intercept: &interceptor.Funcs{
			SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
				if b, ok := obj.(*kvv1.KVBenchmark); ok && b.Name == "unwritable" && failing.Load() &&
					meta.FindStatusCondition(b.Status.Conditions, ConditionStatusWriteFailed) == nil {
					return apierrors.NewRequestEntityTooLargeError("etcdserver: request is too large")
				}
				return c.SubResource(sub).Update(ctx, obj, opts...)
			}}})
		defer op.Stop()
		ns := newNamespace()
		deleteBenchmarksAfter(ns)
		b := planOf(1, 1, 1, 1, 0)
		b.Name, b.Namespace = "unwritable", ns
		Expect(k8s.Create(ctx, b)).To(Succeed())
		Eventually(func(g Gomega) {
			c := meta.FindStatusCondition(getBench(key(b)).Status.Conditions, ConditionStatusWriteFailed)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Message).To(ContainSubstring("request is too large"))
		}, timeout, interval).Should(Succeed())
		// the recorder sends events from its own goroutine
		Eventually(func() []corev1.Event { return eventsFor(ns, "unwritable") }, timeout, interval).Should(
			ContainElement(HaveField("Reason", EventStatusWriteFailed)))
		failing.Store(false)
		Eventually(func(g Gomega) {
			got := getBench(key(b))
			g.Expect(meta.FindStatusCondition(got.Status.Conditions, ConditionStatusWriteFailed)).To(BeNil())
			g.Expect(got.Status.Runs).NotTo(BeEmpty())
		}, timeout, interval).Should(Succeed())
	})
})
