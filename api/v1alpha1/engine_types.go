package v1alpha1

import "k8s.io/apimachinery/pkg/api/resource"

// EngineName names a storage engine the runner drives.
// +kubebuilder:validation:MaxLength=32
type EngineName string

const (
	EngineRocksDB EngineName = "rocksdb"
	EngineLevelDB EngineName = "leveldb"
	EnginePebble  EngineName = "pebble"
	// EngineRocksJava is RocksDB through its Java binding (rocksdbjni), run by the Java runner
	// (runner/java) in its own image.
	EngineRocksJava EngineName = "rocksjava"
)

// Engines are every engine the project runs, in the order documents list them.
var Engines = []EngineName{EngineRocksDB, EngineLevelDB, EnginePebble, EngineRocksJava}

// Compression is a block compression algorithm.
// +kubebuilder:validation:MaxLength=32
type Compression string

const (
	CompressionNone   Compression = "none"
	CompressionSnappy Compression = "snappy"
	CompressionLZ4    Compression = "lz4"
	CompressionZstd   Compression = "zstd"
)

// EngineSpec is one engine and its options. The vocabulary is shared by all engines; an option an
// engine does not have is an error (see EngineOptions.Unsupported), never silently ignored.
type EngineSpec struct {
	// Name of the engine.
	// +kubebuilder:validation:XValidation:rule="self in ['rocksdb', 'leveldb', 'pebble', 'rocksjava']",messageExpression="'engines[].name \"' + self + '\" is not supported: use rocksdb, leveldb, pebble or rocksjava'"
	Name EngineName `json:"name"`
	// Options tune the engine. Unset fields keep the engine's (or db_bench's) default.
	// +optional
	Options EngineOptions `json:"options,omitempty"`
	// OptionsFrom is the user's own OPTIONS file, from a ConfigMap key in the benchmark's namespace:
	// RocksDB's INI format for rocksdb (and the dbbench workload's --options_file), Pebble's format
	// for pebble; leveldb has none. The engine's own loader reads it as the base, the typed options
	// set above override it (each overridden key is listed in provenance.optionsOverrides), and the
	// runner keeps its files on the benchmarked volume. See docs/operator.md "OPTIONS files".
	// +optional
	OptionsFrom *OptionsFromSource `json:"optionsFrom,omitempty"`
	// Version is the rocksdbjni release engine rocksjava runs (RocksDB's release of the same number):
	// one of those the Java runner image carries (7.8.3, the default, and the releases of its build
	// argument ROCKSDBJNI_VERSIONS); a release it lacks fails the run with the list it has. The
	// result's provenance.libraries records rocksdbjni and the RocksDB it loaded. rocksjava only.
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^[0-9]+[.][0-9]+[.][0-9]+$')",messageExpression="'engines[].version \"' + self + '\" is not a release number such as 9.10.0'"
	// +optional
	Version string `json:"version,omitempty"`
}

// OptionsFromSource is where an OPTIONS file comes from.
type OptionsFromSource struct {
	// ConfigMapKeyRef names the ConfigMap and the key that holds the file. The ConfigMap must exist
	// when the run starts; a missing one fails the run (reason OptionsFileMissing).
	ConfigMapKeyRef ConfigMapKeyRef `json:"configMapKeyRef"`
}

// ConfigMapKeyRef is a key of a ConfigMap in the benchmark's namespace.
type ConfigMapKeyRef struct {
	// Name of the ConfigMap.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",messageExpression="'engines[].optionsFrom.configMapKeyRef.name \"' + self + '\" is not a ConfigMap name: lower-case letters, digits, - and ., e.g. my-rocksdb-options'"
	Name string `json:"name"`
	// Key in the ConfigMap's data.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-._a-zA-Z0-9]+$')",messageExpression="'engines[].optionsFrom.configMapKeyRef.key \"' + self + '\" is not a ConfigMap key: letters, digits, -, _ and ., e.g. OPTIONS'"
	Key string `json:"key"`
}

