// Package leveldb adapts C++ LevelDB (levigo over the system libleveldb) to the engine interface.
package leveldb

/*
#cgo LDFLAGS: -lleveldb
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
#include <leveldb/c.h>

// Get with the value freed in C: one crossing, no copy into Go memory (levigo's Get copies).
static char* kvb_get(leveldb_t* db, const leveldb_readoptions_t* ro, const char* k, size_t klen,
                     size_t* vlen, int* found) {
	char* err = NULL;
	char* v = leveldb_get(db, ro, k, klen, vlen, &err);
	*found = v != NULL;
	if (v != NULL) leveldb_free(v);
	return err;
}

static char* kvb_put(leveldb_t* db, const leveldb_writeoptions_t* wo, const char* k, size_t klen,
                     const char* v, size_t vlen) {
	char* err = NULL;
	leveldb_put(db, wo, k, klen, v, vlen, &err);
	return err;
}

// LevelDB's db_bench writes through a reused WriteBatch of one entry (a delete when v is NULL).
static char* kvb_write_one(leveldb_t* db, const leveldb_writeoptions_t* wo, leveldb_writebatch_t* b,
                           const char* k, size_t klen, const char* v, size_t vlen) {
	char* err = NULL;
	leveldb_writebatch_clear(b);
	if (v != NULL) {
		leveldb_writebatch_put(b, k, klen, v, vlen);
	} else {
		leveldb_writebatch_delete(b, k, klen);
	}
	leveldb_write(db, wo, b, &err);
	return err;
}

// seekrandom's operation in one crossing: a fresh iterator (as db_bench), Seek, exact-hit check,
// nexts Next calls copying values out (levigo's Key/Value would copy each into Go memory).
static char* kvb_seek_nexts(leveldb_t* db, const leveldb_readoptions_t* ro, const char* k, size_t klen,
                            int nexts, size_t* bytes, int* found) {
	char buf[256];
	size_t kl, vl;
	char* err = NULL;
	leveldb_iterator_t* it = leveldb_create_iterator(db, ro);
	*found = 0;
	leveldb_iter_seek(it, k, klen);
	if (leveldb_iter_valid(it)) {
		const char* kk = leveldb_iter_key(it, &kl);
		*found = kl == klen && memcmp(kk, k, klen) == 0;
	}
	for (int j = 0; j < nexts && leveldb_iter_valid(it); j++) {
		leveldb_iter_key(it, &kl);
		const char* v = leveldb_iter_value(it, &vl);
		memcpy(buf, v, vl < sizeof buf ? vl : sizeof buf);
		__asm__ volatile("" : : "r"(buf) : "memory");
		*bytes += kl + vl;
		leveldb_iter_next(it);
	}
	leveldb_iter_get_error(it, &err);
	leveldb_iter_destroy(it);
	return err;
}

// Runs of the operations above in one crossing (engine.Ops), each timed when it ends
// (runclock.h); lat[i] is from the end of operation i-1.
#include "runclock.h"

static void kvb_clock_use_tsc(int on) { kvb_tsc = on; }

static char* kvb_get_n(leveldb_t* db, const leveldb_readoptions_t* ro, const char* keys, size_t klen,
                       int n, int64_t* lat, int* done, int* found, int64_t* bytes) {
	char* err = NULL;
	int i = 0, f = 0;
	int64_t b = 0;
	kvb_run_clock clock;
	kvb_clock_start(&clock);
	for (; i < n; i++) {
		size_t vlen;
		int ok;
		err = kvb_get(db, ro, keys + i * klen, klen, &vlen, &ok);
		if (err != NULL) break;
		if (ok) {
			f++;
			b += klen + vlen;
		}
		lat[i] = kvb_clock_lap(&clock);
	}
	kvb_clock_finish(&clock, lat, i);
	*done = i;
	*found = f;
	*bytes = b;
	return err;
}

// kvb_step_n: up to n db_bench ReadSequential (ReadReverse) steps: while the iterator is valid,
// add its key and value sizes to *bytes, then Next (Prev).
static char* kvb_step_n(leveldb_iterator_t* it, int reverse, int n, int64_t* lat, int* done, int64_t* bytes) {
	char* err = NULL;
	int i = 0;
	int64_t b = 0;
	kvb_run_clock clock;
	kvb_clock_start(&clock);
	for (; i < n && leveldb_iter_valid(it); i++) {
		size_t klen, vlen;
		leveldb_iter_key(it, &klen);
		leveldb_iter_value(it, &vlen);
		b += klen + vlen;
		if (reverse) {
			leveldb_iter_prev(it);
		} else {
			leveldb_iter_next(it);
		}
		lat[i] = kvb_clock_lap(&clock);
	}
	kvb_clock_finish(&clock, lat, i);
	*done = i;
	*bytes = b;
	leveldb_iter_get_error(it, &err);
	return err;
}

static char* kvb_seek_nexts_n(leveldb_t* db, const leveldb_readoptions_t* ro, const char* keys, size_t klen,
                              int n, int nexts, int64_t* lat, int* done, int* found, int64_t* bytes) {
	char* err = NULL;
	int i = 0, f = 0;
	size_t b = 0;
	kvb_run_clock clock;
	kvb_clock_start(&clock);
	for (; i < n; i++) {
		int ok;
		err = kvb_seek_nexts(db, ro, keys + i * klen, klen, nexts, &b, &ok);
		if (err != NULL) break;
		f += ok;
		lat[i] = kvb_clock_lap(&clock);
	}
	kvb_clock_finish(&clock, lat, i);
	*done = i;
	*found = f;
	*bytes = (int64_t)b;
	return err;
}

// Value i is vbase+voff[i], vlen[i] bytes; del makes every operation a delete.
static char* kvb_write_n(leveldb_t* db, const leveldb_writeoptions_t* wo, leveldb_writebatch_t* wb,
                         const char* keys, size_t klen, int n, const char* vbase, const int64_t* voff,
                         const int64_t* vlen, int del, int64_t* lat, int* done) {
	char* err = NULL;
	int i = 0;
	kvb_run_clock clock;
	kvb_clock_start(&clock);
	for (; i < n; i++) {
		err = kvb_write_one(db, wo, wb, keys + i * klen, klen, del ? NULL : vbase + voff[i],
		                    del ? 0 : (size_t)vlen[i]);
		if (err != NULL) break;
		lat[i] = kvb_clock_lap(&clock);
	}
	kvb_clock_finish(&clock, lat, i);
	*done = i;
	return err;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"unsafe"

	"github.com/jmhodges/levigo"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/runner/engine"
)

func init() {
	engine.Register(api.EngineLevelDB, Open)
	engine.RegisterLibrary("leveldb", func() string {
		return fmt.Sprintf("%d.%d", int(C.leveldb_major_version()), int(C.leveldb_minor_version()))
	})
	if engine.TSCClock {
		C.kvb_clock_use_tsc(1)
	}
}

// DB is an open LevelDB database.
type DB struct {
	db     *levigo.DB
	opts   *levigo.Options
	ro     *levigo.ReadOptions
	wo     *levigo.WriteOptions
	swo    *levigo.WriteOptions
	cache  *levigo.Cache
	filter *levigo.FilterPolicy
	rawDB  *C.leveldb_t
	rawRO  *C.leveldb_readoptions_t
	rawWO  *C.leveldb_writeoptions_t
	// quiet watches "leveldb.stats" for CompactionIdle (protocol.go).
	quiet engine.Quiet
	// options is the options as Open set them (LevelDB writes no options file).
	options string
}

// Open opens (creating if allowed) a LevelDB database with the shared options.
func Open(cfg engine.Config) (engine.DB, error) {
	if err := engine.CheckExisting(cfg); err != nil {
		return nil, err
	}
	o := cfg.Options
	opts := levigo.NewOptions()
	opts.SetCreateIfMissing(!cfg.MustExist)
	d := &DB{opts: opts}
	d.cache = levigo.NewLRUCache(int(engine.Bytes(o.CacheSize, 8<<20)))
	opts.SetCache(d.cache)
	if bits := engine.Int(o.BloomBits, 0); bits > 0 {
		d.filter = levigo.NewBloomFilter(bits)
		opts.SetFilterPolicy(d.filter)
	}
	if o.WriteBufferSize != nil {
		opts.SetWriteBufferSize(int(o.WriteBufferSize.Value()))
	}
	if o.BlockSize != nil {
		opts.SetBlockSize(int(o.BlockSize.Value()))
	}
	if o.Compression != nil {
		if *o.Compression == api.CompressionSnappy {
			opts.SetCompression(levigo.SnappyCompression)
		} else {
			opts.SetCompression(levigo.NoCompression)
		}
	}
	if o.MaxOpenFiles != nil {
		n := int(*o.MaxOpenFiles)
		if n < 0 { // db_bench's -1 ("unlimited"); LevelDB wants a number
			n = 1 << 20
		}
		opts.SetMaxOpenFiles(n)
	}
	if o.TargetFileSizeBase != nil {
		// LevelDB's max_file_size plays the role of target_file_size_base; levigo has no setter.
		C.leveldb_options_set_max_file_size((*C.leveldb_options_t)(rawPtr(opts)), C.size_t(o.TargetFileSizeBase.Value()))
	}
	if err := os.MkdirAll(cfg.Path, 0o755); err != nil {
		return nil, err
	}
	db, err := levigo.Open(cfg.Path, opts)
	if err != nil {
		return nil, fmt.Errorf("leveldb open %s: %w", cfg.Path, err)
	}
	d.db = db
	d.options = renderOptions(o)
	d.ro = levigo.NewReadOptions()
	d.wo = levigo.NewWriteOptions()
	d.wo.SetSync(engine.Bool(o.Sync))
	d.swo = levigo.NewWriteOptions()
	d.swo.SetSync(true)
	if fastPathOK {
		d.rawDB = (*C.leveldb_t)(rawPtr(db))
		d.rawRO = (*C.leveldb_readoptions_t)(rawPtr(d.ro))
		d.rawWO = (*C.leveldb_writeoptions_t)(rawPtr(d.wo))
	}
	return d, nil
}

// levigo exports its C handles as the first struct field; the types are per-package cgo types,
// so we reinterpret the pointer after checking the layout at init.
var fastPathOK = firstFieldPtr(levigo.DB{}) && firstFieldPtr(levigo.ReadOptions{}) && firstFieldPtr(levigo.Options{}) &&
	firstFieldPtr(levigo.WriteOptions{}) && firstFieldPtr(levigo.WriteBatch{})

// iteratorLayoutOK: the same check for levigo.Iterator, whose C handle StepOps uses.
var iteratorLayoutOK = firstFieldPtr(levigo.Iterator{})

func firstFieldPtr(v any) bool {
	t := reflect.TypeOf(v)
	return t.NumField() > 0 && t.Field(0).Offset == 0 && t.Field(0).Type.Kind() == reflect.Pointer
}

func rawPtr[T any](p *T) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(p)) }

// Version reports the loaded library's version.
func (d *DB) Version() string {
	return fmt.Sprintf("leveldb %d.%d", int(C.leveldb_major_version()), int(C.leveldb_minor_version()))
}

func (d *DB) Get(key []byte) (bool, int, error) {
	if d.rawDB == nil {
		v, err := d.db.Get(d.ro, key)
		return v != nil, len(v), err
	}
	var vlen C.size_t
	var found C.int
	if err := cerror(C.kvb_get(d.rawDB, d.rawRO, cbytes(key), C.size_t(len(key)), &vlen, &found)); err != nil {
		return false, 0, err
	}
	return found != 0, int(vlen), nil
}

func cbytes(b []byte) *C.char { return (*C.char)(unsafe.Pointer(unsafe.SliceData(b))) }

// cerror turns a LevelDB error string into an error and frees it.
func cerror(e *C.char) error {
	if e == nil {
		return nil
	}
	msg := C.GoString(e)
	C.leveldb_free(unsafe.Pointer(e))
	return errors.New(msg)
}

// SeekNexts implements engine.SeekNexter in one crossing.
func (d *DB) SeekNexts(key []byte, nexts int) (bool, int, error) {
	if d.rawDB == nil {
		it := d.NewIterator()
		defer it.Close()
		found, n := engine.GenericSeekNexts(it, key, nexts)
		return found, n, it.Err()
	}
	var n C.size_t
	var found C.int
	err := cerror(C.kvb_seek_nexts(d.rawDB, d.rawRO, cbytes(key), C.size_t(len(key)), C.int(nexts), &n, &found))
	return found != 0, int(n), err
}

// writer is db_bench's write path: a reused WriteBatch of one entry, one crossing per write.
type writer struct {
	d *DB
	b *levigo.WriteBatch
}

// NewWriter implements engine.WriterMaker.
func (d *DB) NewWriter() engine.Writer { return &writer{d: d, b: levigo.NewWriteBatch()} }

func (w *writer) Put(key, value []byte) error {
	if w.d.rawDB == nil {
		w.b.Clear()
		w.b.Put(key, value)
		return w.d.db.Write(w.d.wo, w.b)
	}
	v := cbytes(value)
	if v == nil {
		v = (*C.char)(unsafe.Pointer(&zero)) // an empty value stays a Put
	}
	return w.write(key, v, len(value))
}

func (w *writer) Delete(key []byte) error {
	if w.d.rawDB == nil {
		w.b.Clear()
		w.b.Delete(key)
		return w.d.db.Write(w.d.wo, w.b)
	}
	return w.write(key, nil, 0)
}

func (w *writer) write(key []byte, v *C.char, vlen int) error {
	return cerror(C.kvb_write_one(w.d.rawDB, w.d.rawWO, (*C.leveldb_writebatch_t)(rawPtr(w.b)),
		cbytes(key), C.size_t(len(key)), v, C.size_t(vlen)))
}

func (w *writer) Close() { w.b.Close() }

// PutOps implements engine.OpsWriter: a run of single-entry batch writes in one crossing.
func (w *writer) PutOps(o *engine.Ops) error {
	if w.d.rawDB == nil {
		return engine.PutOps(struct{ engine.Writer }{w}, o)
	}
	base, off, n := o.ValueOffsets()
	return w.writeOps(o, (*C.char)(base), (*C.int64_t)(unsafe.Pointer(off)), (*C.int64_t)(unsafe.Pointer(n)), 0)
}

// DeleteOps implements engine.OpsWriter.
func (w *writer) DeleteOps(o *engine.Ops) error {
	if w.d.rawDB == nil {
		return engine.DeleteOps(struct{ engine.Writer }{w}, o)
	}
	return w.writeOps(o, (*C.char)(unsafe.Pointer(&zero)), nil, nil, 1)
}

func (w *writer) writeOps(o *engine.Ops, base *C.char, off, n *C.int64_t, del C.int) error {
	var done C.int
	err := C.kvb_write_n(w.d.rawDB, w.d.rawWO, (*C.leveldb_writebatch_t)(rawPtr(w.b)), cbytes(o.Keys),
		C.size_t(o.KeyLen), C.int(o.N), base, off, n, del, (*C.int64_t)(unsafe.Pointer(&o.Lat[0])), &done)
	o.Done = int(done)
	return cerror(err)
}

// GetOps implements engine.OpsReader: a run of Gets in one crossing.
func (d *DB) GetOps(o *engine.Ops) error {
	if d.rawDB == nil {
		return engine.GetEach(d, o)
	}
	var done, found C.int
	var bytes C.int64_t
	err := C.kvb_get_n(d.rawDB, d.rawRO, cbytes(o.Keys), C.size_t(o.KeyLen), C.int(o.N),
		(*C.int64_t)(unsafe.Pointer(&o.Lat[0])), &done, &found, &bytes)
	o.Done, o.Found, o.Bytes = int(done), int(found), int64(bytes)
	return cerror(err)
}

// SeekNextsOps implements engine.OpsReader: a run of seekrandom operations in one crossing.
func (d *DB) SeekNextsOps(o *engine.Ops, nexts int) error {
	if d.rawDB == nil {
		return engine.SeekNextsEach(d, o, nexts)
	}
	var done, found C.int
	var bytes C.int64_t
	err := C.kvb_seek_nexts_n(d.rawDB, d.rawRO, cbytes(o.Keys), C.size_t(o.KeyLen), C.int(o.N), C.int(nexts),
		(*C.int64_t)(unsafe.Pointer(&o.Lat[0])), &done, &found, &bytes)
	o.Done, o.Found, o.Bytes = int(done), int(found), int64(bytes)
	return cerror(err)
}

var zero byte

func (d *DB) Put(key, value []byte) error {
	if d.rawDB == nil {
		return d.db.Put(d.wo, key, value)
	}
	return cerror(C.kvb_put(d.rawDB, d.rawWO, cbytes(key), C.size_t(len(key)), cbytes(value), C.size_t(len(value))))
}
func (d *DB) Delete(key []byte) error         { return d.db.Delete(d.wo, key) }
func (d *DB) PutSync(key, value []byte) error { return d.db.Put(d.swo, key, value) }

// Flush: LevelDB has no explicit flush; compacting the empty range nil..nil would rewrite
// everything, so we compact only the memtable by compacting an empty key range.
func (d *DB) Flush() error {
	d.db.CompactRange(levigo.Range{Start: []byte{0}, Limit: []byte{0}})
	return nil
}

func (d *DB) Close() error {
	d.db.Close()
	d.ro.Close()
	d.wo.Close()
	d.swo.Close()
	d.opts.Close()
	d.cache.Close()
	if d.filter != nil {
		d.filter.Close()
	}
	return nil
}

type batch struct {
	d *DB
	b *levigo.WriteBatch
	n int
}

func (d *DB) NewBatch() engine.Batch { return &batch{d: d, b: levigo.NewWriteBatch()} }
func (b *batch) Put(key, value []byte) {
	b.b.Put(key, value)
	b.n++
}
func (b *batch) Delete(key []byte) {
	b.b.Delete(key)
	b.n++
}
func (b *batch) Count() int { return b.n }
func (b *batch) Close()     { b.b.Close() }
func (b *batch) Commit() error {
	err := b.d.db.Write(b.d.wo, b.b)
	b.b.Clear()
	b.n = 0
	return err
}

type iterator struct {
	it  *levigo.Iterator
	raw bool // StepOps may use its C handle
}

func (d *DB) NewIterator() engine.Iterator {
	return &iterator{it: d.db.NewIterator(d.ro), raw: d.rawDB != nil && iteratorLayoutOK}
}

// StepOps implements engine.OpsStepper: a run of readseq steps in one crossing.
func (i *iterator) StepOps(o *engine.Ops, reverse bool) error {
	if !i.raw {
		return engine.StepEach(i, o, reverse)
	}
	var done C.int
	var bytes C.int64_t
	rev := C.int(0)
	if reverse {
		rev = 1
	}
	err := C.kvb_step_n((*C.leveldb_iterator_t)(rawPtr(i.it)), rev, C.int(o.N),
		(*C.int64_t)(unsafe.Pointer(&o.Lat[0])), &done, &bytes)
	o.Done, o.Found, o.Bytes = int(done), 0, int64(bytes)
	return cerror(err)
}
func (i *iterator) SeekToFirst()    { i.it.SeekToFirst() }
func (i *iterator) SeekToLast()     { i.it.SeekToLast() }
func (i *iterator) Seek(key []byte) { i.it.Seek(key) }
func (i *iterator) Valid() bool     { return i.it.Valid() }
func (i *iterator) Next()           { i.it.Next() }
func (i *iterator) Prev()           { i.it.Prev() }
func (i *iterator) Key() []byte     { return i.it.Key() }
func (i *iterator) ValueSize() int  { return len(i.it.Value()) }
func (i *iterator) Err() error      { return i.it.GetError() }
func (i *iterator) Close()          { i.it.Close() }
