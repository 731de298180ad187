// The version of the librocksdb actually loaded, not the headers we compiled against.
#include <string>
#include <rocksdb/version.h>

extern "C" const char* kvb_rocksdb_version() {
  static const std::string v = ROCKSDB_NAMESPACE::GetRocksVersionAsString(true);
  return v.c_str();
}
