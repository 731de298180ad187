// Package pebble adapts CockroachDB's Pebble (pure Go) to the engine interface.
package pebble

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/runner/engine"
)

func init() { engine.Register(api.EnginePebble, Open) }

// DB is an open Pebble database.
type DB struct {
	db    *pebble.DB
	opts  *pebble.Options
	wo    *pebble.WriteOptions
	cache interface{ Unref() }
	// quiet watches the flush and compaction counters for CompactionIdle (protocol.go).
	quiet engine.Quiet
	// stalls counts write stalls from the event listener (one event per stall, not per write).
	stalls *stallCounter
	// reps are what the typed options and the runner set over the user's OPTIONS file (nil without one).
	reps []engine.Replacement
}

// Open opens (creating if allowed) a Pebble database with the shared options.
func Open(cfg engine.Config) (engine.DB, error) {
	if err := engine.CheckExisting(cfg); err != nil {
		return nil, err
	}
	o := cfg.Options
	opts := &pebble.Options{}
	if cfg.OptionsFile != "" {
		// The user's OPTIONS file is the base; what was asked for is set over it below.
		if err := loadOptionsFile(opts, cfg.OptionsFile); err != nil {
			return nil, err
		}
	}
	cacheSize := engine.Bytes(o.CacheSize, 8<<20)
	if o.CacheSize == nil && opts.CacheSize > 0 {
		cacheSize = opts.CacheSize // the file's cache_size
	}
	cache := pebble.NewCache(cacheSize)
	opts.Cache = cache
	opts.ErrorIfNotExists = cfg.MustExist
	if o.DisableWAL != nil || cfg.OptionsFile == "" {
		opts.DisableWAL = engine.Bool(o.DisableWAL)
	}
	if opts.FormatMajorVersion == 0 {
		opts.FormatMajorVersion = pebble.FormatNewest
	}
	// The runner keeps every file on the benchmarked volume (a file's WAL paths are another machine's).
	opts.WALDir, opts.WALFailover = "", nil
	if o.WALDir != nil {
		opts.WALDir = filepath.Join(cfg.Path, *o.WALDir)
	}
	opts.Logger = quietLogger{}
	if o.WriteBufferSize != nil {
		opts.MemTableSize = uint64(o.WriteBufferSize.Value())
	}
	if o.MaxWriteBufferNumber != nil {
		opts.MemTableStopWritesThreshold = int(*o.MaxWriteBufferNumber)
	}
	if o.MaxOpenFiles != nil {
		n := int(*o.MaxOpenFiles)
		if n < 0 {
			n = 1 << 20
		}
		opts.MaxOpenFiles = n
	}
	if o.Level0FileNumCompactionTrigger != nil {
		opts.L0CompactionThreshold = int(*o.Level0FileNumCompactionTrigger)
	}
	if o.Level0StopWritesTrigger != nil {
		opts.L0StopWritesThreshold = int(*o.Level0StopWritesTrigger)
	}
	if o.Level0SlowdownWritesTrigger != nil {
		// Pebble has no slowdown stage; the nearest knob is the L0 read-amplification compaction
		// threshold, so the trigger starts compactions as RocksDB's slowdown would force them.
		opts.L0CompactionFileThreshold = int(*o.Level0SlowdownWritesTrigger)
	}
	if o.MaxBytesForLevelBase != nil {
		opts.LBaseMaxBytes = o.MaxBytesForLevelBase.Value()
	}
	if o.MaxBackgroundJobs != nil {
		n := int(*o.MaxBackgroundJobs)
		opts.CompactionConcurrencyRange = func() (int, int) { return 1, n }
	}
	if o.TargetFileSizeBase != nil {
		opts.TargetFileSizes[0] = o.TargetFileSizeBase.Value()
	}
	for i := range opts.Levels {
		l := &opts.Levels[i]
		if o.BlockSize != nil {
			l.BlockSize = int(o.BlockSize.Value())
		}
		if bits := engine.Int(o.BloomBits, 0); bits > 0 {
			l.FilterPolicy = bloom.FilterPolicy(bits)
		} else if o.BloomBits != nil {
			l.FilterPolicy = pebble.NoFilterPolicy // over an OPTIONS file's filter; the default otherwise
		}
		if o.Compression != nil {
			prof := profile(*o.Compression)
			l.Compression = func() *sstable.CompressionProfile { return prof }
		}
	}
	stalls := &stallCounter{}
	opts.EventListener = stalls.listener()
	// Defaults are filled in on our copy too: bulk-load writers read the per-level options.
	opts.EnsureDefaults()
	db, err := pebble.Open(cfg.Path, opts)
	if err != nil {
		cache.Unref()
		return nil, fmt.Errorf("pebble open %s: %w", cfg.Path, err)
	}
	wo := pebble.NoSync
	if engine.Bool(o.Sync) {
		wo = pebble.Sync
	}
	return &DB{db: db, opts: opts, wo: wo, cache: cache, stalls: stalls, reps: fileReplacements(cfg)}, nil
}

