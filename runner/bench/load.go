package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/runner/engine"
	"github.com/kvbench/kvbench-operator/runner/keygen"
)

const (
	loadBatch     = 1000      // keys per write batch when loading by puts
	bulkFileBytes = 256 << 20 // target size of one bulk-load table file
)

// load prepares the dataset as the load mode says and returns the "load" phase result.
func (e *env) load(ctx context.Context, db engine.DB, dbPath string) (*api.PhaseResult, error) {
	mode := e.ds.LoadMode
	bl, canBulk := db.(engine.BulkLoader)
	why := db.Version() + " cannot ingest table files"
	if c, ok := db.(engine.IngestChecker); ok && c.CannotIngest() != "" {
		canBulk, why = false, c.CannotIngest()
	}
	if mode == api.LoadBulk && (!canBulk || e.ds.YCSB == nil && !e.ds.Keys().Sorted() && e.ds.KeysPerPrefix == 0) {
		fmt.Fprintf(e.progress, "note: %s; loading with sorted batched puts instead\n", why)
		mode = api.LoadFillSeq
	}
	var res *api.PhaseResult
	var err error
	switch {
	case mode == api.LoadBulk && e.ds.YCSB != nil:
		res, err = e.bulkLoad(ctx, db, bl, dbPath, e.ycsbSorted())
	case mode == api.LoadBulk:
		res, err = e.bulkLoad(ctx, db, bl, dbPath, e.dbBenchSorted())
	case mode == api.LoadFillSeq || mode == api.LoadFillRandom:
		res, err = e.putLoad(ctx, db, mode == api.LoadFillRandom)
	default:
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load (%s): %w", mode, err)
	}
	return res, nil
}

// putLoad writes every key once, in order or in a random permutation, in write batches. YCSB
// records go in record-number order, as YCSB's load inserts them (with insertorder hashed, their
// keys are in no order).
func (e *env) putLoad(ctx context.Context, db engine.DB, random bool) (*api.PhaseResult, error) {
	keys := e.ds.Keys()
	n := uint64(e.ds.Num)
	perm := keygen.NewPermutation(n, e.ds.Seed^0x10AD)
	key := func(t *thread, v uint64) []byte { return keys.Put(t.key, v) }
	value := func(t *thread, _ uint64) []byte { return t.values.Next() }
	if y := e.ds.YCSB; y != nil {
		recs := e.ycsbRecords()
		key = func(t *thread, v uint64) []byte {
			t.key = keygen.YCSBKey(t.key[:0], int64(v), !y.ordered, y.zeroPadding)
			return t.key
		}
		value = func(_ *thread, i uint64) []byte { return recs.Record(i) }
	}
	p := &phase{name: "load", threads: 1, kinds: []opKind{opWrite}, expected: e.ds.Num}
	p.work = func(t *thread) error {
		b := db.NewBatch()
		defer b.Close()
		for i := uint64(0); i < n && !t.stopped(); i++ {
			v := i
			if random {
				v = perm.At(i)
			}
			val := value(t, i)
			b.Put(key(t, v), val)
			t.bytes += int64(len(t.key) + len(val))
			if b.Count() >= loadBatch || i == n-1 {
				if err := b.Commit(); err != nil {
					return err
				}
			}
			t.done(opWrite)
		}
		return nil
	}
	out, err := e.runPhase(ctx, p)
	if err != nil {
		return nil, err
	}
	if err := db.Flush(); err != nil {
		return nil, err
	}
	return &out.res, nil
}

// sortedSource hands bulk-load worker id of workers its share of the dataset, in key order
// (worker ranges ascend with the id): add is called with each key and value.
type sortedSource func(t *thread, workers int, add func(key, val []byte) error) error

// dbBenchSorted: db_bench's keys in key order, contiguous ranges per worker.
func (e *env) dbBenchSorted() sortedSource {
	keys := e.ds.Keys()
	order := keys.SortedOrder()
	return func(t *thread, workers int, add func(key, val []byte) error) error {
		from := e.ds.Num * int64(t.id) / int64(workers)
		to := e.ds.Num * int64(t.id+1) / int64(workers)
		for i := from; i < to && !t.stopped(); i++ {
			if err := add(keys.Put(t.key, order(i)), t.values.Next()); err != nil {
				return err
			}
		}
		return nil
	}
}

// bulkLoad writes the dataset as sorted, non-overlapping table files (one writer per core over
// contiguous key ranges), then ingests them all at once; they land in the bottom level without
// compaction, which is what makes it much faster than puts.
func (e *env) bulkLoad(ctx context.Context, db engine.DB, bl engine.BulkLoader, dbPath string, src sortedSource) (*api.PhaseResult, error) {
	dir := filepath.Clean(dbPath) + ".ingest"
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	workers := max(1, min(e.cpus, 8))
	if e.ds.Num < int64(workers)*1000 {
		workers = 1
	}
	var mu sync.Mutex
	var files []string
	p := &phase{name: "load", threads: workers, kinds: []opKind{opWrite}, expected: e.ds.Num}
	p.work = func(t *thread) error {
		var w engine.TableWriter
		var size int64
		seq := 0
		finish := func() error {
			if w == nil {
				return nil
			}
			err := w.Finish()
			w = nil
			return err
		}
		err := src(t, workers, func(key, val []byte) error {
			if w == nil {
				name := filepath.Join(dir, fmt.Sprintf("w%03d-%06d.sst", t.id, seq))
				seq++
				var err error
				if w, err = bl.NewTableWriter(name); err != nil {
					return err
				}
				mu.Lock()
				files = append(files, name)
				mu.Unlock()
				size = 0
			}
			if err := w.Add(key, val); err != nil {
				return err
			}
			n := int64(len(key) + len(val))
			t.bytes += n
			size += n
			t.done(opWrite)
			if size >= bulkFileBytes {
				return finish()
			}
			return nil
		})
		if err != nil {
			return err
		}
		return finish()
	}
	out, err := e.runPhase(ctx, p)
	if err != nil {
		return nil, err
	}
	sort.Strings(files) // worker ranges ascend with the worker id, so names sort in key order
	t0 := time.Now()
	if err := bl.Ingest(files); err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	ingest := time.Since(t0).Seconds()
	r := &out.res
	r.Seconds = round6(r.Seconds + ingest)
	r.OpsPerSec = round1(float64(r.Ops) / r.Seconds)
	var bytes int64
	for _, t := range out.threads {
		bytes += t.bytes
	}
	r.MBPerSec = round1(float64(bytes) / 1048576 / r.Seconds)
	return r, nil
}
