package io.kvbench.rocksjava;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * Runs a RunSpec as the Go runner's bench.Run runs a RunnerConfig: open the engine on a fresh directory, load
 * the dataset once (the load phase), then each workload once per thread count of its sweep, repeat times,
 * with the measurement protocol before each measured phase: reset (restore the post-load checkpoint),
 * warm-up (the workload on its own key stream, discarded), settle (wait for idle flushes and compactions).
 */
public final class Run {
  private final RunSpec s;
  private final Consumer<String> out;
  private final Consumer<String> err;
  private final LiveMetrics metrics; // null without --metrics-addr
  private Engine engine;
  private Path checkpoint;

  /** The Go runner's warmupSalt: a warm-up's keys are apart from its phase's. */
  private static final int WARMUP_SALT = 1 << 20;
  private static final long SETTLE_POLL_MS = 100; // the Go runner's settlePoll

  public Run(RunSpec s, Consumer<String> out, Consumer<String> err) {
    this(s, out, err, null);
  }

  Run(RunSpec s, Consumer<String> out, Consumer<String> err, LiveMetrics metrics) {
    this.s = s;
    this.out = out;
    this.err = err;
    this.metrics = metrics;
  }

  public void run(Model.Result res, Consumer<Model.Phase> onPhase) throws Exception {
    Config base = s.base;
    long seed = base.resolvedSeed();
    engine = new Engine(base); // a fresh directory (useExistingDb is false)
    try {
      res.provenance = Provenance.of(base, engine);
      out.accept("Engine:     rocksdb " + Engine.version() + " (rocksjava)\nKeys:       " + base.keySize
          + " bytes each\nValues:     " + base.valueSize + " bytes each\nEntries:    " + base.num);
      out.accept("------------------------------------------------");
      if (!s.loadMode.equals("none")) {
        if (s.loadMode.equals("bulk")) {
          // As the Go runner does for an engine that cannot ingest table files.
          err.accept("note: the rocksjava runner does not ingest table files; loading with sorted batched puts instead");
        }
        Config lc = base.copy();
        lc.threads = 1;
        lc.loadRandom = s.loadMode.equals("fillrandom");
        if (metrics != null) {
          metrics.phaseStarted("load", 1, 0);
        }
        Model.Phase load = new Bench(lc, engine, out, err).phase("load", seed, 0);
        synchronized (res) {
          res.load = load;
        }
        out.accept(Output.line(load));
        onPhase.accept(load);
        if (metrics != null) {
          metrics.phaseFinished(load);
        }
      }
      if (!s.reset.isEmpty()) {
        checkpoint = Path.of(Path.of(base.db).normalize() + ".checkpoint");
        Engine.deleteTree(checkpoint);
        engine.checkpoint(checkpoint.toString());
      }
      Double pendingReset = null;
      int salt = 0;
      for (int it = 0; it < s.repeat; it++) {
        if (it > 0 && s.reset.equals("perIteration")) {
          pendingReset = restore();
        }
        for (RunSpec.Workload w : s.workloads) {
          int[] threads = w.threads != null ? w.threads : s.threads;
          for (int th : threads) {
            salt++;
            if (Config.PSEUDO.contains(w.name)) {
              if (w.name.equals("stats")) {
                out.accept(engine.statsText());
              } else {
                engine.waitForCompaction();
              }
              break; // no threads, no phase
            }
            Model.Protocol prot = new Model.Protocol();
            if (s.reset.equals("perPoint")) {
              pendingReset = restore();
            }
            prot.resetSeconds = pendingReset;
            pendingReset = null;
            if (w.hasWarmup()) {
              Model.Phase wu = bench(w, th, w.warmupOps, w.warmupNanos).phase(w.name, seed, salt + WARMUP_SALT);
              prot.warmupOps = wu.ops;
              prot.warmupSeconds = wu.seconds;
            }
            if (s.settleNanos > 0) {
              settle(prot);
            }
            if (metrics != null) {
              // The phase's reported name: ycsb phases are ycsb-<letter>, as in the Go runner.
              metrics.phaseStarted(w.ycsb != null ? "ycsb-" + w.ycsb.letter.toLowerCase(java.util.Locale.ROOT) : w.name,
                  th, it);
            }
            Model.Phase p = bench(w, th, w.num, w.durationNanos).phase(w.name, seed, salt);
            p.iteration = it;
            p.protocol = withPhase(prot, p.protocol);
            synchronized (res) { // the signal hook reads the phases
              p.index = res.phases.size();
              res.phases.add(p);
            }
            out.accept(Output.line(p));
            if (base.histogram) {
              out.accept(Output.histogram(p));
            }
            onPhase.accept(p);
            if (metrics != null) {
              metrics.phaseFinished(p);
            }
          }
        }
      }
      res.engineTotals = engine.snapshot();
      Provenance.options(res.provenance, base, engine);
    } finally {
      if (engine != null) {
        engine.close();
      }
      if (checkpoint != null) {
        Engine.deleteTree(checkpoint);
      }
    }
  }

