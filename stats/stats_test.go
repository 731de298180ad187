package stats

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %.12g, want %.12g", what, got, want)
	}
}

// The expected values were computed with Python's statistics module:
//
//	xs = [102, 98, 110, 95, 100, 105, 97, 101, 99, 120]
//	statistics.median(xs) = 100.5, statistics.mean(xs) = 102.7
//	statistics.stdev(xs) = 7.424434134816082 (n-1), CoV = 7.424434134816082 / 102.7
//
// The 95% interval of the median of 10 values is [x(2), x(9)] of the sorted values (97, 110):
// its coverage is P(2 <= B <= 8) for B ~ Binomial(10, 1/2) = 1 - 2*(1+10)/1024 = 0.978515625,
// while [x(3), x(8)] covers only 1 - 2*(1+10+45)/1024 = 0.890625 < 0.95.
func TestSummarizeTen(t *testing.T) {
	xs := []float64{102, 98, 110, 95, 100, 105, 97, 101, 99, 120}
	s := Summarize(xs)
	if s.N != 10 {
		t.Errorf("N = %d", s.N)
	}
	near(t, "median", s.Median, 100.5)
	near(t, "mean", s.Mean, 102.7)
	near(t, "stddev", s.StdDev, 7.424434134816082)
	near(t, "CoV", s.CoV, 7.424434134816082/102.7)
	near(t, "min", s.Min, 95)
	near(t, "max", s.Max, 120)
	near(t, "CI low", s.CILow, 97)
	near(t, "CI high", s.CIHigh, 110)
	near(t, "CI confidence", s.CIConfidence, 0.978515625)
	if xs[0] != 102 {
		t.Errorf("Summarize sorted its input: %v", xs)
	}
}

// Five values have no finite 95% interval for the median: the widest, [x(1), x(5)], covers
// 1 - 2/32 = 0.9375. The interval is then reported as absent, never as ±Inf (JSON has no Inf).
//
//	xs = [10, 12, 11, 13, 9]: median 11, mean 11, stdev sqrt(2.5) = 1.5811388300841898
func TestSummarizeFiveHasNoInterval(t *testing.T) {
	s := Summarize([]float64{10, 12, 11, 13, 9})
	near(t, "median", s.Median, 11)
	near(t, "mean", s.Mean, 11)
	near(t, "stddev", s.StdDev, math.Sqrt(2.5))
	near(t, "CoV", s.CoV, math.Sqrt(2.5)/11)
	if s.CIConfidence != 0 || s.CILow != 0 || s.CIHigh != 0 {
		t.Errorf("interval %v..%v at %v, want none", s.CILow, s.CIHigh, s.CIConfidence)
	}
	if got := Format(s, func(v float64) string { return "11" }); got != "11 ± ∞ (CoV 14.4%)" {
		t.Errorf("Format = %q", got)
	}
}

func TestSummarizeOne(t *testing.T) {
	s := Summarize([]float64{42})
	if s.N != 1 || s.Median != 42 || s.Mean != 42 || s.StdDev != 0 || s.CoV != 0 || s.Min != 42 || s.Max != 42 {
		t.Errorf("%+v", s)
	}
	if got := Format(s, func(v float64) string { return "42" }); got != "42" {
		t.Errorf("Format = %q", got)
	}
	if (Summarize(nil) != api.SampleStats{}) {
		t.Errorf("empty sample: %+v", Summarize(nil))
	}
}

func phase(w string, threads, it int32, ops, p99 float64) api.PhaseSummary {
	return api.PhaseSummary{Workload: w, Threads: threads, Iteration: it, OpsPerSec: ops,
		LatencyMicros: &api.Percentiles{P50: p99 / 4, P99: p99, P999: 2 * p99}}
}

