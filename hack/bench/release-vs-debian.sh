#!/usr/bin/env bash
# release-vs-debian.sh: what Debian's assertions cost. Debian's db_bench (rocksdb-tools, librocksdb 7.8.3 built
# without NDEBUG) against the release db_bench of hack/engine-build.sh (the same RocksDB source package, RocksDB's
# own release flags), on vs-dbbench.sh's workloads, flags and alternation; the ratio column is debian/release.
# The two OPTIONS files differ in one line, which is part of what NDEBUG changes: RocksDB's default
# info_log_level is DEBUG_LEVEL without NDEBUG and INFO_LEVEL with it (the LOG file gets the debug lines too).
#
#   hack/bench/release-vs-debian.sh     (settings as hack/bench/vs-dbbench.sh: NUM, READS, REPS, DIRS, THREADS, ...)
set -euo pipefail
cd "$(dirname "$0")/../.."
OPTIONS_IGNORE=info_log_level= A=db_bench:/usr/bin/db_bench LABEL_A=debian LABEL_B=release LIB=release exec hack/bench/vs-dbbench.sh "$@"
