package io.kvbench.rocksjava;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The thin entry point:
 *
 * <pre>
 * kvbench-runner-java bench --db=/tmp/x --benchmarks=fillseq,readrandom --num=100000 --threads=2 --json=r.json
 * </pre>
 *
 * db_bench's result lines on stdout; with --result-lines also one kvbench-phase: line per finished phase and
 * the kvbench-result: line at the end (also when the run fails), as the Go runner's run subcommand prints.
 * Errors: one line "kvbench-runner-java: error: ...", exit 1; completed phases are still written.
 */
public final class Main {
  private Main() {}

  /** How long the signal hook waits for the run to stop (Kubernetes' default grace period is 30 s). */
  static final int STOP_WAIT_S = 20;

  public static void main(String[] args) {
    System.exit(run(Arrays.asList(args), System.out, System.err));
  }

  /** What a subcommand runs once the result and its outputs are set up. */
  private interface Body {
    void run(Model.Result res, java.util.function.Consumer<Model.Phase> onPhase) throws Exception;
  }

  static int run(List<String> args, PrintStream out, PrintStream err) {
    String sub = args.isEmpty() ? "" : args.get(0);
    if (sub.equals("run")) {
      return runConfig(args.subList(1, args.size()), out, err);
    }
    if (!sub.equals("bench")) {
      err.println("usage: kvbench-runner-java bench --db=DIR --benchmarks=... [db_bench-style flags]");
      err.println("       kvbench-runner-java run --config-json=<RunnerConfig> [--json=F] [--summary-file=F]");
      err.println("kvbench-runner-java: error: the first argument must be the subcommand bench or run");
      return 1;
    }
    Config c;
    try {
      c = Config.parse(args.subList(1, args.size()));
    } catch (IllegalArgumentException e) {
      err.println("kvbench-runner-java: error: " + e.getMessage());
      return 1;
    }
    return execute(c, out, err, (res, onPhase) -> {
      try (Engine e = new Engine(c)) {
        res.provenance = Provenance.of(c, e);
        new Bench(c, e, out::println, err::println).run(res, onPhase);
        res.engineTotals = e.snapshot();
        Provenance.options(res.provenance, c, e);
      }
    });
  }

  /**
   * The operator's entry point, as kvbench-runner run: the RunnerConfig from --config-json (or the file
   * --config), results to --json and --summary-file, one kvbench-phase: line per phase and the kvbench-result:
   * line at the end, also when the config is refused (its error then says why).
   */
  static int runConfig(List<String> args, PrintStream out, PrintStream err) {
    String json = null, file = null, jsonPath = "", summaryPath = "", metricsAddr = "";
    boolean histogram = false;
    RunSpec spec;
    try {
      for (String a : args) {
        String s = a.startsWith("--") ? a.substring(2) : a.startsWith("-") ? a.substring(1) : null;
        if (s == null) {
          throw new IllegalArgumentException("unexpected argument " + a + " (flags are --name=value)");
        }
        int eq = s.indexOf('=');
        String name = eq < 0 ? s : s.substring(0, eq), v = eq < 0 ? null : s.substring(eq + 1);
        switch (name) {
          case "config-json" -> json = need(name, v);
          case "config" -> file = need(name, v);
          case "json" -> jsonPath = need(name, v);
          case "summary-file" -> summaryPath = need(name, v);
          case "metrics-addr" -> metricsAddr = need(name, v);
          case "histogram" -> histogram = v == null || Boolean.parseBoolean(v);
          default -> throw new IllegalArgumentException("unknown flag --" + name + " for run");
        }
      }
      if (file != null) {
        json = Files.readString(Path.of(file));
      }
      if (json == null || json.isEmpty()) {
        throw new IllegalArgumentException("no config: pass --config-json or --config");
      }
      spec = RunSpec.parse(json);
    } catch (IllegalArgumentException | IOException e) {
      // The result line, as the Go runner prints it for a refused config: the pod log says why.
      Model.Result res = new Model.Result();
      res.error = e.getMessage();
      out.println(Model.RESULT_PREFIX + Output.json(res, false));
      out.flush();
      err.println("kvbench-runner-java: error: " + e.getMessage());
      return 1;
    }
    LiveMetrics metrics = null;
    if (!metricsAddr.isEmpty()) {
      try {
        metrics = new LiveMetrics(metricsAddr);
      } catch (IOException e) {
        // As the Go runner: the run does not start without its metrics endpoint.
        Model.Result res = new Model.Result();
        res.error = "metrics: " + e.getMessage();
        out.println(Model.RESULT_PREFIX + Output.json(res, false));
        out.flush();
        err.println("kvbench-runner-java: error: " + res.error);
        return 1;
      }
    }
    Config c = spec.base;
    c.jsonPath = jsonPath;
    c.summaryPath = summaryPath;
    c.histogram = histogram;
    LiveMetrics m = metrics;
    try {
      return execute(c, out, err, (res, onPhase) -> new Run(spec, out::println, err::println, m).run(res, onPhase));
    } finally {
      if (m != null) {
        m.close();
      }
    }
  }

