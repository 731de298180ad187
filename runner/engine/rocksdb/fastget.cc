// kvb_get: DB::Get into a PinnableSlice on the stack, as db_bench's ReadRandom does. The C API's
// rocksdb_get_pinned heap-allocates a rocksdb_pinnableslice_t per call (new + delete per Get),
// which showed in profiles as malloc/free next to the lookup itself.
//
// The C handles are structs whose first member is the C++ object (db/c.cc: rocksdb_t { DB* rep; },
// rocksdb_readoptions_t { ReadOptions rep; ... }); the library's SONAME pins the 7.8 ABI.
#include <cstdlib>
#include <cstring>
#include <rocksdb/c.h>
#include <rocksdb/db.h>

using ROCKSDB_NAMESPACE::DB;
using ROCKSDB_NAMESPACE::PinnableSlice;
using ROCKSDB_NAMESPACE::ReadOptions;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;

extern "C" char* kvb_get(rocksdb_t* db, const rocksdb_readoptions_t* ro, const char* k, size_t klen,
                         size_t* vlen, int* found) {
  // db_bench's --perf_level=1 on this thread (see kvb_thread_init in fastpath.go).
  static thread_local bool perf_off = false;
  if (!perf_off) {
    rocksdb_set_perf_level(1);
    perf_off = true;
  }
  DB* d = *reinterpret_cast<DB* const*>(db);
  const ReadOptions& opts = *reinterpret_cast<const ReadOptions*>(ro);
  PinnableSlice v;
  Status s = d->Get(opts, d->DefaultColumnFamily(), Slice(k, klen), &v);
  *found = s.ok();
  *vlen = s.ok() ? v.size() : 0;
  if (s.ok() || s.IsNotFound()) return nullptr;
  return strdup(s.ToString().c_str());  // freed by the caller with free(), like the C API's errors
}
