package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KeyOrder is the order in which the dataset's keys are loaded.
// +kubebuilder:validation:MaxLength=32
type KeyOrder string

const (
	KeyOrderSequential KeyOrder = "sequential"
	KeyOrderRandom     KeyOrder = "random"
)

// LoadMode is how the runner prepares the dataset before the measured workloads.
// +kubebuilder:validation:MaxLength=32
type LoadMode string

const (
	// LoadBulk writes sorted SST files and ingests them (RocksDB, Pebble); the fastest way to load.
	LoadBulk LoadMode = "bulk"
	// LoadFillSeq puts keys in ascending order (db_bench fillseq).
	LoadFillSeq LoadMode = "fillseq"
	// LoadFillRandom puts keys in random order (db_bench fillrandom).
	LoadFillRandom LoadMode = "fillrandom"
	// LoadExisting opens a database that already holds the dataset (db_bench --use_existing_db).
	LoadExisting LoadMode = "existing"
	// LoadNone starts from an empty database; the workloads write what they read.
	LoadNone LoadMode = "none"
)

// CacheMode controls the OS page cache before each measured phase.
// +kubebuilder:validation:MaxLength=32
type CacheMode string

const (
	CacheWarm   CacheMode = "warm"   // leave the page cache as the load left it
	CacheCold   CacheMode = "cold"   // evict the DB files' pages (posix_fadvise DONTNEED) before each phase
	CacheDirect CacheMode = "direct" // direct I/O for reads and compaction (RocksDB only)
)

// DatasetSpec describes the keys and values the benchmark works on.
type DatasetSpec struct {
	// Size is the logical dataset size (keys + values), e.g. 10Gi; it becomes the key count
	// size / (keySize + average value size). Exactly one of size and num is set.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="isQuantity(string(self))",messageExpression="'dataset.size \"' + string(self) + '\" is not a quantity: write a number with a suffix, e.g. 32Mi or 10Gi (Ki, Mi, Gi, Ti are powers of 1024; k, M, G, T powers of 1000; no B, and m means milli)'"
	// +optional
	Size *resource.Quantity `json:"size,omitempty"`
	// Num is the key count (db_bench --num), at most 2^40 (the runner's limit).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1099511627776
	// +optional
	Num *int64 `json:"num,omitempty"`
	// KeySize in bytes (--key_size). Keys are db_bench's: a big-endian integer, padded with '0'.
	// +kubebuilder:validation:Minimum=8
	// +kubebuilder:validation:Maximum=1024
	// +kubebuilder:default=16
	// +optional
	KeySize int32 `json:"keySize,omitempty"`
	// ValueSize in bytes when values have a fixed size (--value_size). At least 1: the runner (like
	// db_bench) reads 0 as unset and would use 100; empty values need valueSizeRange {min: 0, max: 1}.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=67108864
	// +kubebuilder:default=100
	// +optional
	ValueSize int32 `json:"valueSize,omitempty"`
	// ValueSizeRange makes value sizes uniform random in [min, max] (seed 002: 30..101); it
	// overrides valueSize.
	// +optional
	ValueSizeRange *SizeRange `json:"valueSizeRange,omitempty"`
	// CompressionRatioPercent is how compressible values are, as db_bench's --compression_ratio x 100
	// (unset: 50, db_bench's default; for YCSB records unset means YCSB's own random field bytes).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	CompressionRatioPercent int32 `json:"compressionRatioPercent,omitempty"`
	// KeyOrder of the load: sequential (ascending keys) or random.
	// +kubebuilder:default=random
	// +optional
	// +kubebuilder:validation:XValidation:rule="self in ['sequential', 'random']",messageExpression="'dataset.keyOrder \"' + self + '\" is not supported: use sequential or random'"
	KeyOrder KeyOrder `json:"keyOrder,omitempty"`
	// LoadMode prepares the dataset before the workloads run.
	// +kubebuilder:default=bulk
	// +optional
	// +kubebuilder:validation:XValidation:rule="self in ['bulk', 'fillseq', 'fillrandom', 'existing', 'none']",messageExpression="'dataset.loadMode \"' + self + '\" is not supported: use bulk, fillseq, fillrandom, existing or none'"
	LoadMode LoadMode `json:"loadMode,omitempty"`
	// PrefixSize groups keys by a prefix of this many bytes (--prefix_size).
	// +kubebuilder:validation:Minimum=0
	// +optional
	PrefixSize int32 `json:"prefixSize,omitempty"`
	// KeysPerPrefix is the number of keys in each prefix group (--keys_per_prefix).
	// +kubebuilder:validation:Minimum=0
	// +optional
	KeysPerPrefix int64 `json:"keysPerPrefix,omitempty"`
	// Seed makes keys, values and operation choices reproducible (--seed).
	// +optional
	Seed int64 `json:"seed,omitempty"`
	// YCSB makes the dataset YCSB core's records ("user" + hash keys, fieldCount fields of
	// fieldLength bytes; `ycsb: {}` for YCSB's defaults), which ycsb workloads need and other data
	// workloads cannot use. keySize, valueSize, valueSizeRange and prefixes do not apply to it.
	// +optional
	YCSB *YCSBRecordSpec `json:"ycsb,omitempty"`
}