func profile(c api.Compression) *sstable.CompressionProfile {
	switch c {
	case api.CompressionSnappy:
		return sstable.SnappyCompression
	case api.CompressionZstd:
		return sstable.ZstdCompression
	}
	return sstable.NoCompression
}

// Version reports the Pebble module version linked into this binary.
func (d *DB) Version() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "github.com/cockroachdb/pebble/v2" {
				return "pebble " + m.Version
			}
		}
	}
	return "pebble v2"
}

func (d *DB) Get(key []byte) (bool, int, error) {
	v, closer, err := d.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return false, 0, nil
	}
	if err != nil {
		return false, 0, err
	}
	n := len(v)
	closer.Close()
	return true, n, nil
}

func (d *DB) Put(key, value []byte) error     { return d.db.Set(key, value, d.wo) }
func (d *DB) Delete(key []byte) error         { return d.db.Delete(key, d.wo) }
func (d *DB) PutSync(key, value []byte) error { return d.db.Set(key, value, pebble.Sync) }
func (d *DB) Flush() error                    { return d.db.Flush() }

func (d *DB) Close() error {
	err := d.db.Close()
	d.cache.Unref()
	return err
}

type batch struct {
	d *DB
	b *pebble.Batch
}

func (d *DB) NewBatch() engine.Batch   { return &batch{d: d, b: d.db.NewBatch()} }
func (b *batch) Put(key, value []byte) { _ = b.b.Set(key, value, nil) }
func (b *batch) Delete(key []byte)     { _ = b.b.Delete(key, nil) }
func (b *batch) Count() int            { return int(b.b.Count()) }
func (b *batch) Close()                { _ = b.b.Close() }
func (b *batch) Commit() error {
	err := b.d.db.Apply(b.b, b.d.wo)
	b.b.Reset()
	return err
}

type iterator struct {
	it  *pebble.Iterator
	err error
}

func (d *DB) NewIterator() engine.Iterator {
	it, err := d.db.NewIter(nil)
	return &iterator{it: it, err: err}
}
func (i *iterator) SeekToFirst()    { i.it.First() }
func (i *iterator) SeekToLast()     { i.it.Last() }
func (i *iterator) Seek(key []byte) { i.it.SeekGE(key) }
func (i *iterator) Valid() bool     { return i.it.Valid() }
func (i *iterator) Next()           { i.it.Next() }
func (i *iterator) Prev()           { i.it.Prev() }
func (i *iterator) Key() []byte     { return i.it.Key() }
func (i *iterator) ValueSize() int  { return len(i.it.Value()) }
func (i *iterator) Err() error {
	if i.err != nil {
		return i.err
	}
	return i.it.Error()
}
func (i *iterator) Close() { _ = i.it.Close() }

// SeekNexts implements engine.SeekNexter: db_bench's seekrandom operation (a fresh iterator,
// Seek, exact-hit check, nexts Next calls copying each value out) without the adapter's iterator
// wrapper, which would be one heap allocation per operation.
func (d *DB) SeekNexts(key []byte, nexts int) (bool, int, error) {
	it, err := d.db.NewIter(nil)
	if err != nil {
		return false, 0, err
	}
	found := it.SeekGE(key) && bytes.Equal(it.Key(), key)
	var buf [256]byte
	n := 0
	for j := 0; j < nexts && it.Valid(); j++ {
		v := it.Value()
		copy(buf[:], v)
		n += len(it.Key()) + len(v)
		it.Next()
	}
	err = it.Error()
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	return found, n, err
}

// NewTableWriter writes an sstable in the database's table format with its level options.
func (d *DB) NewTableWriter(path string) (engine.TableWriter, error) {
	f, err := vfs.Default.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return nil, err
	}
	wopts := d.opts.MakeWriterOptions(6, d.db.TableFormat())
	return &tableWriter{w: sstable.NewWriter(objstorageprovider.NewFileWritable(f), wopts)}, nil
}

type tableWriter struct{ w *sstable.Writer }

func (t *tableWriter) Add(key, value []byte) error { return t.w.Set(key, value) }
func (t *tableWriter) Finish() error               { return t.w.Close() }

// Ingest links the files into the LSM.
func (d *DB) Ingest(paths []string) error { return d.db.Ingest(context.Background(), paths) }

// quietLogger keeps Pebble's informational chatter ("Found 0 WALs") out of the benchmark output.
type quietLogger struct{}

func (quietLogger) Infof(string, ...interface{}) {}
func (quietLogger) Errorf(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "pebble: "+format+"\n", args...)
}
func (quietLogger) Fatalf(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "pebble: fatal: "+format+"\n", args...)
	os.Exit(1)
}
