package io.kvbench.rocksjava;

import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.HdrHistogram.Histogram;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;

/**
 * Runs the benchmark list on one Engine, phase by phase, as the Go runner's bench does. The measured loops
 * make one JNI call per operation (readseq: isValid, key, value, next; seekrandom: a new iterator, seek,
 * isValid, key, value) with direct ByteBuffers allocated per thread before the phase, so the loops allocate
 * nothing on the Java heap except seekrandom's iterator object (a fresh iterator per seek, as db_bench).
 * Each operation is timed with one System.nanoTime read: from the previous operation's end to its own,
 * which includes generating the next key (a few ns).
 */
public final class Bench {
  private final Config c;
  private final Engine engine;
  private final Consumer<String> out;
  private final Consumer<String> err;

  public Bench(Config c, Engine engine, Consumer<String> out, Consumer<String> err) {
    this.c = c;
    this.engine = engine;
    this.out = out;
    this.err = err;
  }

  /** One thread's state, all allocated before the phase starts. */
  private final class Worker {
    final Rand rand;
    final Values values;
    final ByteBuffer key = ByteBuffer.allocateDirect(c.keySize);
    final ByteBuffer keyOut = ByteBuffer.allocateDirect(c.keySize);
    final ByteBuffer val = ByteBuffer.allocateDirect(Math.max(c.valueSize, 4096));
    final Histogram hist = Hist.create();
    Histogram service; // the rate-limited writer's latency from its actual start
    long ops;
    long found;
    long bytes;
    long startNs;
    long endNs;
    long allocated; // bytes this thread allocated on the Java heap during its loop
    // ycsb: per-kind histograms (Ycsb.READ..), engine calls, the record pool's view and next record
    Histogram[] kinds;
    long gets, puts, seeks, nexts;
    ByteBuffer recView;
    long rec;
    final byte[] digits = new byte[20];

    Worker(long seed) {
      rand = new Rand(seed);
      values = new Values(seed ^ 0x5bd1e995L, c.compressionRatio, c.valueSize);
      for (int i = 0; i < c.keySize; i++) {
        key.put(i, (byte) '0'); // db_bench's padding after the 8-byte number
      }
    }

    /** The key for v (db_bench's GenerateKeyFromInt without prefixes), positioned for the next call. */
    ByteBuffer key(long v) {
      key.putLong(0, v).clear();
      return key;
    }
  }

  /**
   * Set by Main's signal hook: the measuring loops end after their current operation and the phase then fails
   * with this reason, so the database is closed on the main thread after its workers left their native calls.
   */
  static volatile String stopReason;

  /** Fails with the stop reason once the signal hook set it. */
  static void stopIfAsked(String what) {
    String why = stopReason;
    if (why != null) {
      throw new IllegalStateException(what + ": " + why);
    }
  }

  private static final long QUANTUM_NS = 10_000_000; // the Go runner's writerQuantum: at most 100 sleeps/s

  /** Runs every benchmark, repeat times; each finished phase goes to onPhase. */
  public void run(Model.Result res, Consumer<Model.Phase> onPhase) throws Exception {
    long seed = c.resolvedSeed();
    int index = 0;
    for (int it = 0; it < c.repeat; it++) {
      for (String b : c.benchmarks) {
        switch (b) {
          case "waitforcompaction" -> {
            engine.waitForCompaction();
            stopIfAsked(b);
          }
          case "stats" -> out.accept(engine.statsText());
          default -> {
            Model.Phase p = phase(b, seed, index);
            p.index = index;
            p.iteration = it;
            index++;
            synchronized (res) { // the signal hook reads the phases
              res.phases.add(p);
            }
            out.accept(Output.line(p));
            if (c.histogram) {
              out.accept(Output.histogram(p));
            }
            onPhase.accept(p);
          }
        }
      }
    }
  }