// YCSBRecordSpec is YCSB core's record layout (CoreWorkload's properties of the same names).
// +kubebuilder:validation:XValidation:rule="(has(self.fieldCount) ? self.fieldCount : 10) * (has(self.fieldLength) ? self.fieldLength : 100) <= 1048576",message="dataset.ycsb: fieldCount x fieldLength must be at most 1Mi"
type YCSBRecordSpec struct {
	// FieldCount is the number of fields per record (fieldcount, default 10).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	FieldCount *int32 `json:"fieldCount,omitempty"`
	// FieldLength is each field's length in bytes (fieldlength, constant; default 100).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1048576
	// +optional
	FieldLength *int32 `json:"fieldLength,omitempty"`
	// InsertOrder: hashed (default) names record n "user" + fnvhash64(n), so records and inserts
	// spread over the key space; ordered names it "user" + n (insertorder).
	// +optional
	InsertOrder YCSBInsertOrder `json:"insertOrder,omitempty"`
	// ZeroPadding left-pads the number in the key with zeros to this many digits (zeropadding,
	// default 1: none).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=19
	// +optional
	ZeroPadding *int32 `json:"zeroPadding,omitempty"`
}

// YCSBInsertOrder is CoreWorkload's insertorder.
// +kubebuilder:validation:Enum=hashed;ordered
type YCSBInsertOrder string

const (
	YCSBInsertHashed  YCSBInsertOrder = "hashed"
	YCSBInsertOrdered YCSBInsertOrder = "ordered"
)

// YCSB record accounting, shared by the runner, the planner and the CRD's size rules.
const (
	// YCSBKeyBytes is the size counted for a YCSB key: "user" and 19 digits, the longest (and, with
	// insertorder hashed, 89% of keys).
	YCSBKeyBytes = 23
	// DefaultYCSBFieldCount and DefaultYCSBFieldLength are CoreWorkload's defaults.
	DefaultYCSBFieldCount  = 10
	DefaultYCSBFieldLength = 100
)

// YCSBRecordBytes is the length of a record of n fields of length bytes as YCSB's RocksDB binding
// stores it: per field a 4-byte name length, the name ("field0", "field1", ...), a 4-byte value
// length and the value.
func YCSBRecordBytes(n, length int64) int64 {
	// names are "field" + i: 5 bytes plus one digit per power of ten i reaches
	return n*(8+5+1+length) + max(0, n-10) + max(0, n-100)
}

// YCSBEntryBytes is what one YCSB record counts for in the dataset's size: YCSBKeyBytes plus the record.
func YCSBEntryBytes(d DatasetSpec) float64 {
	n, length := d.YCSBShape()
	return float64(YCSBKeyBytes + YCSBRecordBytes(n, length))
}

// YCSBShape is a dataset's record layout with YCSB's defaults applied.
func (d DatasetSpec) YCSBShape() (fieldCount, fieldLength int64) {
	fieldCount, fieldLength = DefaultYCSBFieldCount, DefaultYCSBFieldLength
	if y := d.YCSB; y != nil {
		if y.FieldCount != nil {
			fieldCount = int64(*y.FieldCount)
		}
		if y.FieldLength != nil {
			fieldLength = int64(*y.FieldLength)
		}
	}
	return fieldCount, fieldLength
}

// SizeRange is an inclusive range of sizes in bytes.
type SizeRange struct {
	// +kubebuilder:validation:Minimum=0
	Min int32 `json:"min"`
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=67108864
	Max int32 `json:"max"`
}

