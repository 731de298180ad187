// Package wrappers has fluent builders for test objects (kubernetes-sigs/jobset style), so tests
// state only what differs from a valid default.
package wrappers

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// KVBenchmarkWrapper builds a KVBenchmark.
type KVBenchmarkWrapper struct{ kvv1.KVBenchmark }

// MakeKVBenchmark returns a small valid tmpfs benchmark: rocksdb, 64Mi dataset, readrandom at 1 and 4
// threads, 1Gi memory, with the defaults the API server would apply.
func MakeKVBenchmark(name, ns string) *KVBenchmarkWrapper {
	return &KVBenchmarkWrapper{kvv1.KVBenchmark{
		TypeMeta:   metav1.TypeMeta{APIVersion: kvv1.GroupVersion.String(), Kind: "KVBenchmark"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: kvv1.KVBenchmarkSpec{
			Engines: []kvv1.EngineSpec{{Name: kvv1.EngineRocksDB}},
			Dataset: kvv1.DatasetSpec{
				Size: ptr.To(resource.MustParse("64Mi")), KeySize: 16, ValueSize: 100,
				CompressionRatioPercent: 50, KeyOrder: kvv1.KeyOrderRandom, LoadMode: kvv1.LoadBulk,
			},
			Workloads: []kvv1.WorkloadSpec{{Name: kvv1.WorkloadReadRandom}},
			Threads:   []int32{1, 4},
			Resources: kvv1.BenchmarkResources{Memory: resource.MustParse("1Gi")},
			Storage:   kvv1.StorageSpec{Medium: kvv1.MediumTmpfs},
			Placement: kvv1.PlacementSpec{Exclusive: ptr.To(true)},
			CacheMode: kvv1.CacheWarm,
			Repeat:    1,
			Deadline:  &metav1.Duration{Duration: 24 * 3600e9},
			Cleanup:   kvv1.CleanupSpec{Policy: kvv1.CleanupDeleteJobs, TTLSecondsAfterFinished: ptr.To[int32](600)},
		},
	}}
}

// Obj returns a deep copy of the built object.
func (w *KVBenchmarkWrapper) Obj() *kvv1.KVBenchmark { return w.KVBenchmark.DeepCopy() }

// UID sets the UID (pure tests; the API server sets it otherwise).
func (w *KVBenchmarkWrapper) UID(uid string) *KVBenchmarkWrapper {
	w.ObjectMeta.UID = typesUID(uid)
	return w
}

// Engines replaces the engine list.
func (w *KVBenchmarkWrapper) Engines(e ...kvv1.EngineSpec) *KVBenchmarkWrapper {
	w.KVBenchmark.Spec.Engines = e
	return w
}

// EngineNames replaces the engine list with option-less engines.
func (w *KVBenchmarkWrapper) EngineNames(names ...kvv1.EngineName) *KVBenchmarkWrapper {
	w.KVBenchmark.Spec.Engines = nil
	for _, n := range names {
		w.KVBenchmark.Spec.Engines = append(w.KVBenchmark.Spec.Engines, kvv1.EngineSpec{Name: n})
	}
	return w
}

// DatasetSize sets dataset.size (and clears num).
func (w *KVBenchmarkWrapper) DatasetSize(q string) *KVBenchmarkWrapper {
	w.KVBenchmark.Spec.Dataset.Size = ptr.To(resource.MustParse(q))
	w.KVBenchmark.Spec.Dataset.Num = nil
	return w
}

// DatasetNum sets dataset.num (and clears size).
func (w *KVBenchmarkWrapper) DatasetNum(n int64) *KVBenchmarkWrapper {
	w.KVBenchmark.Spec.Dataset.Num = &n
	w.KVBenchmark.Spec.Dataset.Size = nil
	return w
}

// Dataset edits the dataset.
func (w *KVBenchmarkWrapper) Dataset(f func(*kvv1.DatasetSpec)) *KVBenchmarkWrapper {
	f(&w.KVBenchmark.Spec.Dataset)
	return w
}

// Workloads replaces the workloads.
func (w *KVBenchmarkWrapper) Workloads(ws ...kvv1.WorkloadSpec) *KVBenchmarkWrapper {
	w.KVBenchmark.Spec.Workloads = ws
	return w
}

// Threads sets the sweep.
func (w *KVBenchmarkWrapper) Threads(t ...int32) *KVBenchmarkWrapper {
	w.KVBenchmark.Spec.Threads = t
	return w
}

// Memory sets the memory limit.
func (w *KVBenchmarkWrapper) Memory(q string) *KVBenchmarkWrapper {
	w.KVBenchmark.Spec.Resources.Memory = resource.MustParse(q)
	return w
}

// CPU sets the CPU limit.
func (w *KVBenchmarkWrapper) CPU(q string) *KVBenchmarkWrapper {
	w.KVBenchmark.Spec.Resources.CPU = ptr.To(resource.MustParse(q))
	return w
}

// Storage sets the medium, size ("" for none) and storage class ("" for none).
func (w *KVBenchmarkWrapper) Storage(m kvv1.StorageMedium, size, class string) *KVBenchmarkWrapper {
	w.KVBenchmark.Spec.Storage = kvv1.StorageSpec{Medium: m}
	if size != "" {
		w.KVBenchmark.Spec.Storage.Size = ptr.To(resource.MustParse(size))
	}
	if class != "" {
		w.KVBenchmark.Spec.Storage.StorageClassName = &class
	}
	return w
}

// Exclusive sets placement.exclusive.
func (w *KVBenchmarkWrapper) Exclusive(b bool) *KVBenchmarkWrapper {
	w.KVBenchmark.Spec.Placement.Exclusive = &b
	return w
}

// EnginePlacement sets placement.engines (Sequential or Parallel).
func (w *KVBenchmarkWrapper) EnginePlacement(m kvv1.EnginePlacement) *KVBenchmarkWrapper {
	w.Spec.Placement.Engines = m
	return w
}

// EditSpec edits the spec freely.
func (w *KVBenchmarkWrapper) EditSpec(f func(*kvv1.KVBenchmarkSpec)) *KVBenchmarkWrapper {
	f(&w.KVBenchmark.Spec)
	return w
}
