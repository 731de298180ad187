//go:build e2e

package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// A user's production OPTIONS file (hand-written: a few keys, RocksDB's defaults for the rest).
const userRocksDBOptions = `[Version]
  rocksdb_version=7.8.3
  options_file_version=1.1
[DBOptions]
  max_background_jobs=3
[CFOptions "default"]
  write_buffer_size=8388608
  max_write_buffer_number=5
  level0_file_num_compaction_trigger=7
[TableOptions/BlockBasedTable "default"]
  block_size=16384
`

// Issue 19: engines[].optionsFrom mounts a ConfigMap key into the runner pod, RocksDB's own loader
// applies it, a typed option overrides it (listed in status), and the OPTIONS file RocksDB wrote
// (archived with the result) shows the user's values. A missing ConfigMap fails the run at once.
// optionsFromConfigMap runs in the suite's Ordered container (scenarios_test.go), before helm uninstall.
func optionsFromConfigMap() {
	ns := restrictedNamespace("e2e-optionsfrom")
	Expect(k8s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "prod-options", Namespace: ns},
		Data: map[string]string{"OPTIONS": userRocksDBOptions}})).To(Succeed())

	b := tmpfsBench(ns, "optionsfrom", kvv1.EngineRocksDB)
	b.Spec.Engines[0].OptionsFrom = &kvv1.OptionsFromSource{ConfigMapKeyRef: kvv1.ConfigMapKeyRef{Name: "prod-options", Key: "OPTIONS"}}
	b.Spec.Engines[0].Options.WriteBufferSize = ptr.To(resource.MustParse("4Mi"))
	b.Spec.Workloads = []kvv1.WorkloadSpec{
		{Name: kvv1.WorkloadFillRandom, Num: ptr.To[int64](20000)},
		{Name: kvv1.WorkloadReadRandom, Duration: &metav1.Duration{Duration: time.Second}},
	}
	b.Spec.Threads = []int32{1}
	missing := tmpfsBench(ns, "optionsfrom-missing", kvv1.EngineRocksDB)
	missing.Spec.Engines[0].OptionsFrom = &kvv1.OptionsFromSource{ConfigMapKeyRef: kvv1.ConfigMapKeyRef{Name: "absent", Key: "OPTIONS"}}
	create(b)
	create(missing)

	By("a missing ConfigMap: the run fails before its Job, saying what to create")
	m := waitFinished(ns, missing.Name, 5*time.Minute)
	Expect(m.Status.Phase).To(Equal(kvv1.PhaseFailed))
	Expect(m.Status.Runs[0].Reason).To(Equal(kvv1.ReasonOptionsFileMissing))
	Expect(m.Status.Runs[0].Message).To(ContainSubstring("ConfigMap " + ns + "/absent does not exist"))

	got := waitFinished(ns, b.Name, 4*time.Minute)
	Expect(got.Status.Phase).To(Equal(kvv1.PhaseSucceeded), runsSummary(got))

	By("status: the typed writeBufferSize over the file's write_buffer_size is listed")
	p := got.Status.Runs[0].Provenance
	Expect(p).NotTo(BeNil())
	Expect(p.OptionsOverrides).To(ContainElement(
		`CFOptions "default"/write_buffer_size: 8388608 -> 4194304 (engines[].options.writeBufferSize)`))

	By("archive: the OPTIONS file RocksDB wrote shows the user's values")
	res, _ := archivedResult(ns, b.Name, got.Status.Runs[0].Name)
	Expect(res.Provenance).NotTo(BeNil())
	Expect(res.Provenance.OptionsFile).NotTo(BeNil())
	text := res.Provenance.OptionsFile.Text
	for _, v := range []string{"max_background_jobs=3", "max_write_buffer_number=5", "level0_file_num_compaction_trigger=7",
		"block_size=16384", "write_buffer_size=4194304"} {
		Expect(text).To(ContainSubstring("  "+v+"\n"), "the recorded OPTIONS file")
	}
	Expect(res.Provenance.OptionsOverrides).To(ContainElement(kvv1.OptionOverride{Key: `CFOptions "default"/write_buffer_size`,
		File: "8388608", Effective: "4194304", By: "engines[].options.writeBufferSize"}))
}
