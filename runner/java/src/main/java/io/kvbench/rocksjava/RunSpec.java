package io.kvbench.rocksjava;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The operator's RunnerConfig (api/v1alpha1 RunnerConfig as JSON, what `kvbench-runner run --config-json`
 * reads), for what this runner does. A field it does not do is refused by its path, never ignored; the CRD
 * refuses the same for engine rocksjava at apply time, so this is the second line.
 */
public final class RunSpec {
  /** Flags-shaped settings shared by every phase: engine options, dataset, paths. */
  public final Config base = new Config();
  public String loadMode = "bulk";
  public final List<Workload> workloads = new ArrayList<>();
  public int[] threads = {1};
  public int repeat = 1;
  /** settle.timeout in ns; 0: no settle. */
  public long settleNanos;
  /** "", perPoint or perIteration. */
  public String reset = "";

  /** One RunnerConfig workload. */
  public static final class Workload {
    public String name;
    public long num = -1;
    public long durationNanos;
    public int[] threads;
    public long writesPerSecond;
    public int seekNexts;
    public long warmupOps = -1;
    public long warmupNanos;
    /** workload ycsb: its mix. */
    public Ycsb.Mix ycsb;

    boolean hasWarmup() {
      return warmupOps >= 0 || warmupNanos > 0;
    }
  }

  private static final ObjectMapper JSON = new ObjectMapper();

  public static RunSpec parse(String json) {
    JsonNode root;
    try {
      root = JSON.readTree(json);
    } catch (Exception e) {
      throw new IllegalArgumentException("config: " + e.getMessage().split("\n")[0]);
    }
    if (root == null || !root.isObject()) {
      throw new IllegalArgumentException("config: not a JSON object");
    }
    RunSpec s = new RunSpec();
    Config c = s.base;
    c.resultLines = true;
    fields(root, "", Set.of("engine", "dataset", "workloads", "threads", "cacheMode", "repeat", "dbPath",
        "optionsFile", "reportInterval", "settle", "reset", "statsInterval"), Map.of(
        "statsInterval", "statsInterval",
        "reportInterval", "reportInterval (time series)"));
    engine(root.path("engine"), c);
    dataset(root.path("dataset"), s);
    c.db = text(root, "dbPath", "");
    c.optionsFile = text(root, "optionsFile", "");
    if (!c.optionsFile.isEmpty()) {
      // As the CRD refuses them: RocksJava cannot edit the file's table factory in place.
      List<String> table = new ArrayList<>();
      for (String f : OptionsFile.TABLE_FIELDS) {
        if (c.typedSet.contains(f)) {
          table.add(f);
        }
      }
      if (!table.isEmpty()) {
        throw new IllegalArgumentException("config: engine.options " + String.join(", ", table) + " with an OPTIONS "
            + "file: the rocksjava runner cannot set BlockBasedTable options over the file's table factory; put "
            + "them in the file's [TableOptions/BlockBasedTable \"default\"] section");
      }
    }
    if (c.db.isEmpty()) {
      throw new IllegalArgumentException("config: dbPath is empty");
    }
    String cache = text(root, "cacheMode", "warm");
    if (!cache.equals("warm") && !cache.isEmpty()) {
      throw unsupported("cacheMode " + cache);
    }
    if (root.has("threads")) {
      s.threads = ints(root.get("threads"), "threads");
    }
    if (s.threads.length == 0) {
      s.threads = new int[] {1};
    }
    s.repeat = Math.max(1, (int) num(root, "repeat", 1));
    if (root.has("settle")) {
      fields(root.get("settle"), "settle.", Set.of("timeout"), Map.of());
      s.settleNanos = duration(text(root.get("settle"), "timeout", ""), "settle.timeout");
    }
    s.reset = text(root, "reset", "");
    if (!Set.of("", "none", "perPoint", "perIteration").contains(s.reset)) {
      throw new IllegalArgumentException("config: reset " + s.reset + " is not none, perPoint or perIteration");
    }
    if (s.reset.equals("none")) {
      s.reset = "";
    }
    JsonNode ws = root.path("workloads");
    if (!ws.isArray() || ws.isEmpty()) {
      throw new IllegalArgumentException("config: no workloads");
    }
    for (JsonNode w : ws) {
      Workload x = workload(w);
      if (x.ycsb != null && c.ycsbShape == null) {
        throw new IllegalArgumentException("config: workloads[ycsb]: the dataset holds db_bench keys; ycsb "
            + "workloads need YCSB records (dataset.ycsb)");
      }
      if (x.ycsb != null) {
        try {
          Ycsb.requireSeedable();
        } catch (IllegalStateException e) {
          throw new IllegalArgumentException("config: workloads[ycsb]: " + e.getMessage(), e);
        }
      }
      if (x.ycsb == null && c.ycsbShape != null && !Config.PSEUDO.contains(x.name)) {
        throw new IllegalArgumentException("config: workload " + x.name + " needs db_bench's keys; the dataset "
            + "holds YCSB records (dataset.ycsb), which only ycsb workloads use");
      }
      s.workloads.add(x);
    }
    return s;
  }

