package io.kvbench.rocksjava;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The run as db_bench-style flags: the Go runner's names and defaults (cmd/kvbench-runner/benchcmd.go)
 * for what this runner does. A flag of the Go runner this runner does not do is refused by name, an
 * unknown flag as unknown: never silently ignored.
 */
public final class Config implements Cloneable {
  public String engine = "rocksjava";
  public String db = "";
  public List<String> benchmarks = List.of("fillseq", "fillrandom", "readrandom");
  public long num = 1_000_000;
  public long reads = -1;
  public int threads = 1;
  public int duration;
  public int keySize = 16;
  public int valueSize = 100;
  public boolean useExistingDb;
  public String compression = "snappy";
  public double compressionRatio = 0.5;
  public long cacheSize = 8 << 20;
  public int cacheShardBits = 6;
  public int bloomBits = -1;
  public long writeBufferSize = 64 << 20;
  public int maxWriteBufferNumber = 2;
  public long blockSize = 4096;
  public int openFiles = -1;
  public int l0Trigger = 4;
  public int l0Slowdown = 20;
  public int l0Stop = 36;
  public long targetFileSizeBase = 64 << 20;
  public long maxBytesLevelBase = 256 << 20;
  public int maxBackgroundJobs = 2;
  public int numLevels = 7;
  public boolean disableWal;
  public boolean sync;
  public int seekNexts;
  public long seed;
  public boolean histogram;
  public long writesPerSecond;
  public long benchmarkWriteRate;
  public boolean statistics;
  public int repeat = 1;
  public String jsonPath = "";
  public String summaryPath = "";
  /** Print the per-phase and final result lines (kvbench-phase:, kvbench-result:) as `run` does. */
  public boolean resultLines;
  /** The user's OPTIONS file (engines[].optionsFrom), "" without one. */
  public String optionsFile = "";
  /** The engines[].options fields the config sets: with an OPTIONS file only these go over it. */
  public java.util.Set<String> typedSet = java.util.Set.of();
  /** Not flags: a RunnerConfig workload's own num (ops per thread, -1: the flags decide) and duration. */
  public long ops = -1;
  public long durationNanos;
  /** Not a flag: the load phase writes the keys in a permuted order (RunnerConfig loadMode fillrandom). */
  public boolean loadRandom;
  /** dataset.ycsb: YCSB records (null: db_bench's keys and values); keySize and valueSize are then theirs. */
  public Ycsb.Shape ycsbShape;
  /** The phase's ycsb spec (workload ycsb). */
  public Ycsb.Mix ycsbMix;
  /** The next YCSB record number to insert, shared by the run's phases (copies share it). */
  public final java.util.concurrent.atomic.AtomicLong ycsbInserted = new java.util.concurrent.atomic.AtomicLong();
  /** The dataset's record pool, built once and shared by copies. */
  final java.util.concurrent.atomic.AtomicReference<Ycsb.Records> ycsbRecords =
      new java.util.concurrent.atomic.AtomicReference<>();

  /** A copy to change per phase. */
  public Config copy() {
    try {
      return (Config) clone();
    } catch (CloneNotSupportedException e) {
      throw new AssertionError(e);
    }
  }

  /** The phase's time bound in ns, 0 for none. */
  public long durationNs() {
    return durationNanos > 0 ? durationNanos : duration * 1_000_000_000L;
  }

  /** db_bench's default seed, which an unset seed is written down as (the Go runner's provenance). */
  public static final long DEFAULT_SEED = 301;

  public static final Set<String> WORKLOADS = Set.of("fillseq", "fillrandom", "overwrite", "readrandom",
      "readseq", "readwhilewriting", "seekrandom");
  /** Pseudo-benchmarks: no phase. */
  public static final Set<String> PSEUDO = Set.of("waitforcompaction", "stats");

  /** Flags of the Go runner (docs/runner.md) that this runner does not do yet. */
  static final Set<String> GO_ONLY = Set.of("value_size_min", "value_size_max", "mmap_read", "use_plain_table",
      "memtablerep", "optimize_for_point_lookup", "increase_parallelism", "prefix_size", "keys_per_prefix",
      "readwritepercent", "dataset_size", "load", "cache_mode", "pulse_reads", "pulse_writes", "pulse_deletes",
      "pulse_interval", "pulse_rounds", "report_interval", "metrics-addr", "cpuprofile", "warmup_ops",
      "warmup_seconds", "settle_timeout", "reset", "min_level_to_compress", "max_background_compactions",
      "max_background_flushes", "bloom_locality", "mmap_write", "wal_dir", "stats_interval_seconds",
      "stats_interval", "stats_per_interval", "ycsb_workload", "ycsb_distribution", "ycsb_read_percent",
      "ycsb_read_write_ratio", "ycsb_max_scan_length", "ycsb_fieldcount", "ycsb_fieldlength", "ycsb_insertorder",
      "ycsb_zeropadding", "ycsb_readallfields", "ycsb_writeallfields", "ycsb_update_mode", "config",
      "config-json");

