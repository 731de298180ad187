// Package rocksdb adapts RocksDB to the engine interface: grocksdb on the librocksdb the build links
// (the release build of hack/engine-build.sh in the images and `make runner`, Debian's in a plain go build).
package rocksdb

/*
#cgo LDFLAGS: -lrocksdb -lstdc++
#include <rocksdb/c.h>
const char* kvb_rocksdb_version();
void kvb_dbbench_options(rocksdb_options_t* o);
void kvb_dbbench_table_options(rocksdb_block_based_table_options_t* t);
void kvb_set_bloom(rocksdb_block_based_table_options_t* t, double bits);
char* kvb_load_options_file(rocksdb_options_t* o, const char* path);
int kvb_file_table_override(rocksdb_options_t* o, long long cache, int shard_bits, double bloom, long long block_size);
const char* kvb_table_factory_name(rocksdb_options_t* o);
*/
import "C"

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/linxGnu/grocksdb"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/runner/engine"
)

func init() {
	engine.Register(api.EngineRocksDB, Open)
	engine.RegisterLibrary("rocksdb", func() string { return C.GoString(C.kvb_rocksdb_version()) })
}

// DB is an open RocksDB database.
type DB struct {
	db   *grocksdb.DB
	opts *grocksdb.Options
	ro   *grocksdb.ReadOptions
	wo   *grocksdb.WriteOptions
	swo  *grocksdb.WriteOptions
	bbto *grocksdb.BlockBasedTableOptions
	path string
	// r holds the raw C handles for the one-crossing fast paths (nil if unavailable).
	r *raw
	// ownsExtractor: the options hold a prefix extractor; grocksdb v1.7.15's Options.Destroy
	// frees it a second time after the DB did, so such options are not destroyed (a tiny leak).
	ownsExtractor bool
	plainTable    bool
	// reps are what the typed options and the runner set over the user's OPTIONS file (nil without one).
	reps []engine.Replacement
}

