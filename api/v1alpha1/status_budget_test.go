package v1alpha1_test

import (
	"fmt"
	"math/rand/v2"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

var sweepWorkloads = []kvv1.WorkloadName{kvv1.WorkloadReadRandom, kvv1.WorkloadFillRandom, kvv1.WorkloadReadSeq,
	kvv1.WorkloadOverwrite, kvv1.WorkloadSeekRandom, kvv1.WorkloadReadMissing, kvv1.WorkloadUpdateRandom, kvv1.WorkloadReadReverse}

// planSpec is a valid spec of engines x workloads x threads x repeats, spread EachNode over
// nodes when nodes > 0.
func planSpec(engines, workloads, threads, repeats, nodes int) *w.KVBenchmarkWrapper {
	names := []kvv1.EngineName{kvv1.EngineRocksDB, kvv1.EngineLevelDB, kvv1.EnginePebble}
	b := base().EngineNames(names[:engines]...)
	var ws []kvv1.WorkloadSpec
	for i := range workloads {
		ws = append(ws, kvv1.WorkloadSpec{Name: sweepWorkloads[i%len(sweepWorkloads)]})
	}
	var ts []int32
	for i := range threads {
		ts = append(ts, int32(i+1))
	}
	return b.Workloads(ws...).Threads(ts...).EditSpec(func(s *kvv1.KVBenchmarkSpec) {
		s.Repeat = int32(repeats)
		if nodes > 0 {
			s.Placement.Spread, s.Placement.MaxNodes = kvv1.SpreadEachNode, ptr.To(int32(nodes))
		}
	})
}

// statusText is what the rule's message says of a spec, from StatusNeed.
func statusText(s *kvv1.KVBenchmarkSpec) string {
	need := kvv1.StatusNeed(s)
	return fmt.Sprintf("the plan needs %d bytes of status at the least (%d run(s) x (4096 + %d phase(s) x 256) + 32768), over the 1048576-byte budget by %d bytes",
		need, kvv1.PlannedRuns(s), kvv1.PlannedPhasesPerRun(s), need-kvv1.StatusBudgetBytes)
}

var _ = Describe("status budget rule", func() {
	// Issue 18: both were accepted; the first made a 2.9 MiB status, the second 1.3 MiB, and every
	// status write failed.
	It("refuses issue 18's EachNode spec saying by how much, and accepts the 1-node one (whose status the operator fits)", func() {
		a := planSpec(3, 2, 4, 3, 100).Obj()
		err := dryRunCreate(a)
		Expect(err).To(HaveOccurred(), "EachNode 100 nodes x 3 engines x 2 workloads x 4 threads x 3 repeats")
		Expect(err.Error()).To(ContainSubstring(statusText(&a.Spec)))
		Expect(err.Error()).To(ContainSubstring("3104768 bytes of status at the least (300 run(s) x (4096 + 24 phase(s) x 256) + 32768), over the 1048576-byte budget by 2056192 bytes"))
		Expect(dryRunCreate(planSpec(3, 32, 16, 2, 0).Obj())).To(Succeed(), "1 node x 3 engines x 32 workloads x 16 threads x 2 repeats")
	})

	It("accepts exactly the specs whose StatusNeed fits (Go and CEL agree)", func() {
		r := rand.New(rand.NewPCG(18, 4))
		accepted, rejected := 0, 0
		for i := range 120 {
			nodes := 0
			if r.IntN(2) == 0 {
				nodes = 1 + r.IntN(100)
			}
			b := planSpec(1+r.IntN(3), 1+r.IntN(32), 1+r.IntN(16), 1+r.IntN(20), nodes).Obj()
			if i%7 == 0 { // a workload with its own thread counts
				b.Spec.Workloads[0].Threads = []int32{1, 2, 3}
			}
			err := dryRunCreate(b)
			if kvv1.StatusNeed(&b.Spec) <= kvv1.StatusBudgetBytes {
				Expect(err).NotTo(HaveOccurred(), "spec %d: Go says it fits", i)
				accepted++
				continue
			}
			Expect(err).To(HaveOccurred(), "spec %d: Go says it does not fit", i)
			Expect(err.Error()).To(ContainSubstring(statusText(&b.Spec)), "spec %d", i)
			rejected++
		}
		Expect(accepted).To(BeNumerically(">", 20))
		Expect(rejected).To(BeNumerically(">", 20))
	})
})