  /**
   * The rocksdbjni release a run's config asks for (engine.version), "" when none or when the config cannot be
   * read (Main then reports why): what Launcher chooses the class path by, before anything else is loaded.
   */
  public static String requestedVersion(List<String> args) {
    try {
      for (String a : args) {
        String json = a.startsWith("--config-json=") ? a.substring("--config-json=".length())
            : a.startsWith("--config=") ? java.nio.file.Files.readString(java.nio.file.Path.of(a.substring(9))) : null;
        if (json != null) {
          return JSON.readTree(json).path("engine").path("version").asText("");
        }
      }
    } catch (Exception e) {
      // Main reads the config again and says what is wrong with it.
    }
    return "";
  }

  private static void engine(JsonNode e, Config c) {
    fields(e, "engine.", Set.of("name", "options", "optionsFrom", "version"), Map.of());
    String version = text(e, "version", "");
    String loaded = Provenance.rocksdbjniVersion();
    if (!version.isEmpty() && !version.equals(loaded)) {
      String available = System.getProperty("kvbench.rocksdbjni.available", loaded);
      throw new IllegalArgumentException("config: engines[].version " + version + ": this runner carries rocksdbjni "
          + available.replace(",", ", ") + " (the image's build argument ROCKSDBJNI_VERSIONS adds releases)");
    }
    String name = text(e, "name", "");
    if (!name.equals("rocksjava")) {
      throw new IllegalArgumentException("config: engine " + name + " is not rocksjava: this runner drives "
          + "RocksDB through RocksJava only (the operator runs the other engines with kvbench-runner)");
    }
    JsonNode o = e.path("options");
    if (o.isMissingNode()) {
      return;
    }
    Set<String> typed = new java.util.HashSet<>();
    o.fieldNames().forEachRemaining(f -> {
      if (!o.get(f).isNull()) {
        typed.add(f);
      }
    });
    c.typedSet = typed;
    fields(o, "engine.options.", Set.of("cacheSize", "bloomBits", "writeBufferSize", "maxWriteBufferNumber",
        "blockSize", "compression", "maxOpenFiles", "level0FileNumCompactionTrigger",
        "level0SlowdownWritesTrigger", "level0StopWritesTrigger", "targetFileSizeBase", "maxBytesForLevelBase",
        "maxBackgroundJobs", "disableWAL", "sync", "statistics", "numLevels", "cacheNumShardBits"), Map.of());
    c.cacheSize = o.has("cacheSize") ? quantity(o.get("cacheSize"), "cacheSize") : c.cacheSize;
    c.bloomBits = (int) num(o, "bloomBits", c.bloomBits);
    c.writeBufferSize = o.has("writeBufferSize") ? quantity(o.get("writeBufferSize"), "writeBufferSize")
        : c.writeBufferSize;
    c.maxWriteBufferNumber = (int) num(o, "maxWriteBufferNumber", c.maxWriteBufferNumber);
    c.blockSize = o.has("blockSize") ? quantity(o.get("blockSize"), "blockSize") : c.blockSize;
    c.compression = text(o, "compression", c.compression);
    if (!Set.of("none", "snappy", "lz4", "zstd").contains(c.compression)) {
      throw new IllegalArgumentException("config: compression " + c.compression + " is not none, snappy, lz4 or zstd");
    }
    c.openFiles = (int) num(o, "maxOpenFiles", c.openFiles);
    c.l0Trigger = (int) num(o, "level0FileNumCompactionTrigger", c.l0Trigger);
    c.l0Slowdown = (int) num(o, "level0SlowdownWritesTrigger", c.l0Slowdown);
    c.l0Stop = (int) num(o, "level0StopWritesTrigger", c.l0Stop);
    c.targetFileSizeBase = o.has("targetFileSizeBase") ? quantity(o.get("targetFileSizeBase"), "targetFileSizeBase")
        : c.targetFileSizeBase;
    c.maxBytesLevelBase = o.has("maxBytesForLevelBase")
        ? quantity(o.get("maxBytesForLevelBase"), "maxBytesForLevelBase") : c.maxBytesLevelBase;
    c.maxBackgroundJobs = (int) num(o, "maxBackgroundJobs", c.maxBackgroundJobs);
    c.disableWal = o.path("disableWAL").asBoolean(false);
    c.sync = o.path("sync").asBoolean(false);
    c.statistics = o.path("statistics").asBoolean(false);
    c.numLevels = (int) num(o, "numLevels", c.numLevels);
    c.cacheShardBits = (int) num(o, "cacheNumShardBits", c.cacheShardBits);
  }

