// Package engine is the small adapter interface every storage engine implements, so that workloads
// are written once and measure the engine, not the harness.
package engine

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// DB is an open database. Methods are safe for concurrent use except where noted.
type DB interface {
	// Get looks key up; it reports whether the key exists and the value's size. Values are not
	// copied into Go memory, as db_bench does not copy them either.
	Get(key []byte) (found bool, size int, err error)
	Put(key, value []byte) error
	// PutSync is Put with a synchronous WAL write (db_bench fillsync), whatever the sync option.
	PutSync(key, value []byte) error
	Delete(key []byte) error
	// NewBatch returns a write batch; a batch is used by one goroutine.
	NewBatch() Batch
	// NewIterator returns an iterator; an iterator is used by one goroutine.
	NewIterator() Iterator
	// Flush writes the memtable out, so that later phases read from tables.
	Flush() error
	// Version names the engine and its library version, e.g. "rocksdb 7.8.3".
	Version() string
	Close() error
}

// Batch groups writes into one atomic commit.
type Batch interface {
	Put(key, value []byte)
	Delete(key []byte)
	Count() int
	// Commit applies the batch and empties it for reuse.
	Commit() error
	Close()
}

// Iterator walks keys in order. Key and Value are valid until the next move.
type Iterator interface {
	SeekToFirst()
	SeekToLast()
	Seek(key []byte)
	Valid() bool
	Next()
	Prev()
	Key() []byte
	// ValueSize is the size of the current value; reading only the size avoids a copy.
	ValueSize() int
	Err() error
	Close()
}

// BulkLoader is implemented by engines that can ingest externally built, sorted table files.
type BulkLoader interface {
	// NewTableWriter creates a sorted table file at path; keys must be added in ascending order.
	NewTableWriter(path string) (TableWriter, error)
	// Ingest moves the finished files into the database.
	Ingest(paths []string) error
}

// IngestChecker is implemented by BulkLoaders that cannot ingest with some options; CannotIngest
// says why ("" when they can).
type IngestChecker interface {
	CannotIngest() string
}

// TableWriter writes one sorted table file.
type TableWriter interface {
	Add(key, value []byte) error
	// Finish completes the file; it must be called exactly once.
	Finish() error
}

// Config is what Open needs: the path, the shared option vocabulary, and the runner's own choices.
type Config struct {
	Path    string
	Options api.EngineOptions
	// MustExist fails the open if there is no database at Path (db_bench --use_existing_db).
	MustExist bool
	// DirectIO asks for O_DIRECT reads and compaction I/O (CacheDirect).
	DirectIO bool
	// PrefixSize is the dataset's prefix length, for PlainTable's prefix extractor.
	PrefixSize int
	// KeySize is the dataset's key length, for PlainTable's fixed key length.
	KeySize int
	// OptionsFile is the user's OPTIONS file (engines[].optionsFrom): the engine's own loader reads
	// it as the base and Options are set over it. Empty: the runner's defaults (db_bench's).
	OptionsFile string
}

// optionsFileEngines read an OPTIONS file (Config.OptionsFile) with their own loader.
var optionsFileEngines = map[api.EngineName]bool{api.EngineRocksDB: true, api.EnginePebble: true}

// Opener opens a database of one engine.
type Opener func(cfg Config) (DB, error)

var (
	mu      sync.Mutex
	openers = map[api.EngineName]Opener{}
)

// Register makes an engine available to Open; adapters call it from init.
func Register(name api.EngineName, open Opener) {
	mu.Lock()
	defer mu.Unlock()
	openers[name] = open
}

// Names lists the registered engines.
func Names() []string {
	mu.Lock()
	defer mu.Unlock()
	var out []string
	for n := range openers {
		out = append(out, string(n))
	}
	sort.Strings(out)
	return out
}

// Open validates the options against the engine's table and opens the database.
func Open(name api.EngineName, cfg Config) (DB, error) {
	mu.Lock()
	open, ok := openers[name]
	mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("unknown engine %q (have: %s)", name, strings.Join(Names(), ", "))
	}
	if bad := cfg.Options.Unsupported(name); len(bad) > 0 {
		return nil, fmt.Errorf("engine %s does not support option(s): %s", name, strings.Join(bad, ", "))
	}
	if cfg.DirectIO && name != api.EngineRocksDB {
		return nil, fmt.Errorf("engine %s does not support direct I/O (cacheMode=direct is RocksDB only)", name)
	}
	if cfg.Path == "" {
		return nil, fmt.Errorf("no database path (--db)")
	}
	if cfg.OptionsFile != "" && !optionsFileEngines[name] {
		return nil, fmt.Errorf("engine %s has no OPTIONS file: --options_file applies to rocksdb and pebble", name)
	}
	return open(cfg)
}
