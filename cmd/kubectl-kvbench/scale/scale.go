// Package scale resizes a KVBenchmark to another dataset size while keeping its shape: every
// size-like field (memory, storage, block cache, write buffers, level sizes, operation counts,
// durations) keeps its ratio to the dataset, so a 10 GiB experiment shrunk to 256 MiB still has
// the same cache-to-data ratio, roughly the same number of LSM levels, the same mix, and pulse
// rounds with the same share of idle time. Floors keep
// the result runnable (and within the CRD's validation rules).
package scale

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

const (
	mi = int64(1) << 20
)

// Floors: below these, engines misbehave or the phase measures nothing.
var (
	minBuffer    = 1 * mi // write buffer, target file size, block cache
	minLevelBase = 4 * mi
	minStorage   = 1 << 30
	minOps       = int64(1000)
	minDuration  = 5 * time.Second
	minInterval  = time.Second
)

// Target is what to change: the dataset size (at most one of Size, in bytes, and Num, in keys),
// the storage medium, or both.
type Target struct {
	Size *resource.Quantity
	Num  *int64
	// Medium moves the database to another medium ("" keeps it); StorageClassName is the class
	// of its volume (required for persistentVolume unless the spec has one).
	Medium           kvv1.StorageMedium
	StorageClassName string
	// ThreadScale multiplies every thread count (spec.threads and each workload's) by it, rounded,
	// at least 1, repeats dropped: seed 004's 45-150 threads on a 2-core laptop (0 keeps them).
	ThreadScale float64
}

