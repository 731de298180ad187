package io.kvbench.rocksjava;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executors;

/**
 * The runner's live Prometheus endpoint (--metrics-addr), with the Go runner's series (runner/livemetrics): the
 * same names, help texts and labels, every series with the run's engine, namespace and benchmark. The Java runner
 * has no report intervals, so the values move per phase: kvbench_runner_phase_info when a phase starts;
 * operations, ops/s and p99 (the phase's) when it finishes. Nothing is on the per-operation path.
 */
final class LiveMetrics implements AutoCloseable {
  private final Map<String, String> constLabels = new TreeMap<>();
  private final HttpServer server;
  // Per "workload\0threads": operations completed, last ops/s, last p99 in seconds.
  private final Map<String, double[]> byPoint = new LinkedHashMap<>();
  private String[] current; // workload, threads, iteration of the phase running now
  private long completed;

  /** Listens on addr (":8080" or "host:port"); a listener error is thrown at once (e.g. port in use). */
  LiveMetrics(String addr) throws IOException {
    constLabels.put("engine", env("KVBENCH_RUN", "rocksjava"));
    String ns = env("KVBENCH_NAMESPACE", ""), bm = env("KVBENCH_BENCHMARK", "");
    if (!ns.isEmpty()) {
      constLabels.put("namespace", ns);
    }
    if (!bm.isEmpty()) {
      constLabels.put("benchmark", bm);
    }
    int colon = addr.lastIndexOf(':');
    if (colon < 0) {
      throw new IOException("--metrics-addr=" + addr + ": not host:port or :port");
    }
    String host = addr.substring(0, colon);
    int port;
    try {
      port = Integer.parseInt(addr.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new IOException("--metrics-addr=" + addr + ": the port is not a number");
    }
    server = HttpServer.create(host.isEmpty() ? new InetSocketAddress(port) : new InetSocketAddress(host, port), 8);
    server.createContext("/metrics", x -> {
      byte[] body = text().getBytes(StandardCharsets.UTF_8);
      x.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
      x.sendResponseHeaders(200, body.length);
      try (OutputStream o = x.getResponseBody()) {
        o.write(body);
      }
    });
    server.setExecutor(Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "metrics");
      t.setDaemon(true);
      return t;
    }));
    server.start();
  }

  /** The port listened on (for --metrics-addr=:0). */
  int port() {
    return server.getAddress().getPort();
  }

  private static String env(String name, String def) {
    String v = System.getenv(name);
    return v == null || v.isEmpty() ? def : v;
  }

  synchronized void phaseStarted(String workload, int threads, int iteration) {
    current = new String[] {workload, Integer.toString(threads), Integer.toString(iteration)};
  }

  synchronized void phaseFinished(Model.PhaseSummary p) {
    double[] v = byPoint.computeIfAbsent(p.workload + "\0" + p.threads, k -> new double[3]);
    v[0] += p.ops;
    v[1] = p.opsPerSec;
    if (p.latencyMicros != null) {
      v[2] = p.latencyMicros.p99 / 1e6;
    }
    completed++;
  }

  /** Prometheus's text format, the families in the Go runner's registry order (sorted by name). */
  synchronized String text() {
    StringBuilder b = new StringBuilder();
    family(b, "kvbench_runner_latency_p99_seconds", "gauge",
        "p99 latency of the operations that ended in the last finished report interval.", 2);
    family(b, "kvbench_runner_operations_total", "counter", "Operations completed, by workload and thread count.", 0);
    family(b, "kvbench_runner_ops_per_second", "gauge", "Throughput over the last report interval.", 1);
    if (current != null) {
      header(b, "kvbench_runner_phase_info", "gauge", "1 for the phase running now.");
      Map<String, String> l = new TreeMap<>(constLabels);
      l.put("workload", current[0]);
      l.put("threads", current[1]);
      l.put("iteration", current[2]);
      sample(b, "kvbench_runner_phase_info", l, 1);
    }
    header(b, "kvbench_runner_phases_completed_total", "counter", "Phases finished.");
    sample(b, "kvbench_runner_phases_completed_total", constLabels, completed);
    return b.toString();
  }

  private void family(StringBuilder b, String name, String type, String help, int i) {
    if (byPoint.isEmpty()) {
      return;
    }
    header(b, name, type, help);
    for (Map.Entry<String, double[]> e : byPoint.entrySet()) {
      String[] wt = e.getKey().split("\0");
      Map<String, String> l = new TreeMap<>(constLabels);
      l.put("workload", wt[0]);
      l.put("threads", wt[1]);
      sample(b, name, l, e.getValue()[i]);
    }
  }

  private static void header(StringBuilder b, String name, String type, String help) {
    b.append("# HELP ").append(name).append(' ').append(help).append('\n');
    b.append("# TYPE ").append(name).append(' ').append(type).append('\n');
  }

  private static void sample(StringBuilder b, String name, Map<String, String> labels, double v) {
    b.append(name).append('{');
    String sep = "";
    for (Map.Entry<String, String> e : labels.entrySet()) {
      b.append(sep).append(e.getKey()).append("=\"")
          .append(e.getValue().replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n")).append('"');
      sep = ",";
    }
    b.append("} ");
    b.append(v == Math.rint(v) && Math.abs(v) < 1e15 ? Long.toString((long) v) : Double.toString(v)).append('\n');
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
