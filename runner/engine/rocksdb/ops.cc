// Runs of operations in one cgo crossing (engine.Ops): the loops db_bench's ReadRandom,
// SeekRandom and DoWrite/DoDelete run, over keys the Go side generated, with each operation's
// latency read when it ends (runclock.h).
//
// The C handles are structs whose first member is the C++ object (db/c.cc: rocksdb_t { DB* rep; },
// rocksdb_readoptions_t { ReadOptions rep; ... }, rocksdb_writeoptions_t { WriteOptions rep; },
// rocksdb_writebatch_t { WriteBatch rep; }); the library's SONAME pins the 7.8 ABI.
#include <stdint.h>
#include <time.h>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <rocksdb/c.h>
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "runclock.h"

using ROCKSDB_NAMESPACE::ColumnFamilyHandle;
using ROCKSDB_NAMESPACE::DB;
using ROCKSDB_NAMESPACE::Iterator;
using ROCKSDB_NAMESPACE::PinnableSlice;
using ROCKSDB_NAMESPACE::ReadOptions;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;
using ROCKSDB_NAMESPACE::WriteBatch;
using ROCKSDB_NAMESPACE::WriteOptions;

namespace {

// db_bench's --perf_level=1 on the calling thread (see kvb_thread_init in fastpath.go).
inline void perf_off() {
  static thread_local bool off = false;
  if (!off) {
    rocksdb_set_perf_level(1);
    off = true;
  }
}

inline DB* db_of(rocksdb_t* db) { return *reinterpret_cast<DB* const*>(db); }

char* error(const Status& s) { return strdup(s.ToString().c_str()); }

}  // namespace

extern "C" void kvb_clock_use_tsc(int on) { kvb_tsc = on; }

// kvb_get_n: n Gets (db_bench ReadRandom's step: a reused PinnableSlice, Reset before each Get).
// *found and *bytes count the keys found and their key+value bytes.
extern "C" char* kvb_get_n(rocksdb_t* db, const rocksdb_readoptions_t* ro, const char* keys, size_t klen,
                           int n, int64_t* lat, int* done, int* found, int64_t* bytes) {
  perf_off();
  DB* d = db_of(db);
  const ReadOptions& opts = *reinterpret_cast<const ReadOptions*>(ro);
  PinnableSlice v;
  int f = 0;
  int64_t b = 0;
  char* err = nullptr;
  int i = 0;
  kvb_run_clock clock;
  kvb_clock_start(&clock);
  for (; i < n; i++) {
    v.Reset();
    Status s = d->Get(opts, d->DefaultColumnFamily(), Slice(keys + i * klen, klen), &v);
    if (s.ok()) {
      f++;
      b += int64_t(klen + v.size());
    } else if (!s.IsNotFound()) {
      err = error(s);
      break;
    }
    lat[i] = kvb_clock_lap(&clock);
  }
  kvb_clock_finish(&clock, lat, i);
  *done = i;
  *found = f;
  *bytes = b;
  return err;
}

// kvb_seek_nexts_n: n db_bench SeekRandom steps: a new iterator, Seek, an exact-hit check, then
// up to nexts Next calls copying each value (up to 256 bytes) out; *bytes sums key+value sizes.
extern "C" char* kvb_seek_nexts_n(rocksdb_t* db, const rocksdb_readoptions_t* ro, const char* keys,
                                  size_t klen, int n, int nexts, int64_t* lat, int* done, int* found,
                                  int64_t* bytes) {
  perf_off();
  DB* d = db_of(db);
  const ReadOptions& opts = *reinterpret_cast<const ReadOptions*>(ro);
  char buf[256];
  int f = 0;
  int64_t b = 0;
  char* err = nullptr;
  int i = 0;
  kvb_run_clock clock;
  kvb_clock_start(&clock);
  for (; i < n; i++) {
    Slice key(keys + i * klen, klen);
    std::unique_ptr<Iterator> it(d->NewIterator(opts));
    it->Seek(key);
    if (it->Valid() && it->key().compare(key) == 0) f++;
    for (int j = 0; j < nexts && it->Valid(); j++) {
      Slice val = it->value();
      memcpy(buf, val.data(), std::min(val.size(), sizeof buf));
      __asm__ volatile("" : : "r"(buf) : "memory");  // the copy is the point; keep it
      b += int64_t(it->key().size() + val.size());
      it->Next();
    }
    if (!it->status().ok()) {
      err = error(it->status());
      break;
    }
    lat[i] = kvb_clock_lap(&clock);
  }
  kvb_clock_finish(&clock, lat, i);
  *done = i;
  *found = f;
  *bytes = b;
  return err;
}

// kvb_write_n: n db_bench DoWrite (or, with del, DoDelete) steps with batch_size=1: clear the
// thread's WriteBatch, add one entry, DB::Write it. Value i is vbase+voff[i], vlen[i] bytes.
extern "C" char* kvb_write_n(rocksdb_t* db, const rocksdb_writeoptions_t* wo, rocksdb_writebatch_t* wb,
                             const char* keys, size_t klen, int n, const char* vbase, const int64_t* voff,
                             const int64_t* vlen, int del, int64_t* lat, int* done) {
  perf_off();
  DB* d = db_of(db);
  const WriteOptions& opts = *reinterpret_cast<const WriteOptions*>(wo);
  WriteBatch& batch = *reinterpret_cast<WriteBatch*>(wb);
  char* err = nullptr;
  int i = 0;
  kvb_run_clock clock;
  kvb_clock_start(&clock);
  for (; i < n; i++) {
    batch.Clear();
    Slice key(keys + i * klen, klen);
    Status s = del ? batch.Delete(key) : batch.Put(key, Slice(vbase + voff[i], size_t(vlen[i])));
    if (s.ok()) s = d->Write(opts, &batch);
    if (!s.ok()) {
      err = error(s);
      break;
    }
    lat[i] = kvb_clock_lap(&clock);
  }
  kvb_clock_finish(&clock, lat, i);
  *done = i;
  return err;
}

// kvb_step_n: up to n db_bench ReadSequential (ReadReverse) steps: while the iterator is valid,
// add its key and value sizes to *bytes, then Next (Prev).
extern "C" char* kvb_step_n(rocksdb_iterator_t* iter, int reverse, int n, int64_t* lat, int* done,
                            int64_t* bytes) {
  perf_off();
  Iterator* it = *reinterpret_cast<Iterator* const*>(iter);
  int64_t b = 0;
  int i = 0;
  kvb_run_clock clock;
  kvb_clock_start(&clock);
  for (; i < n && it->Valid(); i++) {
    b += int64_t(it->key().size() + it->value().size());
    if (reverse) {
      it->Prev();
    } else {
      it->Next();
    }
    lat[i] = kvb_clock_lap(&clock);
  }
  kvb_clock_finish(&clock, lat, i);
  *done = i;
  *bytes = b;
  return it->status().ok() ? nullptr : error(it->status());
}
