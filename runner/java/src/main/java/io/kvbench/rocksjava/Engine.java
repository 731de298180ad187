package io.kvbench.rocksjava;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.ChecksumType;
import org.rocksdb.CompactionOptionsFIFO;
import org.rocksdb.CompressionType;
import org.rocksdb.InfoLogLevel;
import org.rocksdb.IndexShorteningMode;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.Statistics;
import org.rocksdb.TickerType;
import org.rocksdb.WriteOptions;

/**
 * RocksDB opened through rocksdbjni with the options db_bench 7.8.3 (and the Go runner,
 * runner/engine/rocksdb/dbbench_defaults.cc) derive from the same flags, so that the three tools measure
 * one configuration. Options for engine state (stats) are read outside the timed loops.
 */
public final class Engine implements AutoCloseable {
  public final RocksDB db;
  public final ReadOptions readOptions = new ReadOptions();
  public final WriteOptions writeOptions = new WriteOptions();
  private final Options options;
  private final Statistics statistics;
  private final LRUCache cache;
  private final BloomFilter filter;
  private final CompactionOptionsFIFO fifo;
  private final String path;
  private final boolean fromFile;

  static {
    // From the image: Launcher's class loader finds the chosen release's JNI library (findLibrary).
    RocksDB.loadLibrary();
  }

  public Engine(Config c) throws RocksDBException, IOException {
    path = c.db;
    if (!c.useExistingDb) {
      deleteTree(Path.of(c.db));
    }
    Files.createDirectories(Path.of(c.db));
    fromFile = !c.optionsFile.isEmpty();
    if (fromFile) {
      // The user's OPTIONS file is the base (instead of db_bench's defaults); only the typed options the
      // config sets go over it, as in the Go runner.
      options = OptionsFile.load(c.optionsFile);
      options.setErrorIfExists(false).setUseDirectReads(false).setUseDirectIoForFlushAndCompaction(false);
      typed(c, c.typedSet::contains);
      fifo = null;
    } else {
      options = new Options();
      typed(c, f -> true);
      // db_bench 7.8.3's flag defaults where they differ from rocksdb::Options(). INFO_LEVEL is a release
      // build's default info log level (the jar's, the Go runner's and the images' db_bench's); Debian's
      // assertion build defaults to DEBUG_LEVEL, which this line matched before the images' release builds.
      options.setEnablePipelinedWrite(true)
          .setDelayedWriteRate(8L << 20)
          .setTableCacheNumshardbits(4)
          .setDumpMallocStats(true)
          .setInfoLogLevel(InfoLogLevel.INFO_LEVEL);
      options.setHardPendingCompactionBytesLimit(128L << 30);
      fifo = new CompactionOptionsFIFO().setAllowCompaction(true).setMaxTableFilesSize(0);
      options.setCompactionOptionsFIFO(fifo);
    }
    options.setCreateIfMissing(!c.useExistingDb);
    if (c.statistics) {
      statistics = new Statistics();
      options.setStatistics(statistics);
    } else {
      statistics = null;
    }
    if (fromFile) {
      // The file's table factory as loaded (RunSpec refuses the typed table options with a file).
      cache = null;
      filter = null;
      writeOptions.setDisableWAL(c.disableWal).setSync(c.sync);
      db = RocksDB.open(options, c.db);
      return;
    }
    cache = new LRUCache(c.cacheSize, c.cacheShardBits);
    BlockBasedTableConfig t = new BlockBasedTableConfig()
        .setBlockCache(cache)
        .setBlockSize(c.blockSize)
        .setPinTopLevelIndexAndFilter(false)
        // RocksJava's BlockBasedTableConfig defaults to kCRC32c where C++ 7.8.3 (db_bench) uses kXXH3.
        // With rocksdbjni 7.8.3 the OPTIONS file still says kCRC32c after this (docs/runner.md).
        .setChecksumType(ChecksumType.kXXH3)
        .setIndexShortening(IndexShorteningMode.kShortenSeparatorsAndSuccessor);
    if (c.bloomBits >= 0) {
      filter = new BloomFilter(c.bloomBits, false);
      t.setFilterPolicy(filter);
    } else {
      filter = null;
    }
    options.setTableFormatConfig(t);
    writeOptions.setDisableWAL(c.disableWal).setSync(c.sync);
    db = RocksDB.open(options, c.db);
  }

