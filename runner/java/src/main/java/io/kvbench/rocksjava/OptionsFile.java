package io.kvbench.rocksjava;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ConfigOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.Status;

/**
 * The user's OPTIONS file (engines[].optionsFrom, issue 19), as the Go runner treats it for engine rocksdb
 * (runner/engine/optionsfile.go, runner/engine/rocksdb/optionsfile.go): RocksDB's own loader reads it as the
 * base, the typed options that are set and the runner's few settings go over it, and the keys of the user's
 * file that did not take effect as written are listed (provenance.optionsOverrides).
 */
final class OptionsFile {
  private OptionsFile() {}

  static final String DB = "DBOptions/";
  static final String CF = "CFOptions \"default\"/";

  /** engines[].options fields of rocksjava and the OPTIONS file keys each sets (Go: fileReplacements). */
  static final Map<String, String> KEYS = new LinkedHashMap<>();

  static {
    KEYS.put("writeBufferSize", CF + "write_buffer_size");
    KEYS.put("maxWriteBufferNumber", CF + "max_write_buffer_number");
    KEYS.put("compression", CF + "compression");
    KEYS.put("maxOpenFiles", DB + "max_open_files");
    KEYS.put("level0FileNumCompactionTrigger", CF + "level0_file_num_compaction_trigger");
    KEYS.put("level0SlowdownWritesTrigger", CF + "level0_slowdown_writes_trigger");
    KEYS.put("level0StopWritesTrigger", CF + "level0_stop_writes_trigger");
    KEYS.put("targetFileSizeBase", CF + "target_file_size_base");
    KEYS.put("maxBytesForLevelBase", CF + "max_bytes_for_level_base");
    KEYS.put("maxBackgroundJobs", DB + "max_background_jobs");
    KEYS.put("numLevels", CF + "num_levels");
  }

  /**
   * The typed options the Java runner cannot set over a file's table factory: RocksJava replaces the whole
   * BlockBasedTable factory (losing the file's table options), where the Go runner edits it in C++.
   */
  static final List<String> TABLE_FIELDS = List.of("cacheSize", "cacheNumShardBits", "bloomBits", "blockSize");

  /** A replacement: what one typed option or runner setting sets in the file (Go: engine.Replacement). */
  record Replacement(String by, List<String> keys) {}

  /** The file's DBOptions and default column family, with RocksDB's loader; its message is the error. */
  static Options load(String file) throws RocksDBException {
    RocksDB.loadLibrary();
    List<ColumnFamilyDescriptor> cfs = new ArrayList<>();
    // A typo is an error, not a default. No setEnv: rocksdbjni 7.8.3's library lacks its native method
    // (UnsatisfiedLinkError), and C++'s ConfigOptions already uses Env::Default().
    try (ConfigOptions co = new ConfigOptions().setIgnoreUnknownOptions(false).setInputStringsEscaped(true);
         DBOptions db = new DBOptions()) {
      try {
        org.rocksdb.OptionsUtil.loadOptionsFromFile(co, file, db, cfs);
      } catch (RocksDBException e) {
        throw new RocksDBException("rocksdb OPTIONS file " + file + ": " + status(e));
      }
      try {
        if (cfs.size() != 1 || !new String(cfs.get(0).getName()).equals("default")) {
          List<String> names = new ArrayList<>();
          for (ColumnFamilyDescriptor d : cfs) {
            names.add(new String(d.getName()));
          }
          throw new RocksDBException("rocksdb OPTIONS file " + file + ": the OPTIONS file has column families "
              + String.join(", ", names) + ": the runner benchmarks the default column family only; keep its "
              + "[CFOptions \"default\"] and [TableOptions/BlockBasedTable \"default\"] sections and remove the others");
        }
        return new Options(db, cfs.get(0).getOptions());
      } finally {
        for (ColumnFamilyDescriptor d : cfs) {
          d.getOptions().close();
        }
      }
    }
  }

