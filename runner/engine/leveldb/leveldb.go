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

func init() { engine.Register(api.EngineLevelDB, Open) }

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

type iterator struct{ it *levigo.Iterator }

func (d *DB) NewIterator() engine.Iterator { return &iterator{it: d.db.NewIterator(d.ro)} }
func (i *iterator) SeekToFirst()           { i.it.SeekToFirst() }
func (i *iterator) SeekToLast()            { i.it.SeekToLast() }
func (i *iterator) Seek(key []byte)        { i.it.Seek(key) }
func (i *iterator) Valid() bool            { return i.it.Valid() }
func (i *iterator) Next()                  { i.it.Next() }
func (i *iterator) Prev()                  { i.it.Prev() }
func (i *iterator) Key() []byte            { return i.it.Key() }
func (i *iterator) ValueSize() int         { return len(i.it.Value()) }
func (i *iterator) Err() error             { return i.it.GetError() }
func (i *iterator) Close()                 { i.it.Close() }