// WorkloadName is a db_bench benchmark name, "pulse", "ycsb", or "dbbench" (Debian's db_bench, passthrough).
// +kubebuilder:validation:MaxLength=32
type WorkloadName string

// Workloads the runner implements, named as db_bench names them.
const (
	WorkloadFillSeq               WorkloadName = "fillseq"
	WorkloadFillRandom            WorkloadName = "fillrandom"
	WorkloadFillUniqueRandom      WorkloadName = "filluniquerandom"
	WorkloadOverwrite             WorkloadName = "overwrite"
	WorkloadFillSync              WorkloadName = "fillsync"
	WorkloadReadSeq               WorkloadName = "readseq"
	WorkloadReadReverse           WorkloadName = "readreverse"
	WorkloadReadRandom            WorkloadName = "readrandom"
	WorkloadReadMissing           WorkloadName = "readmissing"
	WorkloadReadWhileWriting      WorkloadName = "readwhilewriting"
	WorkloadReadRandomWriteRandom WorkloadName = "readrandomwriterandom"
	WorkloadSeekRandom            WorkloadName = "seekrandom"
	WorkloadDeleteSeq             WorkloadName = "deleteseq"
	WorkloadDeleteRandom          WorkloadName = "deleterandom"
	WorkloadUpdateRandom          WorkloadName = "updaterandom"
	WorkloadPulse                 WorkloadName = "pulse"
	WorkloadYCSB                  WorkloadName = "ycsb"
	WorkloadDBBench               WorkloadName = "dbbench"
	// WorkloadStats and WorkloadLevelStats are db_bench's pseudo-benchmarks: they print the
	// engine's stats (rocksdb.stats) or level stats (rocksdb.levelstats) and measure nothing.
	WorkloadStats      WorkloadName = "stats"
	WorkloadLevelStats WorkloadName = "levelstats"
	// WorkloadWaitForCompaction waits until the engine's flushes and compactions are done
	// (db_bench's waitforcompaction); it measures nothing.
	WorkloadWaitForCompaction WorkloadName = "waitforcompaction"
)