// Open opens (creating if allowed) a RocksDB database with the shared options.
func Open(cfg engine.Config) (engine.DB, error) {
	if err := engine.CheckExisting(cfg); err != nil {
		return nil, err
	}
	o := cfg.Options
	opts := grocksdb.NewDefaultOptions()
	fromFile := cfg.OptionsFile != ""
	if fromFile {
		// The user's OPTIONS file is the base (instead of db_bench's defaults); what was asked for
		// is set over it below.
		if err := loadOptionsFile(opts, cfg); err != nil {
			opts.Destroy()
			return nil, err
		}
		opts.SetErrorIfExists(false)
	} else if optionsLayoutOK {
		// db_bench's flag defaults first (see dbbench_defaults.cc), then what was asked for.
		C.kvb_dbbench_options((*C.rocksdb_options_t)(rawPtr(opts)))
	}
	opts.SetCreateIfMissing(!cfg.MustExist)
	if o.OptimizeForPointLookup != nil {
		opts.OptimizeForPointLookup(uint64(o.OptimizeForPointLookup.Value() >> 20))
	}
	if o.IncreaseParallelism != nil {
		opts.IncreaseParallelism(int(*o.IncreaseParallelism))
	}
	var bbto *grocksdb.BlockBasedTableOptions
	if engine.Bool(o.PlainTable) {
		if cfg.PrefixSize <= 0 {
			return nil, fmt.Errorf("plainTable needs a prefix size (--prefix_size) for its prefix extractor")
		}
		bloom := engine.Int(o.BloomBits, 10)
		// Seed 000: PlainTable over mmap with a prefix-hash memtable and fixed prefix extractor.
		opts.SetPlainTableFactory(uint32(cfg.KeySize), bloom, 0.75, 16)
		opts.SetPrefixExtractor(grocksdb.NewFixedPrefixTransform(cfg.PrefixSize))
		opts.SetHashSkipListRep(uint(hashBuckets(engine.Bytes(o.WriteBufferSize, 64<<20))), 4, 4)
		// The prefix-hash memtable does not support concurrent inserts (db_bench turns them off too).
		opts.SetAllowConcurrentMemtableWrites(false)
		opts.SetAllowMmapReads(true)
	} else if fromFile {
		if err := fileTableOverride(opts, o); err != nil {
			opts.Destroy()
			return nil, err
		}
	} else if o.OptimizeForPointLookup == nil || o.CacheSize != nil || o.BloomBits != nil || o.BlockSize != nil {
		bbto = grocksdb.NewDefaultBlockBasedTableOptions()
		if optionsLayoutOK {
			C.kvb_dbbench_table_options((*C.rocksdb_block_based_table_options_t)(rawPtr(bbto)))
		}
		// db_bench's default block cache is 8 MiB; keep that when unset so results compare.
		bbto.SetBlockCache(blockCache(uint64(engine.Bytes(o.CacheSize, 8<<20)), o.CacheNumShardBits))
		if bits := engine.Int(o.BloomBits, 0); bits > 0 {
			if optionsLayoutOK {
				C.kvb_set_bloom((*C.rocksdb_block_based_table_options_t)(rawPtr(bbto)), C.double(bits))
			} else {
				bbto.SetFilterPolicy(grocksdb.NewBloomFilter(float64(bits)))
			}
		}
		if o.BlockSize != nil {
			bbto.SetBlockSize(int(o.BlockSize.Value()))
		}
		if o.OptimizeForPointLookup != nil {
			bbto.SetIndexType(grocksdb.KHashSearchIndexType)
		}
		opts.SetBlockBasedTableFactory(bbto)
	}
	if o.WriteBufferSize != nil {
		opts.SetWriteBufferSize(uint64(o.WriteBufferSize.Value()))
	}
	if o.MaxWriteBufferNumber != nil {
		opts.SetMaxWriteBufferNumber(int(*o.MaxWriteBufferNumber))
	}
	if o.Compression != nil {
		opts.SetCompression(compression(*o.Compression))
	}
	if o.MaxOpenFiles != nil {
		opts.SetMaxOpenFiles(int(*o.MaxOpenFiles))
	}
	if o.Level0FileNumCompactionTrigger != nil {
		opts.SetLevel0FileNumCompactionTrigger(int(*o.Level0FileNumCompactionTrigger))
	}
	if o.Level0SlowdownWritesTrigger != nil {
		opts.SetLevel0SlowdownWritesTrigger(int(*o.Level0SlowdownWritesTrigger))
	}
	if o.Level0StopWritesTrigger != nil {
		opts.SetLevel0StopWritesTrigger(int(*o.Level0StopWritesTrigger))
	}
	if o.TargetFileSizeBase != nil {
		opts.SetTargetFileSizeBase(uint64(o.TargetFileSizeBase.Value()))
	}
	if o.MaxBytesForLevelBase != nil {
		opts.SetMaxBytesForLevelBase(uint64(o.MaxBytesForLevelBase.Value()))
	}
	if o.MaxBackgroundJobs != nil {
		opts.SetMaxBackgroundJobs(int(*o.MaxBackgroundJobs))
	}
	if engine.Bool(o.MmapRead) {
		opts.SetAllowMmapReads(true)
	}
	applyDBBenchOptions(opts, o, cfg.Path, fromFile)
	if cfg.DirectIO || fromFile {
		// spec.cacheMode decides direct I/O, also over an OPTIONS file.
		opts.SetUseDirectReads(cfg.DirectIO)
		opts.SetUseDirectIOForFlushAndCompaction(cfg.DirectIO)
	}
	if err := os.MkdirAll(cfg.Path, 0o755); err != nil {
		return nil, err
	}
	db, err := grocksdb.OpenDb(opts, cfg.Path)
	if err != nil {
		return nil, fmt.Errorf("rocksdb open %s: %w", cfg.Path, err)
	}
	wo := grocksdb.NewDefaultWriteOptions()
	wo.DisableWAL(engine.Bool(o.DisableWAL))
	wo.SetSync(engine.Bool(o.Sync))
	swo := grocksdb.NewDefaultWriteOptions()
	swo.SetSync(true)
	ro := grocksdb.NewDefaultReadOptions()
	return &DB{db: db, opts: opts, ro: ro, wo: wo, swo: swo, bbto: bbto, path: cfg.Path,
		ownsExtractor: engine.Bool(o.PlainTable), plainTable: engine.Bool(o.PlainTable) || filePlainTable(opts), r: newRaw(db, ro, wo),
		reps: fileReplacements(cfg)}, nil
}

