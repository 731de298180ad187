package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// fleet is a spread EachNode benchmark of one engine on five nodes; nvme-4 is 25% slow.
func fleet() *Benchmark {
	b := &Benchmark{}
	b.Name, b.Namespace = "fleet", "default"
	b.Spec.Engines = []api.EngineSpec{{Name: api.EngineRocksDB}}
	b.Spec.Threads = []int32{1}
	b.Spec.Storage.Medium = api.MediumLocalNVMe
	b.Spec.Resources.Memory = resource.MustParse("1Gi")
	b.Spec.Placement.Spread = api.SpreadEachNode
	b.Status.Phase = api.PhaseSucceeded
	for i, ops := range []float64{100000, 104000, 98000, 75000, 101000} {
		node := "nvme-" + string(rune('0'+i))
		s := phase("readrandom", 1, ops, 10+float64(i))
		b.Status.Runs = append(b.Status.Runs, api.RunStatus{Name: "rocksdb@" + node, Engine: api.EngineRocksDB, NodeName: node,
			Phase: api.RunSucceeded, Results: []api.PhaseSummary{s.PhaseSummary}})
	}
	return b
}

func TestNodeTables(t *testing.T) {
	tables := NodeTables(fleet(), DefaultTolerance)
	if len(tables) != 2 {
		t.Fatalf("%d tables", len(tables))
	}
	wantPer := [][]string{
		{"nvme-0", "rocksdb", "readrandom", "1", "100000", "+0.0%", "10.0"},
		{"nvme-1", "rocksdb", "readrandom", "1", "104000", "+4.0%", "11.0"},
		{"nvme-2", "rocksdb", "readrandom", "1", "98000", "-2.0%", "12.0"},
		{"nvme-3", "rocksdb", "readrandom", "1", "75000", "-25.0%", "13.0"},
		{"nvme-4", "rocksdb", "readrandom", "1", "101000", "+1.0%", "14.0"},
	}
	if diff := cmp.Diff(wantPer, tables[0].Rows); diff != "" {
		t.Errorf("per node (-want +got):\n%s", diff)
	}
	wantSpread := [][]string{{"rocksdb", "readrandom", "1", "5", "75000", "100000", "104000", "29.0%", "nvme-3 (-25.0%)"}}
	if diff := cmp.Diff(wantSpread, tables[1].Rows); diff != "" {
		t.Errorf("spread (-want +got):\n%s", diff)
	}
	// A wider tolerance names nobody.
	if got := NodeTables(fleet(), 0.30)[1].Rows[0][8]; got != Empty {
		t.Errorf("outside at 30%% = %q", got)
	}
}

func TestNodeTablesMedianOfRepeats(t *testing.T) {
	b := fleet()
	b.Status.Runs = b.Status.Runs[:2]
	for i := range b.Status.Runs {
		r := &b.Status.Runs[i]
		for it, ops := range []float64{1000, 3000} {
			p := phase("readrandom", 1, ops*float64(i+1), 10).PhaseSummary
			p.Iteration = int32(it + 1)
			r.Results = append(r.Results, p)
		}
	}
	// nvme-0: 100000, 1000, 3000 -> 3000; nvme-1: 104000, 2000, 6000 -> 6000.
	rows := NodeTables(b, DefaultTolerance)[0].Rows
	if rows[0][4] != "3000" || rows[1][4] != "6000" {
		t.Fatalf("rows = %v", rows)
	}
}

func TestPlacementNotes(t *testing.T) {
	two := func(nodeA, nodeB, fpA, fpB string) *Benchmark {
		b := &Benchmark{}
		b.Name = "cmp"
		for i, n := range []string{nodeA, nodeB} {
			s := api.RunStatus{Name: []string{"rocksdb", "pebble"}[i], NodeName: n}
			if fp := []string{fpA, fpB}[i]; fp != "" {
				s.Provenance = &api.ProvenanceSummary{Node: fp}
			}
			b.Status.Runs = append(b.Status.Runs, s)
		}
		return b
	}
	if n := PlacementNotes(two("a", "a", "x", "x")); n != nil {
		t.Errorf("same node: %v", n)
	}
	if n := PlacementNotes(two("a", "", "", "")); n != nil {
		t.Errorf("unknown node: %v", n)
	}
	got := PlacementNotes(two("a", "b", "x", "y"))
	want := []string{
		"warning: the runs ran on different nodes (rocksdb on a; pebble on b), so the comparison is also one of machines",
		"warning: the runs' node fingerprints differ (rocksdb: x; pebble: y)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// Across two benchmarks (compare), runs are named by benchmark.
	a, b := two("a", "a", "", ""), two("b", "b", "", "")
	a.Name, b.Name = "base", "new"
	got = PlacementNotes(a, b)
	if len(got) != 1 || !strings.Contains(got[0], "base/rocksdb, base/pebble on a; new/rocksdb, new/pebble on b") {
		t.Errorf("compare notes = %v", got)
	}
	if n := PlacementNotes(fleet()); n != nil {
		t.Errorf("EachNode is per node on purpose: %v", n)
	}
	// The comparison table carries them.
	if tb := Compare(a, b).Table(); !strings.Contains(strings.Join(tb.Notes, "\n"), "different nodes") {
		t.Errorf("compare notes: %v", tb.Notes)
	}
}

func TestWriteByNode(t *testing.T) {
	var out bytes.Buffer
	if err := WriteByNode(&out, []*Benchmark{fleet()}, "text", DefaultTolerance); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"KVBenchmark default/fleet by node", "Per node", "Spread across nodes (outside: more than 10.0% from the median ops/s)", "nvme-3 (-25.0%)"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("output lacks %q:\n%s", s, out.String())
		}
	}
	if err := WriteByNode(&out, []*Benchmark{fleet()}, "text", -1); err == nil {
		t.Error("negative tolerance accepted")
	}
	empty := fleet()
	empty.Status.Runs = nil
	if err := WriteByNode(&out, []*Benchmark{empty}, "text", DefaultTolerance); err == nil || !strings.Contains(err.Error(), "has no results") {
		t.Errorf("err = %v", err)
	}
}
