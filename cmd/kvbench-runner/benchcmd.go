package main

import (
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// ignoredFlags are db_bench flags the seeds pass that the runner accepts but does not model,
// because they change nothing RocksDB 7.8.3 measures here (docs/runner.md lists why for each);
// they are reported, not silently dropped, and unknown flags stay errors.
var ignoredFlags = []string{"disable_seek_compaction", "hard_rate_limit", "disable_data_sync", "verify_checksum",
	"delete_obsolete_files_period_micros", "readonly", "max_grandparent_overlap_factor", "cache_remove_scan_count_limit"}

// benchFlags mirror db_bench's names and defaults.
type benchFlags struct {
	engine, db, benchmarks                 string
	num, reads                             int64
	threads                                int
	duration                               int
	keySize, valueSize, valueMin, valueMax int
	useExisting                            bool
	compression                            string
	compressionRatio                       float64
	cacheSize, writeBufferSize, blockSize  int64
	maxWriteBufferNumber, openFiles        int
	bloomBits                              int
	l0Trigger, l0Slowdown, l0Stop          int
	targetFileSizeBase, maxBytesLevelBase  int64
	maxBackgroundJobs                      int
	disableWAL, sync, mmapRead, plainTable bool
	memtablerep                            string
	optimizePointLookup, increaseParallel  int64
	prefixSize, keysPerPrefix, seekNexts   int
	seed                                   int64
	writesPerSecond, benchmarkWriteRate    int64
	readWritePercent                       int
	datasetSize, load, cacheMode           string
	pulseReads, pulseWrites, pulseDeletes  int64
	pulseInterval                          time.Duration
	pulseRounds                            int
	ycsbWorkload, ycsbDist, ycsbRWRatio    string
	ycsbReadPercent, ycsbMaxScan           int
	ycsbFieldCount, ycsbFieldLength        int
	ycsbZeroPadding                        int
	ycsbInsertOrder, ycsbUpdateMode        string
	ycsbReadAll, ycsbWriteAll              bool
	repeat                                 int
	reportInterval                         time.Duration
	warmupOps                              int64
	warmupSeconds                          float64
	settleTimeout                          time.Duration
	reset                                  string
	// db_bench flags modelled as RocksDB options (-1: RocksDB's default).
	numLevels, cacheShardBits, minLevelCompress   int
	maxBGCompactions, maxBGFlushes, bloomLocality int
	statistics, mmapWrite                         bool
	walDir                                        string
	optionsFile                                   string
	statsIntervalSeconds                          int
	statsInterval                                 int64
	statsPerInterval                              int
}

func benchCmd() *cobra.Command {
	var o outputs
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Run benchmarks with db_bench's flags (--benchmarks=fillseq,readrandom ...)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := f.config(cmd.Flags())
			if err != nil {
				return err
			}
			_, err = execute(cfg, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
			return err
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.engine, "engine", "rocksdb", "storage engine: rocksdb, leveldb or pebble")
	fs.StringVar(&f.db, "db", "", "database directory")
	fs.StringVar(&f.benchmarks, "benchmarks", "fillseq,fillrandom,readrandom", "comma-separated workloads, run in order")
	fs.Int64Var(&f.num, "num", 1000000, "number of keys (and of write operations per thread)")
	fs.Int64Var(&f.reads, "reads", -1, "read operations per thread (-1: num)")
	fs.IntVar(&f.threads, "threads", 1, "concurrent threads")
	fs.IntVar(&f.duration, "duration", 0, "seconds to run each benchmark; 0 means until num/reads ops")
	fs.IntVar(&f.keySize, "key_size", 16, "key size in bytes")
	fs.IntVar(&f.valueSize, "value_size", 100, "value size in bytes")
	fs.IntVar(&f.valueMin, "value_size_min", 0, "with --value_size_max: values uniform in [min, max] bytes")
	fs.IntVar(&f.valueMax, "value_size_max", 0, "see --value_size_min")
	fs.BoolVar(&f.useExisting, "use_existing_db", false, "use the existing database instead of creating a new one")
	fs.StringVar(&f.compression, "compression_type", "snappy", "none, snappy, lz4 or zstd")
	fs.Float64Var(&f.compressionRatio, "compression_ratio", 0.5, "how compressible values are")
	fs.Int64Var(&f.cacheSize, "cache_size", 8<<20, "block cache bytes")
	fs.IntVar(&f.bloomBits, "bloom_bits", -1, "bloom filter bits per key; negative: no filter")
	fs.Int64Var(&f.writeBufferSize, "write_buffer_size", 64<<20, "memtable bytes")
	fs.IntVar(&f.maxWriteBufferNumber, "max_write_buffer_number", 2, "memtables")
	fs.Int64Var(&f.blockSize, "block_size", 4096, "data block bytes")
	fs.IntVar(&f.openFiles, "open_files", -1, "max open files (-1 unlimited)")
	fs.IntVar(&f.l0Trigger, "level0_file_num_compaction_trigger", 4, "L0 files that trigger compaction")
	fs.IntVar(&f.l0Slowdown, "level0_slowdown_writes_trigger", 20, "L0 files that slow writes")
	fs.IntVar(&f.l0Stop, "level0_stop_writes_trigger", 36, "L0 files that stop writes")
	fs.Int64Var(&f.targetFileSizeBase, "target_file_size_base", 64<<20, "target table file bytes")
	fs.Int64Var(&f.maxBytesLevelBase, "max_bytes_for_level_base", 256<<20, "bytes of the base level")
	fs.IntVar(&f.maxBackgroundJobs, "max_background_jobs", 2, "background flush/compaction jobs")
	fs.BoolVar(&f.disableWAL, "disable_wal", false, "do not write the WAL")
	fs.BoolVar(&f.sync, "sync", false, "sync every write")
	fs.BoolVar(&f.mmapRead, "mmap_read", false, "read table files through mmap")
	fs.BoolVar(&f.plainTable, "use_plain_table", false, "RocksDB PlainTable with a prefix-hash memtable (needs --prefix_size)")
	fs.StringVar(&f.memtablerep, "memtablerep", "skip_list", "skip_list, or prefix_hash (implied by --use_plain_table)")
	fs.Int64Var(&f.optimizePointLookup, "optimize_for_point_lookup", 0, "RocksDB OptimizeForPointLookup with this block cache bytes")
	fs.Int64Var(&f.increaseParallel, "increase_parallelism", 0, "RocksDB IncreaseParallelism threads")
	fs.IntVar(&f.prefixSize, "prefix_size", 0, "key prefix bytes")
	fs.IntVar(&f.keysPerPrefix, "keys_per_prefix", 0, "keys per prefix group")
	fs.IntVar(&f.seekNexts, "seek_nexts", 0, "Next calls after each seek (seekrandom)")
	fs.Int64Var(&f.seed, "seed", 0, "random seed (0: fixed default)")
	fs.BoolVar(&o.histogram, "histogram", false, "print latency histograms")
	fs.Int64Var(&f.writesPerSecond, "writes_per_second", 0, "readwhilewriting writer rate in writes/s (0: unlimited)")
	fs.Int64Var(&f.benchmarkWriteRate, "benchmark_write_rate_limit", 0, "readwhilewriting writer rate in bytes/s (db_bench 7.x)")
	fs.IntVar(&f.readWritePercent, "readwritepercent", 90, "read share of readrandomwriterandom and ycsb, percent")
	fs.StringVar(&f.datasetSize, "dataset_size", "", "dataset size in bytes (e.g. 10Gi) instead of --num")
	fs.StringVar(&f.load, "load", "", "prepare the dataset first: bulk, fillseq or fillrandom")
	fs.StringVar(&f.cacheMode, "cache_mode", "warm", "page cache before each benchmark: warm, cold or direct")
	fs.Int64Var(&f.pulseReads, "pulse_reads", 90000, "pulse: random reads per round")
	fs.Int64Var(&f.pulseWrites, "pulse_writes", 210000, "pulse: new keys per round")
	fs.Int64Var(&f.pulseDeletes, "pulse_deletes", 30000, "pulse: deletes per round")
	fs.DurationVar(&f.pulseInterval, "pulse_interval", 5*time.Minute, "pulse: time between round starts")
	fs.IntVar(&f.pulseRounds, "pulse_rounds", 7, "pulse: rounds")
	fs.StringVar(&f.ycsbWorkload, "ycsb_workload", "A", "ycsb: core workload letter A-F (also --benchmarks=ycsba..ycsbf)")
	fs.StringVar(&f.ycsbDist, "ycsb_distribution", "", "ycsb: zipfian, uniform, latest or permutedZipfian (default: the letter's)")
	fs.IntVar(&f.ycsbReadPercent, "ycsb_read_percent", -1, "ycsb: override the read percentage")
	fs.StringVar(&f.ycsbRWRatio, "ycsb_read_write_ratio", "", "ycsb: override the mix as reads:writes, e.g. 30:1 (Pegasus's RW Ratio)")
	fs.IntVar(&f.ycsbMaxScan, "ycsb_max_scan_length", 100, "ycsb E: maximum scan length")
	fs.IntVar(&f.ycsbFieldCount, "ycsb_fieldcount", api.DefaultYCSBFieldCount, "ycsb: fields per record (fieldcount)")
	fs.IntVar(&f.ycsbFieldLength, "ycsb_fieldlength", api.DefaultYCSBFieldLength, "ycsb: bytes per field (fieldlength)")
	fs.StringVar(&f.ycsbInsertOrder, "ycsb_insertorder", "hashed", "ycsb: hashed (keys user+fnvhash64(n)) or ordered (user+n) (insertorder)")
	fs.IntVar(&f.ycsbZeroPadding, "ycsb_zeropadding", 1, "ycsb: pad the key's number with zeros to this many digits (zeropadding)")
	fs.BoolVar(&f.ycsbReadAll, "ycsb_readallfields", true, "ycsb: reads ask for every field (readallfields)")
	fs.BoolVar(&f.ycsbWriteAll, "ycsb_writeallfields", false, "ycsb: updates write every field (writeallfields)")
	fs.StringVar(&f.ycsbUpdateMode, "ycsb_update_mode", "merge", "ycsb: merge (get + put, YCSB's RocksDB binding) or overwrite (put the written fields)")
	fs.IntVar(&f.repeat, "repeat", 1, "run the benchmark list this many times")
	fs.DurationVar(&f.reportInterval, "report_interval", time.Second, "throughput time-series interval")
	fs.Int64Var(&f.warmupOps, "warmup_ops", 0, "run this many operations per thread of each benchmark first and discard them")
	fs.Float64Var(&f.warmupSeconds, "warmup_seconds", 0, "run each benchmark this many seconds first and discard it")
	fs.DurationVar(&f.settleTimeout, "settle_timeout", 0, "before each benchmark wait up to this long for idle flushes and compactions (0: do not wait)")
	fs.StringVar(&f.reset, "reset", "none", "none, perPoint: restore a checkpoint taken after --load before each benchmark, or perIteration: before each --repeat iteration after the first")
	fs.IntVar(&f.numLevels, "num_levels", 7, "LSM levels")
	fs.IntVar(&f.cacheShardBits, "cache_numshardbits", 6, "block cache shards as a power of two")
	fs.IntVar(&f.minLevelCompress, "min_level_to_compress", -1, "levels below this are not compressed (-1: all compressed)")
	fs.IntVar(&f.maxBGCompactions, "max_background_compactions", -1, "background compactions (-1: from max_background_jobs)")
	fs.IntVar(&f.maxBGFlushes, "max_background_flushes", -1, "background flushes (-1: from max_background_jobs)")
	fs.IntVar(&f.bloomLocality, "bloom_locality", 0, "memtable prefix bloom locality")
	fs.BoolVar(&f.statistics, "statistics", false, "create RocksDB's Statistics object: tickers in the result, STATISTICS: at the end")
	fs.BoolVar(&f.mmapWrite, "mmap_write", false, "write table files through mmap")
	fs.StringVar(&f.walDir, "wal_dir", "", "WAL directory, inside the database directory (relative path)")
	fs.StringVar(&f.optionsFile, "options_file", "", "the engine's own OPTIONS file (rocksdb: RocksDB's INI format, pebble: Pebble's) as the base; only the flags given explicitly are set over it")
	fs.IntVar(&f.statsIntervalSeconds, "stats_interval_seconds", 0, "print an interval line every N seconds of a benchmark (0: off)")
	fs.Int64Var(&f.statsInterval, "stats_interval", 0, "print an interval line every N operations, checked each report interval (0: off)")
	fs.IntVar(&f.statsPerInterval, "stats_per_interval", 0, "with an interval: also print the engine's stats (rocksdb.stats)")
	fs.Lookup("statistics").NoOptDefVal = "true"
	fs.Lookup("mmap_write").NoOptDefVal = "true"
	for _, name := range ignoredFlags {
		fs.String(name, "", "accepted for db_bench compatibility; not modelled")
		fs.Lookup(name).NoOptDefVal = "true"
	}
	o.flags(cmd)
	return cmd
}

// config maps db_bench flags onto a RunnerConfig. Engine options are set only when given, so an
// engine that lacks an option fails only if the user asked for it.
func (f *benchFlags) config(fs *pflag.FlagSet) (api.RunnerConfig, error) {
	var cfg api.RunnerConfig
	for _, name := range ignoredFlags {
		if fs.Changed(name) {
			fmt.Fprintf(os.Stderr, "note: --%s accepted for db_bench compatibility; not modelled by the runner\n", name)
		}
	}
	if f.num < 1 {
		return cfg, fmt.Errorf("--num=%d must be at least 1", f.num)
	}
	if f.threads < 1 {
		return cfg, fmt.Errorf("--threads=%d must be at least 1", f.threads)
	}
	if f.keySize < 1 || f.valueSize < 0 {
		return cfg, fmt.Errorf("--key_size and --value_size must be positive")
	}
	cfg.Engine.Name = api.EngineName(f.engine)
	cfg.DBPath = f.db
	cfg.OptionsFile = f.optionsFile
	cfg.Threads = []int32{int32(f.threads)}
	cfg.CacheMode = api.CacheMode(f.cacheMode)
	cfg.Repeat = int32(f.repeat)
	cfg.ReportInterval = &metav1.Duration{Duration: f.reportInterval}
	cfg.Reset = api.ResetMode(f.reset)
	if f.settleTimeout != 0 {
		cfg.Settle = &api.SettleSpec{Timeout: metav1.Duration{Duration: f.settleTimeout}}
	}
	warmup, err := f.warmup()
	if err != nil {
		return cfg, err
	}
	ds := &cfg.Dataset
	if f.datasetSize != "" {
		q, err := resource.ParseQuantity(f.datasetSize)
		if err != nil {
			return cfg, fmt.Errorf("--dataset_size=%s: %v", f.datasetSize, err)
		}
		ds.Size = &q
	} else {
		n := f.num
		ds.Num = &n
	}
	ds.KeySize, ds.ValueSize = int32(f.keySize), int32(f.valueSize)
	if fs.Changed("value_size_min") || fs.Changed("value_size_max") {
		ds.ValueSizeRange = &api.SizeRange{Min: int32(f.valueMin), Max: int32(f.valueMax)}
	}
	if fs.Changed("compression_ratio") { // unset: db_bench's 0.5, or YCSB's own field bytes
		ds.CompressionRatioPercent = max(1, int32(math.Round(f.compressionRatio*100)))
	}
	ds.PrefixSize, ds.KeysPerPrefix, ds.Seed = int32(f.prefixSize), int64(f.keysPerPrefix), f.seed
	switch {
	case f.useExisting:
		ds.LoadMode = api.LoadExisting
	case f.load != "":
		ds.LoadMode = api.LoadMode(f.load)
	default:
		ds.LoadMode = api.LoadNone // db_bench: a fresh, empty database
	}
	eo := &cfg.Engine.Options
	q := func(v int64) *resource.Quantity { return resource.NewQuantity(v, resource.BinarySI) }
	i32 := func(v int) *int32 { x := int32(v); return &x }
	b := func(v bool) *bool { return &v }
	set := func(name string, apply func()) {
		if fs.Changed(name) {
			apply()
		}
	}
	set("cache_size", func() { eo.CacheSize = q(f.cacheSize) })
	set("bloom_bits", func() {
		if f.bloomBits >= 0 {
			eo.BloomBits = i32(f.bloomBits)
		}
	})
	set("write_buffer_size", func() { eo.WriteBufferSize = q(f.writeBufferSize) })
	set("max_write_buffer_number", func() { eo.MaxWriteBufferNumber = i32(f.maxWriteBufferNumber) })
	set("block_size", func() { eo.BlockSize = q(f.blockSize) })
	set("compression_type", func() { c := api.Compression(strings.ToLower(f.compression)); eo.Compression = &c })
	set("open_files", func() { eo.MaxOpenFiles = i32(f.openFiles) })
	set("level0_file_num_compaction_trigger", func() { eo.Level0FileNumCompactionTrigger = i32(f.l0Trigger) })
	set("level0_slowdown_writes_trigger", func() { eo.Level0SlowdownWritesTrigger = i32(f.l0Slowdown) })
	set("level0_stop_writes_trigger", func() { eo.Level0StopWritesTrigger = i32(f.l0Stop) })
	set("target_file_size_base", func() { eo.TargetFileSizeBase = q(f.targetFileSizeBase) })
	set("max_bytes_for_level_base", func() { eo.MaxBytesForLevelBase = q(f.maxBytesLevelBase) })
	set("max_background_jobs", func() { eo.MaxBackgroundJobs = i32(f.maxBackgroundJobs) })
	set("disable_wal", func() { eo.DisableWAL = b(f.disableWAL) })
	set("sync", func() { eo.Sync = b(f.sync) })
	set("mmap_read", func() { eo.MmapRead = b(f.mmapRead) })
	set("use_plain_table", func() { eo.PlainTable = b(f.plainTable) })
	set("optimize_for_point_lookup", func() { eo.OptimizeForPointLookup = q(f.optimizePointLookup) })
	set("increase_parallelism", func() { eo.IncreaseParallelism = i32(int(f.increaseParallel)) })
	set("num_levels", func() { eo.NumLevels = i32(f.numLevels) })
	set("cache_numshardbits", func() {
		if f.cacheShardBits >= 0 {
			eo.CacheNumShardBits = i32(f.cacheShardBits)
		}
	})
	set("min_level_to_compress", func() {
		if f.minLevelCompress >= 0 {
			eo.MinLevelToCompress = i32(f.minLevelCompress)
		}
	})
	set("max_background_compactions", func() {
		if f.maxBGCompactions > 0 {
			eo.MaxBackgroundCompactions = i32(f.maxBGCompactions)
		}
	})
	set("max_background_flushes", func() {
		if f.maxBGFlushes > 0 {
			eo.MaxBackgroundFlushes = i32(f.maxBGFlushes)
		}
	})
	set("bloom_locality", func() { eo.BloomLocality = i32(f.bloomLocality) })
	set("statistics", func() {
		if f.statistics {
			eo.Statistics = b(true)
		}
	})
	set("mmap_write", func() { eo.MmapWrite = b(f.mmapWrite) })
	set("wal_dir", func() {
		if f.walDir != "" {
			eo.WALDir = &f.walDir
		}
	})
	if eo.WALDir != nil && (strings.HasPrefix(*eo.WALDir, "/") || strings.Contains(*eo.WALDir, "..")) {
		return cfg, fmt.Errorf("--wal_dir=%s: give a path relative to --db (the WAL stays on the benchmarked volume)", *eo.WALDir)
	}
	if f.statsIntervalSeconds < 0 || f.statsInterval < 0 {
		return cfg, fmt.Errorf("--stats_interval_seconds and --stats_interval must not be negative")
	}
	if f.statsIntervalSeconds > 0 || f.statsInterval > 0 {
		cfg.StatsInterval = &api.StatsIntervalSpec{Seconds: int32(f.statsIntervalSeconds), Ops: f.statsInterval,
			PerInterval: f.statsPerInterval > 0}
	}
	if eo.Compression != nil {
		switch *eo.Compression {
		case api.CompressionNone, api.CompressionSnappy, api.CompressionLZ4, api.CompressionZstd:
		default:
			return cfg, fmt.Errorf("--compression_type=%s: want none, snappy, lz4 or zstd", f.compression)
		}
	}
	if f.memtablerep != "skip_list" && f.memtablerep != "prefix_hash" {
		return cfg, fmt.Errorf("--memtablerep=%s: want skip_list or prefix_hash", f.memtablerep)
	}
	if f.memtablerep == "prefix_hash" && !f.plainTable {
		return cfg, fmt.Errorf("--memtablerep=prefix_hash is only modelled with --use_plain_table")
	}

	var dur *metav1.Duration
	if f.duration < 0 {
		return cfg, fmt.Errorf("--duration=%d must not be negative", f.duration)
	}
	if f.duration > 0 {
		dur = &metav1.Duration{Duration: time.Duration(f.duration) * time.Second}
	}
	wps := f.writesPerSecond
	if f.benchmarkWriteRate > 0 && wps == 0 {
		wps = max(1, f.benchmarkWriteRate/int64(f.keySize+f.valueSize))
	}
	for _, name := range strings.Split(f.benchmarks, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		w := api.WorkloadSpec{Name: api.WorkloadName(name), Duration: dur}
		isRead := false
		switch w.Name {
		case api.WorkloadReadSeq, api.WorkloadReadReverse, api.WorkloadReadRandom, api.WorkloadReadMissing,
			api.WorkloadReadWhileWriting, api.WorkloadReadRandomWriteRandom, api.WorkloadSeekRandom, api.WorkloadUpdateRandom:
			isRead = true
		}
		if dur == nil || fs.Changed("num") || (isRead && f.reads >= 0) {
			n := f.num
			if isRead && f.reads >= 0 {
				n = f.reads
			}
			if n < 1 {
				return cfg, fmt.Errorf("--reads=%d must be at least 1", n)
			}
			if dur == nil || fs.Changed("reads") || !isRead {
				w.Num = &n
			}
		}
		switch {
		case w.Name == api.WorkloadReadWhileWriting:
			w.WritesPerSecond = &wps
		case w.Name == api.WorkloadReadRandomWriteRandom:
			p := int32(f.readWritePercent)
			w.ReadWritePercent = &p
		case w.Name == api.WorkloadSeekRandom:
			s := int32(f.seekNexts)
			w.SeekNexts = &s
		case w.Name == api.WorkloadPulse:
			w.Num = nil
			w.Pulse = &api.PulseSpec{Reads: f.pulseReads, Writes: f.pulseWrites, Deletes: f.pulseDeletes,
				Interval: metav1.Duration{Duration: f.pulseInterval}, Rounds: int32(f.pulseRounds)}
		case w.Name == "ycsb" || (strings.HasPrefix(name, "ycsb") && len(name) == 5):
			letter := f.ycsbWorkload
			if len(name) == 5 {
				letter = strings.ToUpper(name[4:])
			}
			w.Name = api.WorkloadYCSB
			w.YCSB = &api.YCSBSpec{Workload: api.YCSBWorkload(letter)}
			if f.ycsbDist != "" {
				d := api.YCSBDistribution(f.ycsbDist)
				w.YCSB.RequestDistribution = &d
			}
			if f.ycsbReadPercent >= 0 {
				r := int32(f.ycsbReadPercent)
				w.YCSB.ReadPercent = &r
			}
			w.YCSB.ReadWriteRatio = f.ycsbRWRatio
			m := int32(f.ycsbMaxScan)
			w.YCSB.MaxScanLength = &m
			readAll, writeAll := f.ycsbReadAll, f.ycsbWriteAll
			w.YCSB.ReadAllFields, w.YCSB.WriteAllFields = &readAll, &writeAll
			w.YCSB.UpdateMode = api.YCSBUpdateMode(f.ycsbUpdateMode)
			// YCSB's workloads run on YCSB's records.
			n, l, z := int32(f.ycsbFieldCount), int32(f.ycsbFieldLength), int32(f.ycsbZeroPadding)
			cfg.Dataset.YCSB = &api.YCSBRecordSpec{FieldCount: &n, FieldLength: &l, ZeroPadding: &z,
				InsertOrder: api.YCSBInsertOrder(f.ycsbInsertOrder)}
		}
		if w.Name != api.WorkloadPulse {
			w.Warmup = warmup.DeepCopy()
		}
		cfg.Workloads = append(cfg.Workloads, w)
	}
	return cfg, nil
}

// warmup is the --warmup_ops or --warmup_seconds bound, nil when neither is set.
func (f *benchFlags) warmup() (*api.WarmupSpec, error) {
	switch {
	case f.warmupOps < 0 || f.warmupSeconds < 0:
		return nil, fmt.Errorf("--warmup_ops and --warmup_seconds must not be negative")
	case f.warmupOps > 0 && f.warmupSeconds > 0:
		return nil, fmt.Errorf("set --warmup_ops or --warmup_seconds, not both")
	case f.warmupOps > 0:
		n := f.warmupOps
		return &api.WarmupSpec{Ops: &n}, nil
	case f.warmupSeconds > 0:
		return &api.WarmupSpec{Duration: &metav1.Duration{Duration: time.Duration(f.warmupSeconds * float64(time.Second))}}, nil
	}
	return nil, nil
}
