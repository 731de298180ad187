// Package plan expands a KVBenchmark into runs. It is pure: same spec, same runs.
//
// Granularity: one run per engine. The thread sweep and the repeat loop run inside the run's pod,
// so a 100 GB dataset is loaded once per engine rather than once per thread count.
package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"math"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

const (
	// DataDir is where the database volume is mounted in the runner container.
	DataDir = "/data"
	// DBPath is the database directory inside DataDir.
	DBPath = DataDir + "/db"
	// MemoryOverheadBytes is what a runner needs besides caches, memtables and tmpfs data; the
	// memory model (and the CRD's CEL rule mirroring it) lives in api/v1alpha1/memory.go.
	MemoryOverheadBytes = kvv1.MemoryOverheadBytes
	// maxJobNameLen keeps Job names valid as label values (the job-name label) and pod name prefixes.
	maxJobNameLen = 63
)

// Run is one engine's runner Job.
type Run struct {
	// Name is the run's name in status (the engine name).
	Name string
	// JobName is deterministic, so a restarted operator finds the Job instead of creating another.
	JobName string
	Engine  kvv1.EngineSpec
	// Config is what the runner executes.
	Config kvv1.RunnerConfig
	// DatasetBytes is the logical dataset size (a metrics label and the tmpfs sizing input).
	DatasetBytes int64
}

// Plan returns the runs of b in spec order.
func Plan(b *kvv1.KVBenchmark) []Run {
	runs := make([]Run, 0, len(b.Spec.Engines))
	for _, e := range b.Spec.Engines {
		cfg := kvv1.RunnerConfig{
			Engine:    *e.DeepCopy(),
			Dataset:   *b.Spec.Dataset.DeepCopy(),
			Threads:   append([]int32(nil), b.Spec.Threads...),
			CacheMode: b.Spec.CacheMode,
			Repeat:    b.Spec.Repeat,
			DBPath:    DBPath,
		}
		for _, w := range b.Spec.Workloads {
			cfg.Workloads = append(cfg.Workloads, *w.DeepCopy())
		}
		if b.Spec.ReportInterval != nil {
			cfg.ReportInterval = &metav1.Duration{Duration: b.Spec.ReportInterval.Duration}
		}
		runs = append(runs, Run{
			Name:         string(e.Name),
			JobName:      JobName(b.Name, string(e.Name)),
			Engine:       *e.DeepCopy(),
			Config:       cfg,
			DatasetBytes: DatasetBytes(b.Spec.Dataset),
		})
	}
	return runs
}

// JobName is "<benchmark>-<run>", shortened with a hash suffix if it would exceed 63 characters.
// The CRD limits benchmark names to 50 characters, so the hash is a safety net.
func JobName(benchmark, run string) string {
	name := benchmark + "-" + run
	if len(name) <= maxJobNameLen {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return name[:maxJobNameLen-11] + "-" + hex.EncodeToString(sum[:])[:10]
}

// DatasetBytes is the logical dataset size: size, or num x (keySize + average value size).
func DatasetBytes(d kvv1.DatasetSpec) int64 {
	if d.Size != nil {
		return d.Size.Value()
	}
	if d.Num == nil {
		return 0
	}
	value := int64(d.ValueSize)
	if d.ValueSizeRange != nil {
		value = (int64(d.ValueSizeRange.Min) + int64(d.ValueSizeRange.Max)) / 2
	}
	return *d.Num * (int64(d.KeySize) + value)
}

// TmpfsBytes is the sizeLimit of a tmpfs run's emptyDir: storage.size if set, else everything the
// memory limit leaves after what the engine allocates (caches, memtables), the runner's buffers and the overhead, the
// same model as the CRD's memory rule (kvv1.MemoryNeed), which guarantees that this holds the dataset.
func TmpfsBytes(b *kvv1.KVBenchmark, e kvv1.EngineSpec) *resource.Quantity {
	if b.Spec.Storage.Size != nil {
		q := b.Spec.Storage.Size.DeepCopy()
		return &q
	}
	n := b.Spec.Resources.Memory.Value() - MemoryOverheadBytes - int64(math.Ceil(kvv1.EngineMemoryBytes(e)+kvv1.RunnerBufferBytes(&b.Spec)))
	return resource.NewQuantity(n, resource.BinarySI)
}
