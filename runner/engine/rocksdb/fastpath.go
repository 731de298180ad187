package rocksdb

/*
#cgo nocallback kvb_perf_disable
#cgo noescape kvb_get
#cgo nocallback kvb_get
#cgo noescape kvb_put
#cgo nocallback kvb_put
#cgo noescape kvb_write_one
#cgo nocallback kvb_write_one
#cgo noescape kvb_seek_nexts
#cgo nocallback kvb_seek_nexts
#cgo noescape kvb_get_n
#cgo nocallback kvb_get_n
#cgo noescape kvb_seek_nexts_n
#cgo nocallback kvb_seek_nexts_n
#cgo noescape kvb_write_n
#cgo nocallback kvb_write_n
#cgo noescape kvb_step_n
#cgo nocallback kvb_step_n
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <rocksdb/c.h>

// db_bench runs its threads with --perf_level=1 (kDisable). RocksDB's thread-local default is
// kEnableCount, which bumps perf_context counters (a TLS lookup each) in every key comparison,
// block read and write step: +15-20% CPU per operation in profiles. perf_level is per OS thread
// and goroutines move between threads, so every entry point below makes sure the thread it runs
// on has it off (one thread-local test).
static __thread int kvb_perf_off;
static inline void kvb_thread_init(void) {
	if (!kvb_perf_off) {
		rocksdb_set_perf_level(1);
		kvb_perf_off = 1;
	}
}

// kvb_perf_disable is kvb_thread_init for the paths that go through grocksdb (batch commits,
// iterators): called when they start, it covers the thread they then run on.
static void kvb_perf_disable(void) { kvb_thread_init(); }

// Every hot-path call below is one cgo crossing that allocates nothing in Go: errors come back as
// the return value (a C string, or NULL), so no Go pointer to an error variable escapes.

// Get with the value pinned rather than copied (what db_bench's Get does); grocksdb's Get costs
// two crossings and a malloc+memcpy of the value. Defined in fastget.cc. *found is 1 if the key
// exists.
char* kvb_get(rocksdb_t* db, const rocksdb_readoptions_t* ro, const char* k, size_t klen,
              size_t* vlen, int* found);

// Runs of operations, one crossing each (engine.Ops); defined in ops.cc.
void kvb_clock_use_tsc(int on);
char* kvb_get_n(rocksdb_t* db, const rocksdb_readoptions_t* ro, const char* keys, size_t klen,
                int n, int64_t* lat, int* done, int* found, int64_t* bytes);
char* kvb_seek_nexts_n(rocksdb_t* db, const rocksdb_readoptions_t* ro, const char* keys, size_t klen,
                       int n, int nexts, int64_t* lat, int* done, int* found, int64_t* bytes);
char* kvb_write_n(rocksdb_t* db, const rocksdb_writeoptions_t* wo, rocksdb_writebatch_t* wb,
                  const char* keys, size_t klen, int n, const char* vbase, const int64_t* voff,
                  const int64_t* vlen, int del, int64_t* lat, int* done);
char* kvb_step_n(rocksdb_iterator_t* it, int reverse, int n, int64_t* lat, int* done, int64_t* bytes);

// DB::Put (db_bench's readwhilewriting writer, readrandomwriterandom, updaterandom).
static char* kvb_put(rocksdb_t* db, const rocksdb_writeoptions_t* wo, const char* k, size_t klen,
                     const char* v, size_t vlen) {
	kvb_thread_init();
	char* err = NULL;
	rocksdb_put(db, wo, k, klen, v, vlen, &err);
	return err;
}

// db_bench's DoWrite/DoDelete step with batch_size=1: clear the thread's WriteBatch, add one
// entry (a delete when v is NULL), DB::Write it.
static char* kvb_write_one(rocksdb_t* db, const rocksdb_writeoptions_t* wo, rocksdb_writebatch_t* b,
                           const char* k, size_t klen, const char* v, size_t vlen) {
	kvb_thread_init();
	char* err = NULL;
	rocksdb_writebatch_clear(b);
	if (v != NULL) {
		rocksdb_writebatch_put(b, k, klen, v, vlen);
	} else {
		rocksdb_writebatch_delete(b, k, klen);
	}
	rocksdb_write(db, wo, b, &err);
	return err;
}

// db_bench's SeekRandom operation: a new iterator, Seek, an exact-hit check, then seek_nexts
// Next calls, copying each value (up to 256 bytes) out and summing key+value bytes.
static char* kvb_seek_nexts(rocksdb_t* db, const rocksdb_readoptions_t* ro, const char* k, size_t klen,
                            int nexts, size_t* bytes, int* found) {
	kvb_thread_init();
	char buf[256];
	size_t kl, vl;
	char* err = NULL;
	rocksdb_iterator_t* it = rocksdb_create_iterator(db, ro);
	*found = 0;
	rocksdb_iter_seek(it, k, klen);
	if (rocksdb_iter_valid(it)) {
		const char* kk = rocksdb_iter_key(it, &kl);
		*found = kl == klen && memcmp(kk, k, klen) == 0;
	}
	for (int j = 0; j < nexts && rocksdb_iter_valid(it); j++) {
		rocksdb_iter_key(it, &kl);
		const char* v = rocksdb_iter_value(it, &vl);
		memcpy(buf, v, vl < sizeof buf ? vl : sizeof buf);
		__asm__ volatile("" : : "r"(buf) : "memory"); // the copy is the point; keep it
		*bytes += kl + vl;
		rocksdb_iter_next(it);
	}
	rocksdb_iter_get_error(it, &err);
	rocksdb_iter_destroy(it);
	return err;
}
*/
import "C"