  private static void dataset(JsonNode d, RunSpec s) {
    Config c = s.base;
    fields(d, "dataset.", Set.of("size", "num", "keySize", "valueSize", "compressionRatioPercent", "keyOrder",
        "loadMode", "prefixSize", "keysPerPrefix", "seed", "valueSizeRange", "ycsb"), Map.of(
        "valueSizeRange", "dataset.valueSizeRange"));
    for (String f : new String[] {"prefixSize", "keysPerPrefix"}) {
      if (num(d, f, 0) != 0) {
        throw unsupported("dataset." + f);
      }
    }
    c.keySize = (int) num(d, "keySize", 16);
    c.valueSize = (int) num(d, "valueSize", 100);
    if (c.keySize < 8 || c.keySize > 1024 || c.valueSize < 1 || c.valueSize > (64 << 20)) {
      throw new IllegalArgumentException("config: dataset keySize must be 8..1024 and valueSize 1..64Mi");
    }
    JsonNode y = d.path("ycsb");
    if (!y.isMissingNode() && !y.isNull()) {
      ycsbShape(y, d, c);
    }
    // YCSB records default to YCSB's own field bytes (ratio 0), as the Go runner's.
    c.compressionRatio = num(d, "compressionRatioPercent", c.ycsbShape != null ? 0 : 50) / 100.0;
    c.seed = num(d, "seed", 0);
    if (d.has("size") == d.has("num")) {
      throw new IllegalArgumentException("config: dataset: set exactly one of size and num");
    }
    c.num = d.has("num") ? num(d, "num", 0)
        : Math.round((double) quantity(d.get("size"), "dataset.size") / (c.keySize + c.valueSize));
    if (c.num < 1) {
      throw new IllegalArgumentException("config: dataset holds no key-value pair");
    }
    s.loadMode = text(d, "loadMode", "bulk");
    if (!Set.of("bulk", "fillseq", "fillrandom", "none").contains(s.loadMode)) {
      throw unsupported("dataset.loadMode " + s.loadMode);
    }
    String order = text(d, "keyOrder", "random");
    if (!order.equals("random") && !order.equals("sequential")) {
      throw new IllegalArgumentException("config: dataset.keyOrder " + order + " is not sequential or random");
    }
  }

