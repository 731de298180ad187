#!/usr/bin/env bash
# ycsb-ref.sh: build the YCSB reference drawer (hack/ycsb-ref: a small Java program over YCSB core from
# Maven Central) once into the cache and print its classpath. runner/bench's conformance test runs it.
#
# The build lives in $KVBENCH_CACHE/ycsb-ref/<YCSB version>-<hash of the program>, and Maven's repository in
# $KVBENCH_CACHE/maven, so a fresh clone reuses both and a new machine fetches YCSB core (and the two Maven
# plugins) once. Needs Java 17 and Maven (hack/install-deps.sh: openjdk-17-jdk-headless, maven).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SRC=$ROOT/hack/ycsb-ref
CACHE=${KVBENCH_CACHE:-$HOME/.cache/kvbench}
YCSB_VERSION=$(sed -n 's:.*<ycsb.version>\(.*\)</ycsb.version>.*:\1:p' "$SRC/pom.xml")
hash=$(cd "$SRC" && find pom.xml src -type f | LC_ALL=C sort | xargs cat | sha256sum | cut -c1-12)
out=$CACHE/ycsb-ref/$YCSB_VERSION-$hash
if [ ! -f "$out/classpath" ]; then
  for tool in java mvn; do
    command -v $tool >/dev/null || { echo "ycsb-ref.sh: $tool not found: run hack/install-deps.sh" >&2; exit 1; }
  done
  echo "ycsb-ref.sh: building the YCSB $YCSB_VERSION reference drawer into $out" >&2
  rm -rf "$out.tmp"
  mvn -B -q -f "$SRC/pom.xml" -Dmaven.repo.local="$CACHE/maven" -Dout="$out.tmp" package >&2
  cp=$out.tmp/ycsb-ref-1.jar
  for j in "$out.tmp"/lib/*.jar; do cp+=":$j"; done
  echo "${cp//$out.tmp/$out}" >"$out.tmp/classpath"
  rm -rf "$out" && mv "$out.tmp" "$out"
fi
cat "$out/classpath"
