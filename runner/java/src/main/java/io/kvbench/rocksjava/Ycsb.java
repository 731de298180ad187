package io.kvbench.rocksjava;

import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import site.ycsb.Utils;
import site.ycsb.generator.AcknowledgedCounterGenerator;
import site.ycsb.generator.DiscreteGenerator;
import site.ycsb.generator.NumberGenerator;
import site.ycsb.generator.ScrambledZipfianGenerator;
import site.ycsb.generator.SkewedLatestGenerator;
import site.ycsb.generator.UniformLongGenerator;

/**
 * The YCSB letters (workload ycsb) as the Go runner runs them (runner/bench/ycsb.go): CoreWorkload's transaction
 * loop against the embedded engine, with the engine calls YCSB's RocksDB binding makes. The choosers are YCSB
 * core's own generators (site.ycsb:core), shared by the phase's threads as CoreWorkload shares them; each thread's
 * ThreadLocalRandom (what those generators draw from) is seeded with the Go runner's seed for that thread, so that
 * one seed picks the same operations and records in both runners (runner/java/ycsb_test.go).
 */
public final class Ycsb {
  private Ycsb() {}

  /** The longest YCSB key: "user" and 19 digits (api.YCSBKeyBytes). */
  public static final int KEY_BYTES = 23;

  static final int MIX_SCALE = 1_000_000; // parts per million, as the Go runner's mixScale

  /** CoreWorkload's record layout (dataset.ycsb): fieldcount, fieldlength, insertorder, zeropadding. */
  public static final class Shape {
    public int fieldCount = 10;
    public int fieldLength = 100;
    public boolean ordered;
    public int zeroPadding = 1;

    /** A record's serialized length: per field a 4-byte name length, the name, a 4-byte value length, the value. */
    public int recordBytes() {
      int n = 0;
      for (int f = 0; f < fieldCount; f++) {
        n += 8 + ("field" + f).length() + fieldLength;
      }
      return n;
    }
  }

  /** One ycsb workload's spec (RunnerConfig workloads[].ycsb) resolved to its operation mix. */
  public static final class Mix {
    public String letter;
    public int read, update, insert, scan, rmw; // parts per MIX_SCALE
    public String dist;
    public int maxScan = 100;
    public boolean readAll = true;
    public boolean writeAll;
    public boolean overwrite;

    double insertShare() {
      return (double) insert / MIX_SCALE;
    }
  }

  static int pct(int p) {
    return p * (MIX_SCALE / 100);
  }

  /** The letter's defaults with the spec's overrides, as the Go runner's ycsbMix; errors name the field. */
  public static Mix mix(String workload, String dist, Integer readPercent, String readWriteRatio, Integer maxScan,
      Boolean readAll, Boolean writeAll, String updateMode) {
    Mix m = new Mix();
    m.letter = workload == null ? "" : workload.toUpperCase(Locale.ROOT);
    switch (m.letter) {
      case "A" -> { m.read = pct(50); m.update = pct(50); m.dist = "zipfian"; }
      case "B" -> { m.read = pct(95); m.update = pct(5); m.dist = "zipfian"; }
      case "C" -> { m.read = pct(100); m.dist = "zipfian"; }
      case "D" -> { m.read = pct(95); m.insert = pct(5); m.dist = "latest"; }
      case "E" -> { m.scan = pct(95); m.insert = pct(5); m.dist = "zipfian"; }
      case "F" -> { m.read = pct(50); m.rmw = pct(50); m.dist = "zipfian"; }
      default -> throw new IllegalArgumentException("ycsb: unknown YCSB workload \"" + workload + "\" (A-F)");
    }
    if (maxScan != null) {
      if (maxScan < 1) {
        throw new IllegalArgumentException("ycsb: maxScanLength must be >= 1");
      }
      m.maxScan = maxScan;
    }
    if (dist != null) {
      switch (dist) {
        case "zipfian", "uniform", "latest" -> m.dist = dist;
        case "permutedZipfian" -> throw RunSpec.unsupported("ycsb requestDistribution permutedZipfian (the Go "
            + "runner's own, not YCSB core's)");
        default -> throw new IllegalArgumentException("ycsb: unknown request distribution \"" + dist
            + "\" (zipfian, uniform, latest, permutedZipfian)");
      }
    }
    m.readAll = readAll == null || readAll;
    m.writeAll = writeAll != null && writeAll;
    if (updateMode != null && !updateMode.isEmpty() && !updateMode.equals("merge")) {
      if (!updateMode.equals("overwrite")) {
        throw new IllegalArgumentException("ycsb: unknown updateMode \"" + updateMode + "\" (merge, overwrite)");
      }
      m.overwrite = true;
    }
    int read = -1;
    if (readPercent != null && readWriteRatio != null && !readWriteRatio.isEmpty()) {
      throw new IllegalArgumentException("ycsb: set readPercent or readWriteRatio, not both");
    } else if (readPercent != null) {
      if (readPercent < 0 || readPercent > 100) {
        throw new IllegalArgumentException("ycsb: readPercent " + readPercent + " out of range [0, 100]");
      }
      read = pct(readPercent);
    } else if (readWriteRatio != null && !readWriteRatio.isEmpty()) {
      read = readShare(readWriteRatio);
    }
    if (read >= 0) {
      int other = MIX_SCALE - read; // the rest goes to the letter's write operation
      switch (m.letter) {
        case "A", "B", "C" -> { m.read = read; m.update = other; }
        case "D" -> { m.read = read; m.insert = other; }
        case "F" -> { m.read = read; m.rmw = other; }
        default -> { // E: its scan/insert mix shares the rest
          m.read = read;
          m.scan = other * 95 / 100;
          m.insert = other - m.scan;
        }
      }
    }
    return m;
  }

