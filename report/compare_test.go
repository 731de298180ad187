package report

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

func TestCompare(t *testing.T) {
	a, b := fixture(t), fixture(t)
	b.Name = "demo-2"
	full := b.Results["rocksdb"]
	// rocksdb readrandom at 4 threads: 400000 -> 500000 ops/s, p99 10 -> 8 us.
	full.Phases[3].OpsPerSec, full.Phases[3].LatencyMicros.P99 = 500000, 8
	full.Phases = append(full.Phases, phase("readseq", 1, 1e6, 1))
	lv := &b.Status.Runs[1]
	lv.Results = lv.Results[:len(lv.Results)-1] // leveldb pulse at 4 threads only in A

	c := Compare(a, b)
	if len(c.Rows) != 17 {
		t.Errorf("%d matched phases, want 17", len(c.Rows))
	}
	if diff := cmp.Diff([]string{"leveldb pulse threads=4"}, c.OnlyA); diff != "" {
		t.Errorf("only in A (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"rocksdb readseq threads=1"}, c.OnlyB); diff != "" {
		t.Errorf("only in B (-want +got):\n%s", diff)
	}
	got := text(c.Table())
	for _, line := range []string{
		"Comparison: A (old) = default/demo (cluster), B (new) = default/demo-2 (cluster)",
		"Run      Workload    Threads  ops/s A  ops/s B  change  p99 A (us)  p99 B (us)  change",
		"rocksdb  readrandom        4   400000   500000  +25.0%        10.0        8.00  -20.0%",
		"rocksdb  readrandom        1   100000   100000   +0.0%        10.0        10.0   +0.0%",
		"leveldb  load              1   250000   250000   +0.0%        4.00        4.00   +0.0%",
		"  only in A: leveldb pulse threads=4",
		"  only in B: rocksdb readseq threads=1",
	} {
		if !strings.Contains(got, line+"\n") {
			t.Errorf("no line\n%s\nin\n%s", line, got)
		}
	}
}

// Two one-engine benchmarks compare engine against engine.
func TestCompareSingleRuns(t *testing.T) {
	a, b := fixture(t), fixture(t)
	a.Status.Runs = a.Status.Runs[:1]
	b.Status.Runs = b.Status.Runs[1:]
	b.Results = nil
	c := Compare(a, b)
	if len(c.Rows) != 9 || len(c.OnlyA)+len(c.OnlyB) != 0 {
		t.Fatalf("rows %d, only A %v, only B %v", len(c.Rows), c.OnlyA, c.OnlyB)
	}
	got := text(c.Table())
	line := "rocksdb vs leveldb  readrandom        1   100000    50000  -50.0%        10.0        20.0  +100.0%"
	if !strings.Contains(got, line+"\n") {
		t.Errorf("no line\n%s\nin\n%s", line, got)
	}
}

func TestCompareIterationsAndMissingLatency(t *testing.T) {
	a, b := fixture(t), fixture(t)
	for _, x := range []*Benchmark{a, b} {
		x.Results = nil
		x.Status.Runs = x.Status.Runs[1:]
		x.Status.Runs[0].Results = []api.PhaseSummary{phase("readrandom", 2, 1000, 5).PhaseSummary, phase("readrandom", 2, 1000, 5).PhaseSummary}
		x.Status.Runs[0].Results[1].Iteration = 1
	}
	b.Status.Runs[0].Results[1].OpsPerSec = 1500
	b.Status.Runs[0].Results[1].LatencyMicros = nil
	got := text(Compare(a, b).Table())
	for _, line := range []string{
		"Run      Workload    Threads  Iteration  ops/s A  ops/s B  change  p99 A (us)  p99 B (us)  change",
		"leveldb  readrandom        2          1     1000     1500  +50.0%        5.00           -       -",
	} {
		if !strings.Contains(got, line+"\n") {
			t.Errorf("no line\n%s\nin\n%s", line, got)
		}
	}
}

// db_bench's phases (dbbench:fillseq, in a benchmark that drove Debian's db_bench) match the runner's
// same-named phases once exact names are exhausted; an exact match always wins.
func TestCompareDBBenchWithRunner(t *testing.T) {
	single := func(phases ...api.PhaseResult) *Benchmark {
		b := fixture(t)
		b.Status.Runs = b.Status.Runs[:1]
		b.Status.Runs[0].Results = nil
		full := *b.Results["rocksdb"]
		full.Load, full.Phases = nil, phases
		b.Results = map[string]*api.Result{"rocksdb": &full}
		return b
	}
	a := single(phase("dbbench:fillseq", 1, 600000, 1), phase("dbbench:readrandom", 1, 100000, 10),
		phase("readrandom", 1, 90000, 12), phase("dbbench:readseq", 1, 1e6, 1))
	b := single(phase("fillseq", 1, 500000, 2), phase("readrandom", 1, 80000, 14))
	c := Compare(a, b)
	var got []string
	for _, r := range c.Rows {
		got = append(got, r.Workload)
	}
	if diff := cmp.Diff([]string{"dbbench:fillseq vs fillseq", "readrandom"}, got); diff != "" {
		t.Errorf("matched workloads (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"rocksdb dbbench:readrandom threads=1", "rocksdb dbbench:readseq threads=1"}, c.OnlyA); diff != "" {
		t.Errorf("only in A (-want +got):\n%s", diff)
	}
	if len(c.OnlyB) != 0 {
		t.Errorf("only in B: %v", c.OnlyB)
	}
}
