// db_bench 7.8.3's flag defaults where they differ from rocksdb::Options(), applied before the
// runner's own options so that a runner database and a db_bench database leave identical OPTIONS
// files (hack/bench/vs-dbbench.sh diffs them). The C API has no setter for some of these
// (delayed_write_rate, index_shortening), so we reach the C++ structs the C handles wrap; their
// definitions below are the ones in RocksDB's db/c.cc (a single `rep` member).
#include <rocksdb/c.h>
#include <rocksdb/options.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>

struct rocksdb_options_t {
  ROCKSDB_NAMESPACE::Options rep;
};
struct rocksdb_block_based_table_options_t {
  ROCKSDB_NAMESPACE::BlockBasedTableOptions rep;
};

extern "C" void kvb_dbbench_options(rocksdb_options_t* o) {
  auto& r = o->rep;
  r.enable_pipelined_write = true;                        // --enable_pipelined_write
  r.delayed_write_rate = 8 << 20;                         // --delayed_write_rate
  r.table_cache_numshardbits = 4;                         // --table_cache_numshardbits
  r.dump_malloc_stats = true;                             // --dump_malloc_stats
  r.hard_pending_compaction_bytes_limit = 128ull << 30;   // --hard_pending_compaction_bytes_limit
  r.compaction_options_fifo.allow_compaction = true;      // --fifo_compaction_allow_compaction
  r.compaction_options_fifo.max_table_files_size = 0;     // --fifo_compaction_max_table_files_size_mb
}

extern "C" void kvb_dbbench_table_options(rocksdb_block_based_table_options_t* t) {
  auto& r = t->rep;
  r.pin_top_level_index_and_filter = false;  // --pin_top_level_index_and_filter
  r.index_shortening =                       // --index_shortening_mode=2
      ROCKSDB_NAMESPACE::BlockBasedTableOptions::IndexShorteningMode::kShortenSeparatorsAndSuccessor;
}

// kvb_set_bloom installs the same filter object db_bench does (NewBloomFilterPolicy(bits, false));
// the C API's rocksdb_filterpolicy_create_bloom wraps it in a proxy that serialises differently.
extern "C" void kvb_set_bloom(rocksdb_block_based_table_options_t* t, double bits) {
  t->rep.filter_policy.reset(ROCKSDB_NAMESPACE::NewBloomFilterPolicy(bits, false));
}