import (
	"errors"
	"reflect"
	"unsafe"

	"github.com/linxGnu/grocksdb"

	"github.com/kvbench/kvbench-operator/runner/engine"
)

// grocksdb v1.7.15 keeps each handle's C pointer in an unexported first field named c and offers
// no accessor. The hot paths need the raw pointers to cut cgo crossings, so we read that field,
// after checking at init that the layout is the one we expect; otherwise we use grocksdb's calls.
var fastPathOK = firstFieldIsC(grocksdb.DB{}) && firstFieldIsC(grocksdb.ReadOptions{}) &&
	firstFieldIsC(grocksdb.WriteOptions{}) && firstFieldIsC(grocksdb.WriteBatch{}) && firstFieldIsC(grocksdb.Iterator{})

// optionsLayoutOK: the same check for the option handles dbbench_defaults.cc writes through.
var optionsLayoutOK = firstFieldIsC(grocksdb.Options{}) && firstFieldIsC(grocksdb.BlockBasedTableOptions{})

func init() {
	if engine.TSCClock {
		C.kvb_clock_use_tsc(1)
	}
}

func firstFieldIsC(v any) bool {
	t := reflect.TypeOf(v)
	return t.NumField() > 0 && t.Field(0).Name == "c" && t.Field(0).Type.Kind() == reflect.Pointer &&
		t.Field(0).Offset == 0
}

func rawPtr[T any](p *T) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(p)) }

// raw holds the C handles the fast paths use.
type raw struct {
	db *C.rocksdb_t
	ro *C.rocksdb_readoptions_t
	wo *C.rocksdb_writeoptions_t
}

func newRaw(db *grocksdb.DB, ro *grocksdb.ReadOptions, wo *grocksdb.WriteOptions) *raw {
	if !fastPathOK {
		return nil
	}
	return &raw{db: (*C.rocksdb_t)(rawPtr(db)), ro: (*C.rocksdb_readoptions_t)(rawPtr(ro)),
		wo: (*C.rocksdb_writeoptions_t)(rawPtr(wo))}
}

func cbytes(b []byte) *C.char { return (*C.char)(unsafe.Pointer(unsafe.SliceData(b))) }

// cerror turns a RocksDB error string into an error and frees it.
func cerror(e *C.char) error {
	if e == nil {
		return nil
	}
	msg := C.GoString(e)
	C.free(unsafe.Pointer(e))
	return errors.New(msg)
}

// perfDisable turns RocksDB's perf counters off on the calling thread (see kvb_thread_init).
func perfDisable() { C.kvb_perf_disable() }

