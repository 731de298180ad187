package io.kvbench.rocksjava;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The process's resource use from /proc (as the Go runner's getrusage and /proc/self/io). */
final class Usage {
  final double userSeconds;
  final double systemSeconds;
  final long maxRSSBytes;
  final long readBytes;
  final long writeBytes;
  final long majorFaults;
  final long nanos = System.nanoTime();

  // USER_HZ is 100 on every Linux architecture the images target.
  private static final double TICK = 0.01;

  private Usage(double u, double s, long rss, long r, long w, long mf) {
    userSeconds = u;
    systemSeconds = s;
    maxRSSBytes = rss;
    readBytes = r;
    writeBytes = w;
    majorFaults = mf;
  }

  static Usage now() {
    double u = 0, s = 0;
    long rss = 0, r = 0, w = 0, mf = 0;
    try {
      String stat = Files.readString(Path.of("/proc/self/stat"));
      // Fields after the command (which may hold spaces) start at ")".
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      mf = Long.parseLong(f[9]);
      u = Long.parseLong(f[11]) * TICK;
      s = Long.parseLong(f[12]) * TICK;
      for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (line.startsWith("VmHWM:")) {
          rss = Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
        }
      }
      for (String line : Files.readAllLines(Path.of("/proc/self/io"))) {
        if (line.startsWith("read_bytes:")) {
          r = Long.parseLong(line.substring(11).trim());
        } else if (line.startsWith("write_bytes:")) {
          w = Long.parseLong(line.substring(12).trim());
        }
      }
    } catch (IOException | RuntimeException e) {
      // Not Linux or no /proc: the usage stays zero, as the Go runner's does.
    }
    return new Usage(u, s, rss, r, w, mf);
  }

  static Model.Usage between(Usage a, Usage b) {
    Model.Usage m = new Model.Usage();
    m.userCPUSeconds = b.userSeconds - a.userSeconds;
    m.systemCPUSeconds = b.systemSeconds - a.systemSeconds;
    m.cpuSeconds = m.userCPUSeconds + m.systemCPUSeconds;
    double wall = (b.nanos - a.nanos) / 1e9;
    m.cpuPercent = wall > 0 ? Math.round(m.cpuSeconds / wall * 1000) / 10.0 : 0;
    m.maxRSSBytes = b.maxRSSBytes;
    m.readBytes = b.readBytes - a.readBytes;
    m.writeBytes = b.writeBytes - a.writeBytes;
    m.majorFaults = b.majorFaults - a.majorFaults;
    return m;
  }
}