  /**
   * The flags that set an engines[].options field (OptionsFile.KEYS, TABLE_FIELDS): with --options_file only
   * those given go over the file, as the Go runner's flags do.
   */
  static final Map<String, String> TYPED_FLAGS = Map.ofEntries(Map.entry("write_buffer_size", "writeBufferSize"),
      Map.entry("max_write_buffer_number", "maxWriteBufferNumber"), Map.entry("compression_type", "compression"),
      Map.entry("open_files", "maxOpenFiles"), Map.entry("level0_file_num_compaction_trigger",
          "level0FileNumCompactionTrigger"), Map.entry("level0_slowdown_writes_trigger", "level0SlowdownWritesTrigger"),
      Map.entry("level0_stop_writes_trigger", "level0StopWritesTrigger"),
      Map.entry("target_file_size_base", "targetFileSizeBase"), Map.entry("max_bytes_for_level_base",
          "maxBytesForLevelBase"), Map.entry("max_background_jobs", "maxBackgroundJobs"),
      Map.entry("num_levels", "numLevels"), Map.entry("cache_size", "cacheSize"),
      Map.entry("cache_numshardbits", "cacheNumShardBits"), Map.entry("bloom_bits", "bloomBits"),
      Map.entry("block_size", "blockSize"));

  public static Config parse(List<String> args) {
    Config c = new Config();
    Set<String> typed = new HashSet<>();
    for (String a : args) {
      if (!a.startsWith("-")) {
        throw new IllegalArgumentException("unexpected argument " + a + " (flags are --name=value)");
      }
      String s = a.startsWith("--") ? a.substring(2) : a.substring(1); // db_bench's -flag too
      int eq = s.indexOf('=');
      String name = eq < 0 ? s : s.substring(0, eq);
      String v = eq < 0 ? null : s.substring(eq + 1);
      c.set(name, v);
      if (TYPED_FLAGS.containsKey(name)) {
        typed.add(TYPED_FLAGS.get(name));
      }
    }
    c.typedSet = typed;
    c.validate();
    return c;
  }

  private void set(String name, String v) {
    try {
      switch (name) {
        case "engine" -> engine = str(name, v);
        case "db" -> db = str(name, v);
        case "benchmarks" -> benchmarks = List.of(str(name, v).split(","));
        case "num" -> num = Long.parseLong(str(name, v));
        case "reads" -> reads = Long.parseLong(str(name, v));
        case "threads" -> threads = Integer.parseInt(str(name, v));
        case "duration" -> duration = Integer.parseInt(str(name, v));
        case "key_size" -> keySize = Integer.parseInt(str(name, v));
        case "value_size" -> valueSize = Integer.parseInt(str(name, v));
        case "use_existing_db" -> useExistingDb = bool(v);
        case "compression_type" -> compression = str(name, v);
        case "compression_ratio" -> compressionRatio = Double.parseDouble(str(name, v));
        case "cache_size" -> cacheSize = Long.parseLong(str(name, v));
        case "cache_numshardbits" -> cacheShardBits = Integer.parseInt(str(name, v));
        case "bloom_bits" -> bloomBits = Integer.parseInt(str(name, v));
        case "write_buffer_size" -> writeBufferSize = Long.parseLong(str(name, v));
        case "max_write_buffer_number" -> maxWriteBufferNumber = Integer.parseInt(str(name, v));
        case "block_size" -> blockSize = Long.parseLong(str(name, v));
        case "open_files" -> openFiles = Integer.parseInt(str(name, v));
        case "level0_file_num_compaction_trigger" -> l0Trigger = Integer.parseInt(str(name, v));
        case "level0_slowdown_writes_trigger" -> l0Slowdown = Integer.parseInt(str(name, v));
        case "level0_stop_writes_trigger" -> l0Stop = Integer.parseInt(str(name, v));
        case "target_file_size_base" -> targetFileSizeBase = Long.parseLong(str(name, v));
        case "max_bytes_for_level_base" -> maxBytesLevelBase = Long.parseLong(str(name, v));
        case "max_background_jobs" -> maxBackgroundJobs = Integer.parseInt(str(name, v));
        case "num_levels" -> numLevels = Integer.parseInt(str(name, v));
        case "disable_wal" -> disableWal = bool(v);
        case "sync" -> sync = bool(v);
        case "seek_nexts" -> seekNexts = Integer.parseInt(str(name, v));
        case "seed" -> seed = Long.parseLong(str(name, v));
        case "histogram" -> histogram = bool(v);
        case "writes_per_second" -> writesPerSecond = Long.parseLong(str(name, v));
        case "benchmark_write_rate_limit" -> benchmarkWriteRate = Long.parseLong(str(name, v));
        case "statistics" -> statistics = bool(v);
        case "repeat" -> repeat = Integer.parseInt(str(name, v));
        case "json" -> jsonPath = str(name, v);
        case "summary-file" -> summaryPath = str(name, v);
        case "result-lines" -> resultLines = bool(v);
        case "options_file" -> optionsFile = str(name, v);
        default -> {
          if (GO_ONLY.contains(name)) {
            throw new IllegalArgumentException("--" + name + " is not supported by the rocksjava runner "
                + "(the Go runner has it: engine rocksdb)");
          }
          throw new IllegalArgumentException("unknown flag --" + name);
        }
      }
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--" + name + ": not a number: " + v);
    }
  }

