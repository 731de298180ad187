//go:build e2e

package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// expectMeasurementProtocol runs RocksDB and LevelDB (which maps its tables) on local NVMe with a
// warm-up, settle, reset perPoint and a cold page cache, and checks every phase of the archived
// full results records each step, with the database's pages evicted.
func expectMeasurementProtocol(ns string) {
	GinkgoHelper()
	b := tmpfsBench(ns, "protocol", kvv1.EngineRocksDB)
	b.Spec.Engines = []kvv1.EngineSpec{{Name: kvv1.EngineRocksDB}, {Name: kvv1.EngineLevelDB}}
	b.Spec.Storage = kvv1.StorageSpec{Medium: kvv1.MediumLocalNVMe, Size: ptr.To(resource.MustParse("1Gi"))}
	b.Spec.Workloads[0].Warmup = &kvv1.WarmupSpec{Ops: ptr.To[int64](1000)}
	b.Spec.Settle = &kvv1.SettleSpec{Timeout: metav1.Duration{Duration: time.Minute}}
	b.Spec.Reset = kvv1.ResetPerPoint
	b.Spec.CacheMode = kvv1.CacheCold
	create(b)
	got := waitFinished(ns, b.Name, 4*time.Minute)
	Expect(got.Status.Phase).To(Equal(kvv1.PhaseSucceeded), runsSummary(got))
	for _, r := range got.Status.Runs {
		res, _ := archivedResult(ns, b.Name, r.Name)
		Expect(res.Phases).To(HaveLen(2), r.Name)
		for _, p := range res.Phases {
			pr := p.Protocol
			Expect(pr).NotTo(BeNil(), "%s %s x%d", r.Name, p.Workload, p.Threads)
			Expect(pr.ResetSeconds).NotTo(BeNil(), "%s x%d: reset", r.Name, p.Threads)
			Expect(pr.WarmupOps).To(Equal(1000*int64(p.Threads)), "%s x%d: warm-up", r.Name, p.Threads)
			Expect(pr.SettleSeconds).NotTo(BeNil(), "%s x%d: settle", r.Name, p.Threads)
			Expect(pr.SettleTimedOut).To(BeFalse(), "%s x%d: settle", r.Name, p.Threads)
			Expect(pr.CacheResidentFraction).NotTo(BeNil(), "%s x%d: residency", r.Name, p.Threads)
			Expect(*pr.CacheResidentFraction).To(BeNumerically("<", 0.5), "%s x%d: cold, yet resident", r.Name, p.Threads)
		}
	}
}

// expectRateTargetInReport runs readwhilewriting with an unreachable writer target (50M writes/s)
// and a reachable one (200/s for 5 s) on a tiny tmpfs RocksDB, and checks that status carries the verdict
// and the service p99, and that `kubectl kvbench report` marks the missed target next to the
// writes' latency from the schedule and from their start.
func expectRateTargetInReport(ns string) {
	GinkgoHelper()
	b := tmpfsBench(ns, "rate-target", kvv1.EngineRocksDB)
	rww := func(rate int64, d time.Duration) kvv1.WorkloadSpec {
		return kvv1.WorkloadSpec{Name: kvv1.WorkloadReadWhileWriting, WritesPerSecond: ptr.To(rate), Duration: &metav1.Duration{Duration: d}}
	}
	// The reachable target runs 5 s, so a stall of up to 250 ms at its end stays inside the 5% allowed.
	b.Spec.Workloads = []kvv1.WorkloadSpec{rww(50_000_000, 2*time.Second), rww(200, 5*time.Second)}
	b.Spec.Threads = []int32{1}
	create(b)
	got := waitFinished(ns, b.Name, 3*time.Minute)
	Expect(got.Status.Phase).To(Equal(kvv1.PhaseSucceeded), runsSummary(got))
	res := got.Status.Runs[0].Results
	Expect(res).To(HaveLen(2))
	missed, reached := res[0], res[1]
	Expect(missed.TargetOpsPerSec).To(HaveValue(BeNumerically("==", 50_000_000)))
	Expect(missed.TargetMissed).To(BeTrue(), "50M writes/s reached %v", missed.WriteRate)
	Expect(missed.ServiceP99Micros).NotTo(BeNil())
	Expect(reached.TargetOpsPerSec).To(HaveValue(BeNumerically("==", 200)))
	Expect(reached.TargetMissed).To(BeFalse(), "200 writes/s reached %v", reached.WriteRate)

	out := run(buildPlugin(), "report", b.Name, "-n", ns, "--table", "threads")
	Expect(out).To(ContainSubstring("rocksdb writes/s"))
	Expect(out).To(ContainSubstring("rocksdb write p99 (us) schedule/service"))
	Expect(out).To(MatchRegexp(`(?m)^readwhilewriting +1 +[0-9]+ +[0-9.]+ +[0-9]+ \(target 50000000 missed\) +[0-9.]+ / [0-9.]+$`))
	Expect(out).To(MatchRegexp(`(?m)^readwhilewriting#2 +1 +[0-9]+ +[0-9.]+ +[0-9]+ \(target 200\) +[0-9.]+ / [0-9.]+$`))
	Expect(out).To(ContainSubstring("a missed target's schedule latency is mostly the writer's backlog"))
	AddReportEntry("kubectl kvbench report rate-target", out)
}
