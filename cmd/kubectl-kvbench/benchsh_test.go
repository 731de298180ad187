package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// withEngineStats copies a saved runner result and gives its phases engine statistics and dumps,
// as a schema v2 runner writes them.
func withEngineStats(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(td("baseline-rocksdb.result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r api.Result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	r.SchemaVersion = api.ResultSchemaVersion
	for i := range r.Phases {
		f, c, w := int64(1<<30), int64(1<<30), 2.0
		r.Phases[i].EngineStats = &api.EngineStats{FlushBytesWritten: &f, CompactionBytesWritten: &c, WriteAmplification: &w}
		r.Phases[i].EngineDumps = []api.NamedText{{Name: "rocksdb.stats", Text: "** Compaction Stats [default] **"}}
	}
	out := filepath.Join(t.TempDir(), "run-rocksdb.result.json")
	b, _ = json.Marshal(&r)
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestReportTSV(t *testing.T) {
	file := withEngineStats(t)
	out := mustRun(t, "report", "-f", file, "--format", "tsv")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if !strings.HasPrefix(lines[0], "ops_sec\tmb_sec\tlsm_sz\tblob_sz\tc_wgb\tw_amp\t") || !strings.HasSuffix(lines[0], "\tjob_id\tgithash") {
		t.Fatalf("header %q", lines[0])
	}
	var r api.Result
	b, _ := os.ReadFile(file)
	_ = json.Unmarshal(b, &r)
	if want := 2 + len(r.Phases); len(lines) != want { // header, load, phases
		t.Fatalf("%d lines, want %d:\n%s", len(lines), want, out)
	}
	cells := strings.Split(lines[2], "\t")
	if cells[4] != "2.0" || cells[5] != "2.0" {
		t.Errorf("c_wgb %q and w_amp %q, want 2.0 and 2.0: %q", cells[4], cells[5], lines[2])
	}
	js := mustRun(t, "report", "-f", file, "--format", "json")
	contains(t, js, `"w_amp": "2.0"`, `"version": "7.8.3"`)
}

func TestReportEngineStats(t *testing.T) {
	out := mustRun(t, "report", "-f", withEngineStats(t), "--engine-stats")
	contains(t, out, "phase readrandom threads=1: rocksdb.stats <==\n** Compaction Stats [default] **\n")
	_, errOut, code := kvbench(t, "report", "-f", td("baseline-rocksdb.result.json"), "--engine-stats")
	if code == 0 || !strings.Contains(errOut, "no engine dumps") {
		t.Errorf("a result without dumps: exit %d, stderr %q", code, errOut)
	}
	_, errOut, code = kvbench(t, "report", "-f", td("baseline-rocksdb.result.json"), "--format", "tsv", "--table", "ycsb")
	if code == 0 || !strings.Contains(errOut, "--table does not apply") {
		t.Errorf("tsv with --table: exit %d, stderr %q", code, errOut)
	}
}

// A spec that left the seed to the default is saved with the seed the runs resolved, so that
// `kubectl apply -f` of the saved file reruns the same keys and operations.
func TestSavePinsResolvedSeed(t *testing.T) {
	bs, err := loadFiles([]string{td("baseline.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	b := bs[0]
	b.Spec.Dataset.Seed = 0 // left to the runner's default
	b.Status.Runs[0].Provenance = &api.ProvenanceSummary{Seed: 301}
	dir := t.TempDir()
	if err := save(io.Discard, dir, b); err != nil {
		t.Fatal(err)
	}
	back, err := loadFiles([]string{filepath.Join(dir, b.Name+".yaml")})
	if err != nil {
		t.Fatal(err)
	}
	if got := back[0].Spec.Dataset.Seed; got != 301 {
		t.Errorf("saved seed %d, want the resolved 301", got)
	}
	// An explicit seed is kept as written.
	b.Spec.Dataset.Seed = 42
	if err := save(io.Discard, dir, b); err != nil {
		t.Fatal(err)
	}
	back, _ = loadFiles([]string{filepath.Join(dir, b.Name+".yaml")})
	if got := back[0].Spec.Dataset.Seed; got != 42 {
		t.Errorf("saved seed %d, want 42", got)
	}
}