// Benchmark returns a copy of b resized to t. The dataset keeps the form b uses (size or num).
func Benchmark(b *kvv1.KVBenchmark, t Target) (*kvv1.KVBenchmark, error) {
	if t.Size != nil && t.Num != nil {
		return nil, fmt.Errorf("scale: give at most one of a dataset size and a key count")
	}
	if t.Size == nil && t.Num == nil && t.Medium == "" && t.ThreadScale == 0 {
		return nil, fmt.Errorf("scale: give a dataset size, a key count, a medium or a thread scale")
	}
	if t.ThreadScale < 0 || math.IsNaN(t.ThreadScale) || math.IsInf(t.ThreadScale, 0) {
		return nil, fmt.Errorf("scale: the thread scale must be a positive number, not %g", t.ThreadScale)
	}
	entry := entryBytes(b.Spec.Dataset)
	oldBytes, err := datasetBytes(b.Spec.Dataset, entry)
	if err != nil {
		return nil, fmt.Errorf("scale %s: %w", b.Name, err)
	}
	newBytes := oldBytes
	if t.Size != nil {
		newBytes = float64(t.Size.Value())
	} else if t.Num != nil {
		newBytes = float64(*t.Num) * entry
	}
	if newBytes < entry {
		return nil, fmt.Errorf("scale %s: the new dataset must hold at least one key (%.0f bytes)", b.Name, entry)
	}
	r := newBytes / oldBytes
	out := b.DeepCopy()
	s := &out.Spec
	// What of the memory limit is the page-cache cap and the process, not tmpfs data.
	nonData := max(0, float64(s.Resources.Memory.Value())-tmpfsData(s))

	switch {
	case t.Size == nil && t.Num == nil:
	case s.Dataset.Size != nil:
		s.Dataset.Size = mib(newBytes, 1)
	default:
		n := int64(math.Max(1, math.Round(newBytes/entry)))
		s.Dataset.Num = &n
	}

	for i := range s.Engines {
		o := &s.Engines[i].Options
		o.CacheSize = scaleQ(o.CacheSize, r, minBuffer)
		o.WriteBufferSize = scaleQ(o.WriteBufferSize, r, minBuffer)
		o.TargetFileSizeBase = scaleQ(o.TargetFileSizeBase, r, minBuffer)
		o.MaxBytesForLevelBase = scaleQ(o.MaxBytesForLevelBase, r, minLevelBase)
		o.OptimizeForPointLookup = scaleQ(o.OptimizeForPointLookup, r, minBuffer)
	}

	if s.Storage.Size != nil {
		floor := 0.0 // the CRD's storage.size rule: every engine's VolumeNeed
		for _, e := range s.Engines {
			floor = max(floor, kvv1.VolumeNeed(s, e))
		}
		if s.Storage.Medium != kvv1.MediumTmpfs {
			floor = max(floor, float64(minStorage))
		}
		s.Storage.Size = mib(max(float64(s.Storage.Size.Value())*r, floor), 1)
	}

	if t.ThreadScale > 0 {
		s.Threads = scaleThreads(s.Threads, t.ThreadScale)
		for i := range s.Workloads {
			s.Workloads[i].Threads = scaleThreads(s.Workloads[i].Threads, t.ThreadScale)
		}
	}

	if err := setMedium(s, t); err != nil {
		return nil, fmt.Errorf("scale %s: %w", b.Name, err)
	}

	// The memory limit keeps its ratio to the dataset (it is the page-cache cap), but must still hold
	// everything the CRD's memory rule counts (kvv1.MemoryNeed: caches, memtables x their count,
	// overhead, and the data on tmpfs), so a scaled spec is always accepted and never OOM-killed
	// for memory the engine was configured to take.
	need := 0.0
	for _, e := range s.Engines {
		need = max(need, kvv1.MemoryNeed(s, e))
	}
	s.Resources.Memory = *mib(max(nonData*r+tmpfsData(s), need), 256)

	for i := range s.Workloads {
		w := &s.Workloads[i]
		if w.Num != nil {
			n := scaleCount(*w.Num, r, minOps)
			w.Num = &n
		}
		if w.Duration != nil {
			w.Duration = &metav1.Duration{Duration: scaleDuration(w.Duration.Duration, r)}
		}
		if p := w.Pulse; p != nil {
			p.Reads, p.Writes, p.Deletes = scaleCount(p.Reads, r, 1), scaleCount(p.Writes, r, 1), scaleCount(p.Deletes, r, 1)
			// Rounds shrink with the counts; the interval follows so the idle share of a round stays.
			p.Interval.Duration = max(time.Duration(float64(p.Interval.Duration)*r).Round(100*time.Millisecond), min(p.Interval.Duration, minInterval))
		}
		w.DBBenchArgs = scaleArgs(w.DBBenchArgs, r)
	}
	return out, nil
}

