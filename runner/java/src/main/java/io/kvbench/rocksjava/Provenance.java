package io.kvbench.rocksjava;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import java.util.TreeMap;

/** What ran and where, as the pod sees it (the Go runner's provenance, in part). */
final class Provenance {
  private Provenance() {}

  /** The release of the rocksdbjni jar RocksDB's classes came from (its file name), else the one built against. */
  static String rocksdbjniVersion() {
    try {
      String jar = Path.of(org.rocksdb.RocksDB.class.getProtectionDomain().getCodeSource().getLocation().toURI())
          .getFileName().toString();
      java.util.regex.Matcher m = java.util.regex.Pattern.compile("^rocksdbjni-([0-9][^-]*?)(-.*)?\\.jar$").matcher(jar);
      if (m.matches()) {
        return m.group(1);
      }
    } catch (Exception e) {
      // Not from a jar file: the build's version below.
    }
    Properties p = new Properties();
    try (InputStream in = Provenance.class.getResourceAsStream("versions.properties")) {
      if (in != null) {
        p.load(in);
      }
    } catch (IOException e) {
      return "unknown";
    }
    return p.getProperty("rocksdbjni", "unknown");
  }

  /**
   * The effective OPTIONS file RocksDB wrote and, with the user's file, its keys that did not take effect as
   * written (Go: bench.newProvenance).
   */
  static void options(Model.Provenance p, Config c, Engine e) throws IOException {
    p.optionsFile = e.optionsFile();
    p.optionsOverrides = null;
    if (!c.optionsFile.isEmpty() && p.optionsFile != null) {
      String user = OptionsFile.read(c.optionsFile);
      if (user != null) {
        List<Model.OptionOverride> o = OptionsFile.overrides(user, p.optionsFile.text, e.replacements(c));
        p.optionsOverrides = o.isEmpty() ? null : o;
      }
    }
  }

  static Model.Provenance of(Config c, Engine e) throws IOException {
    Model.Provenance p = new Model.Provenance();
    p.runnerVersion = "kvbench-runner-java 1";
    p.libraries = new TreeMap<>();
    p.libraries.put("rocksdb", Engine.version());
    p.libraries.put("rocksdbjni", rocksdbjniVersion());
    p.libraries.put("jvm", System.getProperty("java.vm.name") + " " + Runtime.version() + " ("
        + System.getProperty("java.vendor") + ")");
    p.seed = c.resolvedSeed();
    options(p, c, e);
    Model.Node n = new Model.Node();
    n.nodeName = System.getenv("NODE_NAME");
    n.cpus = Runtime.getRuntime().availableProcessors();
    n.kernel = System.getProperty("os.version");
    try {
      for (String l : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
        if (l.startsWith("model name") && n.cpuModel == null) {
          n.cpuModel = l.substring(l.indexOf(':') + 1).trim();
        }
      }
      for (String l : Files.readAllLines(Path.of("/proc/meminfo"))) {
        if (l.startsWith("MemTotal:")) {
          n.memoryBytes = Long.parseLong(l.replaceAll("[^0-9]", "")) * 1024;
        }
      }
    } catch (IOException | RuntimeException ex) {
      // Not Linux: the node fingerprint stays partial.
    }
    p.node = n;
    return p;
  }
}
