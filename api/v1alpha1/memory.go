package v1alpha1

import (
	"math"
	"slices"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Memory model of a runner pod. MemoryNeed is the one definition; the CRD's CEL rule on
// KVBenchmarkSpec mirrors it term by term (same float arithmetic, same order), scale sizes memory
// with it and plan sizes tmpfs with it. memory_test.go checks that CEL and Go agree.
const (
	// MemoryOverheadBytes is what a runner needs besides caches, memtables and tmpfs data (Go
	// heap, histograms, table readers, buffers). The CEL rule spells it 268435456.0.
	MemoryOverheadBytes = 256 << 20
	// DefaultCacheBytes is the block cache every adapter uses when cacheSize is unset (db_bench's 8 MiB).
	DefaultCacheBytes = 8 << 20
	// DefaultMaxWriteBufferNumber is the memtable count when unset: RocksDB's and Pebble's
	// (MemTableStopWritesThreshold) default, and LevelDB's fixed memtable plus immutable memtable.
	DefaultMaxWriteBufferNumber = 2
)

// DefaultWriteBufferBytes is the engine's memtable size when writeBufferSize is unset:
// RocksDB's (and db_bench's) 64 MiB, LevelDB's and Pebble's 4 MiB.
func DefaultWriteBufferBytes(e EngineName) float64 {
	if e == EngineRocksDB {
		return 64 << 20
	}
	return 4 << 20
}

func qf(q *resource.Quantity, def float64) float64 {
	if q == nil {
		return def
	}
	return q.AsApproximateFloat64()
}

// EngineMemoryBytes is what the engine allocates besides the tmpfs data: its block cache (8 MiB
// when unset), optimizeForPointLookup's own cache, and its memtables (size x count).
func EngineMemoryBytes(e EngineSpec) float64 {
	o := e.Options
	n := float64(DefaultMaxWriteBufferNumber)
	if o.MaxWriteBufferNumber != nil {
		n = float64(*o.MaxWriteBufferNumber)
	}
	return qf(o.CacheSize, DefaultCacheBytes) + qf(o.OptimizeForPointLookup, 0) +
		qf(o.WriteBufferSize, DefaultWriteBufferBytes(e.Name))*n
}

// DatasetBytesF is the logical dataset size: size, or num x (keySize + average value size) (YCSB
// records: num x YCSBEntryBytes), in
// float64 so that no spec overflows it (CEL computes it in double too). Zero key and value sizes
// are the API server's defaults (16, 100), which a Go client's omitempty leaves out.
func DatasetBytesF(d DatasetSpec) float64 {
	if d.Size != nil {
		return d.Size.AsApproximateFloat64()
	}
	if d.Num == nil {
		return 0
	}
	if d.YCSB != nil {
		return float64(*d.Num) * YCSBEntryBytes(d)
	}
	key, value := d.KeySize, d.ValueSize
	if key == 0 {
		key = 16
	}
	if d.ValueSizeRange != nil {
		value = (d.ValueSizeRange.Min + d.ValueSizeRange.Max) / 2
	} else if value == 0 {
		value = 100
	}
	return float64(*d.Num) * float64(key+value)
}

// DataCopies is how many copies of the data the volume must have room for: 2 with reset perPoint,
// whose post-load checkpoint lives next to the database. Its table files are hard links, free at
// first, but every file a point's writes and compactions replace stays alive through the
// checkpoint, so by the end of a point the volume can hold the data twice.
func DataCopies(s *KVBenchmarkSpec) float64 {
	if s.Reset == ResetPerPoint {
		return 2
	}
	return 1
}

// TmpfsDataBytes is what the database may put into memory on tmpfs: storage.size (the sizeLimit)
// if set, else the dataset times DataCopies; 0 on other media.
func TmpfsDataBytes(s *KVBenchmarkSpec) float64 {
	if s.Storage.Medium != MediumTmpfs {
		return 0
	}
	if s.Storage.Size != nil {
		return s.Storage.Size.AsApproximateFloat64()
	}
	return DatasetBytesF(s.Dataset) * DataCopies(s)
}

// MaxThreads is the largest thread count any workload runs with (the sweep or its own threads).
func MaxThreads(s *KVBenchmarkSpec) int32 {
	n := int32(0)
	if len(s.Threads) > 0 {
		n = slices.Max(s.Threads)
	}
	for _, w := range s.Workloads {
		if len(w.Threads) > 0 {
			n = max(n, slices.Max(w.Threads))
		}
	}
	return n
}

// RunnerBufferBytes is the runner's own memory that grows with threads: every worker thread of a
// phase fills a value buffer of max(1 MiB, the largest value), and Go's collector lets the heap
// grow to twice what is live (GOGC=100) while one phase's buffers are garbage and the next's are
// being filled. (At 150 threads this alone is 300 MiB: seed-004-1kb's YCSB 1:0 phase.)
func RunnerBufferBytes(s *KVBenchmarkSpec) float64 {
	value := s.Dataset.ValueSize
	if s.Dataset.ValueSizeRange != nil {
		value = s.Dataset.ValueSizeRange.Max
	}
	return float64(MaxThreads(s)) * math.Max(1<<20, float64(value)) * 2
}

// MemoryNeed is the memory limit engine e's run needs: engine memory, overhead, the runner's
// per-thread buffers and tmpfs data.
func MemoryNeed(s *KVBenchmarkSpec, e EngineSpec) float64 {
	return EngineMemoryBytes(e) + MemoryOverheadBytes + RunnerBufferBytes(s) + TmpfsDataBytes(s)
}

// MemoryFits reports whether resources.memory holds every engine's MemoryNeed (the CEL rule).
func MemoryFits(s *KVBenchmarkSpec) bool {
	m := s.Resources.Memory.AsApproximateFloat64()
	for _, e := range s.Engines {
		if m < MemoryNeed(s, e) {
			return false
		}
	}
	return true
}
