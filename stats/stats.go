// Package stats summarises the repeats of each sweep point and compares two benchmarks point by
// point, with golang.org/x/perf/benchmath (the library behind benchstat): the median with its
// order-statistics confidence interval, and the Mann-Whitney U test for "is this a difference".
// The operator (status.runs[].points, spec.baseline) and kubectl kvbench (report, compare) both use
// it, so a gate in CI and a gate in the cluster give the same verdict. It imports no cgo and no
// plotting, so the operator can link it.
package stats

import (
	"fmt"
	"math"
	"strings"

	moremath "github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchmath"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

const (
	// Confidence of the median's interval.
	Confidence = 0.95
	// Alpha is the significance level of the comparison: p < Alpha is a difference.
	Alpha = 0.05
	// DefaultNoisyCoV flags a point whose ops/s vary more than this (5%) over its repeats.
	DefaultNoisyCoV = 0.05
)

// Summarize describes one metric over the repeats of one point. With fewer than 6 values a 95%
// interval for the median is unbounded (benchmath's order statistics); CIConfidence is then 0 and
// CILow, CIHigh are left at 0. Every number it returns is finite, whatever the values (they come
// from a runner image the benchmark's author chose): the values are scaled by a power of two so
// that no sum or square overflows, and what is still beyond float64 (a spread of ±1e308) is
// clamped by Finite.
func Summarize(values []float64) api.SampleStats {
	if len(values) == 0 {
		return api.SampleStats{}
	}
	var most float64
	scaled := make([]float64, len(values))
	for i, v := range values {
		scaled[i] = Finite(v)
		most = max(most, math.Abs(scaled[i]))
	}
	_, exp := math.Frexp(most) // most / 2^exp is in [0.5, 1): exact, and no square overflows
	for i := range scaled {
		scaled[i] = math.Ldexp(scaled[i], -exp)
	}
	back := func(x float64) float64 { return Finite(math.Ldexp(x, exp)) }
	s := benchmath.NewSample(scaled, &benchmath.Thresholds{CompareAlpha: Alpha})
	sum := benchmath.AssumeNothing.Summary(s, Confidence)
	xs := moremath.Sample{Xs: s.Values, Sorted: true}
	lo, hi := xs.Bounds()
	mean, sd := xs.Mean(), xs.StdDev()
	st := api.SampleStats{
		N:      int32(len(values)),
		Median: back(sum.Center),
		Mean:   back(mean),
		StdDev: back(sd),
		Min:    back(lo),
		Max:    back(hi),
	}
	if mean != 0 && len(values) > 1 {
		st.CoV = Finite(sd / math.Abs(mean))
	}
	if finite(sum.Lo) && finite(sum.Hi) {
		st.CILow, st.CIHigh, st.CIConfidence = back(sum.Lo), back(sum.Hi), sum.Confidence
	}
	return st
}

func finite(x float64) bool { return !math.IsInf(x, 0) && !math.IsNaN(x) }

// Finite is x, with NaN as 0 and ±Inf as ±math.MaxFloat64: status and metrics hold finite
// numbers only (json.Marshal refuses the others, and a status that cannot be written is stuck).
func Finite(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return 0
	case math.IsInf(x, 1):
		return math.MaxFloat64
	case math.IsInf(x, -1):
		return -math.MaxFloat64
	}
	return x
}

// Metric is one number of a phase that comparisons look at.
type Metric string

const (
	OpsPerSec  Metric = "opsPerSec"
	P50Micros  Metric = "p50Micros"
	P99Micros  Metric = "p99Micros"
	P999Micros Metric = "p999Micros"
)

// Metrics are the compared metrics, in table order.
var Metrics = []Metric{OpsPerSec, P50Micros, P99Micros, P999Micros}

// Label is the metric's column name in tables.
func (m Metric) Label() string {
	switch m {
	case OpsPerSec:
		return "ops/s"
	case P50Micros:
		return "p50 (us)"
	case P99Micros:
		return "p99 (us)"
	case P999Micros:
		return "p99.9 (us)"
	}
	return string(m)
}

// HigherIsBetter is true for throughput, false for latency.
func (m Metric) HigherIsBetter() bool { return m == OpsPerSec }

// Value is the metric of one phase; false when the phase has no such number (no latency histogram).
func (m Metric) Value(p *api.PhaseSummary) (float64, bool) {
	if m == OpsPerSec {
		return p.OpsPerSec, true
	}
	l := p.LatencyMicros
	if l == nil {
		return 0, false
	}
	switch m {
	case P50Micros:
		return l.P50, true
	case P99Micros:
		return l.P99, true
	case P999Micros:
		return l.P999, true
	}
	return 0, false
}