// EngineOptions are the knobs the seed documents tune, named as db_bench names them where it has a name.
type EngineOptions struct {
	// CacheSize is the block cache size (db_bench --cache_size).
	// +optional
	// +kubebuilder:validation:XValidation:rule="!isQuantity(string(self)) || (!quantity(string(self)).isLessThan(quantity('0')))",message="cacheSize must not be negative"
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="isQuantity(string(self))",messageExpression="'engines[].options.cacheSize \"' + string(self) + '\" is not a quantity: write a number with a suffix, e.g. 512Mi (Ki, Mi, Gi, Ti are powers of 1024; k, M, G, T powers of 1000; no B, and m means milli)'"
	CacheSize *resource.Quantity `json:"cacheSize,omitempty"`
	// BloomBits is bits per key of the bloom filter; 0 disables it (--bloom_bits).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=64
	// +optional
	BloomBits *int32 `json:"bloomBits,omitempty"`
	// WriteBufferSize is the memtable size (--write_buffer_size).
	// +optional
	// +kubebuilder:validation:XValidation:rule="!isQuantity(string(self)) || (quantity(string(self)).compareTo(quantity('64Ki')) >= 0 && quantity(string(self)).compareTo(quantity('4Gi')) < 0)",message="writeBufferSize must be at least 64Ki (RocksDB and LevelDB silently raise smaller ones) and below 4Gi (the Pebble limit)"
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="isQuantity(string(self))",messageExpression="'engines[].options.writeBufferSize \"' + string(self) + '\" is not a quantity: write a number with a suffix, e.g. 64Mi (Ki, Mi, Gi, Ti are powers of 1024; k, M, G, T powers of 1000; no B, and m means milli)'"
	WriteBufferSize *resource.Quantity `json:"writeBufferSize,omitempty"`
	// MaxWriteBufferNumber is the number of memtables (--max_write_buffer_number).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	// +optional
	MaxWriteBufferNumber *int32 `json:"maxWriteBufferNumber,omitempty"`
	// BlockSize is the data block size (--block_size).
	// +optional
	// +kubebuilder:validation:XValidation:rule="!isQuantity(string(self)) || (quantity(string(self)).isGreaterThan(quantity('0')))",message="blockSize must be greater than 0"
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="isQuantity(string(self))",messageExpression="'engines[].options.blockSize \"' + string(self) + '\" is not a quantity: write a number with a suffix, e.g. 4Ki (Ki, Mi, Gi, Ti are powers of 1024; k, M, G, T powers of 1000; no B, and m means milli)'"
	BlockSize *resource.Quantity `json:"blockSize,omitempty"`
	// Compression of data blocks (--compression_type).
	// +optional
	// +kubebuilder:validation:XValidation:rule="self in ['none', 'snappy', 'lz4', 'zstd']",messageExpression="'engines[].options.compression \"' + self + '\" is not supported: use none, snappy, lz4 or zstd'"
	Compression *Compression `json:"compression,omitempty"`
	// MaxOpenFiles limits open table files; -1 means unlimited (--open_files).
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:XValidation:rule="self != 0",message="maxOpenFiles 0 opens no table file: use -1 for unlimited or a positive limit"
	// +optional
	MaxOpenFiles *int32 `json:"maxOpenFiles,omitempty"`
	// Level0FileNumCompactionTrigger (--level0_file_num_compaction_trigger).
	// +kubebuilder:validation:Minimum=1
	// +optional
	Level0FileNumCompactionTrigger *int32 `json:"level0FileNumCompactionTrigger,omitempty"`
	// Level0SlowdownWritesTrigger (--level0_slowdown_writes_trigger).
	// +kubebuilder:validation:Minimum=1
	// +optional
	Level0SlowdownWritesTrigger *int32 `json:"level0SlowdownWritesTrigger,omitempty"`
	// Level0StopWritesTrigger (--level0_stop_writes_trigger).
	// +kubebuilder:validation:Minimum=1
	// +optional
	Level0StopWritesTrigger *int32 `json:"level0StopWritesTrigger,omitempty"`
	// TargetFileSizeBase (--target_file_size_base).
	// +optional
	// +kubebuilder:validation:XValidation:rule="!isQuantity(string(self)) || (quantity(string(self)).isGreaterThan(quantity('0')))",message="targetFileSizeBase must be greater than 0"
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="isQuantity(string(self))",messageExpression="'engines[].options.targetFileSizeBase \"' + string(self) + '\" is not a quantity: write a number with a suffix, e.g. 64Mi (Ki, Mi, Gi, Ti are powers of 1024; k, M, G, T powers of 1000; no B, and m means milli)'"
	TargetFileSizeBase *resource.Quantity `json:"targetFileSizeBase,omitempty"`
	// MaxBytesForLevelBase (--max_bytes_for_level_base).
	// +optional
	// +kubebuilder:validation:XValidation:rule="!isQuantity(string(self)) || (quantity(string(self)).isGreaterThan(quantity('0')))",message="maxBytesForLevelBase must be greater than 0"
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="isQuantity(string(self))",messageExpression="'engines[].options.maxBytesForLevelBase \"' + string(self) + '\" is not a quantity: write a number with a suffix, e.g. 256Mi (Ki, Mi, Gi, Ti are powers of 1024; k, M, G, T powers of 1000; no B, and m means milli)'"
	MaxBytesForLevelBase *resource.Quantity `json:"maxBytesForLevelBase,omitempty"`
	// MaxBackgroundJobs (--max_background_jobs).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1024
	// +optional
	MaxBackgroundJobs *int32 `json:"maxBackgroundJobs,omitempty"`
	// DisableWAL turns the write-ahead log off (--disable_wal).
	// +optional
	DisableWAL *bool `json:"disableWAL,omitempty"`
	// Sync makes every write synchronous (--sync).
	// +optional
	Sync *bool `json:"sync,omitempty"`
	// MmapRead reads table files through mmap (--mmap_read).
	// +optional
	MmapRead *bool `json:"mmapRead,omitempty"`
	// PlainTable selects RocksDB's PlainTable format with a prefix-hash memtable and a fixed prefix
	// extractor of the dataset's prefixSize (seed 000: --use_plain_table=1 --memtablerep=prefix_hash).
	// +optional
	PlainTable *bool `json:"plainTable,omitempty"`
	// OptimizeForPointLookup calls RocksDB's OptimizeForPointLookup with this block cache size (seed 002).
	// +optional
	// +kubebuilder:validation:XValidation:rule="!isQuantity(string(self)) || (quantity(string(self)).compareTo(quantity('1Mi')) >= 0)",message="optimizeForPointLookup is a block cache size in whole MiB and must be at least 1Mi"
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="isQuantity(string(self))",messageExpression="'engines[].options.optimizeForPointLookup \"' + string(self) + '\" is not a quantity: write a number with a suffix, e.g. 64Mi (Ki, Mi, Gi, Ti are powers of 1024; k, M, G, T powers of 1000; no B, and m means milli)'"
	OptimizeForPointLookup *resource.Quantity `json:"optimizeForPointLookup,omitempty"`
	// IncreaseParallelism calls RocksDB's IncreaseParallelism with this many threads (seed 002).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1024
	// +optional
	IncreaseParallelism *int32 `json:"increaseParallelism,omitempty"`
	// Statistics creates RocksDB's Statistics object (--statistics): tickers such as block cache
	// hits and stall micros in the phase's engine statistics. It costs throughput, so it is off
	// unless asked for, as in db_bench.
	// +optional
	Statistics *bool `json:"statistics,omitempty"`
	// NumLevels is the number of LSM levels (--num_levels).
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=64
	// +optional
	NumLevels *int32 `json:"numLevels,omitempty"`
	// MaxBackgroundCompactions and MaxBackgroundFlushes (--max_background_compactions/flushes);
	// RocksDB 7.8 derives its limits from them when set, instead of from maxBackgroundJobs.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxBackgroundCompactions *int32 `json:"maxBackgroundCompactions,omitempty"`
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxBackgroundFlushes *int32 `json:"maxBackgroundFlushes,omitempty"`
	// MinLevelToCompress leaves levels below it uncompressed (--min_level_to_compress, as db_bench:
	// a per-level compression list).
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinLevelToCompress *int32 `json:"minLevelToCompress,omitempty"`
	// CacheNumShardBits shards the block cache into 2^n parts (--cache_numshardbits).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=19
	// +optional
	CacheNumShardBits *int32 `json:"cacheNumShardBits,omitempty"`
	// BloomLocality (--bloom_locality) affects RocksDB's memtable prefix bloom only.
	// +kubebuilder:validation:Minimum=0
	// +optional
	BloomLocality *int32 `json:"bloomLocality,omitempty"`
	// MmapWrite writes table files through mmap (--mmap_write).
	// +optional
	MmapWrite *bool `json:"mmapWrite,omitempty"`

	// WALDir puts the write-ahead log in this directory, relative to the database directory
	// (--wal_dir; an absolute path could leave the benchmarked volume).
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$`
	// +optional
	WALDir *string `json:"walDir,omitempty"`
}

// Unsupported returns the JSON names of the options set in o that the engine does not have.
// The runner refuses such a spec; the CRD's CEL rules encode the same table.
func (o *EngineOptions) Unsupported(engine EngineName) []string {
	set := map[string]bool{
		"cacheSize": o.CacheSize != nil, "bloomBits": o.BloomBits != nil,
		"writeBufferSize": o.WriteBufferSize != nil, "maxWriteBufferNumber": o.MaxWriteBufferNumber != nil,
		"blockSize": o.BlockSize != nil, "compression": o.Compression != nil, "maxOpenFiles": o.MaxOpenFiles != nil,
		"level0FileNumCompactionTrigger": o.Level0FileNumCompactionTrigger != nil,
		"level0SlowdownWritesTrigger":    o.Level0SlowdownWritesTrigger != nil,
		"level0StopWritesTrigger":        o.Level0StopWritesTrigger != nil,
		"targetFileSizeBase":             o.TargetFileSizeBase != nil, "maxBytesForLevelBase": o.MaxBytesForLevelBase != nil,
		"maxBackgroundJobs": o.MaxBackgroundJobs != nil, "disableWAL": o.DisableWAL != nil, "sync": o.Sync != nil,
		"mmapRead": o.MmapRead != nil, "plainTable": o.PlainTable != nil,
		"optimizeForPointLookup": o.OptimizeForPointLookup != nil, "increaseParallelism": o.IncreaseParallelism != nil,
		"statistics": o.Statistics != nil, "numLevels": o.NumLevels != nil,
		"maxBackgroundCompactions": o.MaxBackgroundCompactions != nil, "maxBackgroundFlushes": o.MaxBackgroundFlushes != nil,
		"minLevelToCompress": o.MinLevelToCompress != nil, "cacheNumShardBits": o.CacheNumShardBits != nil,
		"bloomLocality": o.BloomLocality != nil, "mmapWrite": o.MmapWrite != nil, "walDir": o.WALDir != nil,
	}
	var out []string
	for _, name := range UnsupportedOptions[engine] {
		if set[name] {
			out = append(out, name)
		}
	}
	if o.Compression != nil {
		for _, c := range UnsupportedCompression[engine] {
			if *o.Compression == c {
				out = append(out, "compression="+string(c))
			}
		}
	}
	return out
}

// UnsupportedOptions lists, per engine, the EngineOptions (JSON names) it does not have.
var UnsupportedOptions = map[EngineName][]string{
	EngineRocksDB: nil,
	// LevelDB 1.23: memtable count, L0 triggers, level sizing and background threads are compile-time
	// constants; the log cannot be turned off; no mmap or PlainTable knobs.
	EngineLevelDB: {"maxWriteBufferNumber", "level0FileNumCompactionTrigger", "level0SlowdownWritesTrigger",
		"level0StopWritesTrigger", "maxBytesForLevelBase", "maxBackgroundJobs", "disableWAL", "mmapRead",
		"plainTable", "optimizeForPointLookup", "increaseParallelism", "statistics", "numLevels",
		"maxBackgroundCompactions", "maxBackgroundFlushes", "minLevelToCompress", "cacheNumShardBits", "bloomLocality",
		"mmapWrite", "walDir"},
	// Pebble: its metrics are always on (no Statistics object); seven levels, one compaction
	// concurrency knob (maxBackgroundJobs), one cache, no mmap; its WAL directory is supported.
	EnginePebble: {"mmapRead", "plainTable", "optimizeForPointLookup", "increaseParallelism", "statistics",
		"numLevels", "maxBackgroundCompactions", "maxBackgroundFlushes", "minLevelToCompress", "cacheNumShardBits",
		"bloomLocality", "mmapWrite"},
	// RocksJava (the Java runner): the db_bench options it sets so far (docs/runner.md "runner/java").
	EngineRocksJava: {"mmapRead", "plainTable", "optimizeForPointLookup", "increaseParallelism",
		"maxBackgroundCompactions", "maxBackgroundFlushes", "minLevelToCompress", "bloomLocality", "mmapWrite", "walDir"},
}

// UnsupportedCompression lists, per engine, the compression algorithms it lacks.
var UnsupportedCompression = map[EngineName][]Compression{
	EngineLevelDB: {CompressionLZ4, CompressionZstd},
	EnginePebble:  {CompressionLZ4},
}
