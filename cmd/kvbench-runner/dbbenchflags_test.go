package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// The db_bench flags that change what RocksDB 7.8.3 does reach RocksDB: its own OPTIONS file says
// so. --statistics fills the tickers and prints STATISTICS:, the stats and levelstats
// pseudo-benchmarks print the properties, and --stats_interval prints interval lines with
// --stats_per_interval's rocksdb.stats.
func TestBenchDBBenchStatsFlags(t *testing.T) {
	dir := t.TempDir()
	db, js := filepath.Join(dir, "db"), filepath.Join(dir, "result.json")
	args := []string{"bench", "--db=" + db, "--benchmarks=fillrandom,stats,levelstats", "--num=30000",
		"--statistics", "--num_levels=5", "--min_level_to_compress=2", "--wal_dir=wal", "--cache_numshardbits=3",
		"--max_background_compactions=3", "--max_background_flushes=2", "--bloom_locality=1", "--mmap_write=1",
		"--write_buffer_size=1048576", "--stats_interval=1000", "--stats_per_interval=1", "--report_interval=5ms",
		"--json=" + js}
	var stdout, stderr bytes.Buffer
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"** Compaction Stats [default] **", "Level Files Size(MB)", "STATISTICS:\n",
		"rocksdb.block.cache.miss COUNT : "} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout has no %q:\n%s", want, out)
		}
	}
	if e := stderr.String(); !strings.Contains(e, " ... thread 0: (") || !strings.Contains(e, "** DB Stats **") {
		t.Errorf("stderr has no interval line with rocksdb.stats:\n%s", e)
	}
	if strings.Contains(stderr.String(), "not modelled") {
		t.Errorf("a modelled flag was reported as not modelled:\n%s", stderr.String())
	}
	var r api.Result
	b, _ := os.ReadFile(js)
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Phases) != 1 {
		t.Errorf("%d phases: the pseudo-benchmarks measure nothing", len(r.Phases))
	}
	opts := r.Provenance.OptionsFile.Text
	for _, want := range []string{"num_levels=5", "max_background_compactions=3", "max_background_flushes=2",
		"bloom_locality=1", "allow_mmap_writes=true", "wal_dir=" + filepath.Join(db, "wal"),
		"compression_per_level=kNoCompression:kNoCompression:kSnappyCompression:kSnappyCompression:kSnappyCompression"} {
		if !strings.Contains(opts, want) {
			t.Errorf("OPTIONS file has no %q", want)
		}
	}
	if s := r.Phases[0].EngineStats; s == nil || s.UserBytesWritten == nil || s.BlockCacheMisses == nil {
		t.Errorf("with --statistics the tickers are in the engine stats: %+v", s)
	}
	if _, err := os.Stat(filepath.Join(db, "wal")); err != nil {
		t.Errorf("wal_dir: %v", err)
	}
}

func TestBenchStatisticsOffByDefault(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(dir, "result.json")
	var stdout bytes.Buffer
	if code := run([]string{"bench", "--db=" + filepath.Join(dir, "db"), "--benchmarks=fillrandom", "--num=2000", "--json=" + js},
		&stdout, io.Discard); code != 0 {
		t.Fatalf("exit %d", code)
	}
	var r api.Result
	b, _ := os.ReadFile(js)
	_ = json.Unmarshal(b, &r)
	if strings.Contains(stdout.String(), "STATISTICS:") || r.Phases[0].EngineStats.BlockCacheMisses != nil {
		t.Errorf("Statistics created without --statistics")
	}
	if r.Phases[0].EngineStats.FlushBytesWritten == nil {
		t.Errorf("DB properties are read without --statistics too: %+v", r.Phases[0].EngineStats)
	}
}

func TestBenchWALDirStaysInTheVolume(t *testing.T) {
	for _, bad := range []string{"/var/wal", "../wal"} {
		var stderr bytes.Buffer
		args := []string{"bench", "--db=" + filepath.Join(t.TempDir(), "db"), "--wal_dir=" + bad, "--num=10"}
		if code := run(args, io.Discard, &stderr); code == 0 || !strings.Contains(stderr.String(), "relative to --db") {
			t.Errorf("--wal_dir=%s: exit %d, %s", bad, code, stderr.String())
		}
	}
}