func (r *raw) get(key []byte) (bool, int, error) {
	var vlen C.size_t
	var found C.int
	if err := cerror(C.kvb_get(r.db, r.ro, cbytes(key), C.size_t(len(key)), &vlen, &found)); err != nil {
		return false, 0, err
	}
	return found != 0, int(vlen), nil
}

func (r *raw) put(key, value []byte) error {
	return cerror(C.kvb_put(r.db, r.wo, cbytes(key), C.size_t(len(key)), cbytes(value), C.size_t(len(value))))
}

// writeOne commits a batch of one Put, or of one Delete when value is nil.
func (r *raw) writeOne(b *C.rocksdb_writebatch_t, key, value []byte) error {
	v := cbytes(value)
	if value != nil && v == nil {
		v = (*C.char)(unsafe.Pointer(&zero)) // an empty, non-nil value stays a Put
	}
	return cerror(C.kvb_write_one(r.db, r.wo, b, cbytes(key), C.size_t(len(key)), v, C.size_t(len(value))))
}

var zero byte

func (r *raw) seekNexts(key []byte, nexts int) (bool, int, error) {
	var n C.size_t
	var found C.int
	err := cerror(C.kvb_seek_nexts(r.db, r.ro, cbytes(key), C.size_t(len(key)), C.int(nexts), &n, &found))
	return found != 0, int(n), err
}

// getOps runs o as Gets in one crossing.
// StepOps implements engine.OpsStepper: a run of readseq steps in one crossing.
func (i *iterator) StepOps(o *engine.Ops, reverse bool) error {
	if !i.raw {
		return engine.StepEach(i, o, reverse)
	}
	it := (*C.rocksdb_iterator_t)(rawPtr(i.it))
	var done C.int
	var bytes C.int64_t
	rev := C.int(0)
	if reverse {
		rev = 1
	}
	err := C.kvb_step_n(it, rev, C.int(o.N), (*C.int64_t)(unsafe.Pointer(&o.Lat[0])), &done, &bytes)
	o.Done, o.Found, o.Bytes = int(done), 0, int64(bytes)
	return cerror(err)
}

func (r *raw) getOps(o *engine.Ops) error {
	var done, found C.int
	var bytes C.int64_t
	err := C.kvb_get_n(r.db, r.ro, cbytes(o.Keys), C.size_t(o.KeyLen), C.int(o.N),
		(*C.int64_t)(unsafe.Pointer(&o.Lat[0])), &done, &found, &bytes)
	o.Done, o.Found, o.Bytes = int(done), int(found), int64(bytes)
	return cerror(err)
}

// seekNextsOps runs o as seekrandom operations in one crossing.
func (r *raw) seekNextsOps(o *engine.Ops, nexts int) error {
	var done, found C.int
	var bytes C.int64_t
	err := C.kvb_seek_nexts_n(r.db, r.ro, cbytes(o.Keys), C.size_t(o.KeyLen), C.int(o.N), C.int(nexts),
		(*C.int64_t)(unsafe.Pointer(&o.Lat[0])), &done, &found, &bytes)
	o.Done, o.Found, o.Bytes = int(done), int(found), int64(bytes)
	return cerror(err)
}

// writeOps runs o as single-entry batch puts (deletes if del) in one crossing.
func (r *raw) writeOps(b *C.rocksdb_writebatch_t, o *engine.Ops, del bool) error {
	var done C.int
	var off, n *C.int64_t // unread for deletes
	d := C.int(1)
	base := unsafe.Pointer(&zero)
	if !del {
		vb, vo, vl := o.ValueOffsets()
		base, off, n, d = vb, (*C.int64_t)(unsafe.Pointer(vo)), (*C.int64_t)(unsafe.Pointer(vl)), 0
	}
	err := C.kvb_write_n(r.db, r.wo, b, cbytes(o.Keys), C.size_t(o.KeyLen), C.int(o.N), (*C.char)(base),
		off, n, d, (*C.int64_t)(unsafe.Pointer(&o.Lat[0])), &done)
	o.Done = int(done)
	return cerror(err)
}
