package v1alpha1

import (
	"math"
	"slices"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Memory model of a runner pod. MemoryNeed is the one definition; the CRD's CEL rule on
// KVBenchmarkSpec mirrors it term by term (same float arithmetic, same order), scale sizes memory
// with it and plan sizes tmpfs with it. VolumeNeed is the database volume's model, which the
// memory rule counts on tmpfs and the storage.size rule checks. memory_test.go checks that CEL and
// Go agree.
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
// RocksDB's (and db_bench's, and so RocksJava's runner's) 64 MiB, LevelDB's and Pebble's 4 MiB.
func DefaultWriteBufferBytes(e EngineName) float64 {
	if e == EngineRocksDB || e == EngineRocksJava {
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
	return qf(o.CacheSize, DefaultCacheBytes) + qf(o.OptimizeForPointLookup, 0) +
		qf(o.WriteBufferSize, DefaultWriteBufferBytes(e.Name))*writeBufferCount(e)
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

// The data volume model: what one run's database may put on its volume. On tmpfs without
// storage.size it is the tmpfs size the memory rule reserves (VolumeNeed); a storage.size must
// hold at least StorageFloor.
const (
	// TableOverhead is table bytes per logical byte with values that do not compress (keys'
	// sequence numbers, index and filter blocks): 32 MiB of incompressible keys and values took
	// 33-35 MiB of tables in each engine.
	TableOverhead = 1.1
	// WALFileFactor is a write-ahead log file's size per byte of memtable: RocksDB preallocates
	// each WAL at 1.1 x write_buffer_size (tmpfs charges the whole preallocation), the others
	// write up to about a memtable.
	WALFileFactor = 1.1
	// MetadataBytes is the MANIFEST (RocksDB preallocates 4 MiB), LOG and OPTIONS files.
	MetadataBytes = 8 << 20
)

// DataFactor is how many table copies of the logical dataset the volume must have room for
// (TableOverhead each): the data itself; once more for the post-load checkpoint of reset perPoint
// or perIteration (its hard-linked tables keep every table a point's writes and compactions
// replace); and twice more when the sweep or the load writes, for the new versions of the keys
// beside the old ones until compaction drops them and compaction's output beside its inputs.
// Fillrandom and overwrite of 32 MiB of incompressible data took up to 2.9 times the dataset in
// tables, of 512 MiB 1.9 times on Pebble (the small LSMs of small datasets rewrite all of it at
// once); RocksDB's 3.4 times at 128 MiB includes its flushed 64 MiB memtables, which LogBytes counts.
func DataFactor(s *KVBenchmarkSpec) float64 {
	return TableOverhead * dataCopies(s, VolumeWrites(s))
}

// floorFactor is DataFactor without the writes' copies: what any storage.size must hold.
func floorFactor(s *KVBenchmarkSpec) float64 {
	return TableOverhead * dataCopies(s, false)
}

func dataCopies(s *KVBenchmarkSpec, writes bool) float64 {
	c := 1.0
	if EffectiveReset(s) != ResetNone {
		c++
	}
	if writes {
		c += 2
	}
	return c
}

// VolumeWrites reports whether anything writes to the volume after the dataset is in place the
// fast way: a workload that writes, or a load through the write path (loadMode fillseq or
// fillrandom, with its WAL, flushes and compactions; bulk ingests sorted tables).
func VolumeWrites(s *KVBenchmarkSpec) bool {
	return SweepWrites(s) || s.Dataset.LoadMode == LoadFillSeq || s.Dataset.LoadMode == LoadFillRandom
}

// LogBytes is the engine's write-ahead logs, flushes and metadata on the volume:
// writeBufferSize x WALFileFactor per walFiles, and MetadataBytes.
func LogBytes(s *KVBenchmarkSpec, e EngineSpec) float64 {
	return WALFileFactor*qf(e.Options.WriteBufferSize, DefaultWriteBufferBytes(e.Name))*walFiles(s, e) + MetadataBytes
}

// walFiles counts memtable-sized files besides the tables: a WAL per memtable (Pebble recycles
// two more), and when anything writes as many memtables flushed into new tables beside them.
func walFiles(s *KVBenchmarkSpec, e EngineSpec) float64 {
	n := writeBufferCount(e)
	files := n
	if e.Name == EnginePebble {
		files += 2
	}
	if VolumeWrites(s) {
		files += n
	}
	return files
}

func writeBufferCount(e EngineSpec) float64 {
	if e.Options.MaxWriteBufferNumber != nil {
		return float64(*e.Options.MaxWriteBufferNumber)
	}
	return DefaultMaxWriteBufferNumber
}

// VolumeNeed is the volume engine e's run needs: the dataset times DataFactor plus LogBytes. It
// bounds sweeps whose write phases write at most the dataset's key count each (num unset or at
// most the dataset's); longer writers, inserts of new keys (fillseq or filluniquerandom with a
// larger num, YCSB D and E, pulse) and dbbench's own database need a storage.size.
func VolumeNeed(s *KVBenchmarkSpec, e EngineSpec) float64 {
	return DatasetBytesF(s.Dataset)*DataFactor(s) + LogBytes(s, e)
}

// StorageFloor is the least storage.size engine e's run is admitted with: VolumeNeed but the
// writes' two extra copies of the data, which shrink relative to the dataset as it grows (its LSM
// gets more levels, each compaction rewrites less of it) and which a storage.size leaves to the
// user (seed 000 sizes its tmpfs from the document's 73 GB on disk).
func StorageFloor(s *KVBenchmarkSpec, e EngineSpec) float64 {
	return DatasetBytesF(s.Dataset)*floorFactor(s) + LogBytes(s, e)
}

// TmpfsDataBytes is what the database of engine e's run may put into memory on tmpfs:
// storage.size (the sizeLimit) if set, else VolumeNeed; 0 on other media.
func TmpfsDataBytes(s *KVBenchmarkSpec, e EngineSpec) float64 {
	if s.Storage.Medium != MediumTmpfs {
		return 0
	}
	if s.Storage.Size != nil {
		return s.Storage.Size.AsApproximateFloat64()
	}
	return VolumeNeed(s, e)
}

// StorageFits reports whether storage.size (when set) holds every engine's StorageFloor (the CEL
// storage rule).
func StorageFits(s *KVBenchmarkSpec) bool {
	if s.Storage.Size == nil {
		return true
	}
	size := s.Storage.Size.AsApproximateFloat64()
	for _, e := range s.Engines {
		if size < StorageFloor(s, e) {
			return false
		}
	}
	return true
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
// per-thread buffers and tmpfs data. It is summed as the CEL rule sums it (the engine's part, then
// what every engine needs alike), so that Go and CEL round alike at the edge.
func MemoryNeed(s *KVBenchmarkSpec, e EngineSpec) float64 {
	return memoryEnginePart(s, e) + memoryShared(s)
}

// memoryEnginePart is EngineMemoryBytes, plus on a tmpfs without storage.size the engine's LogBytes.
func memoryEnginePart(s *KVBenchmarkSpec, e EngineSpec) float64 {
	o := e.Options
	n, wal, meta := writeBufferCount(e), 0.0, 0.0
	if s.Storage.Medium == MediumTmpfs && s.Storage.Size == nil {
		wal, meta = WALFileFactor*walFiles(s, e), MetadataBytes
	}
	return qf(o.CacheSize, DefaultCacheBytes) + qf(o.OptimizeForPointLookup, 0) +
		qf(o.WriteBufferSize, DefaultWriteBufferBytes(e.Name))*(n+wal) + meta
}

// memoryShared is the overhead, the runner's buffers and the tmpfs data but the engine's logs.
func memoryShared(s *KVBenchmarkSpec) float64 {
	data := 0.0
	switch {
	case s.Storage.Medium != MediumTmpfs:
	case s.Storage.Size != nil:
		data = s.Storage.Size.AsApproximateFloat64()
	default:
		data = DatasetBytesF(s.Dataset) * DataFactor(s)
	}
	return MemoryOverheadBytes + RunnerBufferBytes(s) + data
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
