package io.kvbench.rocksjava;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.util.ArrayList;
import java.util.Locale;

/** What the Go runner writes (runner/report): db_bench's lines, the result lines, the bounded summary. */
public final class Output {
  private Output() {}

  static final ObjectMapper JSON = new ObjectMapper();
  /** api.MaxSummaryOverrides: the OPTIONS file overrides kept in the termination message. */
  static final int MAX_SUMMARY_OVERRIDES = 8;
  static final int TERMINATION_MESSAGE_LIMIT = 4096;

  static String json(Object v, boolean indent) {
    try {
      return indent ? JSON.writer(SerializationFeature.INDENT_OUTPUT).writeValueAsString(v)
          : JSON.writeValueAsString(v);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  /** db_bench 7.8.3's result line, as report.Line formats it. */
  public static String line(Model.PhaseSummary r) {
    StringBuilder b = new StringBuilder(String.format(Locale.ROOT,
        "%-12s : %11.3f micros/op %d ops/sec %.3f seconds %d operations;",
        r.workload, r.microsPerOp, (long) r.opsPerSec, r.seconds, r.ops));
    String extra = r.mbPerSec > 0 ? String.format(Locale.ROOT, "%6.1f MB/s", r.mbPerSec) : "";
    if (r.found != null) {
      long reads = r.ops;
      if (r.operations != null) {
        for (Model.Operation o : r.operations) {
          if (o.name.equals("read")) {
            reads = o.ops;
          }
        }
      }
      extra += (extra.isEmpty() ? "" : " ") + (r.workload.startsWith("ycsb") // its reads are engine gets
          ? String.format(Locale.ROOT, "(%d found)", r.found)
          : String.format(Locale.ROOT, "(%d of %d found)", r.found, reads));
    }
    if (r.writeRate != null) {
      extra += (extra.isEmpty() ? "" : " ") + String.format(Locale.ROOT, "(%.0f writes/sec reached)", r.writeRate);
    }
    return extra.isEmpty() ? b.toString() : b.append(' ').append(extra).toString();
  }

  /** db_bench's --histogram summary block (without the bucket table), as report.Histogram. */
  public static String histogram(Model.Phase r) {
    Model.Percentiles p = r.latencyMicros;
    if (p == null) {
      return "";
    }
    return String.format(Locale.ROOT, "Microseconds per %s:%nCount: %d Average: %.4f  StdDev: 0.00%n"
        + "Min: 0  Median: %.4f  Max: %.0f%n"
        + "Percentiles: P50: %.2f P75: %.2f P99: %.2f P99.9: %.2f P99.99: %.2f%n"
        + "------------------------------------------------------%n",
        r.workload, r.ops, p.mean, p.p50, p.max, p.p50, p.p75, p.p99, p.p999, p.p9999);
  }

  /**
   * The termination message: always at most 4096 bytes (report.Summarize): drops per-operation detail, then
   * p75/p99.99, then latency, then trailing phases, counted in truncated.
   */
  public static Model.Summary summarize(Model.Result r) {
    Model.Summary s = new Model.Summary();
    s.engine = r.engine;
    s.engineVersion = r.engineVersion;
    s.dataset = r.dataset;
    s.error = r.error != null && r.error.length() > 1024 ? r.error.substring(0, 1021) + "..." : r.error;
    if (r.provenance != null) {
      s.provenance = new Model.ProvenanceSummary();
      s.provenance.seed = r.provenance.seed;
      if (r.provenance.optionsOverrides != null) {
        s.provenance.optionsOverrides = OptionsFile.lines(r.provenance.optionsOverrides, MAX_SUMMARY_OVERRIDES);
      }
    }
    s.phases = new ArrayList<>();
    for (Model.Phase p : r.phases) {
      s.phases.add(copied(p));
    }
    if (r.load != null) {
      s.load = copied(r.load);
    }
    java.util.List<java.util.function.Consumer<Model.PhaseSummary>> strip = java.util.List.of(
        p -> p.operations = null,
        p -> {
          if (p.latencyMicros != null) {
            p.latencyMicros.p75 = 0;
            p.latencyMicros.p9999 = 0;
          }
        },
        p -> {
          p.latencyMicros = null;
          p.serviceP99Micros = null;
        });
    for (var f : strip) {
      if (fits(s)) {
        return s;
      }
      s.phases.forEach(f);
      if (s.load != null) {
        f.accept(s.load);
      }
    }
    while (!fits(s) && !s.phases.isEmpty()) {
      s.phases.remove(s.phases.size() - 1);
      s.truncated++;
    }
    if (!fits(s)) {
      s.load = null;
      s.dataset = null;
    }
    return s;
  }

  /** The phase's summary with its own copy of the percentiles: stripping must not touch the result. */
  private static Model.PhaseSummary copied(Model.Phase p) {
    Model.PhaseSummary x = p.summary();
    if (x.latencyMicros != null) {
      Model.Percentiles l = new Model.Percentiles();
      l.mean = x.latencyMicros.mean;
      l.p50 = x.latencyMicros.p50;
      l.p75 = x.latencyMicros.p75;
      l.p99 = x.latencyMicros.p99;
      l.p999 = x.latencyMicros.p999;
      l.p9999 = x.latencyMicros.p9999;
      l.max = x.latencyMicros.max;
      x.latencyMicros = l;
    }
    return x;
  }

  private static boolean fits(Model.Summary s) {
    return json(s, false).getBytes(java.nio.charset.StandardCharsets.UTF_8).length <= TERMINATION_MESSAGE_LIMIT;
  }
}