// Point is one sweep point of one run (engine x workload x threads, and the workload's occurrence
// when the spec lists it twice) with its phases, one per repeat.
type Point struct {
	Run    string
	Engine api.EngineName
	// Workload is the workload name, with "#2", "#3" ... for a workload listed again at the same
	// thread count (as kubectl kvbench report names it).
	Workload string
	Threads  int32
	Phases   []api.PhaseSummary
}

// Label names the point in messages: "rocksdb readrandom threads=4".
func (p *Point) Label() string {
	return fmt.Sprintf("%s %s threads=%d", p.Run, p.Workload, p.Threads)
}

// Values are the metric over the point's repeats (repeats without the metric are left out).
func (p *Point) Values(m Metric) []float64 {
	var out []float64
	for i := range p.Phases {
		if v, ok := m.Value(&p.Phases[i]); ok {
			out = append(out, v)
		}
	}
	return out
}

// Group collects one run's measured phases into sweep points across iterations, in the order the
// points first ran. The n-th phase of a workload at given threads within an iteration is that
// workload's occurrence n, so a workload listed twice gives two points.
func Group(run string, engine api.EngineName, phases []api.PhaseSummary) []Point {
	var out []Point
	at := map[string]int{}         // point key -> index in out
	occurrence := map[string]int{} // workload/threads/iteration -> phases seen so far
	for _, ph := range phases {
		k := fmt.Sprintf("%s/%d/%d", ph.Workload, ph.Threads, ph.Iteration)
		name := ph.Workload
		if n := occurrence[k]; n > 0 {
			name = fmt.Sprintf("%s#%d", ph.Workload, n+1)
		}
		occurrence[k]++
		key := fmt.Sprintf("%s/%d", name, ph.Threads)
		i, ok := at[key]
		if !ok {
			i = len(out)
			at[key] = i
			out = append(out, Point{Run: run, Engine: engine, Workload: name, Threads: ph.Threads})
		}
		out[i].Phases = append(out[i].Phases, ph)
	}
	return out
}

// RunPoints groups a run status's results into points.
func RunPoints(r *api.RunStatus) []Point {
	return Group(r.Name, r.Engine, r.Results)
}

// Summary is PointStats for one point: ops/s and p99 over its repeats; noisy when the CoV of
// ops/s exceeds noisyCoV.
func Summary(p *Point, noisyCoV float64) api.PointStats {
	ps := api.PointStats{Workload: p.Workload, Threads: p.Threads, OpsPerSec: Summarize(p.Values(OpsPerSec))}
	if v := p.Values(P99Micros); len(v) > 0 {
		s := Summarize(v)
		ps.P99Micros = &s
	}
	ps.Noisy = ps.OpsPerSec.N > 1 && ps.OpsPerSec.CoV > noisyCoV
	return ps
}

// StatusPoints is status.runs[].points for a run: one PointStats per sweep point, or nil when no
// point was repeated (a single number needs no summary).
func StatusPoints(r *api.RunStatus) []api.PointStats {
	pts := RunPoints(r)
	repeated := false
	for i := range pts {
		repeated = repeated || len(pts[i].Phases) > 1
	}
	if !repeated {
		return nil
	}
	out := make([]api.PointStats, 0, len(pts))
	for i := range pts {
		out = append(out, Summary(&pts[i], DefaultNoisyCoV))
	}
	return out
}

// FillPoints sets every run's Points (status.runs[].points).
func FillPoints(runs []api.RunStatus) {
	for i := range runs {
		runs[i].Points = StatusPoints(&runs[i])
	}
}

// NoisyPoints names the runs' noisy points ("rocksdb readrandom threads=4 (CoV 7.1%)"), for a
// status condition message.
func NoisyPoints(runs []api.RunStatus) []string {
	var out []string
	for _, r := range runs {
		for _, p := range r.Points {
			if p.Noisy {
				out = append(out, fmt.Sprintf("%s %s threads=%d (CoV %.1f%%)", r.Name, p.Workload, p.Threads, 100*p.OpsPerSec.CoV))
			}
		}
	}
	return out
}

// Format shows a sample as "median ± half-width of the CI (CoV)": "101234 ± 2.1% (CoV 1.5%)";
// "± ∞" when there are too few repeats for a finite interval.
func Format(s api.SampleStats, value func(float64) string) string {
	if s.N <= 1 {
		return value(s.Median)
	}
	ci := "∞"
	if s.CIConfidence > 0 && s.Median != 0 {
		ci = fmt.Sprintf("%.1f%%", 100*math.Max(s.CIHigh/s.Median-1, 1-s.CILow/s.Median))
	}
	return fmt.Sprintf("%s ± %s (CoV %.1f%%)", value(s.Median), ci, 100*s.CoV)
}

// TrimTool drops the "dbbench:" prefix of a phase Debian's db_bench ran (the runner's dbbench
// driver names them so), so that db_bench's fillseq can match the runner's fillseq.
func TrimTool(w string) string { return strings.TrimPrefix(w, "dbbench:") }
