package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

func TestBadInputExitsNonZero(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db")
	for _, args := range [][]string{
		{"bench", "--engine=nosuch", "--db=" + db},
		{"bench", "--db=" + db, "--no_such_flag=1"},
		{"bench", "--db=" + db, "--num=0"},
		{"bench", "--db=" + db, "--benchmarks=readrandom", "--use_existing_db=1"},
		{"run", "--config-json={not json"},
	} {
		if code := run(args); code == 0 {
			t.Errorf("%v: exit 0", args)
		}
	}
}

func TestRunWritesResultAndSummary(t *testing.T) {
	dir := t.TempDir()
	cfg := `{"engine":{"name":"pebble"},"dataset":{"num":500,"loadMode":"bulk"},"threads":[1,2],
		"workloads":[{"name":"readrandom"},{"name":"seekrandom","seekNexts":2}],"dbPath":"` + filepath.Join(dir, "db") + `"}`
	js, sum := filepath.Join(dir, "result.json"), filepath.Join(dir, "summary")
	if code := run([]string{"run", "--config-json=" + cfg, "--json=" + js, "--summary-file=" + sum, "--metrics-addr=127.0.0.1:0"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	var r api.Result
	b, _ := os.ReadFile(js)
	if err := json.Unmarshal(b, &r); err != nil || len(r.Phases) != 4 || r.Load == nil || r.SchemaVersion != api.ResultSchemaVersion {
		t.Fatalf("result %v: %s", err, b)
	}
	s, _ := os.ReadFile(sum)
	var su api.Summary
	if err := json.Unmarshal(s, &su); err != nil || len(s) > api.TerminationMessageLimit || len(su.Phases) != 4 {
		t.Fatalf("summary %v (%d bytes): %s", err, len(s), s)
	}
}

func TestSeedFlagsAccepted(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db")
	// Seed 000's flags (scaled down): legacy flags are accepted with a note, PlainTable works.
	args := []string{"bench", "--db=" + db, "--num_levels=6", "--key_size=20", "--prefix_size=20", "--keys_per_prefix=0",
		"--value_size=100", "--cache_size=17179869184", "--cache_numshardbits=6", "--compression_type=none",
		"--compression_ratio=1", "--hard_rate_limit=2", "--write_buffer_size=134217728", "--max_write_buffer_number=2",
		"--level0_file_num_compaction_trigger=8", "--disable_wal=0", "-sync=0", "--disable_data_sync=1",
		"--use_plain_table=1", "--open_files=-1", "--mmap_read=1", "--memtablerep=prefix_hash", "--bloom_bits=10",
		"--benchmarks=filluniquerandom,readrandom", "--use_existing_db=0", "--num=2000", "--threads=1"}
	if code := run(args); code != 0 {
		t.Fatalf("exit %d", code)
	}
}