  /** dataset.ycsb as the Go runner's resolveYCSBRecords: keys "user" + number, values serialized records. */
  private static void ycsbShape(JsonNode y, JsonNode d, Config c) {
    fields(y, "dataset.ycsb.", Set.of("fieldCount", "fieldLength", "insertOrder", "zeroPadding"), Map.of());
    Ycsb.Shape s = new Ycsb.Shape();
    s.fieldCount = (int) num(y, "fieldCount", 10);
    s.fieldLength = (int) num(y, "fieldLength", 100);
    s.zeroPadding = (int) num(y, "zeroPadding", 1);
    String order = text(y, "insertOrder", "");
    if (!Set.of("", "hashed", "ordered").contains(order)) {
      throw new IllegalArgumentException("config: dataset.ycsb: unknown insertOrder \"" + order + "\" (hashed, ordered)");
    }
    s.ordered = order.equals("ordered");
    if (s.fieldCount < 1 || s.fieldCount > 1000) {
      throw new IllegalArgumentException("config: dataset.ycsb: fieldCount " + s.fieldCount + " out of range [1, 1000]");
    }
    if (s.fieldLength < 1 || (long) s.fieldCount * s.fieldLength > 1 << 20) {
      throw new IllegalArgumentException("config: dataset.ycsb: fieldLength " + s.fieldLength
          + " must be at least 1, and fieldCount x fieldLength at most 1Mi");
    }
    if (s.zeroPadding < 1 || s.zeroPadding > 19) {
      throw new IllegalArgumentException("config: dataset.ycsb: zeroPadding " + s.zeroPadding + " out of range [1, 19]");
    }
    long ks = num(d, "keySize", 0), vs = num(d, "valueSize", 0);
    if (ks != 0 && ks != 16 || vs != 0 && vs != 100 || d.has("valueSizeRange")
        && !d.get("valueSizeRange").isNull()) {
      throw new IllegalArgumentException("config: dataset.ycsb: YCSB records are sized by fieldCount and "
          + "fieldLength (keys are user + hash); keySize, valueSize, valueSizeRange, prefixSize and keysPerPrefix "
          + "do not apply");
    }
    c.ycsbShape = s;
    c.keySize = Ycsb.KEY_BYTES;
    c.valueSize = s.recordBytes();
  }

  private static Workload workload(JsonNode w) {
    Workload x = new Workload();
    x.name = text(w, "name", "");
    String at = "workloads[" + x.name + "].";
    fields(w, at, Set.of("name", "num", "duration", "threads", "writesPerSecond", "seekNexts", "warmup",
        "readWritePercent", "pulse", "ycsb", "dbBenchArgs"), Map.of());
    if (!Config.WORKLOADS.contains(x.name) && !Config.PSEUDO.contains(x.name) && !x.name.equals("ycsb")) {
      throw unsupported("workload " + x.name);
    }
    for (String f : new String[] {"readWritePercent", "pulse", "dbBenchArgs"}) {
      if (w.has(f)) {
        throw unsupported(at + f);
      }
    }
    if (x.name.equals("ycsb") != w.has("ycsb")) {
      throw new IllegalArgumentException("config: " + at + "ycsb: set it for workload ycsb, and only for it");
    }
    if (x.name.equals("ycsb")) {
      JsonNode y = w.get("ycsb");
      fields(y, at + "ycsb.", Set.of("workload", "readPercent", "readWriteRatio", "requestDistribution",
          "maxScanLength", "readAllFields", "writeAllFields", "updateMode"), Map.of());
      try {
        x.ycsb = Ycsb.mix(text(y, "workload", ""), y.has("requestDistribution") ? text(y, "requestDistribution", null)
            : null, y.has("readPercent") ? (int) num(y, "readPercent", 0) : null, text(y, "readWriteRatio", ""),
            y.has("maxScanLength") ? (int) num(y, "maxScanLength", 0) : null,
            y.has("readAllFields") ? y.get("readAllFields").asBoolean() : null,
            y.has("writeAllFields") ? y.get("writeAllFields").asBoolean() : null, text(y, "updateMode", ""));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("config: " + at + e.getMessage(), e);
      }
    }
    x.num = num(w, "num", -1);
    if (w.has("duration")) {
      x.durationNanos = duration(text(w, "duration", ""), at + "duration");
    }
    if (w.has("threads") && !w.get("threads").isEmpty()) {
      x.threads = ints(w.get("threads"), at + "threads");
    }
    x.writesPerSecond = num(w, "writesPerSecond", 0);
    x.seekNexts = (int) num(w, "seekNexts", 0);
    if (w.has("warmup")) {
      JsonNode wu = w.get("warmup");
      fields(wu, at + "warmup.", Set.of("duration", "ops"), Map.of());
      x.warmupOps = num(wu, "ops", -1);
      if (wu.has("duration")) {
        x.warmupNanos = duration(text(wu, "duration", ""), at + "warmup.duration");
      }
      if ((x.warmupOps >= 0) == (x.warmupNanos > 0)) {
        throw new IllegalArgumentException("config: " + at + "warmup: set exactly one of duration and ops");
      }
    }
    return x;
  }