// Phases group into points across iterations; a workload listed twice is two points.
func TestGroupAndStatusPoints(t *testing.T) {
	var phases []api.PhaseSummary
	ops := []float64{100, 104, 96, 130, 100} // CoV 0.1356: noisy
	for it := range int32(5) {
		phases = append(phases,
			phase("readrandom", 1, it, ops[it], 10),
			phase("readrandom", 1, it, 1000+float64(it), 5), // the spec lists readrandom twice
			phase("readrandom", 4, it, 400, 12))
	}
	r := &api.RunStatus{Name: "pebble", Engine: api.EnginePebble, Results: phases}
	pts := RunPoints(r)
	var names []string
	for _, p := range pts {
		names = append(names, p.Label())
		if len(p.Phases) != 5 {
			t.Errorf("%s: %d phases", p.Label(), len(p.Phases))
		}
	}
	if got := strings.Join(names, ", "); got != "pebble readrandom threads=1, pebble readrandom#2 threads=1, pebble readrandom threads=4" {
		t.Errorf("points %s", got)
	}
	st := StatusPoints(r)
	if len(st) != 3 {
		t.Fatalf("%d status points", len(st))
	}
	// Python: statistics.stdev([100,104,96,130,100]) / statistics.mean(...) = 13.711309200802088 / 106
	near(t, "CoV", st[0].OpsPerSec.CoV, 13.711309200802088/106)
	if !st[0].Noisy || st[1].Noisy || st[2].Noisy {
		t.Errorf("noisy flags %v %v %v, want only the first", st[0].Noisy, st[1].Noisy, st[2].Noisy)
	}
	if st[0].P99Micros == nil || st[0].P99Micros.Median != 10 {
		t.Errorf("p99 %+v", st[0].P99Micros)
	}
	r.Points = st
	if got := NoisyPoints([]api.RunStatus{*r}); len(got) != 1 || got[0] != "pebble readrandom threads=1 (CoV 12.9%)" {
		t.Errorf("noisy points %q", got)
	}
	// Without repeats there is nothing to summarise.
	if got := StatusPoints(&api.RunStatus{Name: "x", Results: phases[:3]}); got != nil {
		t.Errorf("points without repeats: %+v", got)
	}
}

func points(run string, w string, ops []float64) []Point {
	var phases []api.PhaseSummary
	for i, v := range ops {
		phases = append(phases, phase(w, 2, int32(i), v, 1e6/v))
	}
	return Group(run, api.EngineName(run), phases)
}

// p-values are the exact two-sided Mann-Whitney U test, worked out in Python by enumerating all
// C(10,5) = 252 ways to split the ten values into two groups of five and counting the splits whose
// U is at least as far from its mean (12.5) as the observed one:
//
//	old [100,102,98,101,99] new [97,95,99.5,96,94]:  U = 23, 8 of 252  -> p = 0.031746031746
//	old [100,102,98,101,99] new [103,97,99.5,96,94]: U = 18, 78 of 252 -> p = 0.309523809524
//	old [100,102,98,101,99] new [110,120,130,140,150]: U = 0, 2 of 252 -> p = 0.007936507937
func TestCompareSignificance(t *testing.T) {
	old := points("pebble", "readrandom", []float64{100, 102, 98, 101, 99})
	cases := []struct {
		name        string
		new         []float64
		p           float64
		significant bool
		regressed   bool // at a 2% threshold
	}{
		{"slower", []float64{97, 95, 99.5, 96, 94}, 8.0 / 252, true, true},
		{"overlapping", []float64{103, 97, 99.5, 96, 94}, 78.0 / 252, false, false},
		{"faster", []float64{110, 120, 130, 140, 150}, 2.0 / 252, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmp := Compare(old, points("pebble", "readrandom", c.new), Options{ThresholdPercent: 2})
			if cmp.Matched != 1 || len(cmp.Changes) != len(Metrics) {
				t.Fatalf("matched %d, %d changes", cmp.Matched, len(cmp.Changes))
			}
			ops := cmp.Changes[0]
			if ops.Metric != OpsPerSec {
				t.Fatalf("first metric %s", ops.Metric)
			}
			near(t, "p", ops.P, c.p)
			if ops.Significant != c.significant || ops.Regressed != c.regressed {
				t.Errorf("significant %v regressed %v, want %v %v", ops.Significant, ops.Regressed, c.significant, c.regressed)
			}
			// Latency here is 1e6/ops: it moves the other way with the same p-value.
			lat := cmp.Changes[2]
			near(t, "p99 p", lat.P, c.p)
			if lat.Regressed != c.regressed {
				t.Errorf("p99 regressed %v, want %v", lat.Regressed, c.regressed)
			}
			if cmp.Regressed() != c.regressed {
				t.Errorf("Regressed() = %v", cmp.Regressed())
			}
		})
	}
}

