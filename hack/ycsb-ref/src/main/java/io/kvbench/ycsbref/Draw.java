package io.kvbench.ycsbref;

import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;
import java.util.concurrent.ThreadLocalRandom;

import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.Status;
import site.ycsb.Utils;
import site.ycsb.measurements.Measurements;
import site.ycsb.workloads.CoreWorkload;

/**
 * Draws what YCSB core's CoreWorkload asks of a database, on one thread from a fixed seed, and writes
 * it to stdout for the runner's conformance test.
 *
 * <pre>
 * java --add-opens java.base/java.lang=ALL-UNNAMED -cp CP io.kvbench.ycsbref.Draw mode=workload seed=S \
 *     operationcount=M recordcount=N readproportion=... (any CoreWorkload property)
 * </pre>
 *
 * mode=workload: CoreWorkload.doTransaction M times with a DB that records, per transaction, 'T' and
 * the operation (R read, U update, I insert, S scan, M read-modify-write), then the engine calls YCSB's
 * RocksDB binding makes for it: 'G' key (get), 'P' key (put), 'S' key length (seek, then up to length
 * records). Keys are written as the number after "user". Big-endian, as DataOutputStream writes.
 * mode=rand: M pairs (nextDouble, nextLong) of ThreadLocalRandom after seeding it.
 * mode=fnv: Utils.fnvhash64 of 0..M-1.
 *
 * ThreadLocalRandom cannot be seeded through its API; its state is the thread's threadLocalRandomSeed
 * field, set here after the workload's init (whose generators draw once when they are built).
 */
public final class Draw {
  private Draw() {
  }

  public static void main(String[] args) throws Exception {
    Properties p = new Properties();
    for (String a : args) {
      int i = a.indexOf('=');
      if (i < 1) {
        throw new IllegalArgumentException("argument " + a + " is not name=value");
      }
      p.setProperty(a.substring(0, i), a.substring(i + 1));
    }
    String mode = p.getProperty("mode", "workload");
    long seed = Long.parseLong(p.getProperty("seed", "1"));
    long count = Long.parseLong(p.getProperty("operationcount"));
    DataOutputStream out = new DataOutputStream(new BufferedOutputStream(System.out, 1 << 16));
    switch (mode) {
    case "rand":
      seed(seed);
      for (long i = 0; i < count; i++) {
        out.writeDouble(ThreadLocalRandom.current().nextDouble());
        out.writeLong(ThreadLocalRandom.current().nextLong());
      }
      break;
    case "fnv":
      for (long i = 0; i < count; i++) {
        out.writeLong(Utils.fnvhash64(i));
      }
      break;
    case "workload":
      Measurements.setProperties(p);
      CoreWorkload w = new CoreWorkload();
      w.init(p);
      Recorder db = new Recorder(out);
      seed(seed);
      for (long i = 0; i < count; i++) {
        db.calls.clear();
        w.doTransaction(db, null);
        db.flush();
      }
      break;
    default:
      throw new IllegalArgumentException("unknown mode " + mode);
    }
    out.flush();
  }

  private static void seed(long seed) throws ReflectiveOperationException {
    ThreadLocalRandom.current(); // initialises the thread's probe, so that current() does not reseed
    Field f = Thread.class.getDeclaredField("threadLocalRandomSeed");
    f.setAccessible(true);
    f.setLong(Thread.currentThread(), seed);
  }

  /** A DB that records the calls of one transaction, then writes them with the operation's name. */
  static final class Recorder extends DB {
    private final DataOutputStream out;
    final List<Object[]> calls = new ArrayList<>();

    Recorder(DataOutputStream out) {
      this.out = out;
    }

    private static long num(String key) {
      return Long.parseLong(key.substring(4)); // "user" + digits
    }

    void flush() throws IOException {
      String ops = "";
      for (Object[] c : calls) {
        ops += (String) c[0];
      }
      char op;
      switch (ops) {
      case "read":
        op = 'R';
        break;
      case "update":
        op = 'U';
        break;
      case "insert":
        op = 'I';
        break;
      case "scan":
        op = 'S';
        break;
      case "readupdate":
        op = 'M';
        break;
      default:
        throw new IllegalStateException("unexpected calls " + ops);
      }
      out.writeByte('T');
      out.writeByte(op);
      for (Object[] c : calls) {
        long k = (Long) c[1];
        switch ((String) c[0]) {
        case "read":
          get(k);
          break;
        case "update": // the RocksDB binding reads the record, replaces the fields and writes it back
          get(k);
          put(k);
          break;
        case "insert":
          put(k);
          break;
        default:
          out.writeByte('S');
          out.writeLong(k);
          out.writeInt((Integer) c[2]);
        }
      }
    }

    private void get(long k) throws IOException {
      out.writeByte('G');
      out.writeLong(k);
    }

    private void put(long k) throws IOException {
      out.writeByte('P');
      out.writeLong(k);
    }

    @Override
    public Status read(String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
      calls.add(new Object[] {"read", num(key)});
      return Status.OK;
    }

    @Override
    public Status scan(String table, String startkey, int recordcount, Set<String> fields,
        Vector<HashMap<String, ByteIterator>> result) {
      calls.add(new Object[] {"scan", num(startkey), recordcount});
      return Status.OK;
    }

    // Values are not touched: reading a RandomByteIterator would draw from ThreadLocalRandom.
    @Override
    public Status update(String table, String key, Map<String, ByteIterator> values) {
      calls.add(new Object[] {"update", num(key)});
      return Status.OK;
    }

    @Override
    public Status insert(String table, String key, Map<String, ByteIterator> values) {
      calls.add(new Object[] {"insert", num(key)});
      return Status.OK;
    }

    @Override
    public Status delete(String table, String key) {
      throw new UnsupportedOperationException("CoreWorkload does not delete");
    }
  }
}
