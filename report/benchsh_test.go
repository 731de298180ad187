package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

func i64p(v int64) *int64     { return &v }
func f64p(v float64) *float64 { return &v }

// benchShFixture gives the fixture's first rocksdb phase engine statistics, usage and
// provenance with round numbers, so every benchmark.sh column can be checked by hand.
func benchShFixture(t *testing.T) *Benchmark {
	b := fixture(t)
	full := b.Results["rocksdb"]
	full.Provenance = &api.Provenance{RunnerRevision: "abc123", Seed: 301}
	p := &full.Phases[0] // readrandom, 1 thread, 100000 ops/s, 10 s
	p.MBPerSec = 11.1
	p.EngineStats = &api.EngineStats{
		FlushBytesWritten: i64p(1 << 30), CompactionBytesWritten: i64p(2 << 30), WriteAmplification: f64p(3),
		CompactionSeconds: f64p(4.4), CompactionCPUSeconds: f64p(3.6), StallSeconds: f64p(0.5), StallCount: i64p(7),
		LSMBytes: i64p(1536 << 20), BlobBytes: i64p(0),
	}
	p.Usage = &api.PhaseUsage{CPUSeconds: 25, UserCPUSeconds: 20, SystemCPUSeconds: 5, MaxRSSBytes: 3 << 29}
	p.EngineDumps = []api.NamedText{{Name: "rocksdb.stats", Text: "** DB Stats **\nUptime(secs): 10.0 total\n"}}
	return b
}

func TestBenchShRow(t *testing.T) {
	b := benchShFixture(t)
	rows := BenchShRows(b)
	cols := BenchShColumns()
	if want := strings.Fields("ops_sec mb_sec lsm_sz blob_sz c_wgb w_amp c_mbps c_wsecs c_csecs b_rgb b_wgb usec_op p50 p99 p99.9 p99.99 pmax uptime stall% Nstall u_cpu s_cpu rss test date version job_id githash"); !cmp.Equal(want, cols) {
		t.Fatalf("columns %v, want benchmark.sh's %v", cols, want)
	}
	// rows: rocksdb load, its phases, then leveldb's load and phases.
	got := map[string]string{}
	for i, c := range cols {
		got[c] = rows[1][i]
	}
	want := map[string]string{
		"ops_sec": "100000", "mb_sec": "11.1", "lsm_sz": "2GB", "blob_sz": "0B", "c_wgb": "3.0", "w_amp": "3.0",
		"c_mbps":  "307.2", // 3 GiB over 10 s
		"c_wsecs": "4", "c_csecs": "4", "b_rgb": "0", "b_wgb": "0", "usec_op": "10.0",
		"p50": "2.0", "p99": "10", "p99.9": "100", "p99.99": "1000", "pmax": "10000", "uptime": "10",
		"stall%": "5.0", "Nstall": "7", "u_cpu": "0.020", "s_cpu": "0.005", "rss": "1.5",
		"test": "readrandom.t1", "date": "2023-11-14T22:13:20", "version": "7.8.3", "job_id": "demo/rocksdb", "githash": "abc123",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("readrandom row (-want +got):\n%s", diff)
	}
	// A phase known only from a status summary has no engine columns: empty, not zero.
	var level []string
	for _, r := range rows {
		if r[len(r)-2] == "demo/leveldb" && r[23] == "readrandom.t4" {
			level = r
		}
	}
	if level == nil {
		t.Fatalf("no leveldb readrandom.t4 row in %v", rows)
	}
	for i, c := range cols {
		switch c {
		case "lsm_sz", "c_wgb", "w_amp", "stall%", "Nstall", "u_cpu", "rss", "githash":
			if level[i] != "" {
				t.Errorf("leveldb summary-only %s = %q, want empty", c, level[i])
			}
		case "version":
			if level[i] != "leveldb-1.23" {
				t.Errorf("version %q", level[i])
			}
		}
	}
}

func TestWriteBenchShTSVAndJSON(t *testing.T) {
	b := benchShFixture(t)
	var tsv bytes.Buffer
	if err := WriteBenchSh(&tsv, []*Benchmark{b}, "tsv"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(tsv.String(), "\n"), "\n")
	if lines[0] != strings.Join(BenchShColumns(), "\t") {
		t.Errorf("header %q", lines[0])
	}
	if want := 1 + len(b.Phases(true)); len(lines) != want {
		t.Errorf("%d lines, want a header and one per phase (%d)", len(lines), want)
	}
	for _, l := range lines {
		if n := strings.Count(l, "\t"); n != len(BenchShColumns())-1 {
			t.Errorf("line with %d tabs: %q", n, l)
		}
	}
	var js bytes.Buffer
	if err := WriteBenchSh(&js, []*Benchmark{b}, "json"); err != nil {
		t.Fatal(err)
	}
	var objs []map[string]string
	if err := json.Unmarshal(js.Bytes(), &objs); err != nil {
		t.Fatal(err)
	}
	if len(objs) != len(lines)-1 || objs[1]["w_amp"] != "3.0" || objs[1]["test"] != "readrandom.t1" {
		t.Errorf("json rows %v", objs[:2])
	}
	if _, ok := objs[len(objs)-1]["w_amp"]; ok {
		t.Errorf("summary-only row has w_amp %v; empty values are left out", objs[len(objs)-1])
	}
}

func TestWriteEngineDumps(t *testing.T) {
	var out bytes.Buffer
	if err := WriteEngineDumps(&out, []*Benchmark{benchShFixture(t)}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "run rocksdb (rocksdb) phase readrandom threads=1: rocksdb.stats <==\n** DB Stats **") {
		t.Errorf("dump output:\n%s", out.String())
	}
	if err := WriteEngineDumps(&out, []*Benchmark{fixture(t)}); err == nil {
		t.Error("no dumps: want an error saying where they are")
	}
}
