package all_test

import (
	"fmt"
	"testing"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/runner/engine"
	_ "github.com/kvbench/kvbench-operator/runner/engine/all"
	"github.com/kvbench/kvbench-operator/runner/keygen"
)

// The per-operation paths of every adapter, as the workloads drive them. Run with
//
//	go test ./runner/engine/all -run '^$' -bench . -benchmem
//
// to see each engine's cost and allocations per operation; TestNoAllocsPerOp guards the cgo
// engines' fast paths against regressions.

const benchKeys = 20000

func openFilled(tb testing.TB, name string) engine.DB {
	tb.Helper()
	bits := int32(10)
	db, err := engine.Open(api.EngineName(name), engine.Config{Path: tb.TempDir(),
		Options: api.EngineOptions{BloomBits: &bits}})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	keys := keygen.Keys{KeySize: 16, Num: benchKeys}
	vals := keygen.NewValues(1, 0.5, 100, 100)
	w := engine.NewWriter(db)
	defer w.Close()
	k := keys.Make()
	for i := uint64(0); i < benchKeys; i += 2 { // even keys only: odd ones are misses
		if err := w.Put(keys.Put(k, i), vals.Next()); err != nil {
			tb.Fatal(err)
		}
	}
	if err := db.Flush(); err != nil {
		tb.Fatal(err)
	}
	return db
}

// ops are the hot operations; each call does one, on key i.
func ops(db engine.DB) (map[string]func(i uint64) error, func()) {
	keys := keygen.Keys{KeySize: 16, Num: benchKeys}
	vals := keygen.NewValues(2, 0.5, 100, 100)
	k := keys.Make()
	w := engine.NewWriter(db)
	m := map[string]func(i uint64) error{
		"writer.Put": func(i uint64) error { return w.Put(keys.Put(k, i%benchKeys), vals.Next()) },
		"Put":        func(i uint64) error { return db.Put(keys.Put(k, i%benchKeys), vals.Next()) },
		"Get": func(i uint64) error {
			_, _, err := db.Get(keys.Put(k, i*7919%benchKeys))
			return err
		},
		"SeekNexts10": func(i uint64) error {
			_, _, err := engine.SeekNexts(db, keys.Put(k, i*7919%benchKeys), 10)
			return err
		},
	}
	return m, w.Close
}

func BenchmarkAdapters(b *testing.B) {
	for _, name := range engine.Names() {
		db := openFilled(b, name)
		m, closeW := ops(db)
		for _, op := range []string{"writer.Put", "Put", "Get", "SeekNexts10"} {
			f := m[op]
			b.Run(fmt.Sprintf("%s/%s", name, op), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					if err := f(uint64(i)); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		closeW()
	}
}

// The cgo engines' hot paths allocate nothing in Go per operation (the key and value buffers are
// reused, results and errors come back by value). Pebble is Go and pools internally; its counts
// are reported by the benchmark, not asserted.
func TestNoAllocsPerOp(t *testing.T) {
	for _, name := range []string{"rocksdb", "leveldb"} {
		db := openFilled(t, name)
		m, closeW := ops(db)
		for op, f := range m {
			i := uint64(0)
			allocs := testing.AllocsPerRun(200, func() {
				if err := f(i); err != nil {
					t.Fatal(err)
				}
				i++
			})
			if allocs != 0 {
				t.Errorf("%s %s: %.1f allocations per operation, want 0", name, op, allocs)
			}
		}
		closeW()
	}
}
