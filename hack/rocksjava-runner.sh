#!/usr/bin/env bash
# rocksjava-runner.sh: build the RocksJava runner (runner/java: Maven, Java 17, rocksdbjni from Maven Central,
# whose jar carries the native library) once into the cache and print its classpath. Run it with
#   java -cp "$(hack/rocksjava-runner.sh)" io.kvbench.rocksjava.Main bench --db=... [db_bench-style flags]
#
# The build lives in $KVBENCH_CACHE/rocksjava-runner/<rocksdbjni version>-<hash of the sources>, and Maven's
# repository in $KVBENCH_CACHE/maven (shared with hack/ycsb-ref.sh), so a fresh clone reuses both and a new
# machine downloads rocksdbjni (58 MB), HdrHistogram and Jackson once. Needs Java 17 and Maven
# (hack/install-deps.sh: openjdk-17-jdk-headless, maven).
#
# hack/rocksjava-runner.sh --home: instead, the directory the image's Launcher runs from (and prints it):
#   lib/                      the runner's jar, HdrHistogram and Jackson (links into the build and Maven's repository)
#   rocksdbjni/VERSION/       rocksdbjni-VERSION.jar and its linux x86-64 and aarch64 JNI libraries, unpacked,
#                             for each release in ROCKSDBJNI_VERSIONS (default: the one built against, 7.8.3)
# run it as: java -Dkvbench.home=DIR -cp DIR/lib/kvbench-runner-java-1.jar io.kvbench.rocksjava.Launcher run ...
# Other releases come from Maven Central (mvn dependency:get) into $KVBENCH_CACHE/maven, once.
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
[ "${1:-}" = --home ] || { cat "$out/classpath"; exit 0; }

versions=${ROCKSDBJNI_VERSIONS:-$VERSION}
home=$out/home-$(echo "$versions" | tr ' ' '_')
if [ ! -f "$home/.complete" ]; then
  rm -rf "$home"; mkdir -p "$home/lib"
  for jar in $(tr : ' ' <"$out/classpath"); do
    case $(basename "$jar") in rocksdbjni-*) ;; *) ln -s "$jar" "$home/lib/" ;; esac
  done
  for v in $versions; do
    [[ $v =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "rocksjava-runner.sh: ROCKSDBJNI_VERSIONS: $v is not a release number" >&2; exit 2; }
    jar=$CACHE/maven/org/rocksdb/rocksdbjni/$v/rocksdbjni-$v.jar
    if [ ! -f "$jar" ]; then
      echo "rocksjava-runner.sh: rocksdbjni $v from Maven Central" >&2
      mvn -B -q -Dmaven.repo.local="$CACHE/maven" dependency:get -Dartifact="org.rocksdb:rocksdbjni:$v" -Dtransitive=false >&2
    fi
    mkdir -p "$home/rocksdbjni/$v"
    ln -s "$jar" "$home/rocksdbjni/$v/"
    python3 - "$jar" "$home/rocksdbjni/$v" <<'PY'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
for so in ("librocksdbjni-linux64.so", "librocksdbjni-linux-aarch64.so"):
    open(sys.argv[2] + "/" + so, "wb").write(z.read(so))
PY
  done
  touch "$home/.complete"
fi
echo "$home"