// WorkloadSpec is one measured phase. It runs once per thread count of the sweep (unless it sets
// its own threads), on the dataset loaded once before all phases.
// +kubebuilder:validation:XValidation:rule="!has(self.seekNexts) || self.name == 'seekrandom'",message="seekNexts applies to seekrandom only"
// +kubebuilder:validation:XValidation:rule="!has(self.writesPerSecond) || self.name == 'readwhilewriting'",message="writesPerSecond applies to readwhilewriting only"
// +kubebuilder:validation:XValidation:rule="self.name != 'pulse' || !(has(self.num) || has(self.duration))",message="pulse ignores num and duration: pulse.rounds and pulse.interval set its length"
// +kubebuilder:validation:XValidation:rule="self.name != 'dbbench' || !(has(self.num) || has(self.duration))",message="dbbench ignores num and duration: pass --num or --duration in dbBenchArgs"
type WorkloadSpec struct {
	// Name of the workload.
	// +kubebuilder:validation:XValidation:rule="self in ['fillseq', 'fillrandom', 'filluniquerandom', 'overwrite', 'fillsync', 'readseq', 'readreverse', 'readrandom', 'readmissing', 'readwhilewriting', 'readrandomwriterandom', 'seekrandom', 'deleteseq', 'deleterandom', 'updaterandom', 'pulse', 'ycsb', 'dbbench', 'stats', 'levelstats', 'waitforcompaction']",messageExpression="'workloads[].name \"' + self + '\" is not supported: use fillseq, fillrandom, filluniquerandom, overwrite, fillsync, readseq, readreverse, readrandom, readmissing, readwhilewriting, readrandomwriterandom, seekrandom, deleteseq, deleterandom, updaterandom, pulse, ycsb, dbbench, stats, levelstats or waitforcompaction'"
	Name WorkloadName `json:"name"`
	// Num is the operation count per thread count (db_bench --num for writes, --reads for reads).
	// Default: the dataset's key count. At most 2^40 (the runner's limit).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1099511627776
	// +optional
	Num *int64 `json:"num,omitempty"`
	// Duration bounds the phase in time (db_bench --duration); whichever of num and duration ends first.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') || (duration(self) > duration('0s'))",message="workloads[].duration must be positive"
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$')",messageExpression="'workloads[].duration \"' + self + '\" is not a duration: write a number with a unit, e.g. 30s, 5m or 1h30m (units h, m, s, ms, us, ns; no spaces, no d)'"
	Duration *metav1.Duration `json:"duration,omitempty"`
	// Threads overrides the sweep for this phase (e.g. fills run single-threaded); a set, as
	// spec.threads is (a count given twice ran the phase twice).
	// +kubebuilder:validation:MaxItems=16
	// +listType=set
	// +optional
	Threads []int32 `json:"threads,omitempty"`
	// WritesPerSecond is the writer's target rate for readwhilewriting (--benchmark_write_rate_limit as ops/s,
	// db_bench's --writes_per_second); 0 means as fast as possible.
	// +kubebuilder:validation:Minimum=0
	// +optional
	WritesPerSecond *int64 `json:"writesPerSecond,omitempty"`
	// ReadWritePercent is the share of reads in readrandomwriterandom (--readwritepercent).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	ReadWritePercent *int32 `json:"readWritePercent,omitempty"`
	// SeekNexts is the number of Next calls after each seek (--seek_nexts), seekrandom only.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000000
	// +optional
	SeekNexts *int32 `json:"seekNexts,omitempty"`
	// Pulse configures the pulse workload.
	// +optional
	Pulse *PulseSpec `json:"pulse,omitempty"`
	// YCSB configures a YCSB core workload.
	// +optional
	YCSB *YCSBSpec `json:"ycsb,omitempty"`
	// DBBenchArgs are passed verbatim to Debian's db_bench (name dbbench); --db is set by the runner.
	// Flags that move data off the benchmarked volume or undo the spec are refused.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="!self.exists(a, a.matches('^--?(db|wal_dir|db_log_dir|flagfile|use_existing_db|use_existing_keys|env_uri|fs_uri|secondary_path|backup_dir|restore_dir|trace_file|block_cache_trace_file|io_trace_file|hdfs)(=.*)?$'))",message="dbBenchArgs must not set --db, --wal_dir, --db_log_dir, --flagfile, --use_existing_db, --use_existing_keys, --env_uri, --fs_uri, --secondary_path, --backup_dir, --restore_dir, --trace_file, --block_cache_trace_file, --io_trace_file or --hdfs: the runner places the database on the benchmarked volume and starts it fresh; other paths, flag files and existing databases would measure something else"
	// +kubebuilder:validation:XValidation:rule="self.all(a, !a.matches('^--?threads(=.*)?$') || a.matches('^--?threads=([1-9][0-9]{0,2}|10[01][0-9]|102[0-4])$'))",message="dbBenchArgs --threads must be between 1 and 1024"
	// +kubebuilder:validation:XValidation:rule="self.filter(a, a.matches('^--?threads=')).size() <= 1",message="dbBenchArgs must give --threads at most once (db_bench silently keeps the last)"
	// +optional
	DBBenchArgs []string `json:"dbBenchArgs,omitempty"`
	// Warmup runs the workload for a while before each measured phase and discards what it
	// measured (not for pulse or dbbench); the result records it in protocol.warmupOps/Seconds.
	// +optional
	Warmup *WarmupSpec `json:"warmup,omitempty"`
}

