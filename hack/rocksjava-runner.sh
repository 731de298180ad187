#!/usr/bin/env bash
# rocksjava-runner.sh: build the RocksJava runner (runner/java: Maven, Java 17, rocksdbjni from Maven Central,
# whose jar carries the native library) once into the cache and print its classpath. Run it with
#   java -cp "$(hack/rocksjava-runner.sh)" io.kvbench.rocksjava.Main bench --db=... [db_bench-style flags]
#
# The build lives in $KVBENCH_CACHE/rocksjava-runner/<rocksdbjni version>-<hash of the sources>, and Maven's
# repository in $KVBENCH_CACHE/maven (shared with hack/ycsb-ref.sh), so a fresh clone reuses both and a new
# machine downloads rocksdbjni (58 MB), HdrHistogram and Jackson once. Needs Java 17 and Maven
# (hack/install-deps.sh: openjdk-17-jdk-headless, maven).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SRC=$ROOT/runner/java
CACHE=${KVBENCH_CACHE:-$HOME/.cache/kvbench}
VERSION=$(sed -n 's:.*<rocksdbjni.version>\(.*\)</rocksdbjni.version>.*:\1:p' "$SRC/pom.xml")
hash=$(cd "$SRC" && find pom.xml src -type f | LC_ALL=C sort | xargs cat | sha256sum | cut -c1-12)
out=$CACHE/rocksjava-runner/$VERSION-$hash
if [ ! -f "$out/classpath" ]; then
  for tool in java mvn; do
    command -v $tool >/dev/null || { echo "rocksjava-runner.sh: $tool not found: run hack/install-deps.sh" >&2; exit 1; }
  done
  echo "rocksjava-runner.sh: building the RocksJava runner (rocksdbjni $VERSION) into $out" >&2
  rm -rf "$out.tmp"
  mvn -B -q -f "$SRC/pom.xml" -Dmaven.repo.local="$CACHE/maven" -Dout="$out.tmp" package >&2
  # The runner's jar, then its dependencies where Maven's repository holds them.
  echo "$out/kvbench-runner-java-1.jar:$(cat "$out.tmp/deps.classpath")" >"$out.tmp/classpath"
  rm -rf "$out" && mv "$out.tmp" "$out"
fi
cat "$out/classpath"
