package io.kvbench.rocksjava;

/**
 * The Go runner's per-thread generator (wyrand, runner/keygen/rand.go), so that one seed draws the same
 * keys in both runners. Not thread-safe: one per thread.
 */
public final class Rand {
  private long s;

  public Rand(long seed) {
    s = seed ^ 0x9E3779B97F4A7C15L;
  }

  private static long mulHi(long a, long b) {
    // Unsigned high word (Math.unsignedMultiplyHigh is Java 18).
    return Math.multiplyHigh(a, b) + ((a >> 63) & b) + ((b >> 63) & a);
  }

  public long next() {
    s += 0xa0761d6478bd642fL;
    long x = s ^ 0xe7037ed1a0b428dbL;
    return mulHi(s, x) ^ (s * x);
  }

  /** A uniform value in [0, n) without modulo bias (Lemire's method), n > 0. */
  public long nextBelow(long n) {
    long r = next();
    long hi = mulHi(r, n), lo = r * n;
    if (Long.compareUnsigned(lo, n) < 0) {
      long thresh = Long.remainderUnsigned(-n, n);
      while (Long.compareUnsigned(lo, thresh) < 0) {
        r = next();
        hi = mulHi(r, n);
        lo = r * n;
      }
    }
    return hi;
  }
}