  /** The first message along e's causes (ExceptionInInitializerError has none of its own). */
  static String describe(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t.getMessage() != null) {
        return t == e ? t.getMessage() : e.getClass().getSimpleName() + ": " + t;
      }
    }
    return e.toString();
  }

  private static String need(String name, String v) {
    if (v == null) {
      throw new IllegalArgumentException("--" + name + " needs a value (--" + name + "=...)");
    }
    return v;
  }

  private static int execute(Config c, PrintStream out, PrintStream err, Body body) {
    Model.Result res = new Model.Result();
    res.startTime = Bench.now();
    res.dataset.num = c.num;
    res.dataset.keySize = c.keySize;
    res.dataset.valueSizeAvg = c.valueSize;
    res.dataset.bytes = c.num * (c.keySize + c.valueSize);
    // SIGTERM (a deleted or evicted pod) or SIGINT: the hook asks the workers to stop; the phase fails, the
    // main thread closes the database once they have left their native calls (closing it under them, or exiting
    // with it open, crashes the JVM in RocksDB), writes what finished with the error and then this exit status,
    // which the hook exits with, as the Go runner does. Only if the main thread has not ended within STOP_WAIT_S
    // does the hook write the outputs itself.
    CountDownLatch ended = new CountDownLatch(1);
    int[] status = {1};
    boolean[] finished = new boolean[1];
    Thread hook = new Thread(() -> {
      Bench.stopReason = "interrupted by a signal (SIGTERM or SIGINT; in Kubernetes: the runner pod was deleted, "
          + "evicted or preempted)";
      try {
        if (ended.await(STOP_WAIT_S, TimeUnit.SECONDS)) {
          Runtime.getRuntime().halt(status[0]); // System.exit would wait for this hook
        }
      } catch (InterruptedException ex) {
        // Write what there is, below.
      }
      synchronized (res) {
        if (finished[0]) {
          return;
        }
        res.error = Bench.stopReason + "; the run did not stop within " + STOP_WAIT_S + "s";
        res.endTime = Bench.now();
        try {
          write(c.jsonPath, Output.json(res, true), out);
          write(c.summaryPath, Output.json(Output.summarize(res), false), out);
        } catch (IOException ex) {
          // Nothing more can be done while the JVM exits.
        }
        if (c.resultLines) {
          out.println(Model.RESULT_PREFIX + Output.json(res, false));
        }
        out.flush();
        err.println("kvbench-runner-java: error: " + res.error);
      }
      Runtime.getRuntime().halt(1);
    }, "kvbench-signal");
    Runtime.getRuntime().addShutdownHook(hook);
    String failure = null;
    try {
      res.engineVersion = "rocksdb " + Engine.version(); // loads the JNI library: inside, so a failure is reported
      body.run(res, p -> streamed(c, res, p, out));
    } catch (Exception | LinkageError e) { // LinkageError: the JNI library did not load
      failure = describe(e);
      res.error = failure;
    }
    synchronized (res) {
      finished[0] = true;
    }
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException ex) {
      // A signal came as the run ended: the JVM is exiting, the hook found it finished.
    }
    res.endTime = Bench.now();
    try {
      write(c.jsonPath, Output.json(res, true), out);
      write(c.summaryPath, Output.json(Output.summarize(res), false), out);
    } catch (IOException e) {
      failure = failure != null ? failure : "writing results: " + e.getMessage();
    }
    if (c.resultLines) {
      out.println(Model.RESULT_PREFIX + Output.json(res, false));
    }
    out.flush();
    if (failure != null) {
      err.println("kvbench-runner-java: error: " + failure.replace('\n', ' '));
    }
    status[0] = failure != null ? 1 : 0;
    ended.countDown();
    return status[0];
  }

  /** After each phase: the summary file and --json kept current, the phase's log line. */
  private static void streamed(Config c, Model.Result res, Model.Phase p, PrintStream out) {
    synchronized (res) {
      streamedLocked(c, res, p, out);
    }
  }

  private static void streamedLocked(Config c, Model.Result res, Model.Phase p, PrintStream out) {
    try {
      if (!c.summaryPath.equals("-")) {
        write(c.summaryPath, Output.json(Output.summarize(res), false), out);
      }
      if (!c.jsonPath.equals("-")) {
        write(c.jsonPath, Output.json(res, true), out);
      }
    } catch (IOException e) {
      // The final write reports it.
    }
    if (c.resultLines) {
      out.println(Model.PHASE_PREFIX + Output.json(p, false));
    }
  }

  private static void write(String path, String text, PrintStream out) throws IOException {
    if (path.isEmpty()) {
      return;
    }
    if (path.equals("-")) {
      out.println(text);
      return;
    }
    Path p = Path.of(path);
    if (p.getParent() != null) {
      Files.createDirectories(p.getParent());
    }
    // In place, not via a rename: /dev/termination-log may be written but not replaced.
    Files.writeString(p, text);
  }
}
