//go:build e2e

package e2e

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// expectEvidence runs a small RocksDB benchmark and checks what issue 10 records: the provenance
// summary in status (a sha256: image digest, the resolved seed, spec hash and node line), the
// full provenance and engine statistics in the archived result (node fingerprint with the node
// name from the downward API, the OPTIONS file, the bulk load's bottom level in levels[]), and
// `kubectl kvbench report --format tsv` with a
// header and one line per phase (the load included).
func expectEvidence(ns string) {
	GinkgoHelper()
	b := tmpfsBench(ns, "evidence", kvv1.EngineRocksDB)
	b.Spec.Workloads = []kvv1.WorkloadSpec{
		{Name: kvv1.WorkloadFillRandom, Num: ptr.To[int64](20000)},
		{Name: kvv1.WorkloadReadRandom, Duration: &metav1.Duration{Duration: 2 * time.Second}},
	}
	b.Spec.Threads = []int32{1}
	create(b)
	got := waitFinished(ns, b.Name, 3*time.Minute)
	Expect(got.Status.Phase).To(Equal(kvv1.PhaseSucceeded), runsSummary(got))

	By("status: the provenance summary")
	p := got.Status.Runs[0].Provenance
	Expect(p).NotTo(BeNil())
	Expect(p.ImageDigest).To(Equal(runnerRef.digest), "the runner pulled from the registry by the pushed digest")
	Expect(p.SpecHash).To(HavePrefix("sha256:"))
	Expect(p.Seed).To(Equal(int64(301)), "an unset seed is written down as the default it became")
	Expect(p.Node).To(ContainSubstring("kernel"))
	Expect(p.Builds).To(ConsistOf(MatchRegexp(`^rocksdb: 7\.8\.3, assertions off, release build of Debian source package rocksdb 7\.8\.3-\S+ \(amd64\)$`)),
		"the image links the release build (hack/engine-build.sh), not Debian's assertion build")

	By("archive: full provenance and engine statistics per phase")
	res, _ := archivedResult(ns, b.Name, got.Status.Runs[0].Name)
	Expect(res.Provenance).NotTo(BeNil())
	Expect(res.Provenance.ImageDigest).To(Equal(p.ImageDigest))
	n := res.Provenance.Node
	Expect(n).NotTo(BeNil())
	Expect(n.NodeName).To(Equal(got.Status.Runs[0].NodeName), "NODE_NAME from the downward API")
	Expect(n.CPUs).To(BeNumerically(">", 0))
	Expect(n.Kernel).NotTo(BeEmpty())
	Expect(n.DataFilesystem).To(Equal("tmpfs"))
	Expect(n.DeviceUnavailable).To(ContainSubstring("tmpfs"))
	Expect(res.Provenance.OptionsFile).NotTo(BeNil())
	Expect(res.Provenance.OptionsFile.Text).To(ContainSubstring("[DBOptions]"))
	Expect(res.Provenance.Libraries).To(HaveKeyWithValue("rocksdb", "7.8.3"))
	Expect(res.Provenance.LibraryBuilds).To(HaveKey("leveldb"))
	Expect(res.Provenance.LibraryBuilds["rocksdb"].Assertions).To(Equal("off"))
	Expect(res.Provenance.LibraryBuilds["rocksdb"].Flags).To(ContainSubstring("-DNDEBUG"))
	Expect(res.Phases).To(HaveLen(2))
	fill := res.Phases[0].EngineStats
	Expect(fill).NotTo(BeNil())
	Expect(fill.FlushBytesWritten).NotTo(BeNil())
	Expect(fill.LSMBytes).NotTo(BeNil())
	Expect(res.Phases[0].Usage.MaxRSSBytes).To(BeNumerically(">", 0))

	By("archive: the bulk-loaded tree is in levels[]: ingestion filled the bottom level, L6")
	Expect(res.Load).NotTo(BeNil(), "the dataset is bulk-loaded by default")
	load := res.Load.EngineStats
	Expect(load).NotTo(BeNil())
	Expect(load.LSMBytes).NotTo(BeNil())
	Expect(*load.LSMBytes).To(BeNumerically(">", 0))
	Expect(load.Levels).To(ContainElement(SatisfyAll(HaveField("Level", int32(6)), HaveField("Files", BeNumerically(">", 0)),
		HaveField("Bytes", BeNumerically("~", *load.LSMBytes, *load.LSMBytes/10)))), "levels %+v, lsm bytes %d", load.Levels, *load.LSMBytes)

	By("kubectl kvbench report --format tsv: benchmark.sh's header and one line per phase")
	out := run(buildPlugin(), "report", b.Name, "-n", ns, "--format", "tsv")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	Expect(lines[0]).To(HavePrefix("ops_sec\tmb_sec\tlsm_sz\tblob_sz\tc_wgb\tw_amp\t"))
	want := 1 + len(res.Phases)
	if res.Load != nil {
		want++
	}
	Expect(lines).To(HaveLen(want), "header, load, phases:\n%s", out)
	AddReportEntry("kubectl kvbench report evidence --format tsv", out)
}