// A significant change within the threshold is not a regression; the verdict names the worst point.
func TestCompareThresholdAndVerdict(t *testing.T) {
	old := points("pebble", "readrandom", []float64{100, 102, 98, 101, 99})
	slower := points("pebble", "readrandom", []float64{97, 95, 99.5, 96, 94}) // median 96: -4%
	c := Compare(old, slower, Options{ThresholdPercent: 5})
	if c.Regressed() {
		t.Errorf("a 4%% drop regressed at a 5%% threshold: %s", c.Verdict())
	}
	if got := c.Verdict(); !strings.HasPrefix(got+")", "no significant regression beyond 5% in 1 point(s) (worst: pebble readrandom threads=2 p50 (us) +4.17% (p=0.032, n=5+5))") {
		t.Errorf("verdict %q", got)
	}
	// Latency (1e6/ops) rose by 4.17%, ops/s fell by 4%: latency is worse, and ties keep metric order.
	c = Compare(old, slower, Options{ThresholdPercent: 3})
	if got := c.Verdict(); got != "regressed: pebble readrandom threads=2 p50 (us) +4.17% (p=0.032, n=5+5), and 3 more" {
		t.Errorf("verdict %q", got)
	}
	if w := c.Worst(); w == nil || !w.Regressed {
		t.Errorf("worst %+v", w)
	}
	pc := c.PointChanges(2)
	if len(pc) != 2 || !pc[0].Regressed || pc[0].Metric != "p50Micros" || pc[0].Engine != "pebble" || pc[0].Threads != 2 || math.Abs(*pc[0].P-8.0/252) > 1e-12 {
		t.Errorf("point changes %+v", pc)
	}
	if d := c.Changes[0].Delta(); d != "-4.00%" {
		t.Errorf("delta %q", d)
	}
}

// One repeat each can never be significant: benchmath says how many it needs, and the change is
// shown with its size and no verdict.
func TestCompareSingleRepeat(t *testing.T) {
	c := Compare(points("a", "fillseq", []float64{100}), points("b", "fillseq", []float64{50}), Options{ThresholdPercent: 5})
	ch := c.Changes[0]
	if ch.Significant || ch.Regressed || !ch.NoVerdict || ch.Delta() != "-50.00% no verdict" || ch.Run != "a vs b" {
		t.Errorf("%+v", ch)
	}
	if len(ch.Warnings) == 0 || !strings.Contains(ch.Warnings[0], "need >= 4 samples") {
		t.Errorf("warnings %q", ch.Warnings)
	}
}

// db_bench's points match the runner's without the prefix once exact names are used up, and
// points on one side only are named.
func TestCompareMatching(t *testing.T) {
	old := append(points("rocksdb", "dbbench:fillseq", []float64{1, 2}), points("rocksdb", "readrandom", []float64{1, 2})...)
	old = append(old, points("rocksdb", "dbbench:readseq", []float64{1})...)
	new := append(points("rocksdb", "fillseq", []float64{1, 2}), points("rocksdb", "readrandom", []float64{1, 2})...)
	new = append(new, points("rocksdb", "overwrite", []float64{1})...)
	c := Compare(old, new, Options{ThresholdPercent: 5})
	if c.Matched != 2 || c.Changes[0].Workload != "dbbench:fillseq vs fillseq" {
		t.Errorf("matched %d, first %q", c.Matched, c.Changes[0].Workload)
	}
	if len(c.OnlyOld) != 1 || c.OnlyOld[0] != "rocksdb dbbench:readseq threads=2" || len(c.OnlyNew) != 1 || c.OnlyNew[0] != "rocksdb overwrite threads=2" {
		t.Errorf("only old %q, only new %q", c.OnlyOld, c.OnlyNew)
	}
}

