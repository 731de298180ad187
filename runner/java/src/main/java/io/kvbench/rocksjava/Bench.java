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

  private static final long QUANTUM_NS = 10_000_000; // the Go runner's writerQuantum: at most 100 sleeps/s

  /** Runs every benchmark, repeat times; each finished phase goes to onPhase. */
  public void run(Model.Result res, Consumer<Model.Phase> onPhase) throws Exception {
    long seed = c.resolvedSeed();
    int index = 0;
    for (int it = 0; it < c.repeat; it++) {
      for (String b : c.benchmarks) {
        switch (b) {
          case "waitforcompaction" -> engine.waitForCompaction();
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
    Model.EngineStats before = engine.snapshot();
    Usage u0 = Usage.now();
    CountDownLatch go = new CountDownLatch(1);
    AtomicReference<Throwable> failed = new AtomicReference<>();
    List<Thread> ts = new ArrayList<>();
    long[] t0 = new long[1];
    for (Worker w : ws) {
      Thread t = new Thread(() -> {
        try {
          go.await();
          long a0 = allocatedBytes();
          w.startNs = System.nanoTime();
          work(name, w, limit, dns > 0 ? t0[0] + deadline : Long.MAX_VALUE);
          w.endNs = System.nanoTime();
          w.allocated = allocatedBytes() - a0;
        } catch (Throwable e) {
          failed.compareAndSet(null, e);
          w.endNs = System.nanoTime();
        }
      }, "kvbench-" + name);
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
    return summarize(name, ws, writer, elapsedNs, rate, Usage.between(u0, u1), Engine.delta(before, after));
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
          if (now >= deadline) {
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
          if (now >= deadline) {
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
            if (now >= deadline) {
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
          if (now >= deadline) {
            break;
          }
        }
      }
      default -> throw new IllegalStateException("workload " + name);
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
    try (org.rocksdb.WriteBatch b = new org.rocksdb.WriteBatch()) {
      for (long i = 0; i < n; i++) {
        long v = c.loadRandom ? (i * stride) % n : i;
        ByteBuffer val = w.values.next();
        w.bytes += c.keySize + val.remaining();
        b.put(w.key(v), val);
        if (b.count() >= LOAD_BATCH || i == n - 1) {
          engine.db.write(engine.writeOptions, b);
          b.clear();
        }
        long now = System.nanoTime();
        Hist.record(w.hist, now - prev);
        prev = now;
        w.ops++;
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
    if (name.startsWith("read") && !name.equals("readseq") || name.equals("seekrandom")) {
      r.found = found;
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
