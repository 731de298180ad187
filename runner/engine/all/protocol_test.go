package all_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/runner/engine"
	"github.com/kvbench/kvbench-operator/runner/keygen"
)

// tables lists a database directory's table files with their sizes.
func tables(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if n := e.Name(); strings.HasSuffix(n, ".sst") || strings.HasSuffix(n, ".ldb") {
			info, _ := e.Info()
			out = append(out, n+":"+strings.TrimSpace(resource.NewQuantity(info.Size(), resource.BinarySI).String()))
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func writeRandom(t *testing.T, db engine.DB, n int, seed uint64) {
	t.Helper()
	keys := keygen.Keys{KeySize: 16, Num: int64(n)}
	vals := keygen.NewValues(seed, 1, 100, 100)
	rnd := keygen.NewRand(seed)
	k := keys.Make()
	for i := 0; i < n; i++ {
		if err := db.Put(keys.Put(k, rnd.Uint64n(uint64(n))), vals.Next()); err != nil {
			t.Fatal(err)
		}
	}
}

// Once an engine says its flushes and compactions are idle, its table files stay as they are:
// nothing was still being flushed or compacted.
func TestCompactionIdle(t *testing.T) {
	for _, name := range []string{"rocksdb", "pebble", "leveldb"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			wb := resource.MustParse("64Ki")
			db, err := engine.Open(api.EngineName(name), engine.Config{Path: dir, Options: api.EngineOptions{WriteBufferSize: &wb}})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			writeRandom(t, db, 60000, 1)
			s := db.(engine.Settler)
			deadline := time.Now().Add(time.Minute)
			busy := 0
			for {
				idle, err := s.CompactionIdle()
				if err != nil {
					t.Fatal(err)
				}
				if idle {
					break
				}
				busy++
				if time.Now().After(deadline) {
					t.Fatal("not idle after a minute")
				}
				time.Sleep(20 * time.Millisecond)
			}
			t.Logf("busy for %d looks", busy)
			before := tables(t, dir)
			time.Sleep(time.Second)
			if after := tables(t, dir); after != before {
				t.Errorf("tables changed after idle:\n%s\n%s", before, after)
			}
		})
	}
}

// An online checkpoint hard-links the table files and keeps the database as it was when taken.
func TestCheckpoint(t *testing.T) {
	for _, name := range []string{"rocksdb", "pebble"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "db")
			db, err := engine.Open(api.EngineName(name), engine.Config{Path: dir})
			if err != nil {
				t.Fatal(err)
			}
			keys := keygen.Keys{KeySize: 16, Num: 1000}
			k := keys.Make()
			for i := uint64(0); i < 1000; i++ {
				if err := db.Put(keys.Put(k, i), []byte("v")); err != nil {
					t.Fatal(err)
				}
			}
			if err := db.Flush(); err != nil {
				t.Fatal(err)
			}
			cp := dir + ".checkpoint"
			if err := db.(engine.Checkpointer).Checkpoint(cp); err != nil {
				t.Fatal(err)
			}
			for i := uint64(0); i < 500; i++ {
				if err := db.Delete(keys.Put(k, i)); err != nil {
					t.Fatal(err)
				}
			}
			linked := 0
			ssts, _ := filepath.Glob(filepath.Join(cp, "*.sst"))
			for _, f := range ssts {
				if st, err := os.Stat(f); err == nil && st.Sys().(*syscall.Stat_t).Nlink > 1 {
					linked++
				}
			}
			if len(ssts) == 0 || linked == 0 {
				t.Errorf("%d checkpoint tables, %d hard-linked", len(ssts), linked)
			}
			db.Close()
			restored, err := engine.Open(api.EngineName(name), engine.Config{Path: cp, MustExist: true})
			if err != nil {
				t.Fatal(err)
			}
			defer restored.Close()
			for _, i := range []uint64{0, 499, 999} {
				if found, _, err := restored.Get(keys.Put(k, i)); err != nil || !found {
					t.Errorf("key %d not in the checkpoint (%v)", i, err)
				}
			}
		})
	}
}

// Engines that read tables through mmap say so, so that cold-cache eviction closes them.
func TestMemoryMapped(t *testing.T) {
	on := true
	for _, tc := range []struct {
		name string
		opts api.EngineOptions
		want bool
	}{{"rocksdb", api.EngineOptions{}, false}, {"rocksdb", api.EngineOptions{MmapRead: &on}, true}, {"leveldb", api.EngineOptions{}, true}} {
		db, err := engine.Open(api.EngineName(tc.name), engine.Config{Path: t.TempDir(), Options: tc.opts})
		if err != nil {
			t.Fatal(err)
		}
		if got := db.(engine.MemoryMapper).MemoryMapped(); got != tc.want {
			t.Errorf("%s %+v: memory mapped %v, want %v", tc.name, tc.opts, got, tc.want)
		}
		db.Close()
	}
}