  /** One phase's Bench: the workload's threads, operations per thread and time bound. */
  private Bench bench(RunSpec.Workload w, int threads, long num, long durationNanos) {
    Config c = s.base.copy();
    c.threads = threads;
    // The Go runner's opsLimit: num when set; unbounded under a duration; else the key count.
    c.ops = num >= 0 ? num : durationNanos > 0 ? Long.MAX_VALUE : c.num;
    c.duration = 0;
    c.durationNanos = durationNanos;
    c.writesPerSecond = w.writesPerSecond;
    c.benchmarkWriteRate = 0;
    c.seekNexts = w.seekNexts;
    c.ycsbMix = w.ycsb;
    return new Bench(c, engine, out, err);
  }

  /** Waits for idle flushes and compactions, at most settle.timeout; records how long and whether it gave up. */
  private void settle(Model.Protocol prot) throws Exception {
    long start = System.nanoTime();
    boolean idle;
    while (true) {
      idle = engine.compactionIdle();
      long waited = System.nanoTime() - start;
      if (idle || waited >= s.settleNanos || Bench.stopReason != null) {
        prot.settleSeconds = Bench.round(waited / 1e9, 1e3);
        prot.settleTimedOut = !idle;
        break;
      }
      Thread.sleep(Math.max(1, Math.min(SETTLE_POLL_MS, (s.settleNanos - waited) / 1_000_000)));
    }
    if (!idle) {
      err.accept("settle: flushes/compactions still busy after " + s.settleNanos / 1e9 + "s; measuring anyway");
    }
  }

  /** Replaces the database with the post-load checkpoint and reopens it; returns the seconds it took. */
  private double restore() throws Exception {
    long start = System.nanoTime();
    engine.close();
    engine = null;
    Path db = Path.of(s.base.db);
    Engine.deleteTree(db);
    copyTree(checkpoint, db);
    Config c = s.base.copy();
    c.useExistingDb = true;
    engine = new Engine(c);
    return Bench.round((System.nanoTime() - start) / 1e9, 1e3);
  }

  /** Copies a checkpoint: table files as hard links (they are immutable), the rest as copies. */
  private static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> files = Files.walk(from)) {
      for (Path f : files.toList()) {
        Path t = to.resolve(from.relativize(f).toString());
        if (Files.isDirectory(f)) {
          Files.createDirectories(t);
        } else if (f.getFileName().toString().endsWith(".sst")) {
          Files.createLink(t, f);
        } else {
          Files.copy(f, t);
        }
      }
    }
  }

  /** The protocol steps plus what the phase recorded itself (a rate target); null when empty (withPhase). */
  private static Model.Protocol withPhase(Model.Protocol steps, Model.Protocol phase) {
    if (phase != null) {
      steps.targetOpsPerSec = phase.targetOpsPerSec;
      steps.targetMissed = phase.targetMissed;
      steps.serviceLatencyMicros = phase.serviceLatencyMicros;
    }
    boolean empty = steps.warmupOps == 0 && steps.warmupSeconds == 0 && steps.settleSeconds == null
        && !steps.settleTimedOut && steps.resetSeconds == null && steps.targetOpsPerSec == null
        && !steps.targetMissed && steps.serviceLatencyMicros == null;
    return empty ? null : steps;
  }
}
