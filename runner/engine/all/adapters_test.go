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
		// The same operations in runs of engine.MaxOps (one engine call each, keys and values
		// generated in the loop).
		o := engine.NewOps(16)
		w := engine.NewWriter(db)
		vals := keygen.NewValues(5, 0.5, 100, 100)
		runs := []struct {
			what string
			f    func() error
		}{ // reads first, on the database the single-operation reads saw
			{"GetOps", func() error { return engine.GetOps(db, o) }},
			{"SeekNexts10Ops", func() error { return engine.SeekNextsOps(db, o, 10) }},
			{"writer.PutOps", func() error { return engine.PutOps(w, o) }},
		}
		for _, r := range runs {
			what, f := r.what, r.f
			b.Run(fmt.Sprintf("%s/%s", name, what), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i += engine.MaxOps {
					fillOps(o, uint64(i), vals)
					o.Reset(min(engine.MaxOps, b.N-i))
					if err := f(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		w.Close()
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

// fillOps fills o with keys first..first+n-1 (step 7919, as ops uses, so that about half are
// missing) and the values of vals.
func fillOps(o *engine.Ops, first uint64, vals *keygen.Values) {
	keys := keygen.Keys{KeySize: 16, Num: benchKeys}
	o.Reset(engine.MaxOps)
	for j := range o.N {
		keys.Put(o.Key(j), (first+uint64(j))*7919%benchKeys)
		o.Vals[j] = vals.Next()
	}
}

// A run of operations (engine.Ops, one engine call) finds, counts and writes exactly what the
// same operations one at a time do, and times each of them.
func TestOpsMatchSingleOperations(t *testing.T) {
	for _, name := range engine.Names() {
		t.Run(name, func(t *testing.T) {
			db := openFilled(t, name)
			o := engine.NewOps(16)
			vals := keygen.NewValues(3, 0.5, 10, 200)
			for first := uint64(0); first < 200; first += engine.MaxOps {
				fillOps(o, first, vals)
				var found, seekFound int
				var bytes, seekBytes int64
				for j := range o.N {
					f, n, err := db.Get(o.Key(j))
					if err != nil {
						t.Fatal(err)
					}
					if f {
						found++
						bytes += int64(16 + n)
					}
					f, n, err = engine.SeekNexts(db, o.Key(j), 10)
					if err != nil {
						t.Fatal(err)
					}
					if f {
						seekFound++
					}
					seekBytes += int64(n)
				}
				if err := engine.GetOps(db, o); err != nil {
					t.Fatal(err)
				}
				checkRun(t, "GetOps", o)
				if o.Found != found || o.Bytes != bytes {
					t.Fatalf("GetOps found %d (%d bytes), Get found %d (%d bytes)", o.Found, o.Bytes, found, bytes)
				}
				if err := engine.SeekNextsOps(db, o, 10); err != nil {
					t.Fatal(err)
				}
				checkRun(t, "SeekNextsOps", o)
				if o.Found != seekFound || o.Bytes != seekBytes {
					t.Fatalf("SeekNextsOps found %d (%d bytes), SeekNexts found %d (%d bytes)", o.Found, o.Bytes, seekFound, seekBytes)
				}
			}

			// Puts of values of varying sizes: every key then holds its value's size; deletes
			// remove them all.
			w := engine.NewWriter(db)
			defer w.Close()
			fillOps(o, 1000, vals)
			o.Vals[1] = []byte("a value outside the generator's buffer") // forces the copy path
			o.Vals[2] = nil                                              // an empty value is still a put
			if err := engine.PutOps(w, o); err != nil {
				t.Fatal(err)
			}
			checkRun(t, "PutOps", o)
			for j := range o.N {
				f, n, err := db.Get(o.Key(j))
				if err != nil || !f || n != len(o.Vals[j]) {
					t.Fatalf("after PutOps, key %d: found %v size %d err %v, want size %d", j, f, n, err, len(o.Vals[j]))
				}
			}
			if err := engine.DeleteOps(w, o); err != nil {
				t.Fatal(err)
			}
			checkRun(t, "DeleteOps", o)
			if err := engine.GetOps(db, o); err != nil || o.Found != 0 {
				t.Fatalf("after DeleteOps: %d found, err %v", o.Found, err)
			}
		})
	}
}

// StepOps (readseq, readreverse) in runs sees exactly the entries a plain iterator walk sees, in
// order, and reports the end of the database with a short run.
func TestStepOpsMatchIteratorWalk(t *testing.T) {
	for _, name := range engine.Names() {
		t.Run(name, func(t *testing.T) {
			db := openFilled(t, name)
			for _, reverse := range []bool{false, true} {
				walk := db.NewIterator()
				if reverse {
					walk.SeekToLast()
				} else {
					walk.SeekToFirst()
				}
				var want int64
				entries := 0
				for ; walk.Valid(); entries++ {
					want += int64(len(walk.Key()) + walk.ValueSize())
					if reverse {
						walk.Prev()
					} else {
						walk.Next()
					}
				}
				walk.Close()
				if entries != benchKeys/2 {
					t.Fatalf("walk saw %d entries, want %d", entries, benchKeys/2)
				}

				it := db.NewIterator()
				if reverse {
					it.SeekToLast()
				} else {
					it.SeekToFirst()
				}
				if _, ok := it.(engine.OpsStepper); !ok && name != "pebble" { // Go: no crossing to save
					t.Errorf("%s iterator does not step natively", name)
				}
				o := engine.NewOps(16)
				var got int64
				steps := 0
				for {
					o.Reset(engine.MaxOps - 3) // runs that do not divide the entries
					if err := engine.StepOps(it, o, reverse); err != nil {
						t.Fatal(err)
					}
					for j, l := range o.Lat[:o.Done] {
						if l < 0 {
							t.Fatalf("step %d latency %d ns", steps+j, l)
						}
					}
					steps += o.Done
					got += o.Bytes
					if o.Done < o.N {
						break
					}
				}
				it.Close()
				if steps != entries || got != want {
					t.Errorf("reverse=%v: StepOps took %d steps over %d bytes, the walk %d over %d", reverse, steps, got, entries, want)
				}
			}
		})
	}
}

func checkRun(t *testing.T, what string, o *engine.Ops) {
	t.Helper()
	if o.Done != o.N {
		t.Fatalf("%s: %d of %d done", what, o.Done, o.N)
	}
	for j, l := range o.Lat[:o.Done] {
		if l < 0 {
			t.Fatalf("%s: operation %d latency %d ns", what, j, l)
		}
	}
}

// The runs allocate nothing in Go either.
func TestNoAllocsPerRun(t *testing.T) {
	for _, name := range []string{"rocksdb", "leveldb"} {
		db := openFilled(t, name)
		w := engine.NewWriter(db)
		o := engine.NewOps(16)
		vals := keygen.NewValues(4, 0.5, 100, 100)
		for what, f := range map[string]func() error{
			"GetOps":       func() error { return engine.GetOps(db, o) },
			"SeekNextsOps": func() error { return engine.SeekNextsOps(db, o, 10) },
			"PutOps":       func() error { return engine.PutOps(w, o) },
			"DeleteOps":    func() error { return engine.DeleteOps(w, o) },
		} {
			first := uint64(0)
			allocs := testing.AllocsPerRun(20, func() {
				fillOps(o, first, vals)
				first += engine.MaxOps
				if err := f(); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Errorf("%s %s: %.1f allocations per run, want 0", name, what, allocs)
			}
		}
		w.Close()
	}
}
