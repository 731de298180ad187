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

// Target is the new dataset size: exactly one of Size (bytes) and Num (keys).
type Target struct {
	Size *resource.Quantity
	Num  *int64
}

// Benchmark returns a copy of b resized to t. The dataset keeps the form b uses (size or num).
func Benchmark(b *kvv1.KVBenchmark, t Target) (*kvv1.KVBenchmark, error) {
	if (t.Size == nil) == (t.Num == nil) {
		return nil, fmt.Errorf("scale: give exactly one of a dataset size and a key count")
	}
	entry := entryBytes(b.Spec.Dataset)
	oldBytes, err := datasetBytes(b.Spec.Dataset, entry)
	if err != nil {
		return nil, fmt.Errorf("scale %s: %w", b.Name, err)
	}
	newBytes := float64(0)
	if t.Size != nil {
		newBytes = float64(t.Size.Value())
	} else {
		newBytes = float64(*t.Num) * entry
	}
	if newBytes < entry {
		return nil, fmt.Errorf("scale %s: the new dataset must hold at least one key (%.0f bytes)", b.Name, entry)
	}
	r := newBytes / oldBytes
	out := b.DeepCopy()
	s := &out.Spec

	switch {
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
		floor := max(newBytes, kvv1.DatasetBytesF(s.Dataset)) * kvv1.DataCopies(s) // the CRD's storage.size rules
		if s.Storage.Medium != kvv1.MediumTmpfs {
			floor = max(floor, float64(minStorage))
		}
		s.Storage.Size = mib(max(float64(s.Storage.Size.Value())*r, floor), 1)
	}

	// The memory limit keeps its ratio to the dataset (it is the page-cache cap), but must still hold
	// everything the CRD's memory rule counts (kvv1.MemoryNeed: caches, memtables x their count,
	// overhead, and the data on tmpfs), so a scaled spec is always accepted and never OOM-killed
	// for memory the engine was configured to take.
	need := 0.0
	for _, e := range s.Engines {
		need = max(need, kvv1.MemoryNeed(s, e))
	}
	if s.Storage.Medium == kvv1.MediumTmpfs && s.Storage.Size == nil {
		// The tmpfs gets what the limit leaves; the phases' writes and compaction's rewrites grow the
		// database beyond the logical dataset, so leave it the dataset once more (seed 000 at 1M keys
		// filled a tmpfs sized for the dataset alone).
		need += kvv1.DatasetBytesF(s.Dataset)
	}
	s.Resources.Memory = *mib(max(float64(s.Resources.Memory.Value())*r, need), 256)

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