// applyDBBenchOptions sets the db_bench flags that map one to one onto RocksDB options.
func applyDBBenchOptions(opts *grocksdb.Options, o api.EngineOptions, path string, fromFile bool) {
	if engine.Bool(o.Statistics) {
		// Only when asked: the Statistics object costs throughput (db_bench --statistics).
		opts.EnableStatistics()
	}
	numLevels := 7 // RocksDB's and db_bench's default
	if fromFile {
		numLevels = opts.GetNumLevels()
	}
	if o.NumLevels != nil {
		numLevels = int(*o.NumLevels)
		opts.SetNumLevels(numLevels)
	}
	if o.MaxBackgroundCompactions != nil {
		opts.SetMaxBackgroundCompactions(int(*o.MaxBackgroundCompactions))
	}
	if o.MaxBackgroundFlushes != nil {
		opts.SetMaxBackgroundFlushes(int(*o.MaxBackgroundFlushes))
	}
	if o.MinLevelToCompress != nil {
		// db_bench: levels below the minimum uncompressed, the rest with --compression_type.
		c := grocksdb.SnappyCompression
		if fromFile {
			c = opts.GetCompression()
		}
		if o.Compression != nil {
			c = compression(*o.Compression)
		}
		per := make([]grocksdb.CompressionType, numLevels)
		for i := range per {
			if i >= int(*o.MinLevelToCompress) {
				per[i] = c
			}
		}
		opts.SetCompressionPerLevel(per)
	}
	if o.BloomLocality != nil {
		opts.SetBloomLocality(uint32(*o.BloomLocality))
	}
	if engine.Bool(o.MmapWrite) {
		opts.SetAllowMmapWrites(true)
	}
	if o.WALDir != nil {
		opts.SetWalDir(filepath.Join(path, *o.WALDir))
	}
}

// blockCache is db_bench's LRU block cache, with --cache_numshardbits when given.
func blockCache(capacity uint64, shardBits *int32) *grocksdb.Cache {
	if shardBits == nil {
		return grocksdb.NewLRUCache(capacity)
	}
	lo := grocksdb.NewLRUCacheOptions()
	defer lo.Destroy()
	lo.SetCapacity(uint(capacity))
	lo.SetNumShardBits(int(*shardBits))
	return grocksdb.NewLRUCacheWithOptions(lo)
}

func compression(c api.Compression) grocksdb.CompressionType {
	switch c {
	case api.CompressionSnappy:
		return grocksdb.SnappyCompression
	case api.CompressionLZ4:
		return grocksdb.LZ4Compression
	case api.CompressionZstd:
		return grocksdb.ZSTDCompression
	}
	return grocksdb.NoCompression
}

// Version reports the loaded library's version.
func (d *DB) Version() string { return "rocksdb " + C.GoString(C.kvb_rocksdb_version()) }

func (d *DB) Get(key []byte) (bool, int, error) {
	if d.r != nil {
		return d.r.get(key)
	}
	s, err := d.db.Get(d.ro, key)
	if err != nil {
		return false, 0, err
	}
	defer s.Free()
	return s.Exists(), s.Size(), nil
}

func (d *DB) Put(key, value []byte) error {
	if d.r != nil {
		return d.r.put(key, value)
	}
	return d.db.Put(d.wo, key, value)
}
func (d *DB) Delete(key []byte) error         { return d.db.Delete(d.wo, key) }
func (d *DB) PutSync(key, value []byte) error { return d.db.Put(d.swo, key, value) }

func (d *DB) Flush() error {
	fo := grocksdb.NewDefaultFlushOptions()
	defer fo.Destroy()
	fo.SetWait(true)
	return d.db.Flush(fo)
}

func (d *DB) Close() error {
	d.db.Close()
	d.ro.Destroy()
	d.wo.Destroy()
	d.swo.Destroy()
	if !d.ownsExtractor {
		d.opts.Destroy()
	}
	return nil
}

type batch struct {
	d *DB
	b *grocksdb.WriteBatch
}

func (d *DB) NewBatch() engine.Batch   { return &batch{d: d, b: grocksdb.NewWriteBatch()} }
func (b *batch) Put(key, value []byte) { b.b.Put(key, value) }
func (b *batch) Delete(key []byte)     { b.b.Delete(key) }
func (b *batch) Count() int            { return b.b.Count() }
func (b *batch) Close()                { b.b.Destroy() }
func (b *batch) Commit() error {
	perfDisable()
	err := b.d.db.Write(b.d.wo, b.b)
	b.b.Clear()
	return err
}

// writer is db_bench's DoWrite path: one reused WriteBatch per goroutine, one crossing per write.
type writer struct {
	r *raw
	b *grocksdb.WriteBatch
	c *C.rocksdb_writebatch_t
}

// NewWriter implements engine.WriterMaker.
func (d *DB) NewWriter() engine.Writer {
	if d.r == nil {
		return &batchWriter{b: d.NewBatch()}
	}
	b := grocksdb.NewWriteBatch()
	return &writer{r: d.r, b: b, c: (*C.rocksdb_writebatch_t)(rawPtr(b))}
}