  /** Sets the typed options for which set says yes (all of them without an OPTIONS file). */
  private void typed(Config c, java.util.function.Predicate<String> set) {
    if (set.test("writeBufferSize")) {
      options.setWriteBufferSize(c.writeBufferSize);
    }
    if (set.test("maxWriteBufferNumber")) {
      options.setMaxWriteBufferNumber(c.maxWriteBufferNumber);
    }
    if (set.test("maxOpenFiles")) {
      options.setMaxOpenFiles(c.openFiles);
    }
    if (set.test("level0FileNumCompactionTrigger")) {
      options.setLevel0FileNumCompactionTrigger(c.l0Trigger);
    }
    if (set.test("level0SlowdownWritesTrigger")) {
      options.setLevel0SlowdownWritesTrigger(c.l0Slowdown);
    }
    if (set.test("level0StopWritesTrigger")) {
      options.setLevel0StopWritesTrigger(c.l0Stop);
    }
    if (set.test("targetFileSizeBase")) {
      options.setTargetFileSizeBase(c.targetFileSizeBase);
    }
    if (set.test("maxBytesForLevelBase")) {
      options.setMaxBytesForLevelBase(c.maxBytesLevelBase);
    }
    if (set.test("numLevels")) {
      options.setNumLevels(c.numLevels);
    }
    if (set.test("compression")) {
      options.setCompressionType(compression(c.compression));
    }
    if (set.test("maxBackgroundJobs")) {
      options.setMaxBackgroundJobs(c.maxBackgroundJobs);
    }
  }

  /** The OPTIONS file keys the typed options and the runner set over the user's file (none without one). */
  public List<OptionsFile.Replacement> replacements(Config c) {
    return fromFile ? OptionsFile.replacements(c.typedSet) : List.of();
  }

  static CompressionType compression(String name) {
    return switch (name) {
      case "none" -> CompressionType.NO_COMPRESSION;
      case "snappy" -> CompressionType.SNAPPY_COMPRESSION;
      case "lz4" -> CompressionType.LZ4_COMPRESSION;
      case "lz4hc" -> CompressionType.LZ4HC_COMPRESSION;
      case "zstd" -> CompressionType.ZSTD_COMPRESSION;
      case "zlib" -> CompressionType.ZLIB_COMPRESSION;
      case "bzip2" -> CompressionType.BZLIB2_COMPRESSION;
      default -> throw new IllegalArgumentException("compression " + name);
    };
  }

  static void deleteTree(Path p) throws IOException {
    if (!Files.exists(p)) {
      return;
    }
    try (Stream<Path> s = Files.walk(p)) {
      for (Path f : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.delete(f);
      }
    }
  }

  public static String version() {
    RocksDB.Version v = RocksDB.rocksdbVersion();
    return v.getMajor() + "." + v.getMinor() + "." + v.getPatch();
  }

  /** The properties that are 0 when no flush or compaction runs or is due (the Go runner's settle). */
  private static final String[] IDLE = {"rocksdb.estimate-pending-compaction-bytes",
      "rocksdb.num-running-compactions", "rocksdb.num-running-flushes", "rocksdb.mem-table-flush-pending",
      "rocksdb.compaction-pending"};

  /** Whether flushes and compactions are idle (settle). */
  public boolean compactionIdle() throws RocksDBException {
    for (String p : IDLE) {
      if (db.getLongProperty(p) != 0) {
        return false;
      }
    }
    return true;
  }

  /** Saves the open database into dir (RocksDB's checkpoint: table files hard-linked, the memtable flushed). */
  public void checkpoint(String dir) throws RocksDBException {
    try (org.rocksdb.Checkpoint cp = org.rocksdb.Checkpoint.create(db)) {
      cp.createCheckpoint(dir);
    }
  }

  /** Waits until no flush or compaction is pending or running (db_bench's waitforcompaction). */
  public void waitForCompaction() throws RocksDBException, InterruptedException {
    while (Bench.stopReason == null && (db.getLongProperty("rocksdb.compaction-pending") != 0
        || db.getLongProperty("rocksdb.num-running-compactions") != 0
        || db.getLongProperty("rocksdb.num-running-flushes") != 0
        || db.getLongProperty("rocksdb.mem-table-flush-pending") != 0)) {
      Thread.sleep(100);
    }
  }

  public String statsText() throws RocksDBException {
    return db.getProperty("rocksdb.stats");
  }

