package io.kvbench.rocksjava;

import java.nio.ByteBuffer;
import java.util.Base64;
import org.HdrHistogram.Histogram;

/**
 * Latency histograms with the Go runner's layout (runner/hist: nanoseconds from 1 ns to one hour, 3
 * significant digits), so that a histogram from either runner merges exactly with the other's. They go into
 * the result in HdrHistogram's portable encoding (V2 compressed, base64), which hdrhistogram-go decodes.
 */
public final class Hist {
  static final long LOWEST = 1;
  static final long HIGHEST = 3600L * 1_000_000_000L;
  static final int SIG_FIGS = 3;

  private Hist() {}

  public static Histogram create() {
    return new Histogram(LOWEST, HIGHEST, SIG_FIGS);
  }

  /** Records nanos, clamped to the range as the Go runner does so that the count equals the ops. */
  public static void record(Histogram h, long nanos) {
    h.recordValue(nanos < LOWEST ? LOWEST : Math.min(nanos, HIGHEST));
  }

  /** Percentiles in microseconds, as api.Percentiles; null when empty. */
  public static Model.Percentiles percentiles(Histogram h) {
    if (h == null || h.getTotalCount() == 0) {
      return null;
    }
    Model.Percentiles p = new Model.Percentiles();
    p.mean = h.getMean() / 1e3;
    p.p50 = h.getValueAtPercentile(50) / 1e3;
    p.p75 = h.getValueAtPercentile(75) / 1e3;
    p.p99 = h.getValueAtPercentile(99) / 1e3;
    p.p999 = h.getValueAtPercentile(99.9) / 1e3;
    p.p9999 = h.getValueAtPercentile(99.99) / 1e3;
    p.max = h.getMaxValue() / 1e3;
    return p;
  }

  /** HdrHistogram's V2 compressed encoding, base64: the result's latencyHistogram. */
  public static String encode(Histogram h) {
    ByteBuffer buf = ByteBuffer.allocate(h.getNeededByteBufferCapacity());
    int n = h.encodeIntoCompressedByteBuffer(buf);
    byte[] out = new byte[n];
    buf.flip();
    buf.get(out);
    return Base64.getEncoder().encodeToString(out);
  }

  public static Histogram decode(String b64) throws java.util.zip.DataFormatException {
    return Histogram.decodeFromCompressedByteBuffer(ByteBuffer.wrap(Base64.getDecoder().decode(b64)), 0);
  }
}