  /**
   * Measures one phase of workload name (or "load": every key once, in write batches, then a flush) with
   * c.threads threads; salt keeps its random streams apart from other phases'.
   */
  public Model.Phase phase(String name, long seed, int salt) throws Exception {
    int threads = c.threads;
    long dns = c.durationNs();
    long limit = c.ops >= 0 ? c.ops : dns > 0 ? Long.MAX_VALUE : c.opsPerThread(name);
    long deadline = dns > 0 ? dns : Long.MAX_VALUE;
    List<Worker> ws = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      ws.add(new Worker(seed * 1000003 + salt * 7919L + i + 1));
    }
    Ycsb.Chooser chooser = null;
    if (name.equals("ycsb")) {
      // The Go runner's opcount: the phase's operations when bounded by a count, none under a duration alone.
      long opcount = limit < (1L << 62) ? Math.min(limit * threads, Integer.MAX_VALUE) : 0;
      chooser = new Ycsb.Chooser(c.ycsbMix, c.ycsbShape, c.ycsbInserted, c.num, opcount);
      Ycsb.Records records = Ycsb.records(c);
      for (int i = 0; i < threads; i++) {
        Worker w = ws.get(i);
        w.kinds = new Histogram[Ycsb.KINDS];
        for (int k = 0; k < Ycsb.KINDS; k++) {
          w.kinds[k] = Hist.create();
        }
        w.recView = records.data.duplicate();
        w.rec = i * 7919L; // the Go runner's place of thread i in the record pool
      }
    }
    Ycsb.Chooser ch = chooser;
    Model.EngineStats before = engine.snapshot();
    Usage u0 = Usage.now();
    CountDownLatch go = new CountDownLatch(1);
    AtomicReference<Throwable> failed = new AtomicReference<>();
    List<Thread> ts = new ArrayList<>();
    long[] t0 = new long[1];
    // JDK 17's ThreadLocalRandom steps by a gamma that depends on the thread's id: YCSB's draws (and the Go
    // runner's, which hack/ycsb-ref holds to them on the JVM's main thread, id 1) are reproduced only on thread 1.
    // So one ycsb thread runs on the calling (main) thread, and draws exactly what the Go runner draws; more threads
    // draw YCSB's distributions, each from its own seed.
    boolean inline = ch != null && threads == 1 && Thread.currentThread().getId() == 1;
    List<Runnable> inlined = new ArrayList<>();
    for (Worker w : ws) {
      Runnable body = () -> {
        try {
          go.await();
          long a0 = allocatedBytes();
          w.startNs = System.nanoTime();
          if (ch != null) {
            Ycsb.seedThread(w.rand.next()); // the Go runner's y.seed(t): the thread generator's first draw
            w.startNs = System.nanoTime();
            ycsb(ch, w, limit, dns > 0 ? t0[0] + deadline : Long.MAX_VALUE);
          } else {
            work(name, w, limit, dns > 0 ? t0[0] + deadline : Long.MAX_VALUE);
          }
          w.endNs = System.nanoTime();
          w.allocated = allocatedBytes() - a0;
        } catch (Throwable e) {
          failed.compareAndSet(null, e);
          w.endNs = System.nanoTime();
        }
      };
      if (inline) {
        inlined.add(body);
        continue;
      }
      Thread t = new Thread(body, "kvbench-" + name);
      ts.add(t);
      t.start();
    }
    // readwhilewriting: one more thread writing at the rate, until the readers are done.
    Worker writer = null;
    Thread wt = null;
    long rate = c.writerRate();
    java.util.concurrent.atomic.AtomicBoolean readersDone = new java.util.concurrent.atomic.AtomicBoolean();
    if (name.equals("readwhilewriting")) {
      Worker w = writer = new Worker(seed * 31 + salt + 0xbadc0ffeeL);
      wt = new Thread(() -> {
        try {
          go.await();
          w.startNs = System.nanoTime();
          backgroundWriter(w, rate, readersDone);
        } catch (Throwable e) {
          failed.compareAndSet(null, e);
        } finally {
          w.endNs = System.nanoTime();
        }
      }, "kvbench-writer");
      wt.start();
    }
    t0[0] = System.nanoTime();
    go.countDown();
    for (Runnable r : inlined) {
      r.run();
    }
    for (Thread t : ts) {
      t.join();
    }
    long elapsedNs = System.nanoTime() - t0[0];
    readersDone.set(true);
    if (wt != null) {
      wt.join();
    }
    if (failed.get() != null) {
      throw new RuntimeException(name + ": " + failed.get().getMessage(), failed.get());
    }
    stopIfAsked(name);
    long allocated = 0, ops = 0;
    for (Worker w : ws) {
      allocated += w.allocated;
      ops += w.ops;
    }
    // What the measured loops allocated (GC work the phase causes); seekrandom's fresh iterators aside,
    // it should be 0: tested by runner/java/java_test.go.
    err.accept(String.format(java.util.Locale.ROOT, "note: %s: the measured loops allocated %.2f bytes/op on the Java heap",
        name, ops > 0 ? (double) allocated / ops : 0));
    Usage u1 = Usage.now();
    Model.EngineStats after = engine.snapshot();
    if (ch != null) {
      // The next record number to insert, for the run's later phases.
      long inserts = 0;
      for (Worker w : ws) {
        inserts += w.kinds[Ycsb.INSERT].getTotalCount();
      }
      c.ycsbInserted.addAndGet(inserts);
    }
    String reported = ch != null ? "ycsb-" + c.ycsbMix.letter.toLowerCase(java.util.Locale.ROOT) : name;
    return summarize(reported, ws, writer, elapsedNs, rate, Usage.between(u0, u1), Engine.delta(before, after));
  }

  private void work(String name, Worker w, long limit, long deadline) throws RocksDBException {
    RocksDB db = engine.db;
    long num = c.num;
    long prev = w.startNs;
    switch (name) {
      case "fillseq", "fillrandom", "overwrite" -> {
        boolean seq = name.equals("fillseq");
        for (long i = 0; i < limit; i++) {
          ByteBuffer v = w.values.next();
          w.bytes += c.keySize + v.remaining();
          db.put(engine.writeOptions, w.key(seq ? i : w.rand.nextBelow(num)), v);
          long now = System.nanoTime();
          Hist.record(w.hist, now - prev);
          prev = now;
          w.ops++;
          if (now >= deadline || stopReason != null) {
            break;
          }
        }
      }
      case "load" -> load(w);
      case "readrandom", "readwhilewriting" -> {
        for (long i = 0; i < limit; i++) {
          w.val.clear();
          int n = db.get(engine.readOptions, w.key(w.rand.nextBelow(num)), w.val);
          if (n != RocksDB.NOT_FOUND) {
            w.found++;
            w.bytes += c.keySize + n;
          }
          long now = System.nanoTime();
          Hist.record(w.hist, now - prev);
          prev = now;
          w.ops++;
          if (now >= deadline || stopReason != null) {
            break;
          }
        }
      }
      case "readseq" -> {
        try (RocksIterator it = db.newIterator(engine.readOptions)) {
          it.seekToFirst();
          prev = System.nanoTime();
          for (long i = 0; i < limit && it.isValid(); i++) {
            w.keyOut.clear();
            w.val.clear();
            w.bytes += it.key(w.keyOut) + it.value(w.val);
            it.next();
            long now = System.nanoTime();
            Hist.record(w.hist, now - prev);
            prev = now;
            w.ops++;
            if (now >= deadline || stopReason != null) {
              break;
            }
          }
          it.status();
        }
      }
      case "seekrandom" -> {
        for (long i = 0; i < limit; i++) {
          ByteBuffer k = w.key(w.rand.nextBelow(num));
          try (RocksIterator it = db.newIterator(engine.readOptions)) {
            it.seek(k);
            if (it.isValid()) {
              w.keyOut.clear();
              int kn = it.key(w.keyOut);
              k.clear();
              if (kn == c.keySize && w.keyOut.equals(k)) {
                w.found++;
              }
              for (int j = 0; j < c.seekNexts && it.isValid(); j++) {
                w.keyOut.clear();
                w.val.clear();
                w.bytes += it.key(w.keyOut) + it.value(w.val);
                it.next();
              }
            }
            it.status();
          }
          long now = System.nanoTime();
          Hist.record(w.hist, now - prev);
          prev = now;
          w.ops++;
          if (now >= deadline || stopReason != null) {
            break;
          }
        }
      }
      default -> throw new IllegalStateException("workload " + name);
    }
  }

  /**
   * One ycsb client thread: CoreWorkload.doTransaction limit times (or until the deadline), drawing from the
   * thread's ThreadLocalRandom exactly what YCSB draws, through YCSB's generators, with the RocksDB binding's
   * engine calls (runner/bench/ycsb.go's work). Each transaction is timed from the previous one's end; a
   * read-modify-write's read and update are also timed on their own (YCSB's READ and UPDATE).
   */
  private void ycsb(Ycsb.Chooser ch, Worker w, long limit, long deadline) throws RocksDBException {
    Ycsb.Mix m = ch.m;
    int fieldCount = c.ycsbShape.fieldCount;
    Ycsb.Records recs = Ycsb.records(c);
    long prev = w.startNs;
    for (long i = 0; i < limit; i++) {
      int kind;
      switch (ch.ops.nextString()) {
        case "READ" -> {
          long k = ch.nextKeynum();
          if (!m.readAll) {
            ch.field.nextValue(); // the field to read; the engine reads the record either way
          }
          ycsbGet(w, k);
          kind = Ycsb.READ;
        }
        case "UPDATE" -> {
          long k = ch.nextKeynum();
          ycsbUpdate(w, recs, k, ycsbFields(ch, fieldCount));
          kind = Ycsb.UPDATE;
        }
        case "INSERT" -> {
          long k = ch.acked.nextValue();
          Ycsb.skip(fieldCount); // buildValues' RandomByteIterators
          ycsbPut(w, k, recs.record(w.recView, w.rec++));
          ch.acked.acknowledge(k);
          kind = Ycsb.INSERT;
        }
        case "SCAN" -> {
          long k = ch.nextKeynum();
          int n = ch.scanLength.nextValue().intValue();
          if (!m.readAll) {
            ch.field.nextValue();
          }
          ycsbScan(w, k, n);
          kind = Ycsb.SCAN;
        }
        default -> { // READMODIFYWRITE
          long k = ch.nextKeynum();
          if (!m.readAll) {
            ch.field.nextValue();
          }
          int f = ycsbFields(ch, fieldCount);
          ycsbGet(w, k);
          long mid = System.nanoTime();
          Hist.record(w.kinds[Ycsb.READ_IN_RMW], mid - prev);
          ycsbUpdate(w, recs, k, f);
          Hist.record(w.kinds[Ycsb.UPDATE_IN_RMW], System.nanoTime() - mid);
          kind = Ycsb.RMW;
        }
      }
      long now = System.nanoTime();
      Hist.record(w.kinds[kind], now - prev);
      prev = now;
      w.ops++;
      if (now >= deadline || stopReason != null) {
        break;
      }
    }
  }

  /** What buildValues (writeallfields) or buildSingleValue draw: the field written, -1 for all of them. */
  private static int ycsbFields(Ycsb.Chooser ch, int fieldCount) {
    if (ch.m.writeAll) {
      Ycsb.skip(fieldCount); // each field's RandomByteIterator draws once
      return -1;
    }
    int f = ch.field.nextValue().intValue();
    Ycsb.skip(1);
    return f;
  }

  /** The binding's read: one get of the whole record. */
  private boolean ycsbGet(Worker w, long k) throws RocksDBException {
    ByteBuffer key = Ycsb.key(w.key, w.digits, k, c.ycsbShape);
    int klen = key.remaining();
    w.val.clear();
    int n = engine.db.get(engine.readOptions, key, w.val);
    w.gets++;
    if (n == RocksDB.NOT_FOUND) {
      return false;
    }
    w.found++;
    w.bytes += klen + n;
    return true;
  }

  private void ycsbPut(Worker w, long k, ByteBuffer val) throws RocksDBException {
    ByteBuffer key = Ycsb.key(w.key, w.digits, k, c.ycsbShape);
    w.bytes += key.remaining() + val.remaining();
    engine.db.put(engine.writeOptions, key, val);
    w.puts++;
  }

  /**
   * update writes field f (-1: every field). merge is the RocksDB binding's: get the record, put a whole record
   * back (nothing when it does not exist); the written record is the pool's next. overwrite puts the written
   * fields alone, without the get.
   */
  private void ycsbUpdate(Worker w, Ycsb.Records recs, long k, int f) throws RocksDBException {
    ByteBuffer val;
    if (!c.ycsbMix.overwrite) {
      if (!ycsbGet(w, k)) {
        return;
      }
      val = recs.record(w.recView, w.rec);
    } else {
      val = f >= 0 ? recs.field(w.recView, w.rec, f) : recs.record(w.recView, w.rec);
    }
    w.rec++;
    ycsbPut(w, k, val);
  }

  /** The binding's scan: a new iterator (it sees the phase's inserts), a seek, up to n records read. */
  private void ycsbScan(Worker w, long k, int n) throws RocksDBException {
    try (RocksIterator it = engine.db.newIterator(engine.readOptions)) {
      it.seek(Ycsb.key(w.key, w.digits, k, c.ycsbShape));
      w.seeks++;
      for (int j = 0; j < n && it.isValid(); j++) {
        w.keyOut.clear();
        w.val.clear();
        w.bytes += it.key(w.keyOut) + it.value(w.val);
        it.next();
        w.nexts++;
      }
      it.status();
    }
  }

  static final int LOAD_BATCH = 1000; // the Go runner's loadBatch

  /**
   * The load: every key once, in ascending order or (loadRandom) in a permuted one, LOAD_BATCH keys per
   * WriteBatch (as the Go runner's putLoad), then a flush. The permutation is a stride through the key space
   * by a prime that does not divide num: the same keys as the Go runner's load, in a different order.
   */
  private void load(Worker w) throws RocksDBException {
    long n = c.num;
    long stride = 1;
    if (c.loadRandom) {
      for (long p : new long[] {4194301, 4194287, 4194277}) { // primes < 2^22: i * p stays below 2^63
        if (n % p != 0) {
          stride = p;
          break;
        }
      }
    }
    long prev = w.startNs;
    Ycsb.Records recs = c.ycsbShape != null ? Ycsb.records(c) : null;
    ByteBuffer view = recs != null ? recs.data.duplicate() : null;
    try (org.rocksdb.WriteBatch b = new org.rocksdb.WriteBatch()) {
      for (long i = 0; i < n; i++) {
        long v = c.loadRandom ? (i * stride) % n : i;
        ByteBuffer val = recs != null ? recs.record(view, i) : w.values.next();
        ByteBuffer key = recs != null ? Ycsb.key(w.key, w.digits, v, c.ycsbShape) : w.key(v);
        w.bytes += key.remaining() + val.remaining();
        b.put(key, val);
        if (b.count() >= LOAD_BATCH || i == n - 1) {
          engine.db.write(engine.writeOptions, b);
          b.clear();
        }
        long now = System.nanoTime();
        Hist.record(w.hist, now - prev);
        prev = now;
        w.ops++;
        if (stopReason != null) {
          return;
        }
      }
    }
    try (org.rocksdb.FlushOptions f = new org.rocksdb.FlushOptions().setWaitForFlush(true)) {
      engine.db.flush(f);
    }
  }

  /**
   * readwhilewriting's writer (the Go runner's backgroundWriter): random overwrites with Put at rate writes/s
   * (0: as fast as it can) until the readers are done, at least one. Write i is scheduled at start+i/rate and
   * its latency counts from the earlier of its schedule and its actual start; under a rate limit the service
   * time (from its actual start) is recorded too.
   */
  private void backgroundWriter(Worker w, long rate, java.util.concurrent.atomic.AtomicBoolean done)
      throws RocksDBException, InterruptedException {
    long interval = rate > 0 ? Math.max(1, 1_000_000_000L / rate) : 0;
    if (interval > 0) {
      w.service = Hist.create();
    }
    long last = w.startNs;
    for (long i = 0; i == 0 || !done.get(); i++) {
      long origin = last;
      long started = last;
      if (interval > 0) {
        long intended = w.startNs + i * interval;
        long now = System.nanoTime();
        long ahead = intended - now;
        if (ahead >= QUANTUM_NS) {
          Thread.sleep(ahead / 1_000_000, (int) (ahead % 1_000_000));
          if (done.get() && i > 0) {
            break;
          }
          now = System.nanoTime();
        }
        origin = Math.min(intended, now);
        started = now;
      }
      ByteBuffer v = w.values.next();
      engine.db.put(engine.writeOptions, w.key(w.rand.nextBelow(c.num)), v);
      long end = System.nanoTime();
      Hist.record(w.hist, end - origin);
      if (w.service != null) {
        Hist.record(w.service, end - started);
      }
      last = end;
      w.ops++;
    }
  }

  private Model.Phase summarize(String name, List<Worker> ws, Worker writer, long elapsedNs, long rate,
      Model.Usage usage, Model.EngineStats stats) throws RocksDBException {
    Model.Phase r = new Model.Phase();
    r.workload = name;
    r.threads = ws.size();
    Histogram all = Hist.create();
    long ops = 0, found = 0, bytes = 0;
    double threadSeconds = 0;
    for (Worker w : ws) {
      ops += w.ops;
      found += w.found;
      bytes += w.bytes;
      threadSeconds += (w.endNs - w.startNs) / 1e9;
      all.add(w.hist);
      if (w.kinds != null) {
        for (int k = 0; k <= Ycsb.RMW; k++) { // the transactions; the parts of a read-modify-write are in it
          all.add(w.kinds[k]);
        }
      }
    }
    double secs = elapsedNs / 1e9;
    r.ops = ops;
    r.seconds = round(secs, 1e6);
    if (secs > 0) {
      r.opsPerSec = round(ops / secs, 10);
      r.mbPerSec = round(bytes / 1048576.0 / secs, 10);
    }
    if (ops > 0) {
      r.microsPerOp = round(threadSeconds * 1e6 / ops, 1e3);
    }
    if (name.startsWith("read") && !name.equals("readseq") || name.equals("seekrandom") || name.startsWith("ycsb")) {
      r.found = found;
    }
    if (ws.get(0).kinds != null) {
      ycsbOperations(r, ws, secs);
    }
    r.latencyMicros = Hist.percentiles(all);
    r.latencyHistogram = all.getTotalCount() > 0 ? Hist.encode(all) : null;
    if (writer != null) {
      double reached = round(writer.ops / secs, 10);
      r.writeRate = reached;
      r.operations = new ArrayList<>();
      r.operations.add(op("read", all.getTotalCount(), secs, all));
      r.operations.add(op("write", writer.ops, secs, writer.hist));
      if (rate > 0) {
        Model.Protocol p = new Model.Protocol();
        p.targetOpsPerSec = (double) rate;
        p.targetMissed = reached < 0.95 * rate;
        p.serviceLatencyMicros = Hist.percentiles(writer.service);
        r.protocol = p;
        r.targetOpsPerSec = p.targetOpsPerSec;
        r.targetMissed = p.targetMissed;
        if (p.serviceLatencyMicros != null) {
          r.serviceP99Micros = p.serviceLatencyMicros.p99;
        }
      }
    }
    r.usage = usage;
    r.engineStats = stats;
    r.engineDumps = engine.dumps();
    return r;
  }

  /** A ycsb phase's breakdown by YCSB's names (a read-modify-write's parts under READ and UPDATE), engine calls. */
  private static void ycsbOperations(Model.Phase r, List<Worker> ws, double secs) {
    Model.EngineOps e = new Model.EngineOps();
    Histogram[] per = new Histogram[Ycsb.REPORTED.length];
    for (int k = 0; k < per.length; k++) {
      per[k] = Hist.create();
    }
    for (Worker w : ws) {
      e.gets += w.gets;
      e.puts += w.puts;
      e.seeks += w.seeks;
      e.nexts += w.nexts;
      for (int k = 0; k < Ycsb.KINDS; k++) {
        per[k == Ycsb.READ_IN_RMW ? Ycsb.READ : k == Ycsb.UPDATE_IN_RMW ? Ycsb.UPDATE : k].add(w.kinds[k]);
      }
    }
    r.engineOps = e;
    r.operations = new ArrayList<>();
    for (int k = 0; k < per.length; k++) {
      if (per[k].getTotalCount() > 0) {
        r.operations.add(op(Ycsb.REPORTED[k], per[k].getTotalCount(), secs, per[k]));
      }
    }
  }

  private static Model.Operation op(String name, long ops, double secs, Histogram h) {
    Model.Operation o = new Model.Operation();
    o.name = name;
    o.ops = ops;
    o.opsPerSec = round(ops / secs, 10);
    o.latencyMicros = Hist.percentiles(h);
    return o;
  }

  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();

  /** The calling thread's allocated bytes so far (HotSpot's TLAB accounting). */
  private static long allocatedBytes() {
    return THREADS.getThreadAllocatedBytes(Thread.currentThread().getId());
  }

  static double round(double x, double scale) {
    return Math.round(x * scale) / scale;
  }

  static String now() {
    return Instant.now().toString();
  }
}