  /** The newest OPTIONS-* file: the effective options as RocksDB wrote them. */
  public Model.NamedText optionsFile() throws IOException {
    try (Stream<Path> s = Files.list(Path.of(path))) {
      Path newest = s.filter(f -> f.getFileName().toString().startsWith("OPTIONS-"))
          .max((a, b) -> Long.compare(optionsNumber(a), optionsNumber(b))).orElse(null);
      return newest == null ? null : new Model.NamedText(newest.getFileName().toString(), Files.readString(newest));
    }
  }

  private static long optionsNumber(Path p) {
    try {
      return Long.parseLong(p.getFileName().toString().substring("OPTIONS-".length()));
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  private static final double GB = 1L << 30;
  private static final Pattern LEVEL_ROW = Pattern.compile("^compaction\\.L(\\d+)\\.NumFiles$");
  private static final Pattern STALL = Pattern.compile("Cumulative stall: (\\d+):(\\d+):([\\d.]+) H:M:S");

  /** Cumulative counters and the current state, as the Go runner's rocksdb engine reads them. */
  public Model.EngineStats snapshot() throws RocksDBException {
    Map<String, String> cf = db.getMapProperty("rocksdb.cfstats");
    Model.EngineStats s = new Model.EngineStats();
    Double w = num(cf, "compaction.Sum.WriteGB");
    if (w != null) {
      double flushed = orZero(num(cf, "compaction.L0.WriteGB"));
      s.flushBytesWritten = Math.round(flushed * GB);
      s.compactionBytesWritten = Math.round((w - flushed) * GB);
    }
    Double r = num(cf, "compaction.Sum.ReadGB");
    if (r != null) {
      s.compactionBytesRead = Math.round(r * GB);
    }
    s.compactionSeconds = num(cf, "compaction.Sum.CompSec");
    s.compactionCPUSeconds = num(cf, "compaction.Sum.CompMergeCPU");
    Double n = num(cf, "compaction.Sum.CompCount");
    if (n != null) {
      double l0 = orZero(num(cf, "compaction.L0.CompCount"));
      s.flushCount = (long) l0;
      s.compactionCount = (long) (n - l0);
    }
    TreeMap<Integer, Model.Level> levels = new TreeMap<>();
    long stalls = 0;
    int stallKeys = 0;
    for (Map.Entry<String, String> e : cf.entrySet()) {
      Matcher m = LEVEL_ROW.matcher(e.getKey());
      if (m.matches()) {
        String l = m.group(1);
        Model.Level lv = new Model.Level();
        lv.level = Integer.parseInt(l);
        lv.files = (long) orZero(num(cf, "compaction.L" + l + ".NumFiles"));
        lv.bytes = (long) orZero(num(cf, "compaction.L" + l + ".SizeBytes"));
        lv.compactionBytesRead = Math.round(orZero(num(cf, "compaction.L" + l + ".ReadGB")) * GB);
        lv.compactionBytesWritten = Math.round(orZero(num(cf, "compaction.L" + l + ".WriteGB")) * GB);
        levels.put(lv.level, lv);
      }
      if (e.getKey().startsWith("io_stalls.total_")) {
        stalls += Long.parseLong(e.getValue());
        stallKeys++;
      }
    }
    s.levels = new ArrayList<>(levels.values());
    if (stallKeys > 0) {
      s.stallCount = stalls;
    }
    Matcher m = STALL.matcher(statsText());
    if (m.find()) {
      s.stallSeconds = Integer.parseInt(m.group(1)) * 3600.0 + Integer.parseInt(m.group(2)) * 60.0
          + Double.parseDouble(m.group(3));
    }
    s.lsmBytes = db.getLongProperty("rocksdb.live-sst-files-size");
    s.blobBytes = db.getLongProperty("rocksdb.live-blob-file-size");
    s.pendingCompactionBytes = db.getLongProperty("rocksdb.estimate-pending-compaction-bytes");
    s.memtableBytes = db.getLongProperty("rocksdb.cur-size-all-mem-tables");
    if (statistics == null) {
      s.unavailable = List.of("userBytesWritten, blockCacheHits, blockCacheMisses, bloomUseful, bloomChecked: "
          + "RocksDB counts these only in its Statistics object (set statistics, db_bench --statistics)");
    } else {
      s.userBytesWritten = statistics.getTickerCount(TickerType.BYTES_WRITTEN);
      s.blockCacheHits = statistics.getTickerCount(TickerType.BLOCK_CACHE_HIT);
      s.blockCacheMisses = statistics.getTickerCount(TickerType.BLOCK_CACHE_MISS);
      s.bloomUseful = statistics.getTickerCount(TickerType.BLOOM_FILTER_USEFUL);
      s.bloomChecked = s.bloomUseful + statistics.getTickerCount(TickerType.BLOOM_FILTER_FULL_POSITIVE);
    }
    return s;
  }

  public List<Model.NamedText> dumps() throws RocksDBException {
    List<Model.NamedText> out = new ArrayList<>();
    out.add(new Model.NamedText("rocksdb.stats", statsText()));
    out.add(new Model.NamedText("rocksdb.levelstats", db.getProperty("rocksdb.levelstats")));
    if (statistics != null) {
      out.add(new Model.NamedText("rocksdb.statistics", statistics.toString()));
    }
    return out;
  }

  /** The phase's stats: counter deltas from before to after, the state (sizes, levels' files) at the end. */
  public static Model.EngineStats delta(Model.EngineStats b, Model.EngineStats a) {
    Model.EngineStats d = new Model.EngineStats();
    d.userBytesWritten = sub(a.userBytesWritten, b.userBytesWritten);
    d.flushBytesWritten = sub(a.flushBytesWritten, b.flushBytesWritten);
    d.compactionBytesRead = sub(a.compactionBytesRead, b.compactionBytesRead);
    d.compactionBytesWritten = sub(a.compactionBytesWritten, b.compactionBytesWritten);
    d.compactionSeconds = sub(a.compactionSeconds, b.compactionSeconds);
    d.compactionCPUSeconds = sub(a.compactionCPUSeconds, b.compactionCPUSeconds);
    d.flushCount = sub(a.flushCount, b.flushCount);
    d.compactionCount = sub(a.compactionCount, b.compactionCount);
    d.stallSeconds = sub(a.stallSeconds, b.stallSeconds);
    d.stallCount = sub(a.stallCount, b.stallCount);
    d.blockCacheHits = sub(a.blockCacheHits, b.blockCacheHits);
    d.blockCacheMisses = sub(a.blockCacheMisses, b.blockCacheMisses);
    d.bloomUseful = sub(a.bloomUseful, b.bloomUseful);
    d.bloomChecked = sub(a.bloomChecked, b.bloomChecked);
    d.lsmBytes = a.lsmBytes;
    d.blobBytes = a.blobBytes;
    d.pendingCompactionBytes = a.pendingCompactionBytes;
    d.memtableBytes = a.memtableBytes;
    d.unavailable = a.unavailable;
    if (d.flushBytesWritten != null && d.compactionBytesWritten != null && d.flushBytesWritten > 0) {
      d.writeAmplification = (double) (d.flushBytesWritten + d.compactionBytesWritten) / d.flushBytesWritten;
    }
    // Levels: the state at the end, compaction bytes over the phase.
    Map<Integer, Model.Level> before = new TreeMap<>();
    if (b.levels != null) {
      b.levels.forEach(l -> before.put(l.level, l));
    }
    d.levels = new ArrayList<>();
    for (Model.Level l : a.levels) {
      Model.Level x = new Model.Level();
      Model.Level p = before.get(l.level);
      x.level = l.level;
      x.files = l.files;
      x.bytes = l.bytes;
      x.compactionBytesRead = p == null ? l.compactionBytesRead : sub(l.compactionBytesRead, p.compactionBytesRead);
      x.compactionBytesWritten = p == null ? l.compactionBytesWritten
          : sub(l.compactionBytesWritten, p.compactionBytesWritten);
      d.levels.add(x);
    }
    return d;
  }

  private static Long sub(Long a, Long b) {
    return a == null || b == null ? null : a - b;
  }

  private static Double sub(Double a, Double b) {
    return a == null || b == null ? null : a - b;
  }

  private static Double num(Map<String, String> m, String k) {
    String v = m.get(k);
    if (v == null) {
      return null;
    }
    try {
      return Double.parseDouble(v);
    } catch (NumberFormatException e) {
      return null;
    }
  }

  private static double orZero(Double d) {
    return d == null ? 0 : d;
  }

  @Override
  public void close() {
    db.close();
    readOptions.close();
    writeOptions.close();
    options.close();
    if (cache != null) {
      cache.close();
    }
    if (fifo != null) {
      fifo.close();
    }
    if (filter != null) {
      filter.close();
    }
    if (statistics != null) {
      statistics.close();
    }
  }
}