  /** Refuses any field of n outside known; a known one named in unsupported is refused by that name. */
  private static void fields(JsonNode n, String at, Set<String> known, Map<String, String> unsupported) {
    if (n.isMissingNode() || n.isNull()) {
      return;
    }
    if (!n.isObject()) {
      throw new IllegalArgumentException("config: " + at + " is not an object");
    }
    for (Iterator<String> it = n.fieldNames(); it.hasNext();) {
      String f = it.next();
      if (!known.contains(f)) {
        throw new IllegalArgumentException("config: unknown field " + at + f
            + " (a newer operator than this rocksjava runner?)");
      }
      if (unsupported.containsKey(f) && !n.get(f).isNull()
          && !(n.get(f).isTextual() && n.get(f).asText().isEmpty())) {
        throw unsupported(unsupported.get(f));
      }
    }
  }

  static IllegalArgumentException unsupported(String what) {
    return new IllegalArgumentException("config: " + what + " is not supported by the rocksjava runner");
  }

  private static String text(JsonNode n, String f, String def) {
    JsonNode v = n.path(f);
    return v.isMissingNode() || v.isNull() ? def : v.asText();
  }

  private static long num(JsonNode n, String f, long def) {
    JsonNode v = n.path(f);
    if (v.isMissingNode() || v.isNull()) {
      return def;
    }
    if (!v.isIntegralNumber()) {
      throw new IllegalArgumentException("config: " + f + " is not an integer: " + v);
    }
    return v.asLong();
  }

  private static int[] ints(JsonNode a, String at) {
    if (!a.isArray()) {
      throw new IllegalArgumentException("config: " + at + " is not a list");
    }
    int[] out = new int[a.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = a.get(i).asInt();
      if (out[i] < 1 || out[i] > 1024) {
        throw new IllegalArgumentException("config: " + at + " must be between 1 and 1024");
      }
    }
    return out;
  }

  private static final Pattern QUANTITY = Pattern.compile("^([+-]?[0-9.]+)([eE][+-]?[0-9]+|Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E|m)?$");

  /** A Kubernetes resource.Quantity (JSON: a string such as 64Mi, 1G, 1e3, or a number) in whole units. */
  static long quantity(JsonNode v, String at) {
    if (v.isIntegralNumber()) {
      return v.asLong();
    }
    Matcher m = QUANTITY.matcher(v.asText().trim());
    if (!m.matches()) {
      throw new IllegalArgumentException("config: " + at + " " + v.asText() + " is not a quantity");
    }
    BigDecimal x = new BigDecimal(m.group(1));
    String suf = m.group(2) == null ? "" : m.group(2);
    if (suf.length() > 1 && (suf.charAt(0) == 'e' || suf.charAt(0) == 'E')) {
      x = x.scaleByPowerOfTen(Integer.parseInt(suf.substring(1)));
    } else {
      int bin = "KiMiGiTiPiEi".indexOf(suf);
      int dec = "kMGTPE".indexOf(suf);
      if (!suf.isEmpty() && suf.endsWith("i")) {
        x = x.multiply(BigDecimal.valueOf(2).pow(10 * (bin / 2 + 1)));
      } else if (suf.equals("m")) {
        x = x.scaleByPowerOfTen(-3);
      } else if (!suf.isEmpty()) {
        x = x.scaleByPowerOfTen(3 * (dec + 1));
      }
    }
    // resource.Quantity.Value() rounds up.
    return x.setScale(0, java.math.RoundingMode.CEILING).longValueExact();
  }

  private static final Pattern DURATION_PART = Pattern.compile("([0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)(ns|us|µs|μs|ms|s|m|h)");

  /** A Go time.Duration string (metav1.Duration's JSON: 1m30s, 500ms, 1h0m0s) in ns; must be positive. */
  static long duration(String s, String at) {
    Matcher m = DURATION_PART.matcher(s);
    int pos = 0;
    double ns = 0;
    while (pos < s.length() && m.find(pos) && m.start() == pos) {
      double unit = switch (m.group(2)) {
        case "ns" -> 1;
        case "us", "µs", "μs" -> 1e3;
        case "ms" -> 1e6;
        case "s" -> 1e9;
        case "m" -> 60e9;
        default -> 3600e9;
      };
      ns += Double.parseDouble(m.group(1)) * unit;
      pos = m.end();
    }
    if (s.isEmpty() || pos != s.length() || ns <= 0) {
      throw new IllegalArgumentException("config: " + at + " \"" + s + "\" is not a positive duration");
    }
    return Math.round(ns);
  }
}