// WarmupSpec bounds a warm-up by time or by operations (per thread, as num).
// +kubebuilder:validation:XValidation:rule="has(self.duration) != has(self.ops)",message="warmup: set exactly one of duration and ops"
type WarmupSpec struct {
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$')",messageExpression="'warmup.duration \"' + self + '\" is not a duration: write a number with a unit, e.g. 10s or 1m (units h, m, s, ms, us, ns; no spaces, no d)'"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') || (duration(self) > duration('0s'))",message="warmup.duration must be positive"
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`
	// Ops per thread.
	// +kubebuilder:validation:Minimum=1
	// +optional
	Ops *int64 `json:"ops,omitempty"`
}

// SettleSpec makes the runner wait, before each measured phase, until the engine's flushes and
// compactions are idle (as db_bench's waitforcompaction), for at most Timeout.
type SettleSpec struct {
	// Timeout bounds each wait; when it is hit the phase is measured anyway and the result says so
	// (protocol.settleTimedOut).
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') || (duration(self) > duration('0s') && duration(self) <= duration('24h'))",message="settle.timeout must be positive and at most 24h"
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$')",messageExpression="'settle.timeout \"' + self + '\" is not a duration: write a number with a unit, e.g. 5m or 30s (units h, m, s, ms, us, ns; no spaces, no d)'"
	Timeout metav1.Duration `json:"timeout"`
}

// ResetMode says whether sweep points share the database or start from the loaded one.
// +kubebuilder:validation:MaxLength=32
type ResetMode string

const (
	// ResetNone: each point runs on the database the previous points left, also across
	// iterations of the repeat loop.
	ResetNone ResetMode = "none"
	// ResetPerPoint: a checkpoint is taken after the load and restored before every sweep point.
	ResetPerPoint ResetMode = "perPoint"
	// ResetPerIteration: a checkpoint is taken after the load and restored before every iteration
	// of the repeat loop after the first, so each iteration runs the sweep in order on the database
	// the load left (the default when the sweep repeats and writes, see EffectiveReset).
	ResetPerIteration ResetMode = "perIteration"
)

// PulseSpec is seed 002's pulse workload: every interval, read Reads random existing keys (sorted
// first), then write Writes new keys and delete Deletes existing ones; each round's time is reported.
// +kubebuilder:validation:XValidation:rule="self.reads + self.writes + self.deletes > 0",message="pulse: a round needs at least one of reads, writes and deletes"
type PulseSpec struct {
	// +kubebuilder:validation:Minimum=0
	Reads int64 `json:"reads"`
	// +kubebuilder:validation:Minimum=0
	Writes int64 `json:"writes"`
	// +kubebuilder:validation:Minimum=0
	Deletes int64 `json:"deletes"`
	// Interval between round starts; a round that overruns starts the next at once.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') || (duration(self) > duration('0s'))",message="pulse.interval must be positive"
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$')",messageExpression="'pulse.interval \"' + self + '\" is not a duration: write a number with a unit, e.g. 1s or 250ms (units h, m, s, ms, us, ns; no spaces, no d)'"
	Interval metav1.Duration `json:"interval"`
	// Rounds is the number of rounds.
	// +kubebuilder:validation:Minimum=1
	Rounds int32 `json:"rounds"`
}

// YCSBWorkload is a YCSB core workload letter.
// +kubebuilder:validation:MaxLength=32
type YCSBWorkload string

// YCSBDistribution is a request distribution: YCSB's zipfian (ScrambledZipfianGenerator), uniform
// and latest (SkewedLatestGenerator), or permutedZipfian: a zipfian over exactly the records that
// exist when the phase starts, its ranks spread by a seeded permutation (this runner's YCSB chooser
// before it matched YCSB's: a steeper hot set, never an inserted record).
// +kubebuilder:validation:MaxLength=32
type YCSBDistribution string

// YCSBUpdateMode is how an update reaches the engine.
// +kubebuilder:validation:Enum=merge;overwrite
type YCSBUpdateMode string

const (
	// YCSBUpdateMerge reads the record, replaces the written fields and writes it back: a get and a
	// put, as YCSB's RocksDB binding does.
	YCSBUpdateMerge YCSBUpdateMode = "merge"
	// YCSBUpdateOverwrite puts a record of the written fields only, without reading: key-value
	// bindings such as Pegasus' do this (with one field it is the whole record).
	YCSBUpdateOverwrite YCSBUpdateMode = "overwrite"
)

// YCSBSpec configures a YCSB core workload; the letter sets the defaults of the others.
// +kubebuilder:validation:XValidation:rule="!(has(self.readPercent) && has(self.readWriteRatio))",message="ycsb: set readPercent or readWriteRatio, not both"
type YCSBSpec struct {
	// Workload letter A-F: A 50/50 read/update, B 95/5 read/update, C read only,
	// D read latest/insert, E scan/insert, F read-modify-write.
	// +kubebuilder:validation:XValidation:rule="self in ['A', 'B', 'C', 'D', 'E', 'F']",messageExpression="'ycsb.workload \"' + self + '\" is not supported: use A, B, C, D, E or F'"
	Workload YCSBWorkload `json:"workload"`
	// ReadPercent overrides the letter's mix: reads get this percentage of operations, the letter's
	// write operation the rest (update for A-C, insert for D, read-modify-write for F; for E the
	// rest stays scan/insert 95:5). At most one of readPercent and readWriteRatio.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	ReadPercent *int32 `json:"readPercent,omitempty"`
	// ReadWriteRatio "R:W" overrides the letter's mix like readPercent, as the Pegasus tables give
	// it: reads get R/(R+W) of operations, e.g. "30:1" (96.77% reads), "0:1" (writes only),
	// "1:0" (reads only). R and W are integers of at most 6 digits, not both 0.
	// +kubebuilder:validation:MaxLength=13
	// +kubebuilder:validation:XValidation:rule="self.matches('^[0-9]{1,6}:[0-9]{1,6}$')",message="ycsb.readWriteRatio must be R:W with integers of at most 6 digits, e.g. 30:1, 0:1 or 1:0"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^0+:0+$')",message="ycsb.readWriteRatio 0:0 has no operations; one side must be positive"
	// +optional
	ReadWriteRatio string `json:"readWriteRatio,omitempty"`
	// RequestDistribution overrides the letter's distribution (zipfian: YCSB's scrambled zipfian,
	// theta 0.99; latest for D).
	// +optional
	// +kubebuilder:validation:XValidation:rule="self in ['zipfian', 'uniform', 'latest', 'permutedZipfian']",messageExpression="'ycsb.requestDistribution \"' + self + '\" is not supported: use zipfian, uniform, latest or permutedZipfian'"
	RequestDistribution *YCSBDistribution `json:"requestDistribution,omitempty"`
	// MaxScanLength for E (scan length is uniform in [1, max]); default 100.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxScanLength *int32 `json:"maxScanLength,omitempty"`
	// ReadAllFields: reads and scans ask for every field (readallfields, default true); false asks for
	// one random field. The engine reads the whole record either way, as YCSB's RocksDB binding does.
	// +optional
	ReadAllFields *bool `json:"readAllFields,omitempty"`
	// WriteAllFields: updates write every field (writeallfields, default false: one random field).
	// +optional
	WriteAllFields *bool `json:"writeAllFields,omitempty"`
	// UpdateMode: merge (default, YCSB's RocksDB binding: get, replace the fields, put) or overwrite
	// (put the written fields alone, as the Pegasus binding does).
	// +optional
	UpdateMode YCSBUpdateMode `json:"updateMode,omitempty"`
}

// RunnerConfig is everything one runner pod does: open one engine, prepare the dataset once, then
// run each workload for each thread count, Repeat times. The operator renders it as JSON into the
// runner's --config; `kvbench-runner run --config` reads it.
type RunnerConfig struct {
	Engine    EngineSpec     `json:"engine"`
	Dataset   DatasetSpec    `json:"dataset"`
	Workloads []WorkloadSpec `json:"workloads"`
	// Threads is the sweep; each workload runs once per entry.
	Threads []int32 `json:"threads"`
	// +optional
	CacheMode CacheMode `json:"cacheMode,omitempty"`
	// Repeat runs the whole sweep this many times.
	// +optional
	Repeat int32 `json:"repeat,omitempty"`
	// DBPath is where the database lives.
	DBPath string `json:"dbPath"`
	// OptionsFile is the path of the engine's OPTIONS file (engines[].optionsFrom, mounted read-only);
	// empty: the runner's typed options only.
	// +optional
	OptionsFile string `json:"optionsFile,omitempty"`
	// ReportInterval is the time-series sampling interval (default 1s).
	// +optional
	ReportInterval *metav1.Duration `json:"reportInterval,omitempty"`
	// Settle waits for idle flushes and compactions before each measured phase.
	// +optional
	Settle *SettleSpec `json:"settle,omitempty"`
	// Reset perPoint restores the post-load checkpoint before each sweep point, perIteration
	// before each iteration after the first; the operator resolves the spec's default
	// (EffectiveReset), so empty means none here.
	// +optional
	Reset ResetMode `json:"reset,omitempty"`
	// StatsInterval prints db_bench's interval lines during each phase (kvbench-runner bench
	// --stats_interval_seconds, --stats_interval, --stats_per_interval).
	// +optional
	StatsInterval *StatsIntervalSpec `json:"statsInterval,omitempty"`
}

// StatsIntervalSpec is db_bench's periodic reporting: a line every Seconds (or every Ops
// operations, checked at each report interval), with the engine's stats when PerInterval.
type StatsIntervalSpec struct {
	// +optional
	Seconds int32 `json:"seconds,omitempty"`
	// +optional
	Ops int64 `json:"ops,omitempty"`
	// +optional
	PerInterval bool `json:"perInterval,omitempty"`
}