  /** "R:W" as the read share in parts per MIX_SCALE, rounded to nearest (the Go runner's parseReadWriteRatio). */
  static int readShare(String s) {
    String[] rw = s.split(":", -1);
    if (rw.length != 2 || !rw[0].matches("[0-9]{1,6}") || !rw[1].matches("[0-9]{1,6}")) {
      throw new IllegalArgumentException("ycsb: readWriteRatio \"" + s
          + "\" must be R:W with integers of at most 6 digits, e.g. 30:1, 0:1 or 1:0");
    }
    long r = Long.parseLong(rw[0]), w = Long.parseLong(rw[1]);
    if (r + w == 0) {
      throw new IllegalArgumentException("ycsb: readWriteRatio \"" + s + "\" has no operations; one side must be positive");
    }
    return (int) ((r * MIX_SCALE + (r + w) / 2) / (r + w));
  }

  /**
   * A read-only pool of about 1 MiB (at least two records) of serialized records, handed out in turn (the Go
   * runner's keygen.YCSBRecords, with the same bytes): field bytes are YCSB's RandomByteIterator characters
   * from the Go runner's generator, or with ratio > 0 db_bench's compressible values.
   */
  static final class Records {
    final ByteBuffer data;
    final int n;
    final int recLen;
    final int[] seg; // field f is record[seg[f], seg[f+1])

    Records(Shape s, double ratio, long seed) {
      seg = new int[s.fieldCount + 1];
      for (int f = 0; f < s.fieldCount; f++) {
        seg[f + 1] = seg[f] + 8 + ("field" + f).length() + s.fieldLength;
      }
      recLen = seg[s.fieldCount];
      n = Math.max(2, (1 << 20) / recLen);
      data = ByteBuffer.allocateDirect(n * recLen);
      Rand rnd = new Rand(seed);
      Values vals = ratio > 0 ? new Values(seed, ratio, s.fieldLength) : null;
      for (int i = 0; i < n; i++) {
        int at = i * recLen;
        for (int f = 0; f < s.fieldCount; f++) {
          byte[] name = ("field" + f).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
          int p = at + seg[f];
          data.putInt(p, name.length).put(p + 4, name).putInt(p + 4 + name.length, s.fieldLength);
          int v = p + 8 + name.length;
          if (vals != null) {
            ByteBuffer vb = vals.next();
            data.put(v, vb, vb.position(), s.fieldLength);
          } else {
            fillYcsbBytes(data, v, s.fieldLength, rnd);
          }
        }
      }
    }

    /** RandomByteIterator's characters: six from each 32-bit draw (keygen.FillYCSBBytes). */
    private static void fillYcsbBytes(ByteBuffer dst, int at, int len, Rand r) {
      for (int i = 0; i < len; i += 6) {
        int b = (int) r.next();
        int[] six = {b & 31, b >>> 5 & 63, b >>> 10 & 95, b >>> 15 & 31, b >>> 20 & 63, b >>> 25 & 95};
        for (int j = 0; j < 6 && i + j < len; j++) {
          dst.put(at + i + j, (byte) (six[j] + ' '));
        }
      }
    }

    /** Record i (i counts on; the pool wraps) in view, a thread's own duplicate of data. */
    ByteBuffer record(ByteBuffer view, long i) {
      int j = (int) Long.remainderUnsigned(i, n);
      view.limit(j * recLen + recLen).position(j * recLen);
      return view;
    }

    /** Field f of record i alone, in view. */
    ByteBuffer field(ByteBuffer view, long i, int f) {
      int j = (int) Long.remainderUnsigned(i, n);
      view.limit(j * recLen + seg[f + 1]).position(j * recLen + seg[f]);
      return view;
    }
  }

  /** The Records of a dataset (Go: ds.Seed ^ 0x7c5b). */
  static Records records(Config c) {
    return c.ycsbRecords.updateAndGet(r -> r != null ? r
        : new Records(c.ycsbShape, c.compressionRatio, c.resolvedSeed() ^ 0x7c5b));
  }

  /** Writes CoreWorkload.buildKeyName(keynum) into key (positioned for the next call); digits is scratch. */
  static ByteBuffer key(ByteBuffer key, byte[] digits, long keynum, Shape s) {
    return keyOfNumber(key, digits, s.ordered ? keynum : Utils.fnvhash64(keynum), s.zeroPadding);
  }

