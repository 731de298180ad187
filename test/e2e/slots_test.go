//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// nodeHandover: exclusive runs on the one node follow each other within seconds (issue 21: the
// second engine of a comparison started 5.5 minutes late, when the scheduler's periodic flush
// retried it), in the order they came, and a Sequential comparison keeps the node from its first
// engine to its second although another exclusive benchmark waits for it. Waiting is a Normal
// event naming the benchmark in the way.
func nodeHandover(ns string) {
	exclusive := func(name string, engines ...kvv1.EngineName) *kvv1.KVBenchmark {
		b := tmpfsBench(ns, name, engines[0])
		b.Spec.Engines = nil
		for _, e := range engines {
			b.Spec.Engines = append(b.Spec.Engines, kvv1.EngineSpec{Name: e})
		}
		b.Spec.Placement.Exclusive = ptr.To(true)
		return b
	}
	first := create(exclusive("handover-first", kvv1.EngineLevelDB))
	waitRunnerRunning(ns, first.Name, 0)
	seq := create(exclusive("handover-seq", kvv1.EngineRocksDB, kvv1.EnginePebble))
	time.Sleep(1100 * time.Millisecond) // creation times are whole seconds: later means later
	late := create(exclusive("handover-late", kvv1.EngineLevelDB))

	By("the comparison waits for the node, told who holds it")
	Eventually(func(g Gomega) {
		cur := get(ns, seq.Name)
		g.Expect(cur.Status.Runs).NotTo(BeEmpty())
		g.Expect(cur.Status.Runs[0].Reason).To(Equal(kvv1.ReasonWaitingForNode))
		g.Expect(cur.Status.Runs[0].Message).To(ContainSubstring(ns + "/" + first.Name))
	}, time.Minute).Should(Succeed())

	f := waitFinished(ns, first.Name, 3*time.Minute)
	s := waitFinished(ns, seq.Name, 4*time.Minute)
	l := waitFinished(ns, late.Name, 5*time.Minute)
	for _, b := range []*kvv1.KVBenchmark{f, s, l} {
		Expect(b.Status.Phase).To(Equal(kvv1.PhaseSucceeded), runsSummary(b))
	}
	fr, rocks, peb, lr := f.Status.Runs[0], s.Status.Runs[0], s.Status.Runs[1], l.Status.Runs[0]
	handover := rocks.StartTime.Sub(fr.CompletionTime.Time)
	between := peb.StartTime.Sub(rocks.CompletionTime.Time)
	report := fmt.Sprintf("first ended %s; seq rocksdb %s-%s (+%s), pebble %s-%s (+%s); late %s-%s",
		fr.CompletionTime.Format(time.TimeOnly), rocks.StartTime.Format(time.TimeOnly), rocks.CompletionTime.Format(time.TimeOnly), handover,
		peb.StartTime.Format(time.TimeOnly), peb.CompletionTime.Format(time.TimeOnly), between,
		lr.StartTime.Format(time.TimeOnly), lr.CompletionTime.Format(time.TimeOnly))
	GinkgoWriter.Println(report)
	AddReportEntry("node handover", report)
	Expect(handover).To(BeNumerically("<", 15*time.Second), "the comparison's first engine started long after the node freed: %s", report)
	Expect(between).To(BeNumerically("<", 15*time.Second), "the comparison's engines ran far apart: %s", report)
	Expect(rocks.NodeName).To(Equal(peb.NodeName))
	Expect(lr.StartTime.Time).NotTo(BeTemporally("<", peb.CompletionTime.Time), "late ran between the engines of the comparison: %s", report)

	var evs corev1.EventList
	Expect(k8s.List(ctx, &evs, client.InNamespace(ns))).To(Succeed())
	var named bool
	for _, e := range evs.Items {
		if e.InvolvedObject.Name == seq.Name && e.Reason == "RunWaiting" {
			Expect(e.Type).To(Equal(corev1.EventTypeNormal), "an ordinary wait: %s", e.Message)
			named = named || strings.Contains(e.Message, first.Name)
		}
	}
	Expect(named).To(BeTrue(), "no RunWaiting event of %s names %s", seq.Name, first.Name)
}
