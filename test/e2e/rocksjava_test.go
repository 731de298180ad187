//go:build e2e

package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// rocksJavaBesideRocksDB: one benchmark, engines rocksdb (the Go runner, cgo) and rocksjava (the Java
// runner's image, by its pushed digest) on one node in turn, on the same small dataset; both runs
// reach status, Prometheus and kubectl kvbench report with nothing engine-specific in between.
func rocksJavaBesideRocksDB(ns string) {
	GinkgoHelper()
	b := tmpfsBench(ns, "rocksjava", kvv1.EngineRocksDB)
	b.Spec.Engines = []kvv1.EngineSpec{{Name: kvv1.EngineRocksDB}, {Name: kvv1.EngineRocksJava}}
	b.Spec.Dataset.LoadMode = kvv1.LoadFillSeq // the Java runner loads by puts: both the same way
	b.Spec.Workloads = []kvv1.WorkloadSpec{
		{Name: kvv1.WorkloadFillRandom, Num: ptr.To[int64](20000), Threads: []int32{1}},
		{Name: kvv1.WorkloadReadRandom, Duration: &metav1.Duration{Duration: 2 * time.Second},
			Warmup: &kvv1.WarmupSpec{Ops: ptr.To[int64](1000)}},
	}
	create(b)
	got := waitFinished(ns, b.Name, 4*time.Minute)
	Expect(got.Status.Phase).To(Equal(kvv1.PhaseSucceeded), runsSummary(got))
	expectCompleteResults(got)

	By("status: both runs, one node, one after the other; rocksjava from the Java runner's image")
	runs := map[kvv1.EngineName]kvv1.RunStatus{}
	for _, r := range got.Status.Runs {
		runs[r.Engine] = r
	}
	Expect(runs).To(HaveLen(2))
	java, cgo := runs[kvv1.EngineRocksJava], runs[kvv1.EngineRocksDB]
	Expect(java.NodeName).To(Equal(cgo.NodeName))
	Expect(java.Provenance).NotTo(BeNil())
	Expect(java.Provenance.ImageDigest).To(Equal(javaRef.digest), "the rocksjava run pulled the Java runner image by its pushed digest")
	Expect(cgo.Provenance.ImageDigest).To(Equal(runnerRef.digest))
	Expect(java.Load).NotTo(BeNil())
	for _, p := range java.Results {
		Expect(p.OpsPerSec).To(BeNumerically(">", 0), "%s x%d", p.Workload, p.Threads)
	}

	By("archive: the Java runner's result, with its provenance and the warm-up before each readrandom")
	res, _ := archivedResult(ns, b.Name, java.Name)
	Expect(res.Engine).To(Equal(kvv1.EngineRocksJava))
	Expect(res.Provenance.Libraries).To(HaveKeyWithValue("rocksdbjni", "7.8.3"))
	Expect(res.Provenance.Libraries).To(HaveKeyWithValue("rocksdb", "7.8.3"))
	Expect(res.Provenance.Node).NotTo(BeNil())
	Expect(res.Provenance.Node.NodeName).To(Equal(java.NodeName), "NODE_NAME from the downward API")
	for _, p := range res.Phases {
		if p.Workload == "readrandom" {
			Expect(p.Protocol).NotTo(BeNil())
			Expect(p.Protocol.WarmupOps).To(Equal(1000*int64(p.Threads)), "readrandom x%d", p.Threads)
		}
		Expect(p.LatencyHistogram).NotTo(BeEmpty())
	}

	By("Prometheus has both engines' numbers, equal to the status")
	expectPrometheusMatchesStatus(got)

	By("kubectl kvbench report puts the engines side by side, a number in each one's columns")
	out := run(buildPlugin(), "report", b.Name, "-n", ns)
	Expect(out).To(MatchRegexp(`(?m)^ *Workload +Threads +rocksdb ops/s +rocksdb p99 \(us\) +rocksjava ops/s +rocksjava p99 \(us\)$`), out)
	for _, th := range []string{"1", "2"} {
		Expect(out).To(MatchRegexp(`(?m)^ *readrandom +`+th+` +[0-9]+ +[0-9.]+ +[0-9]+ +[0-9.]+$`), out)
	}
	AddReportEntry("kubectl kvbench report rocksjava", out)
}
