// Package quality measures change-point detectors on synthetic benchmark histories: series with the
// noise of real repeats and an injected shift, fed one point at a time as a schedule's runs finish.
// It compares stats.Watch (windowed E-divisive with a t-test) with the tests other benchmarking
// services use: a single-run threshold against the previous run, and a lookback z-score.
package quality

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	moremath "github.com/aclements/go-moremath/stats"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/stats"
)

// Alarm is a detector's verdict after a point: the series changed at Index (the first point of the
// new level), in the bad direction when Regression.
type Alarm struct {
	Index      int
	Regression bool
}

// Detector sees a series one point at a time (throughput: higher is better).
type Detector interface {
	// Add takes the next point and returns the alarms it raises.
	Add(v float64) []Alarm
}

// Method makes a fresh detector per series.
type Method struct {
	Name string
	New  func() Detector
}

// EDivisive is stats.Watch over the newest history points, each reported change point kept as
// known (as the schedule's status keeps them). With confirm, a change point is reported only when
// the next run finds it again at the same place (the schedule's confirmation).
func EDivisive(history int, o stats.DetectOptions, confirm bool) Method {
	name := fmt.Sprintf("E-divisive + t-test (p < %g, min change %g%%)", orDefault(o.MaxP, stats.DefaultMaxP), 100*o.MinChange)
	if confirm {
		name += ", confirmed by the next run"
	}
	return Method{Name: name, New: func() Detector { return &watcher{history: history, o: o, confirm: confirm} }}
}

func orDefault(v, d float64) float64 {
	if v > 0 {
		return v
	}
	return d
}

type watcher struct {
	history int
	o       stats.DetectOptions
	values  []float64
	first   int   // index of values[0] in the whole series
	known   []int // reported change points, whole-series indexes
	confirm bool
	suspect map[int]bool // found at the previous run, not reported yet
}

func (w *watcher) Add(v float64) []Alarm {
	w.values = append(w.values, v)
	if len(w.values) > w.history {
		drop := len(w.values) - w.history
		w.values = w.values[drop:]
		w.first += drop
	}
	var known []int
	for _, k := range w.known {
		known = append(known, k-w.first)
	}
	var out []Alarm
	suspect := map[int]bool{}
	for _, c := range stats.Watch(w.values, nil, known, w.o) {
		idx := c.Index + w.first
		if w.confirm && !w.suspect[idx] {
			suspect[idx] = true
			continue
		}
		w.known = append(w.known, idx)
		out = append(out, Alarm{Index: idx, Regression: c.Regression})
	}
	w.suspect = suspect
	return out
}

// Threshold alarms when a run differs from the previous run by more than limit (0.05 = 5%), as a
// nightly compare against yesterday's run does.
func Threshold(limit float64) Method {
	return Method{Name: fmt.Sprintf("single run vs previous, > %g%%", 100*limit),
		New: func() Detector { return &threshold{limit: limit} }}
}

type threshold struct {
	limit float64
	prev  float64
	n     int
}

func (t *threshold) Add(v float64) []Alarm {
	defer func() { t.prev, t.n = v, t.n+1 }()
	if t.n == 0 || t.prev == 0 || math.Abs(v/t.prev-1) <= t.limit {
		return nil
	}
	return []Alarm{{Index: t.n, Regression: v < t.prev}}
}

// ZScore alarms when a run is more than z standard deviations from the mean of the lookback runs
// before it (Conbench's test: |z| > 5 by default), once it has at least 10 of them.
func ZScore(z float64, lookback int) Method {
	return Method{Name: fmt.Sprintf("z-score vs last %d runs, |z| > %g", lookback, z),
		New: func() Detector { return &zscore{z: z, lookback: lookback} }}
}

type zscore struct {
	z        float64
	lookback int
	values   []float64
}

func (d *zscore) Add(v float64) []Alarm {
	n := len(d.values)
	d.values = append(d.values, v)
	if n < 10 {
		return nil
	}
	s := moremath.Sample{Xs: d.values[max(0, n-d.lookback):n]}
	m, sd := s.Mean(), s.StdDev()
	if sd == 0 || math.Abs(v-m)/sd <= d.z {
		return nil
	}
	return []Alarm{{Index: n, Regression: v < m}}
}