// scaleThreads is threads times r, rounded, at least 1, in order, each count once.
func scaleThreads(threads []int32, r float64) []int32 {
	var out []int32
	for _, n := range threads {
		m := int32(max(1, math.Round(float64(n)*r)))
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// setMedium moves the database to t.Medium: a tmpfs takes what the memory limit leaves (no size,
// no class); a volume gets a size that holds the data twice over (at least 1Gi), for the writes
// and compactions that grow a database beyond its logical size.
func setMedium(s *kvv1.KVBenchmarkSpec, t Target) error {
	if t.StorageClassName != "" {
		s.Storage.StorageClassName = &t.StorageClassName
	}
	if t.Medium == "" || t.Medium == s.Storage.Medium {
		if s.Storage.Medium == kvv1.MediumTmpfs && t.StorageClassName != "" {
			return fmt.Errorf("a storage class does not apply to tmpfs")
		}
		return nil
	}
	switch t.Medium {
	case kvv1.MediumTmpfs:
		if t.StorageClassName != "" {
			return fmt.Errorf("a storage class does not apply to tmpfs")
		}
		if s.CacheMode == kvv1.CacheDirect {
			return fmt.Errorf("cacheMode direct (O_DIRECT) does not work on tmpfs: set cacheMode warm or cold first")
		}
		s.Storage = kvv1.StorageSpec{Medium: kvv1.MediumTmpfs}
	case kvv1.MediumLocalNVMe, kvv1.MediumPersistentVolume:
		if s.Storage.Medium == kvv1.MediumTmpfs || s.Storage.Size == nil {
			s.Storage.Size = mib(max(volumeNeed(s), float64(minStorage)), 1)
		}
		if t.Medium == kvv1.MediumPersistentVolume && s.Storage.StorageClassName == nil {
			return fmt.Errorf("medium persistentVolume needs a storage class (--storage-class)")
		}
		if s.Storage.Medium == kvv1.MediumPersistentVolume && t.StorageClassName == "" {
			s.Storage.StorageClassName = nil // the persistent volume's class is no local-NVMe class
		}
		s.Storage.Medium = t.Medium
	default:
		return fmt.Errorf("unknown medium %q (tmpfs, localNVMe, persistentVolume)", t.Medium)
	}
	return nil
}

// entryBytes is one key plus the average value, as the runner turns a size into a key count.
func entryBytes(d kvv1.DatasetSpec) float64 {
	if d.YCSB != nil {
		return kvv1.YCSBEntryBytes(d)
	}
	key, value := float64(d.KeySize), float64(d.ValueSize)
	if key == 0 {
		key = 16
	}
	if d.ValueSizeRange != nil {
		value = float64(d.ValueSizeRange.Min+d.ValueSizeRange.Max) / 2
	} else if d.ValueSize == 0 {
		value = 100
	}
	return key + value
}

func datasetBytes(d kvv1.DatasetSpec, entry float64) (float64, error) {
	switch {
	case d.Size != nil && d.Size.Value() > 0:
		return float64(d.Size.Value()), nil
	case d.Num != nil && *d.Num > 0:
		return float64(*d.Num) * entry, nil
	}
	return 0, fmt.Errorf("the dataset has neither a size nor a key count")
}

func scaleQ(q *resource.Quantity, r float64, floor int64) *resource.Quantity {
	if q == nil {
		return nil
	}
	return mib(max(float64(q.Value())*r, float64(floor)), 1)
}

// mib rounds bytes up to a multiple of step MiB, so quantities stay readable ("257Mi", not "269484032").
func mib(bytes float64, step int64) *resource.Quantity {
	unit := step * mi
	n := int64(math.Ceil(bytes / float64(unit)))
	if n < 1 {
		n = 1
	}
	return resource.NewQuantity(n*unit, resource.BinarySI)
}

func scaleCount(n int64, r float64, floor int64) int64 {
	if n <= 0 {
		return n
	}
	return max(int64(math.Round(float64(n)*r)), min(n, floor))
}

func scaleDuration(d time.Duration, r float64) time.Duration {
	s := time.Duration(float64(d) * r).Round(time.Second)
	return max(s, min(d, minDuration))
}

// scaleArgs scales db_bench's count flags (--num, --reads, --duration) in a verbatim command line.
func scaleArgs(args []string, r float64) []string {
	if len(args) == 0 {
		return args
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		name, val, ok := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(val, 10, 64)
		if err != nil || n <= 0 {
			continue
		}
		switch name {
		case "num", "reads", "writes":
			out[i] = fmt.Sprintf("--%s=%d", name, scaleCount(n, r, minOps))
		case "duration":
			out[i] = fmt.Sprintf("--%s=%d", name, int64(scaleDuration(time.Duration(n)*time.Second, r)/time.Second))
		}
	}
	return out
}

// tmpfsData is what of the memory limit the database on tmpfs takes (0 on a volume).
func tmpfsData(s *kvv1.KVBenchmarkSpec) float64 {
	d := 0.0
	for _, e := range s.Engines {
		d = max(d, kvv1.TmpfsDataBytes(s, e))
	}
	return d
}

// volumeNeed is the largest engine's database on its volume (kvv1.VolumeNeed).
func volumeNeed(s *kvv1.KVBenchmarkSpec) float64 {
	v := 0.0
	for _, e := range s.Engines {
		v = max(v, kvv1.VolumeNeed(s, e))
	}
	return v
}
