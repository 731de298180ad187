package stats

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// MinP is what the exact U test (benchmath) gives for fully separated samples: 2 / C(n1+n2, n1).
func TestMinPMatchesTheUTest(t *testing.T) {
	for _, n := range [][2]int{{1, 1}, {2, 2}, {3, 3}, {4, 4}, {5, 5}, {6, 6}, {5, 1}, {3, 5}} {
		var fast, slow []float64
		for i := range n[0] {
			fast = append(fast, 100+float64(i))
		}
		for i := range n[1] {
			slow = append(slow, 10+float64(i))
		}
		c := Compare(points("pebble", "readrandom", fast), points("pebble", "readrandom", slow), Options{})
		near(t, "p of fully separated samples", c.Changes[0].P, MinP(n[0], n[1]))
	}
	near(t, "MinP(3,3)", MinP(3, 3), 0.1)
	near(t, "MinP(4,4)", MinP(4, 4), 2.0/70)
	near(t, "MinP(5,5)", MinP(5, 5), 2.0/252)
	if MinP(0, 5) != 1 {
		t.Errorf("MinP(0, 5) = %v", MinP(0, 5))
	}
	for alpha, want := range map[float64]int{0.05: 4, 0.01: 5, 0.005: 6, 0.2: 3} {
		if got := MinRepeats(alpha); got != want {
			t.Errorf("MinRepeats(%v) = %d, want %d", alpha, got, want)
		}
	}
}

// Below the repeats the U test needs, a 10x drop is no regression and no pass: no verdict, with its size.
func TestNoVerdictBelowMinRepeats(t *testing.T) {
	for _, n := range []int{1, 3} {
		fast, slow := make([]float64, n), make([]float64, n)
		for i := range n {
			fast[i], slow[i] = 100000+float64(i), 10000+float64(i)
		}
		c := Compare(points("pebble", "readrandom", fast), points("pebble", "readrandom", slow), Options{ThresholdPercent: 5})
		if c.Outcome() != OutcomeNoVerdict || c.Regressed() {
			t.Fatalf("n=%d: outcome %s", n, c.Outcome())
		}
		ops := c.Changes[0]
		if !ops.NoVerdict || ops.Significant || !strings.HasPrefix(ops.Delta(), "-90.00") || !strings.HasSuffix(ops.Delta(), "% no verdict") {
			t.Errorf("n=%d: %+v, delta %q", n, ops, ops.Delta())
		}
		want := "no verdict: too few repeats in 1 of 1 point(s) (n=" + itoa(n) + "+" + itoa(n) + "): the U test needs at least 4 repeats a side to find a difference at alpha 0.05 (spec.repeat: 4 or more); largest change: pebble readrandom threads=2 p50 (us) "
		if got := c.Verdict(); !strings.HasPrefix(got, want) {
			t.Errorf("n=%d: verdict\n%s\nwant prefix\n%s", n, got, want)
		}
	}
	// 4 a side is enough at 0.05, not at 0.01.
	four := func(base float64) []Point {
		return points("pebble", "readrandom", []float64{base, base + 1, base + 2, base + 3})
	}
	if c := Compare(four(100), four(10), Options{}); c.Outcome() != OutcomeRegressed {
		t.Errorf("4 a side, alpha 0.05: %s", c.Verdict())
	}
	if c := Compare(four(100), four(10), Options{Alpha: 0.01}); c.Outcome() != OutcomeNoVerdict || !strings.Contains(c.Verdict(), "at least 5 repeats a side") {
		t.Errorf("4 a side, alpha 0.01: %s", c.Verdict())
	}
	// Steady and enough repeats: no regression.
	if c := Compare(four(100), four(100), Options{}); c.Outcome() != OutcomeNoRegression {
		t.Errorf("same samples: %s", c.Verdict())
	}
	// A regression found where there are repeats wins over a point without them.
	old := append(four(100), points("pebble", "fillrandom", []float64{100})...)
	c := Compare(old, append(four(10), points("pebble", "fillrandom", []float64{100})...), Options{})
	if c.Outcome() != OutcomeRegressed || len(c.Undecided()) == 0 {
		t.Errorf("mixed: %s", c.Verdict())
	}
}

func itoa(n int) string { return string(rune('0' + n)) }

func spec(size string, seed int64, provenanceSeed int64) *api.KVBenchmark {
	b := &api.KVBenchmark{}
	b.Spec.Dataset = api.DatasetSpec{Size: ptr.To(resource.MustParse(size)), KeySize: 16, ValueSize: 100, Seed: seed}
	b.Spec.Workloads = []api.WorkloadSpec{{Name: api.WorkloadReadRandom, Num: ptr.To[int64](1000)},
		{Name: api.WorkloadYCSB, YCSB: &api.YCSBSpec{Workload: "A"}}, {Name: api.WorkloadReadRandom, Num: ptr.To[int64](5)}}
	b.Spec.Threads = []int32{1}
	if provenanceSeed != 0 {
		b.Status.Runs = []api.RunStatus{{Name: "pebble", Provenance: &api.ProvenanceSummary{Seed: provenanceSeed}}}
	}
	return b
}

// Mismatch names only the fields that differ; an unset seed equals the seed it resolved to.
func TestMismatch(t *testing.T) {
	// kubectl kvbench save pins the resolved seed; the rerun of the spec as written leaves it unset.
	if d := Mismatch(spec("64Mi", 301, 301), spec("64Mi", 0, 301)); d != nil {
		t.Errorf("pinned vs resolved seed: %q", d)
	}
	if d := Mismatch(spec("64Mi", 0, 0), spec("64Mi", 0, 0)); d != nil {
		t.Errorf("both unset: %q", d)
	}
	if diff := cmp.Diff([]string{"dataset.seed: 7 vs 301"}, Mismatch(spec("64Mi", 7, 7), spec("64Mi", 0, 301))); diff != "" {
		t.Errorf("different seeds (-want +got):\n%s", diff)
	}
	a, b := spec("64Mi", 0, 301), spec("32Mi", 0, 301)
	b.Spec.Workloads[0].Num = ptr.To[int64](2000)
	b.Spec.Workloads[0].Threads = []int32{8}                                          // matched by point, not a mismatch
	b.Spec.Workloads[1].YCSB.ReadPercent = ptr.To[int32](90)                          // ycsb-a
	b.Spec.Workloads = append(b.Spec.Workloads, api.WorkloadSpec{Name: "fillrandom"}) // only in b: unmatched points, not a mismatch
	want := []string{"dataset.size: 64Mi vs 32Mi", "workload readrandom.num: 1000 vs 2000", "workload ycsb-a.ycsb.readPercent: unset vs 90"}
	if diff := cmp.Diff(want, Mismatch(a, b)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// Result files have no spec: their runs' dataset stands in.
	r1, r2 := &api.KVBenchmark{}, &api.KVBenchmark{}
	r1.Status.Runs = []api.RunStatus{{Dataset: &api.DatasetInfo{Num: 20000, KeySize: 16, ValueSizeAvg: 100, Bytes: 2320000}}}
	r2.Status.Runs = []api.RunStatus{{Dataset: &api.DatasetInfo{Num: 10000, KeySize: 16, ValueSizeAvg: 100, Bytes: 1160000}}}
	if diff := cmp.Diff([]string{"dataset.num: 20000 vs 10000"}, Mismatch(r1, r2)); diff != "" {
		t.Errorf("result files (-want +got):\n%s", diff)
	}
	if d := Mismatch(r1, r1); d != nil {
		t.Errorf("same result: %q", d)
	}
}
