package all_test

import (
	"context"
	"io/fs"
	"math"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/runner/engine"
	"github.com/kvbench/kvbench-operator/runner/keygen"
)

// A fillrandom phase with known writes, on each real engine: the engine's own counters must
// move by what the phase did, write amplification must be at least 1, and the LSM bytes the
// engine reports must match the table files on disk.
func TestEngineStatsOverAPhase(t *testing.T) {
	const keys, keySize, valueSize = 150000, 16, 100
	for _, name := range engine.Names() {
		t.Run(name, func(t *testing.T) {
			o := api.EngineOptions{WriteBufferSize: resource.NewQuantity(1<<20, resource.BinarySI)}
			if name == string(api.EngineRocksDB) {
				yes := true
				o.Statistics = &yes // userBytesWritten needs the Statistics object
			}
			dir := t.TempDir()
			db, err := engine.Open(api.EngineName(name), engine.Config{Path: dir, Options: o})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			sr, ok := db.(engine.StatsReader)
			if !ok {
				t.Fatalf("%s does not implement engine.StatsReader", name)
			}
			before, err := sr.Stats()
			if err != nil {
				t.Fatal(err)
			}
			k := keygen.Keys{KeySize: keySize, Num: keys}
			vals := keygen.NewValues(1, 1.0, valueSize, valueSize) // incompressible: bytes on disk ~ bytes written
			rnd := keygen.NewRand(7)
			w := engine.NewWriter(db)
			kb := k.Make()
			for i := 0; i < keys; i++ {
				if err := w.Put(k.Put(kb, rnd.Uint64()%keys), vals.Next()); err != nil {
					t.Fatal(err)
				}
			}
			w.Close()
			if err := db.Flush(); err != nil {
				t.Fatal(err)
			}
			after := settle(t, sr, dir)
			st := engine.PhaseStats(before, after)
			t.Logf("%s: user=%v flush=%v compW=%v compR=%v wamp=%v lsm=%v levels=%+v", name, p(st.UserBytesWritten),
				p(st.FlushBytesWritten), p(st.CompactionBytesWritten), p(st.CompactionBytesRead), pf(st.WriteAmplification), p(st.LSMBytes), st.Levels)

			userBytes := float64(keys * (keySize + valueSize))
			if st.UserBytesWritten != nil {
				// Engines count the write batch's encoding too (header, tags, lengths): a few % over.
				if r := float64(*st.UserBytesWritten) / userBytes; r < 1 || r > 1.2 {
					t.Errorf("userBytesWritten %d is %.2fx keys x (key+value) %.0f", *st.UserBytesWritten, r, userBytes)
				}
			} else if name != string(api.EngineLevelDB) {
				t.Errorf("userBytesWritten missing")
			}
			if st.FlushBytesWritten == nil || float64(*st.FlushBytesWritten) < 0.5*userBytes {
				t.Errorf("flushBytesWritten %v: want at least half of the %.0f bytes written", p(st.FlushBytesWritten), userBytes)
			}
			if st.WriteAmplification == nil || *st.WriteAmplification < 1 {
				t.Errorf("write amplification %v, want >= 1", pf(st.WriteAmplification))
			}
			if st.CompactionBytesWritten == nil || *st.CompactionBytesWritten <= 0 {
				t.Errorf("compactionBytesWritten %v: 150k keys through 1 MiB memtables must compact", p(st.CompactionBytesWritten))
			}
			du := tableBytes(t, dir)
			if st.LSMBytes == nil || math.Abs(float64(*st.LSMBytes)-float64(du)) > 0.1*float64(du) {
				t.Errorf("lsmBytes %v, table files on disk %d: more than 10%% apart", p(st.LSMBytes), du)
			}
			var files int64
			for _, l := range st.Levels {
				files += l.Files
			}
			if files == 0 {
				t.Errorf("levels %+v: no table files", st.Levels)
			}
			if len(after.Dumps) == 0 || after.Dumps[0].Text == "" {
				t.Errorf("no engine dump")
			}
			// A read-only phase moves no write counters.
			again := engine.PhaseStats(after, settle(t, sr, dir))
			if again.FlushBytesWritten == nil || *again.FlushBytesWritten != 0 {
				t.Errorf("flush bytes moved by %v over an idle phase", p(again.FlushBytesWritten))
			}
		})
	}
}

// settle waits until background work is done: the engine's own wait where it has one, then the
// compaction counters, LSM bytes and the table files on disk unchanged for 1s.
func settle(t *testing.T, sr engine.StatsReader, dir string) *engine.StatsSnapshot {
	t.Helper()
	if cw, ok := sr.(engine.CompactionWaiter); ok {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := cw.WaitForCompaction(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var last *engine.StatsSnapshot
	var lastDisk int64
	stable := 0
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		s, err := sr.Stats()
		if err != nil {
			t.Fatal(err)
		}
		c, disk := s.Cumulative, tableBytes(t, dir)
		if last != nil && eq(last.Cumulative.CompactionBytesWritten, c.CompactionBytesWritten) &&
			eq(last.Cumulative.LSMBytes, c.LSMBytes) && eq(last.Cumulative.FlushBytesWritten, c.FlushBytesWritten) &&
			disk == lastDisk {
			if stable++; stable >= 2 {
				return s
			}
		} else {
			stable = 0
		}
		last, lastDisk = s, disk
	}
	t.Fatal("compactions did not settle in 60s")
	return nil
}

// tableBytes is `du` of the database's table files (.sst, .ldb).
func tableBytes(t *testing.T, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if ext := filepath.Ext(path); ext == ".sst" || ext == ".ldb" {
			info, err := d.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func eq(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
func p(v *int64) any {
	if v == nil {
		return "nil"
	}
	return *v
}
func pf(v *float64) any {
	if v == nil {
		return "nil"
	}
	return *v
}
