// Package leveldb adapts C++ LevelDB (levigo over the system libleveldb) to the engine interface.
package leveldb

/*
#cgo LDFLAGS: -lleveldb
#include <stdlib.h>
#include <string.h>
#include <leveldb/c.h>

// Get with the value freed in C: one crossing, no copy into Go memory (levigo's Get copies).
static int kvb_get(leveldb_t* db, const leveldb_readoptions_t* ro, const char* k, size_t klen,
                   size_t* vlen, char** err) {
	char* v = leveldb_get(db, ro, k, klen, vlen, err);
	if (v == NULL) return 0;
	leveldb_free(v);
	return 1;
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
	}
	return d, nil
}

// levigo exports its C handles as the first struct field; the types are per-package cgo types,
// so we reinterpret the pointer after checking the layout at init.
var fastPathOK = firstFieldPtr(levigo.DB{}) && firstFieldPtr(levigo.ReadOptions{}) && firstFieldPtr(levigo.Options{})

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
	var cerr *C.char
	found := C.kvb_get(d.rawDB, d.rawRO, (*C.char)(unsafe.Pointer(unsafe.SliceData(key))), C.size_t(len(key)), &vlen, &cerr)
	if cerr != nil {
		msg := C.GoString(cerr)
		C.leveldb_free(unsafe.Pointer(cerr))
		return false, 0, errors.New(msg)
	}
	return found != 0, int(vlen), nil
}

func (d *DB) Put(key, value []byte) error     { return d.db.Put(d.wo, key, value) }
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