  private static String str(String name, String v) {
    if (v == null) {
      throw new IllegalArgumentException("--" + name + " needs a value (--" + name + "=...)");
    }
    return v;
  }

  private static boolean bool(String v) {
    if (v == null || v.equals("1") || v.equalsIgnoreCase("true")) {
      return true;
    }
    if (v.equals("0") || v.equalsIgnoreCase("false")) {
      return false;
    }
    throw new IllegalArgumentException("not a boolean: " + v);
  }

  private void validate() {
    if (!engine.equals("rocksjava")) {
      throw new IllegalArgumentException("--engine=" + engine + ": this runner drives rocksjava only");
    }
    if (db.isEmpty()) {
      throw new IllegalArgumentException("--db is required");
    }
    List<String> bad = new ArrayList<>();
    for (String b : benchmarks) {
      if (!WORKLOADS.contains(b) && !PSEUDO.contains(b)) {
        bad.add(b);
      }
    }
    if (!bad.isEmpty()) {
      throw new IllegalArgumentException("--benchmarks: not supported by the rocksjava runner: "
          + String.join(",", bad) + " (supported: " + String.join(",", new java.util.TreeSet<>(WORKLOADS))
          + ", and waitforcompaction, stats)");
    }
    if (keySize < 8) {
      throw new IllegalArgumentException("--key_size=" + keySize + ": the rocksjava runner needs --key_size >= 8 "
          + "(it writes the key number as 8 big-endian bytes)");
    }
    if (num < 1 || threads < 1 || valueSize < 1 || repeat < 1 || duration < 0) {
      throw new IllegalArgumentException("--num, --threads, --value_size and --repeat must be >= 1, --duration >= 0");
    }
    if (!Set.of("none", "snappy", "lz4", "zstd", "zlib", "bzip2", "lz4hc").contains(compression)) {
      throw new IllegalArgumentException("--compression_type=" + compression + ": unknown");
    }
    if (!optionsFile.isEmpty()) {
      // As RunSpec refuses the typed fields: RocksJava cannot edit the file's table factory in place.
      List<String> table = new ArrayList<>();
      TYPED_FLAGS.forEach((flag, field) -> {
        if (OptionsFile.TABLE_FIELDS.contains(field) && typedSet.contains(field)) {
          table.add("--" + flag);
        }
      });
      if (!table.isEmpty()) {
        java.util.Collections.sort(table);
        throw new IllegalArgumentException(String.join(", ", table) + " with --options_file: the rocksjava runner "
            + "cannot set BlockBasedTable options over the file's table factory; put them in the file's "
            + "[TableOptions/BlockBasedTable \"default\"] section");
      }
    }
    if (writesPerSecond > 0 && benchmarkWriteRate > 0) {
      throw new IllegalArgumentException("--writes_per_second and --benchmark_write_rate_limit: give one");
    }
  }

  public long resolvedSeed() {
    return seed == 0 ? DEFAULT_SEED : seed;
  }

  /** Operations per thread of a workload, as db_bench counts them. */
  public long opsPerThread(String workload) {
    if (ops >= 0) {
      return ops;
    }
    boolean read = workload.startsWith("read") || workload.equals("seekrandom");
    return read && reads >= 0 ? reads : num;
  }

  /** readwhilewriting's writer rate in writes/s (benchmark_write_rate_limit is bytes/s, as db_bench charges). */
  public long writerRate() {
    if (benchmarkWriteRate > 0) {
      return Math.max(1, benchmarkWriteRate / (keySize + valueSize));
    }
    return writesPerSecond;
  }
}