func (w *writer) Put(key, value []byte) error {
	if value == nil {
		value = []byte{}
	}
	return w.r.writeOne(w.c, key, value)
}
func (w *writer) Delete(key []byte) error { return w.r.writeOne(w.c, key, nil) }
func (w *writer) Close()                  { w.b.Destroy() }

// PutOps and DeleteOps implement engine.OpsWriter: a run of DoWrite/DoDelete steps in one crossing.
func (w *writer) PutOps(o *engine.Ops) error    { return w.r.writeOps(w.c, o, false) }
func (w *writer) DeleteOps(o *engine.Ops) error { return w.r.writeOps(w.c, o, true) }

// batchWriter is the Writer when the fast path is unavailable.
type batchWriter struct{ b engine.Batch }

func (w *batchWriter) Put(key, value []byte) error { w.b.Put(key, value); return w.b.Commit() }
func (w *batchWriter) Delete(key []byte) error     { w.b.Delete(key); return w.b.Commit() }
func (w *batchWriter) Close()                      { w.b.Close() }

// SeekNexts implements engine.SeekNexter: db_bench's seekrandom operation in one crossing.
func (d *DB) SeekNexts(key []byte, nexts int) (bool, int, error) {
	if d.r != nil {
		return d.r.seekNexts(key, nexts)
	}
	it := d.NewIterator()
	defer it.Close()
	found, n := engine.GenericSeekNexts(it, key, nexts)
	return found, n, it.Err()
}

// GetOps implements engine.OpsReader: a run of Gets in one crossing.
func (d *DB) GetOps(o *engine.Ops) error {
	if d.r == nil {
		return engine.GetEach(d, o)
	}
	return d.r.getOps(o)
}

// SeekNextsOps implements engine.OpsReader: a run of seekrandom operations in one crossing.
func (d *DB) SeekNextsOps(o *engine.Ops, nexts int) error {
	if d.r == nil {
		return engine.SeekNextsEach(d, o, nexts)
	}
	return d.r.seekNextsOps(o, nexts)
}

type iterator struct {
	it  *grocksdb.Iterator
	raw bool // the fast path may use its C handle
}

func (d *DB) NewIterator() engine.Iterator {
	perfDisable()
	return &iterator{it: d.db.NewIterator(d.ro), raw: d.r != nil}
}

func (i *iterator) SeekToFirst()    { i.it.SeekToFirst() }
func (i *iterator) SeekToLast()     { i.it.SeekToLast() }
func (i *iterator) Seek(key []byte) { i.it.Seek(key) }
func (i *iterator) Valid() bool     { return i.it.Valid() }
func (i *iterator) Next()           { i.it.Next() }
func (i *iterator) Prev()           { i.it.Prev() }
func (i *iterator) Key() []byte     { return i.it.Key().Data() }
func (i *iterator) ValueSize() int  { return i.it.Value().Size() }
func (i *iterator) Err() error      { return i.it.Err() }
func (i *iterator) Close()          { i.it.Close() }

// NewTableWriter writes an SST file with the database's options (compression, block size...).
func (d *DB) NewTableWriter(path string) (engine.TableWriter, error) {
	w := grocksdb.NewSSTFileWriter(grocksdb.NewDefaultEnvOptions(), d.opts)
	if err := w.Open(path); err != nil {
		w.Destroy()
		return nil, err
	}
	return &tableWriter{w: w}, nil
}

type tableWriter struct{ w *grocksdb.SSTFileWriter }

func (t *tableWriter) Add(key, value []byte) error { return t.w.Add(key, value) }
func (t *tableWriter) Finish() error {
	defer t.w.Destroy()
	return t.w.Finish()
}

// Ingest moves the files into the database (no copy).
// CannotIngest implements engine.IngestChecker: RocksDB cannot ingest PlainTable files (ingestion
// needs the file's last key, and PlainTable's iterator has no SeekToLast).
func (d *DB) CannotIngest() string {
	if d.plainTable {
		return "rocksdb PlainTable files cannot be ingested"
	}
	return ""
}

func (d *DB) Ingest(paths []string) error {
	io := grocksdb.NewDefaultIngestExternalFileOptions()
	defer io.Destroy()
	io.SetMoveFiles(true)
	return d.db.IngestExternalFile(paths, io)
}

// hashBuckets is the prefix-hash memtable's bucket count: db_bench's 1,000,000, but at most an
// eighth of the write buffer (8 bytes a bucket). The bucket array is allocated in the memtable's
// arena, so a larger one than the buffer fills a fresh memtable at once (RocksDB then asserts).
func hashBuckets(writeBuffer int64) int64 {
	return max(1024, min(1_000_000, writeBuffer/64))
}