  /**
   * e as C++'s Status::ToString writes it, which the Go runner shows ("Invalid argument: ..."): RocksJava's
   * message is the Status's state only, without the code.
   */
  static String status(RocksDBException e) {
    Status s = e.getStatus();
    if (s == null || s.getCode() == Status.Code.Ok) {
      return e.getMessage();
    }
    String out = switch (s.getCode()) {
      case NotFound -> "NotFound: ";
      case Corruption -> "Corruption: ";
      case NotSupported -> "Not implemented: ";
      case InvalidArgument -> "Invalid argument: ";
      case IOError -> "IO error: ";
      case MergeInProgress -> "Merge in progress: ";
      case Incomplete -> "Result incomplete: ";
      case ShutdownInProgress -> "Shutdown in progress: ";
      case TimedOut -> "Operation timed out: ";
      case Aborted -> "Operation aborted: ";
      case Busy -> "Resource busy: ";
      case Expired -> "Operation expired: ";
      case TryAgain -> "Operation failed. Try again.: ";
      default -> s.getCodeString() + ": ";
    };
    String sub = s.getSubCode() == null ? "" : switch (s.getSubCode()) {
      case MutexTimeout -> "Timeout Acquiring Mutex";
      case LockTimeout -> "Timeout waiting to lock key";
      case LockLimit -> "Failed to acquire lock due to max_num_locks limit";
      case NoSpace -> "No space left on device";
      case Deadlock -> "Deadlock";
      case StaleFile -> "Stale file handle";
      case MemoryLimit -> "Memory limit reached";
      default -> "";
    };
    String state = s.getState() != null ? s.getState() : e.getMessage();
    return out + sub + (sub.isEmpty() || state == null ? "" : ": ") + (state == null ? "" : state);
  }

  /** The keys the typed options set (in typed) and the runner sets over the file. */
  static List<Replacement> replacements(java.util.Set<String> typed) {
    List<Replacement> out = new ArrayList<>();
    for (Map.Entry<String, String> e : KEYS.entrySet()) {
      if (typed.contains(e.getKey())) {
        out.add(new Replacement("engines[].options." + e.getKey(), List.of(e.getValue())));
      }
    }
    out.add(new Replacement("spec.cacheMode", List.of(DB + "use_direct_reads", DB + "use_direct_io_for_flush_and_compaction")));
    out.add(new Replacement("runner: every run creates its database on its own volume",
        List.of(DB + "create_if_missing", DB + "error_if_exists")));
    return out;
  }

  /** One "key=value" line under its section ("Section/key", spaces in the header collapsed). */
  record Entry(String key, String value) {}

  /** An INI OPTIONS file's entries in file order, leniently (Go: engine.ParseOptionsText). */
  static List<Entry> parse(String text) {
    List<Entry> out = new ArrayList<>();
    String section = "";
    for (String raw : text.split("\n", -1)) {
      String line = raw.strip();
      int hash = line.indexOf('#');
      if (hash >= 0 && !line.startsWith("[")) {
        line = line.substring(0, hash).strip();
      }
      if (line.isEmpty()) {
        continue;
      }
      if (line.startsWith("[") && line.endsWith("]")) {
        section = String.join(" ", line.substring(1, line.length() - 1).trim().split("\\s+"));
      } else {
        int eq = line.indexOf('=');
        if (eq >= 0) {
          out.add(new Entry(section + "/" + line.substring(0, eq).strip(), line.substring(eq + 1).strip()));
        }
      }
    }
    return out;
  }

  /**
   * Each key of the user's file that a replacement set to another value, with the value RocksDB wrote in its
   * own OPTIONS file, in the user's file order (Go: engine.OptionsOverrides: the text is compared).
   */
  static List<Model.OptionOverride> overrides(String userText, String effectiveText, List<Replacement> reps) {
    Map<String, String> effective = new LinkedHashMap<>();
    for (Entry e : parse(effectiveText)) {
      effective.put(e.key(), e.value());
    }
    List<Model.OptionOverride> out = new ArrayList<>();
    for (Entry e : parse(userText)) {
      List<String> by = new ArrayList<>();
      for (Replacement r : reps) {
        if (r.keys().contains(e.key())) {
          by.add(r.by());
        }
      }
      if (by.isEmpty()) {
        continue;
      }
      String eff = effective.getOrDefault(e.key(), "(not written)");
      if (!eff.equals(e.value())) {
        out.add(new Model.OptionOverride(e.key(), e.value(), eff, String.join(", ", by)));
      }
    }
    return out;
  }

  /** Go: report.OverrideLines: at most max lines of at most 160 characters, then one that counts the rest. */
  static List<String> lines(List<Model.OptionOverride> o, int max) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < o.size(); i++) {
      if (i == max) {
        out.add("and " + (o.size() - max) + " more: see provenance.optionsOverrides in the result");
        break;
      }
      Model.OptionOverride v = o.get(i);
      String line = v.key + ": " + v.file + " -> " + v.effective + " (" + v.by + ")";
      out.add(line.length() > 160 ? line.substring(0, 157) + "..." : line);
    }
    return out;
  }

  static String read(String file) {
    try {
      return Files.readString(Path.of(file));
    } catch (java.io.IOException e) {
      return null;
    }
  }
}
