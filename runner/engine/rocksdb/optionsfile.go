package rocksdb

/*
#include <stdlib.h>
#include <rocksdb/c.h>
char* kvb_load_options_file(rocksdb_options_t* o, const char* path);
int kvb_file_table_override(rocksdb_options_t* o, long long cache, int shard_bits, double bloom, long long block_size);
const char* kvb_table_factory_name(rocksdb_options_t* o);
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/linxGnu/grocksdb"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/runner/engine"
)

// loadOptionsFile reads the user's OPTIONS file into opts with RocksDB's own loader
// (LoadOptionsFromFile); its message is the error. Presets cannot be listed as overrides, so
// they are refused with a file (the CRD refuses them first).
func loadOptionsFile(opts *grocksdb.Options, cfg engine.Config) error {
	if cfg.Options.OptimizeForPointLookup != nil || cfg.Options.IncreaseParallelism != nil {
		return fmt.Errorf("optimizeForPointLookup and increaseParallelism are presets that rewrite many options: with an OPTIONS file, put their result in the file")
	}
	if !optionsLayoutOK {
		return fmt.Errorf("rocksdb OPTIONS file %s: loading needs the C option handles (grocksdb layout changed)", cfg.OptionsFile)
	}
	p := C.CString(cfg.OptionsFile)
	defer C.free(unsafe.Pointer(p))
	if msg := C.kvb_load_options_file((*C.rocksdb_options_t)(rawPtr(opts)), p); msg != nil {
		defer C.free(unsafe.Pointer(msg))
		return fmt.Errorf("rocksdb OPTIONS file %s: %s", cfg.OptionsFile, C.GoString(msg))
	}
	return nil
}

// fileTableOverride sets the typed block-based table options over the file's table factory.
func fileTableOverride(opts *grocksdb.Options, o api.EngineOptions) error {
	if o.CacheSize == nil && o.BloomBits == nil && o.BlockSize == nil && o.CacheNumShardBits == nil {
		return nil
	}
	cache := int64(0)
	if o.CacheSize != nil || o.CacheNumShardBits != nil {
		cache = engine.Bytes(o.CacheSize, 8<<20) // RocksDB 7.8's default block cache, as in db_bench
	}
	shardBits := engine.Int(o.CacheNumShardBits, -1)
	bloom := -1.0
	if o.BloomBits != nil {
		bloom = float64(*o.BloomBits)
	}
	c := (*C.rocksdb_options_t)(rawPtr(opts))
	if C.kvb_file_table_override(c, C.longlong(cache), C.int(shardBits), C.double(bloom), C.longlong(engine.Bytes(o.BlockSize, 0))) != 0 {
		return fmt.Errorf("engines[].options cacheSize, cacheNumShardBits, bloomBits and blockSize are BlockBasedTable options, "+
			"and the OPTIONS file's table factory is %s: remove them from options or use a BlockBasedTable file", C.GoString(C.kvb_table_factory_name(c)))
	}
	return nil
}

// filePlainTable: the options' table factory is PlainTable (from an OPTIONS file), whose files
// cannot be ingested (CannotIngest).
func filePlainTable(opts *grocksdb.Options) bool {
	return optionsLayoutOK && C.GoString(C.kvb_table_factory_name((*C.rocksdb_options_t)(rawPtr(opts)))) == "PlainTable"
}

// Sections of RocksDB's OPTIONS file.
const (
	dbOpts = "DBOptions/"
	cfOpts = `CFOptions "default"/`
	tbOpts = `TableOptions/BlockBasedTable "default"/`
)

// fileReplacements are the keys of an OPTIONS file the typed options and the runner set (nil
// without a file). cacheSize and cacheNumShardBits have none: RocksDB does not write the block
// cache into the file; statistics, disableWAL and sync are not file options.
func fileReplacements(cfg engine.Config) []engine.Replacement {
	if cfg.OptionsFile == "" {
		return nil
	}
	o := cfg.Options
	typed := []struct {
		field string
		set   bool
		keys  []string
	}{
		{"writeBufferSize", o.WriteBufferSize != nil, []string{cfOpts + "write_buffer_size"}},
		{"maxWriteBufferNumber", o.MaxWriteBufferNumber != nil, []string{cfOpts + "max_write_buffer_number"}},
		{"blockSize", o.BlockSize != nil, []string{tbOpts + "block_size"}},
		{"bloomBits", o.BloomBits != nil, []string{tbOpts + "filter_policy"}},
		{"compression", o.Compression != nil, []string{cfOpts + "compression"}},
		{"maxOpenFiles", o.MaxOpenFiles != nil, []string{dbOpts + "max_open_files"}},
		{"level0FileNumCompactionTrigger", o.Level0FileNumCompactionTrigger != nil, []string{cfOpts + "level0_file_num_compaction_trigger"}},
		{"level0SlowdownWritesTrigger", o.Level0SlowdownWritesTrigger != nil, []string{cfOpts + "level0_slowdown_writes_trigger"}},
		{"level0StopWritesTrigger", o.Level0StopWritesTrigger != nil, []string{cfOpts + "level0_stop_writes_trigger"}},
		{"targetFileSizeBase", o.TargetFileSizeBase != nil, []string{cfOpts + "target_file_size_base"}},
		{"maxBytesForLevelBase", o.MaxBytesForLevelBase != nil, []string{cfOpts + "max_bytes_for_level_base"}},
		{"maxBackgroundJobs", o.MaxBackgroundJobs != nil, []string{dbOpts + "max_background_jobs"}},
		{"mmapRead", engine.Bool(o.MmapRead), []string{dbOpts + "allow_mmap_reads"}},
		{"plainTable", engine.Bool(o.PlainTable), []string{cfOpts + "table_factory", cfOpts + "memtable_factory",
			cfOpts + "prefix_extractor", dbOpts + "allow_mmap_reads", dbOpts + "allow_concurrent_memtable_write"}},
		{"numLevels", o.NumLevels != nil, []string{cfOpts + "num_levels"}},
		{"maxBackgroundCompactions", o.MaxBackgroundCompactions != nil, []string{dbOpts + "max_background_compactions"}},
		{"maxBackgroundFlushes", o.MaxBackgroundFlushes != nil, []string{dbOpts + "max_background_flushes"}},
		{"minLevelToCompress", o.MinLevelToCompress != nil, []string{cfOpts + "compression_per_level"}},
		{"bloomLocality", o.BloomLocality != nil, []string{cfOpts + "bloom_locality"}},
		{"mmapWrite", engine.Bool(o.MmapWrite), []string{dbOpts + "allow_mmap_writes"}},
		{"walDir", o.WALDir != nil, []string{dbOpts + "wal_dir"}},
	}
	var reps []engine.Replacement
	for _, t := range typed {
		if t.set {
			reps = append(reps, engine.Replacement{By: "engines[].options." + t.field, Keys: t.keys})
		}
	}
	return append(reps,
		engine.Replacement{By: "spec.cacheMode", Keys: []string{dbOpts + "use_direct_reads", dbOpts + "use_direct_io_for_flush_and_compaction"}},
		engine.Replacement{By: "runner: every run creates its database on its own volume", Keys: []string{dbOpts + "create_if_missing", dbOpts + "error_if_exists"}},
	)
}

// OptionsFileReplacements implements engine.OptionsFileReplacer.
func (d *DB) OptionsFileReplacements() []engine.Replacement { return d.reps }