func TestParseThreshold(t *testing.T) {
	for in, want := range map[string]float64{"5%": 5, "5": 5, "0.5%": 0.5, "0": 0, "100%": 100} {
		if got, err := ParseThreshold(in); err != nil || got != want {
			t.Errorf("%q: %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "-1%", "101", "5x", "NaN", "%"} {
		if _, err := ParseThreshold(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

// Alpha and the metric list narrow the gate: at alpha 0.01 the 5-vs-5 difference with p = 0.0317
// is not significant, the one with p = 0.0079 is; Metrics keeps to ops/s.
func TestCompareOptions(t *testing.T) {
	old := points("pebble", "readrandom", []float64{100, 102, 98, 101, 99})
	c := Compare(old, points("pebble", "readrandom", []float64{97, 95, 99.5, 96, 94}), Options{ThresholdPercent: 2, Alpha: 0.01, Metrics: []Metric{OpsPerSec}})
	if len(c.Changes) != 1 || c.Changes[0].Significant || c.Regressed() {
		t.Errorf("alpha 0.01, p 0.0317: %+v", c.Changes)
	}
	c = Compare(old, points("pebble", "readrandom", []float64{50, 51, 49, 52, 48}), Options{ThresholdPercent: 2, Alpha: 0.01, Metrics: []Metric{OpsPerSec}})
	if len(c.Changes) != 1 || !c.Changes[0].Regressed {
		t.Errorf("alpha 0.01, p 0.0079: %+v", c.Changes)
	}
	if c.Alpha != 0.01 || c.ThresholdPercent != 2 {
		t.Errorf("options %+v", c.Options)
	}
	if d := Compare(old, old, Options{}); d.Alpha != Alpha || len(d.Metrics) != len(Metrics) {
		t.Errorf("defaults %+v", d.Options)
	}
}

func TestParseMetrics(t *testing.T) {
	got, err := ParseMetrics("ops, p99,p99Micros,p999")
	if err != nil || len(got) != 3 || got[0] != OpsPerSec || got[1] != P99Micros || got[2] != P999Micros {
		t.Errorf("%v %v", got, err)
	}
	if _, err := ParseMetrics("ops,p42"); err == nil || err.Error() != `unknown metric "p42" (ops, p50, p99, p999)` {
		t.Errorf("%v", err)
	}
}

// extremes are values a runner may report (issue 18: two repeats at 1e200 and 3e200 ops/s made
// the standard deviation +Inf, and the status could never be written again).
var extremes = []float64{1e308, -1e308, math.MaxFloat64, -math.MaxFloat64, 3e200, 1e200, 0, -1, 1,
	5e-324, -5e-324, 1e-310, math.SmallestNonzeroFloat64, 1e-300, 123456.789}

// Property: over every pair and triple of extreme values, and 3,000 random tuples of up to 12 of
// them, summaries and comparisons hold finite numbers only, marshal, and keep min <= median <= max.
func TestStatisticsOfExtremeValuesAreFinite(t *testing.T) {
	var tuples [][]float64
	for _, a := range extremes {
		for _, b := range extremes {
			tuples = append(tuples, []float64{a, b})
			for _, c := range extremes {
				tuples = append(tuples, []float64{a, b, c})
			}
		}
	}
	rng := rand.New(rand.NewPCG(18, 18))
	for range 3000 {
		xs := make([]float64, 1+rng.IntN(12))
		for i := range xs {
			xs[i] = extremes[rng.IntN(len(extremes))]
		}
		tuples = append(tuples, xs)
	}
	finiteAll := func(what string, xs []float64, v any) {
		t.Helper()
		if _, err := json.Marshal(v); err != nil {
			t.Fatalf("%s of %v: %v", what, xs, err)
		}
	}
	for i, xs := range tuples {
		s := Summarize(xs)
		finiteAll("Summarize", xs, s)
		if s.Min > s.Median || s.Median > s.Max || s.CoV < 0 || s.StdDev < 0 {
			t.Fatalf("Summarize(%v) = %+v", xs, s)
		}
		old := tuples[(i*7919)%len(tuples)]
		pa := Point{Run: "r", Workload: "w", Threads: 1}
		pb := pa
		for _, x := range old {
			pa.Phases = append(pa.Phases, api.PhaseSummary{OpsPerSec: x, LatencyMicros: &api.Percentiles{P99: x, P50: x, P999: x}})
		}
		for _, x := range xs {
			pb.Phases = append(pb.Phases, api.PhaseSummary{OpsPerSec: x, LatencyMicros: &api.Percentiles{P99: x, P50: x, P999: x}})
		}
		c := Compare([]Point{pa}, []Point{pb}, Defaults)
		for _, ch := range c.Changes {
			finiteAll("Compare", xs, ch.PointChange())
			finiteAll("Compare", xs, ch)
		}
		finiteAll("Summary", xs, Summary(&pb, DefaultNoisyCoV))
	}
	// The case, exactly: the spread of 1e200 and 3e200 is 1.414e200.
	near(t, "stddev of 1e200, 3e200", Summarize([]float64{1e200, 3e200}).StdDev/1e200, math.Sqrt2)
}
