package io.kvbench.rocksjava;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

/**
 * The image's entry point: chooses the rocksdbjni release the run asked for (RunnerConfig engine.version; unset:
 * 7.8.3) among those the image carries and starts Main with it. Only java.base here: the runner's classes are
 * loaded, with the chosen rocksdbjni jar, by a class loader of their own, so one image holds several releases.
 *
 * <pre>
 * KVBENCH_HOME/lib/*.jar                            the runner, HdrHistogram, Jackson (no rocksdbjni)
 * KVBENCH_HOME/rocksdbjni/VERSION/rocksdbjni-*.jar  each release, with its JNI library for this architecture
 * </pre>
 *
 * A release the image lacks is not this class's error to report: Main runs with the default, and its config check
 * refuses the version with the list of releases (kvbench.rocksdbjni.available) in the result line.
 */
public final class Launcher {
  private Launcher() {}

  public static final String DEFAULT_VERSION = "7.8.3";

  public static void main(String[] args) throws Throwable {
    Path home = Path.of(System.getProperty("kvbench.home", "/opt/kvbench"));
    List<URL> base = jars(home.resolve("lib"));
    List<String> available = new ArrayList<>();
    try (Stream<Path> s = Files.list(home.resolve("rocksdbjni"))) {
      s.filter(Files::isDirectory).map(p -> p.getFileName().toString()).sorted().forEach(available::add);
    }
    System.setProperty("kvbench.rocksdbjni.available", String.join(",", available));
    String want;
    try (URLClassLoader config = new URLClassLoader(base.toArray(URL[]::new), ClassLoader.getPlatformClassLoader())) {
      want = (String) config.loadClass("io.kvbench.rocksjava.RunSpec").getMethod("requestedVersion", List.class)
          .invoke(null, Arrays.asList(args));
    }
    String version = available.contains(want) ? want : DEFAULT_VERSION;
    Path dir = home.resolve("rocksdbjni").resolve(version);
    List<URL> urls = new ArrayList<>(base);
    urls.addAll(jars(dir));
    // Not closed: Main's classes run until the JVM exits. RocksDB.loadLibrary's System.loadLibrary("rocksdbjni")
    // asks this loader first: the release's own JNI library, so nothing is unpacked from the jar into /tmp.
    Path jni = dir.resolve(System.getProperty("os.arch").equals("aarch64") ? "librocksdbjni-linux-aarch64.so"
        : "librocksdbjni-linux64.so");
    URLClassLoader runner = new URLClassLoader(urls.toArray(URL[]::new), ClassLoader.getPlatformClassLoader()) {
      @Override
      protected String findLibrary(String name) {
        return name.equals("rocksdbjni") && Files.isRegularFile(jni) ? jni.toString() : null;
      }
    };
    Thread.currentThread().setContextClassLoader(runner);
    try {
      runner.loadClass("io.kvbench.rocksjava.Main").getMethod("main", String[].class).invoke(null, (Object) args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  private static List<URL> jars(Path dir) throws IOException {
    List<URL> out = new ArrayList<>();
    try (Stream<Path> s = Files.list(dir)) {
      for (Path p : s.filter(p -> p.toString().endsWith(".jar")).sorted().toList()) {
        try {
          out.add(p.toUri().toURL());
        } catch (MalformedURLException e) {
          throw new IOException(e);
        }
      }
    }
    return out;
  }
}
