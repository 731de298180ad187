// Engine statistics read at phase boundaries (never per operation). The C API of RocksDB 7.8 has
// no map properties and no ticker reads, so we reach the C++ objects the C handles wrap (see
// fastget.cc for the layout).
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <rocksdb/c.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/statistics.h>

struct rocksdb_options_t {
  ROCKSDB_NAMESPACE::Options rep;
};

// kvb_map_property renders a map property as "key=value\n" lines (malloc'd; NULL if unknown).
extern "C" char* kvb_map_property(rocksdb_t* db, const char* name) {
  auto* d = *reinterpret_cast<ROCKSDB_NAMESPACE::DB* const*>(db);
  std::map<std::string, std::string> m;
  if (!d->GetMapProperty(name, &m)) return nullptr;
  std::string out;
  for (const auto& kv : m) out += kv.first + "=" + kv.second + "\n";
  return strdup(out.c_str());
}

// kvb_tickers renders every Statistics ticker as "name=count\n" lines (NULL without statistics).
extern "C" char* kvb_tickers(rocksdb_options_t* o) {
  auto& st = o->rep.statistics;
  if (!st) return nullptr;
  std::string out;
  for (const auto& t : ROCKSDB_NAMESPACE::TickersNameMap) {
    out += t.second + "=" + std::to_string(st->getTickerCount(t.first)) + "\n";
  }
  return strdup(out.c_str());
}
