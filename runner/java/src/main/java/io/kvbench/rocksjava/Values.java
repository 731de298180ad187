package io.kvbench.rocksjava;

import java.nio.ByteBuffer;

/**
 * Values as db_bench's RandomGenerator (and the Go runner's keygen.Values) make them: a 1 MiB buffer of
 * 100-byte pieces compressing to about ratio, read at a moving offset. The buffer is direct, and next()
 * only moves a view's position and limit, so a value costs no allocation and no copy on the Java side.
 */
public final class Values {
  private final ByteBuffer data;
  private final ByteBuffer view;
  private final int size;
  private int pos;

  public Values(long seed, double ratio, int size) {
    if (ratio <= 0 || ratio > 1) {
      ratio = 0.5;
    }
    Rand r = new Rand(seed);
    int total = Math.max(1 << 20, size);
    data = ByteBuffer.allocateDirect(total + 100);
    int raw = Math.max(1, (int) (100 * ratio));
    byte[] piece = new byte[raw];
    while (data.position() < total) {
      for (int i = 0; i < raw; i++) {
        piece[i] = (byte) (' ' + r.nextBelow(95));
      }
      for (int i = 0; i < 100; i++) {
        data.put(piece[i % raw]);
      }
    }
    data.clear();
    view = data.duplicate();
    this.size = size;
  }

  /** The next value: a view valid until the next call. */
  public ByteBuffer next() {
    if (pos + size > data.capacity()) {
      pos = 0;
    }
    view.limit(pos + size).position(pos);
    pos += size;
    return view;
  }
}
