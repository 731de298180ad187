package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// noisy is n values around level with a relative standard deviation cov, from a fixed seed.
func noisy(seed uint64, n int, level, cov float64) []float64 {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]float64, n)
	for i := range out {
		out[i] = level * (1 + cov*r.NormFloat64())
	}
	return out
}

func concat(parts ...[]float64) []float64 {
	var out []float64
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func indexes(cps []ChangePoint) []int {
	out := []int{}
	for _, c := range cps {
		out = append(out, c.Index)
	}
	return out
}

func TestDetect(t *testing.T) {
	ops := DetectOptions{HigherIsBetter: true, MinChange: 0.02}
	lat := DetectOptions{HigherIsBetter: false, MinChange: 0.02}
	spike := noisy(3, 40, 1000, 0.02)
	spike[20] = 700 // one run 30% slower, then back
	spikes := noisy(4, 60, 1000, 0.02)
	spikes[15], spikes[31], spikes[45] = 1400, 600, 1500
	twoDown := noisy(5, 30, 1000, 0.02)
	twoDown[28], twoDown[29] = 700, 700
	flat := make([]float64, 20)
	for i := range flat {
		flat[i] = 5
	}
	for _, tc := range []struct {
		name       string
		values     []float64
		boundaries []int
		o          DetectOptions
		want       []int // significant change points
		regression []bool
		outliers   []int
	}{
		{name: "no change", values: noisy(1, 100, 1000, 0.02), o: ops, want: []int{}},
		{name: "throughput down 10%", values: concat(noisy(1, 30, 1000, 0.02), noisy(2, 10, 900, 0.02)), o: ops,
			want: []int{30}, regression: []bool{true}},
		{name: "throughput up 10%", values: concat(noisy(1, 30, 1000, 0.02), noisy(2, 10, 1100, 0.02)), o: ops,
			want: []int{30}, regression: []bool{false}},
		{name: "latency up 10% is a regression", values: concat(noisy(1, 30, 100, 0.02), noisy(2, 10, 110, 0.02)), o: lat,
			want: []int{30}, regression: []bool{true}},
		{name: "two shifts", values: concat(noisy(1, 30, 1000, 0.02), noisy(2, 20, 800, 0.02), noisy(3, 20, 1000, 0.02)), o: ops,
			want: []int{30, 50}, regression: []bool{true, false}},
		{name: "change in the first window of a long series", values: concat(noisy(1, 20, 1000, 0.02), noisy(2, 150, 950, 0.02)), o: ops,
			want: []int{20}, regression: []bool{true}},
		{name: "one slow run that reverts is an outlier", values: spike, o: ops, want: []int{}, outliers: []int{20}},
		{name: "three excursions", values: spikes, o: ops, want: []int{}, outliers: []int{15, 31, 45}},
		{name: "the newest point alone is not a change", values: concat(noisy(1, 30, 1000, 0.02), []float64{500}), o: ops, want: []int{}},
		{name: "two slow points at the end are too few", values: twoDown, o: ops, want: []int{}},
		{name: "three slow points at the end are a change", values: concat(noisy(5, 28, 1000, 0.02), []float64{700, 700, 702}), o: ops,
			want: []int{28}, regression: []bool{true}},
		{name: "a change below the minimum size is ignored", values: concat(noisy(1, 40, 1000, 0.005), noisy(2, 40, 990, 0.005)), o: ops, want: []int{}},
		{name: "the same change above a smaller minimum is found", values: concat(noisy(1, 40, 1000, 0.005), noisy(2, 40, 990, 0.005)),
			o: DetectOptions{HigherIsBetter: true, MinChange: 0.005}, want: []int{40}, regression: []bool{true}},
		{name: "a provenance boundary places the change", values: concat(noisy(1, 30, 1000, 0.02), noisy(2, 6, 850, 0.02)), boundaries: []int{30}, o: ops,
			want: []int{30}, regression: []bool{true}},
		{name: "an absolute minimum for values near zero", values: concat(noisy(1, 20, 0.1, 0.05), noisy(2, 20, 0.3, 0.05)),
			o: DetectOptions{MinAbsChange: 1}, want: []int{}},
		{name: "constant series", values: flat, o: ops, want: []int{}},
		{name: "constant then another constant", values: concat(flat, []float64{6, 6, 6, 6}), o: ops, want: []int{20}, regression: []bool{false}},
		{name: "not finite values are left out", values: concat(noisy(1, 10, 1000, 0.02), []float64{math.NaN()}, noisy(2, 10, 1000, 0.02), []float64{math.Inf(1)}, noisy(3, 3, 1000, 0.02)),
			o: ops, want: []int{}, outliers: []int{10, 21}},
		{name: "too short", values: []float64{1, 2, 3}, o: ops, want: []int{}},
		{name: "empty", o: ops, want: []int{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Detect(tc.values, tc.boundaries, tc.o)
			sig := d.Significant()
			if diff := cmp.Diff(tc.want, indexes(sig)); diff != "" {
				t.Fatalf("change points (-want +got):\n%s\n%+v", diff, d)
			}
			for i, c := range sig {
				if c.Regression != tc.regression[i] {
					t.Errorf("change point %d: regression %v, want %v", c.Index, c.Regression, tc.regression[i])
				}
				if c.P >= DefaultMaxP || c.Before.N < DefaultMinSegment || c.After.N < DefaultMinSegment {
					t.Errorf("change point %+v: p or sides out of bounds", c)
				}
			}
			if diff := cmp.Diff(tc.outliers, d.Outliers); diff != "" {
				t.Errorf("outliers (-want +got):\n%s", diff)
			}
			// Deterministic: the same input, the same answer.
			if again := Detect(slices.Clone(tc.values), tc.boundaries, tc.o); !cmp.Equal(d, again, cmp.Comparer(func(a, b float64) bool {
				return a == b || math.IsNaN(a) && math.IsNaN(b)
			})) {
				t.Errorf("second call differs: %+v", again)
			}
		})
	}
}

// A boundary is reported with its statistics even when the series did not change there, and it
// still splits the segments: a change point is not moved across it.
func TestDetectBoundary(t *testing.T) {
	values := concat(noisy(1, 20, 1000, 0.02), noisy(2, 20, 1000, 0.02))
	d := Detect(values, []int{20, 0, 99, 20}, DetectOptions{HigherIsBetter: true})
	if len(d.ChangePoints) != 1 {
		t.Fatalf("got %+v, want the one boundary", d.ChangePoints)
	}
	c := d.ChangePoints[0]
	if c.Index != 20 || !c.Boundary || c.Significant || c.Before.N != 20 || c.After.N != 20 || c.From != 0 || c.To != 40 {
		t.Errorf("boundary: %+v", c)
	}
}

// The before and after statistics of a clean step: means, their intervals, the relative change.
func TestDetectStatistics(t *testing.T) {
	values := []float64{100, 102, 98, 101, 99, 100, 80, 81, 79, 80, 82, 78}
	d := Detect(values, nil, DetectOptions{HigherIsBetter: true, MinSegment: 3})
	sig := d.Significant()
	if len(sig) != 1 || sig[0].Index != 6 {
		t.Fatalf("got %+v", d)
	}
	c := sig[0]
	near(t, "before mean", c.Before.Mean, 100)
	near(t, "after mean", c.After.Mean, 80)
	near(t, "change", c.Change, -0.2)
	// sd of the first six = sqrt(10/5) = 1.414..., t(0.975, 5) = 2.5706: half-width 1.4841.
	if math.Abs(c.Before.CIHigh-c.Before.Mean-2.5706*math.Sqrt(2)/math.Sqrt(6)) > 1e-3 {
		t.Errorf("before CI %v..%v", c.Before.CILow, c.Before.CIHigh)
	}
	if !c.Regression || c.P > 1e-8 || c.From != 0 || c.To != 12 {
		t.Errorf("change point %+v", c)
	}
}

// Watch reports only what is new: after the last known change point and within the newest window,
// with indexes into the whole history however long it is.
func TestWatch(t *testing.T) {
	values := concat(noisy(1, 480, 1000, 0.02), noisy(2, 5, 900, 0.02))
	o := DetectOptions{HigherIsBetter: true, MinChange: 0.02}
	got := Watch(values, nil, nil, o)
	if len(got) != 1 || got[0].Index != 480 || !got[0].Regression || got[0].To != 485 || got[0].From < 385 {
		t.Fatalf("Watch = %+v", got)
	}
	if again := Watch(values, nil, []int{480}, o); len(again) != 0 {
		t.Errorf("a known change point was reported again: %+v", again)
	}
	// An old shift, long judged, is not new.
	old := concat(noisy(1, 100, 1000, 0.02), noisy(2, 200, 900, 0.02))
	if got := Watch(old, nil, nil, o); len(got) != 0 {
		t.Errorf("an old change point is new: %+v", got)
	}
}
