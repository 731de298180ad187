//go:build e2e

package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// fairComparisons: a two-engine benchmark runs its engines one after another on one node by
// default (placement.engines Sequential), even when not exclusive; with Parallel they overlap.
func fairComparisons(ns string) {
	twoEngines := func(name string, mode kvv1.EnginePlacement) *kvv1.KVBenchmark {
		b := tmpfsBench(ns, name, kvv1.EngineRocksDB)
		b.Spec.Engines = []kvv1.EngineSpec{{Name: kvv1.EngineRocksDB}, {Name: kvv1.EnginePebble}}
		b.Spec.Placement.Engines = mode // tmpfsBench is not exclusive, so only the order keeps them apart
		return b
	}
	seq := create(twoEngines("fair-sequential", ""))
	par := create(twoEngines("fair-parallel", kvv1.EnginesParallel))

	got := waitFinished(ns, seq.Name, 2*time.Minute)
	Expect(got.Status.Phase).To(Equal(kvv1.PhaseSucceeded), runsSummary(got))
	Expect(got.Spec.Placement.Engines).To(Equal(kvv1.EnginesSequential), "the default")
	expectCompleteResults(got)
	first, second := got.Status.Runs[0], got.Status.Runs[1]
	Expect(first.Name).To(Equal("rocksdb"), "runs keep the spec order")
	Expect(first.NodeName).NotTo(BeEmpty())
	Expect(second.NodeName).To(Equal(first.NodeName), "both engines on the node the scheduler chose for the first")
	Expect(got.Status.Nodes).To(Equal(int32(1)))
	Expect(second.StartTime.Time).NotTo(BeTemporally("<", first.CompletionTime.Time),
		"pebble started %s, before rocksdb finished %s", second.StartTime, first.CompletionTime)

	got = waitFinished(ns, par.Name, 2*time.Minute)
	Expect(got.Status.Phase).To(Equal(kvv1.PhaseSucceeded), runsSummary(got))
	expectCompleteResults(got)
	a, b := got.Status.Runs[0], got.Status.Runs[1]
	Expect(a.StartTime.Before(b.CompletionTime) && b.StartTime.Before(a.CompletionTime)).To(BeTrue(),
		"Parallel runs overlap: rocksdb %s-%s, pebble %s-%s", a.StartTime, a.CompletionTime, b.StartTime, b.CompletionTime)
	out := run(kubectl, "get", "kvb", "-n", ns, seq.Name, par.Name, "-o", "wide")
	GinkgoWriter.Println(out)
	AddReportEntry("fair comparisons: kubectl get kvb -o wide", out)
}
