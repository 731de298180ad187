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