  /** "user", zeros up to zeroPadding digits, then the decimal of n (keygen.AppendYCSBNumber). */
  static ByteBuffer keyOfNumber(ByteBuffer key, byte[] digits, long n, int zeroPadding) {
    int d = digits.length;
    boolean neg = n < 0;
    long v = n;
    do {
      digits[--d] = (byte) ('0' + Math.abs(v % 10));
      v /= 10;
    } while (v != 0);
    if (neg) {
      digits[--d] = '-';
    }
    int len = digits.length - d;
    key.clear();
    key.put((byte) 'u').put((byte) 's').put((byte) 'e').put((byte) 'r');
    for (int i = len; i < zeroPadding; i++) {
      key.put((byte) '0');
    }
    key.put(digits, d, len);
    key.flip();
    return key;
  }

  /** Operation kinds: the reported ones, then the read and update inside a read-modify-write. */
  static final int READ = 0, UPDATE = 1, INSERT = 2, SCAN = 3, RMW = 4, READ_IN_RMW = 5, UPDATE_IN_RMW = 6, KINDS = 7;
  static final String[] REPORTED = {"READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE"};

  /**
   * One phase's shared choosers: CoreWorkload's operationchooser, keychooser (with nextKeynum's redraw past the
   * acknowledged inserts), fieldchooser, scanlength and transactioninsertkeysequence.
   */
  static final class Chooser {
    final Mix m;
    final DiscreteGenerator ops = new DiscreteGenerator();
    final NumberGenerator keys;
    final AcknowledgedCounterGenerator acked;
    final UniformLongGenerator field;
    final UniformLongGenerator scanLength;

    /**
     * records: the records that exist when the phase starts (inserted, the run's next record number, is raised to
     * at least the dataset's); opcount: the phase's operations (0 when bounded by time), for the zipfian's
     * expected inserts.
     */
    Chooser(Mix m, Shape s, AtomicLong inserted, long num, long opcount) {
      this.m = m;
      inserted.accumulateAndGet(num, Math::max);
      long records = inserted.get();
      // YCSB's order, each with its share (CoreWorkload.createOperationGenerator).
      String[] names = {"READ", "UPDATE", "INSERT", "SCAN", "READMODIFYWRITE"};
      int[] ppm = {m.read, m.update, m.insert, m.scan, m.rmw};
      for (int i = 0; i < names.length; i++) {
        if (ppm[i] > 0) {
          ops.addValue((double) ppm[i] / MIX_SCALE, names[i]);
        }
      }
      acked = new AcknowledgedCounterGenerator(records);
      field = new UniformLongGenerator(0, s.fieldCount - 1);
      scanLength = new UniformLongGenerator(1, m.maxScan);
      switch (m.dist) {
        case "latest" -> keys = new SkewedLatestGenerator(acked);
        case "uniform" -> keys = new UniformLongGenerator(0, records - 1);
        default -> {
          // YCSB's "fudge factor": the zipfian covers the inserts it expects from operationcount.
          long expected = Math.min((long) (Math.min(opcount, Integer.MAX_VALUE) * m.insertShare() * 2.0),
              Integer.MAX_VALUE);
          keys = new ScrambledZipfianGenerator(0, records + expected);
        }
      }
    }

    /** CoreWorkload.nextKeynum: draw until the record is one whose insert has been acknowledged. */
    long nextKeynum() {
      long k;
      do {
        k = keys.nextValue().longValue();
      } while (k > acked.lastValue());
      return k;
    }
  }

  private static final Field TLR_SEED;

  static {
    Field f = null;
    try {
      f = Thread.class.getDeclaredField("threadLocalRandomSeed");
      f.setAccessible(true);
    } catch (ReflectiveOperationException | RuntimeException e) {
      f = null; // seedThread says why
    }
    TLR_SEED = f;
  }

  /** Fails unless seedThread can work: checked with the config, before the load. */
  static void requireSeedable() {
    if (TLR_SEED == null) {
      throw new IllegalStateException("cannot seed ThreadLocalRandom for YCSB's generators: run the JVM with "
          + "--add-opens=java.base/java.lang=ALL-UNNAMED (the image's entrypoint does)");
    }
  }

  /**
   * Seeds the calling thread's ThreadLocalRandom (YCSB's generators' source), which its API cannot: its state is
   * the thread's threadLocalRandomSeed field (as hack/ycsb-ref's Draw sets it).
   */
  static void seedThread(long seed) {
    requireSeedable();
    ThreadLocalRandom.current(); // initialises the thread's probe, so that current() does not reseed
    try {
      TLR_SEED.setLong(Thread.currentThread(), seed);
    } catch (IllegalAccessException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Advances the calling thread's ThreadLocalRandom by n draws (RandomByteIterators YCSB builds and drops). */
  static void skip(int n) {
    ThreadLocalRandom r = ThreadLocalRandom.current();
    for (int i = 0; i < n; i++) {
      r.nextInt();
    }
  }
}