// Noise draws the relative deviation of one run from its level.
type Noise struct {
	Name string
	// CoV of normal noise, when Residuals is empty.
	CoV float64
	// Residuals are measured relative deviations (x / median - 1 of repeats of one point); when
	// set, runs draw from them with replacement (the real shape, heavy tails included).
	Residuals []float64
	// Excursions is the share of runs that are Excursion slower on top (a busy neighbour for one
	// run: 0.01 and 0.3 make one run in a hundred 30% slower).
	Excursions, Excursion float64
}

func (n Noise) draw(r *rand.Rand) float64 {
	d := n.CoV * r.NormFloat64()
	if len(n.Residuals) > 0 {
		d = n.Residuals[r.IntN(len(n.Residuals))]
	}
	if n.Excursions > 0 && r.Float64() < n.Excursions {
		d -= n.Excursion
	}
	return d
}

// Scenario is a set of series: Before runs at the old level, then After runs lowered by Shift
// (0.05 = throughput down 5%); Shift 0 measures false alarms only.
type Scenario struct {
	Noise         Noise
	Shift         float64
	Before, After int
	Series        int
	Seed          uint64
	// Within is how many runs after the shift a detection may take (10).
	Within int
	// Slack: a change point counts as found when its index is within Slack of the shift (2).
	Slack int
}

// Figures are one method's results on one scenario.
type Figures struct {
	Method, Noise string
	Shift         float64
	Series        int
	// Found is the share of series with a regression alarm within Within runs after the shift,
	// placed within Slack runs of it; Exact of those placed exactly at the shift.
	Found, Exact float64
	// RunsToDetect are the median and 95th percentile of runs after the shift (counting the first
	// slower run as 1) until the alarm, over the found series.
	RunsToDetect, RunsToDetect95 float64
	// FalsePer1000 are alarms per 1,000 runs before the shift (all of them when Shift is 0).
	FalsePer1000 float64
}

// Run measures a method on a scenario. Every series has its own seed, the same for every method,
// so methods see the same series.
func Run(m Method, sc Scenario) Figures {
	f := Figures{Method: m.Name, Noise: sc.Noise.Name, Shift: sc.Shift, Series: sc.Series}
	var found, exact, false_, before int
	var delays []float64
	for s := 0; s < sc.Series; s++ {
		r := rand.New(rand.NewPCG(sc.Seed, uint64(s)))
		d := m.New()
		detected := false
		for i := 0; i < sc.Before+sc.After; i++ {
			level := 1000.0
			if i >= sc.Before {
				level *= 1 - sc.Shift
			}
			alarms := d.Add(level * (1 + sc.Noise.draw(r)))
			if i < sc.Before || sc.Shift == 0 {
				false_ += len(alarms)
				continue
			}
			for _, a := range alarms {
				runs := i - sc.Before + 1
				if detected || !a.Regression || runs > sc.Within || abs(a.Index-sc.Before) > sc.Slack {
					continue
				}
				detected = true
				found++
				if a.Index == sc.Before {
					exact++
				}
				delays = append(delays, float64(runs))
			}
		}
		before += sc.Before
		if sc.Shift == 0 {
			before += sc.After
		}
	}
	f.Found = float64(found) / float64(sc.Series)
	if found > 0 {
		f.Exact = float64(exact) / float64(found)
		ds := moremath.Sample{Xs: delays}
		slices.Sort(ds.Xs)
		ds.Sorted = true
		f.RunsToDetect, f.RunsToDetect95 = ds.Quantile(0.5), ds.Quantile(0.95)
	}
	if before > 0 {
		f.FalsePer1000 = 1000 * float64(false_) / float64(before)
	}
	return f
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// Repeats are the ops/s of each sweep point of a result over its repeats (iterations).
func Repeats(res *api.Result) [][]float64 {
	var phases []api.PhaseSummary
	for _, p := range res.Phases {
		phases = append(phases, p.PhaseSummary)
	}
	var out [][]float64
	for _, p := range stats.Group(string(res.Engine), res.Engine, phases) {
		out = append(out, p.Values(stats.OpsPerSec))
	}
	return out
}

// Residuals are the relative deviations of repeats from their median (x / median - 1), and their
// CoV, for Noise.Residuals.
func Residuals(repeats [][]float64) (res []float64, cov float64) {
	for _, xs := range repeats {
		if len(xs) < 3 {
			continue
		}
		s := moremath.Sample{Xs: slices.Clone(xs)}
		s.Sort()
		med := s.Quantile(0.5)
		if med == 0 {
			continue
		}
		for _, x := range xs {
			res = append(res, x/med-1)
		}
	}
	if len(res) > 1 {
		s := moremath.Sample{Xs: res}
		cov = s.StdDev()
	}
	return res, cov
}
