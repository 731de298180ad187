# lib.sh, sourced by the bench scripts (from the repository root): LIB picks the RocksDB the runner links and
# whose db_bench is the reference. release (default): hack/engine-build.sh's build, as users build it, and its
# db_bench; debian: Debian's librocksdb-dev (assertions on) and /usr/bin/db_bench. Sets ENGINE_LDFLAGS_X (for the
# runner's go build; with release also the CGO_* flags) and DBBENCH unless given.
LIB=${LIB:-release}
case $LIB in
  release) eval "$(hack/engine-build.sh env)"; DBBENCH=${DBBENCH:-$ENGINE_DIR/bin/db_bench} ;;
  debian) ENGINE_LDFLAGS_X=""; DBBENCH=${DBBENCH:-/usr/bin/db_bench} ;;
  *) echo "LIB=$LIB: release or debian" >&2; exit 2 ;;
esac
