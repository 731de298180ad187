// The user's OPTIONS file (engines[].optionsFrom), read by RocksDB's own loader, and the typed
// block-based table options set over it. rocksdb_options_t is the same single-`rep` struct as in
// dbbench_defaults.cc (RocksDB's db/c.cc).
#include <rocksdb/c.h>
#include <rocksdb/cache.h>
#include <rocksdb/convenience.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/options_util.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

struct rocksdb_options_t {
  ROCKSDB_NAMESPACE::Options rep;
};

static char* kvb_strdup(const std::string& s) {
  char* p = static_cast<char*>(malloc(s.size() + 1));
  memcpy(p, s.c_str(), s.size() + 1);
  return p;
}

// kvb_load_options_file replaces o with the file's DBOptions and default column family options.
// It returns NULL, or RocksDB's message (malloc'd) when the loader refuses the file, or ours when
// the file has column families besides "default" (the runner benchmarks the default one only).
extern "C" char* kvb_load_options_file(rocksdb_options_t* o, const char* path) {
  using namespace ROCKSDB_NAMESPACE;
  ConfigOptions cfg;
  cfg.ignore_unknown_options = false;  // a typo in a production file is an error, not a default
  cfg.input_strings_escaped = true;
  cfg.env = Env::Default();
  DBOptions db;
  std::vector<ColumnFamilyDescriptor> cfs;
  Status s = LoadOptionsFromFile(cfg, path, &db, &cfs);
  if (!s.ok()) {
    return kvb_strdup(s.ToString());
  }
  if (cfs.size() != 1 || cfs[0].name != kDefaultColumnFamilyName) {
    std::string names;
    for (auto& cf : cfs) {
      names += (names.empty() ? "" : ", ") + cf.name;
    }
    return kvb_strdup("the OPTIONS file has column families " + names +
                      ": the runner benchmarks the default column family only; keep its [CFOptions \"default\"] and "
                      "[TableOptions/BlockBasedTable \"default\"] sections and remove the others");
  }
  o->rep = Options(db, cfs[0].options);
  return nullptr;
}

// kvb_file_table_override sets the typed block-based table options over the loaded table factory:
// cache > 0 a new LRU block cache (shard_bits < 0: RocksDB's default), bloom >= 0 the bloom filter
// bits (0 none), block_size > 0 the block size. It returns 0, or -1 when the file's table factory
// is not BlockBasedTable (which has none of these options).
extern "C" int kvb_file_table_override(rocksdb_options_t* o, long long cache, int shard_bits, double bloom,
                                       long long block_size) {
  using namespace ROCKSDB_NAMESPACE;
  auto* t = o->rep.table_factory ? o->rep.table_factory->GetOptions<BlockBasedTableOptions>() : nullptr;
  if (t == nullptr) {
    return -1;
  }
  if (cache > 0) {
    t->block_cache = NewLRUCache(static_cast<size_t>(cache), shard_bits);
  }
  if (bloom == 0) {
    t->filter_policy.reset();
  } else if (bloom > 0) {
    t->filter_policy.reset(NewBloomFilterPolicy(bloom, false));
  }
  if (block_size > 0) {
    t->block_size = static_cast<size_t>(block_size);
  }
  return 0;
}

// kvb_table_factory_name is the loaded table factory's name, for messages.
extern "C" const char* kvb_table_factory_name(rocksdb_options_t* o) {
  return o->rep.table_factory ? o->rep.table_factory->Name() : "none";
}
