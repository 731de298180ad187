package stats

import (
	"maps"
	"math"
	"slices"
	"sort"

	moremath "github.com/aclements/go-moremath/stats"
)

// Change-point detection on a history of benchmark results, in the manner of Apache Otava (formerly
// Hunter, Fleming et al., "Hunter: Using Change Point Detection to Hunt for Performance
// Regressions", ICPE 2023), which MongoDB's E-divisive work led to:
//
//  1. Split: in windows of Window points (half-overlapping, the last one ending at the newest point),
//     E-divisive means (Matteson and James, 2014) proposes the split that maximises the energy
//     statistic; a two-sample t-test between the two sides stands in for E-divisive's random
//     permutation test, so the answer is deterministic. Accepted splits (p < 10 x MaxP) are split
//     again, recursively.
//  2. Merge: every candidate is tested again between its neighbouring candidates (the whole
//     segments), and the weakest that fails (p >= MaxP, or a change smaller than the minimum size) is
//     dropped, until all pass.
//
// Additions for benchmark histories: a single point that deviates far from the points before it and
// is followed by a point back at the old level is an outlier, set aside before the split (a
// single-run excursion is not a change point); given boundaries (a provenance change: another image
// digest, node, storage class) are fixed segment borders, tested like change points but never
// dropped, so a change there is attributed to it; a change point needs MinSegment points on each
// side, so the newest point alone never makes one.

// DetectOptions tune the detector; the zero value is the defaults.
type DetectOptions struct {
	// Window is the number of points E-divisive looks at at once (default 50, as Otava).
	Window int
	// MaxP: a change point needs a t-test p-value below this (default 0.001, as Otava).
	MaxP float64
	// MinChange is the smallest relative change of the mean that counts (0.03 = 3%); 0: any.
	MinChange float64
	// MinAbsChange is the smallest absolute change of the mean that counts, for metrics near zero
	// (stall percentages); 0: any.
	MinAbsChange float64
	// MinSegment is how many points each side of a change point needs (default 3).
	MinSegment int
	// OutlierDeviations: a point further than this many standard deviations of the preceding
	// points from their median, with the next point
	// back nearer the old level than the excursion, is an outlier (default 5; negative: never).
	OutlierDeviations float64
	// HigherIsBetter says which way a change is a regression (ops/s: true, latency: false).
	HigherIsBetter bool
}

// Defaults of DetectOptions.
const (
	DefaultWindow            = 50
	DefaultMaxP              = 0.0001
	DefaultMinSegment        = 3
	DefaultOutlierDeviations = 5
	// outlierContext is how many earlier points an outlier is judged against (at least
	// outlierMinContext): fewer make the median absolute deviation too noisy a scale.
	outlierContext    = 20
	outlierMinContext = 6
)

func (o DetectOptions) withDefaults() DetectOptions {
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	if o.MaxP <= 0 {
		o.MaxP = DefaultMaxP
	}
	if o.MinSegment < 2 {
		o.MinSegment = DefaultMinSegment
	}
	if o.Window < 2*o.MinSegment {
		o.Window = 2 * o.MinSegment
	}
	if o.OutlierDeviations == 0 {
		o.OutlierDeviations = DefaultOutlierDeviations
	}
	return o
}

// MeanStats describe one side of a change point.
type MeanStats struct {
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	StdDev float64 `json:"stdDev"`
	// CILow and CIHigh are the 95% confidence interval of the mean (Student's t); equal to the mean
	// when N < 2.
	CILow  float64 `json:"ciLow"`
	CIHigh float64 `json:"ciHigh"`
}

// ChangePoint is a shift of a series' mean at Index, the first point of the new segment (an index
// into the values given to Detect).
type ChangePoint struct {
	Index int `json:"index"`
	// From and To bound the two sides: Before covers values[From:Index], After values[Index:To]
	// (outliers within are not counted in N).
	From int `json:"from"`
	To   int `json:"to"`
	// Before and After are the points between the previous change point (or boundary) and this one,
	// and between this one and the next, outliers left out.
	Before MeanStats `json:"before"`
	After  MeanStats `json:"after"`
	// Change is After.Mean / Before.Mean - 1 (0 when Before.Mean is 0).
	Change float64 `json:"change"`
	// P is the two-sample t-test's p-value between Before and After.
	P float64 `json:"p"`
	// Boundary: the index was given as a boundary (a provenance change), not found.
	Boundary bool `json:"boundary,omitempty"`
	// Significant: P < MaxP and the change is at least the minimum size. Always true for found
	// change points; a boundary is a segment border whether or not it is significant.
	Significant bool `json:"significant"`
	// Regression: the change is in the bad direction (throughput down, latency up).
	Regression bool `json:"regression"`
}

// Detection is what Detect found in one series.
type Detection struct {
	// ChangePoints in index order: the boundaries and the change points found.
	ChangePoints []ChangePoint `json:"changePoints,omitempty"`
	// Outliers are the indexes of single-point excursions left out of the test.
	Outliers []int `json:"outliers,omitempty"`
}

// Significant are the change points that are significant (found ones, and boundaries where the
// series changed).
func (d Detection) Significant() []ChangePoint {
	var out []ChangePoint
	for _, c := range d.ChangePoints {
		if c.Significant {
			out = append(out, c)
		}
	}
	return out
}

// Detect finds the change points of a series of values in time order. boundaries are indexes
// (in 1..len(values)-1) where a new segment starts whatever the values say: provenance changes,
// and change points already reported and acknowledged, so the detector neither moves nor repeats
// them. Values that are not finite are treated like outliers. Detect is deterministic: the same
// input gives the same answer.
func Detect(values []float64, boundaries []int, o DetectOptions) Detection {
	o = o.withDefaults()
	var d Detection
	bounds := cleanBoundaries(boundaries, len(values))

	// Set outliers aside: xs are the kept values, at[i] the index in values of xs[i].
	var xs []float64
	var at []int
	skip := outliers(values, bounds, o)
	for i, v := range values {
		if skip[i] {
			d.Outliers = append(d.Outliers, i)
			continue
		}
		xs = append(xs, v)
		at = append(at, i)
	}
	// Boundaries in xs's indexes: the first kept point at or after the boundary.
	fixed := map[int]bool{}
	for _, b := range bounds {
		if k := sort.SearchInts(at, b); k > 0 && k < len(xs) {
			fixed[k] = true
		}
	}
	borders := append([]int{0}, slices.Sorted(maps.Keys(fixed))...)
	borders = append(borders, len(xs))

	cands := map[int]bool{}
	for k := 0; k+1 < len(borders); k++ {
		for _, c := range split(xs, borders[k], borders[k+1], o) {
			cands[c] = true
		}
	}
	for _, c := range merge(xs, cands, fixed, o) {
		c.Index, c.From, c.To = at[c.Index], at[c.From], at[c.To-1]+1
		d.ChangePoints = append(d.ChangePoints, c)
	}
	return d
}

func cleanBoundaries(bs []int, n int) []int {
	var out []int
	for _, b := range bs {
		if b > 0 && b < n {
			out = append(out, b)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// outliers marks single-point excursions: a point far from the median of up to outlierContext
// earlier kept points of its segment, followed by a point nearer that median than the excursion.
// The newest point is never an outlier (nothing says yet whether it reverts); neither is the first
// point after a boundary (its segment has no past).
func outliers(values []float64, bounds []int, o DetectOptions) []bool {
	skip := make([]bool, len(values))
	for i, v := range values {
		skip[i] = !finite(v)
	}
	if o.OutlierDeviations < 0 {
		return skip
	}
	start := 0 // first index of the current segment
	nextBound := 0
	var buf, scratch [outlierContext]float64
	for i := 1; i+1 < len(values); i++ {
		for nextBound < len(bounds) && bounds[nextBound] <= i {
			start = bounds[nextBound]
			nextBound++
		}
		if skip[i] || skip[i+1] {
			continue
		}
		ctx := buf[:0]
		for j := i - 1; j >= start && len(ctx) < outlierContext; j-- {
			if !skip[j] {
				ctx = append(ctx, values[j])
			}
		}
		if len(ctx) < outlierMinContext {
			continue
		}
		med, scale := robust(ctx, scratch[:len(ctx)])
		dev := values[i] - med
		if math.Abs(dev) <= o.OutlierDeviations*scale || !bigEnough(med, values[i], o) {
			continue
		}
		// Reverts: the next point is nearer the old level than the excursion.
		if math.Abs(values[i+1]-med) < math.Abs(values[i+1]-values[i]) {
			skip[i] = true
		}
	}
	return skip
}

// robust is the median and a scale (scratch is as long as xs): the larger of the standard deviation and 1.4826 x the median
// absolute deviation (the standard deviation of normal data, which alone underestimates it often
// over 20 points), never below 1e-9 of the median so that a flat series still has a scale.
func robust(xs, scratch []float64) (median, scale float64) {
	sd := moremath.StdDev(xs)
	copy(scratch, xs)
	slices.Sort(scratch)
	median = (moremath.Sample{Xs: scratch, Sorted: true}).Quantile(0.5)
	for i, x := range scratch {
		scratch[i] = math.Abs(x - median)
	}
	slices.Sort(scratch)
	mad := (moremath.Sample{Xs: scratch, Sorted: true}).Quantile(0.5)
	return median, math.Max(math.Max(1.4826*mad, sd), 1e-9*math.Abs(median))
}

// bigEnough says whether a move of the mean from a to b is at least the minimum size of change.
func bigEnough(a, b float64, o DetectOptions) bool {
	if math.Abs(b-a) < o.MinAbsChange {
		return false
	}
	return o.MinChange <= 0 || a == 0 || math.Abs(b/a-1) >= o.MinChange
}

// split proposes change points in xs[lo:hi] with E-divisive over half-overlapping windows.
func split(xs []float64, lo, hi int, o DetectOptions) []int {
	var out []int
	if hi-lo < 2*o.MinSegment {
		return nil
	}
	step := max(o.Window/2, 1)
	for start := lo; ; start += step {
		end := min(start+o.Window, hi)
		// The last window ends at hi, so the newest points are always judged with a full window.
		if end == hi {
			start = max(lo, hi-o.Window)
		}
		out = append(out, splitWindow(xs, start, end, o)...)
		if end == hi {
			break
		}
	}
	return out
}

// splitWindow is hierarchical E-divisive on xs[lo:hi]: the best split, tested with a t-test at
// 10 x MaxP (a weak first filter, as Otava's), and the same again on both sides.
func splitWindow(xs []float64, lo, hi int, o DetectOptions) []int {
	tau, ok := bestSplit(xs[lo:hi], o.MinSegment)
	if !ok {
		return nil
	}
	tau += lo
	if p := tTest(xs[lo:tau], xs[tau:hi]); p >= 10*o.MaxP {
		return nil
	}
	out := []int{tau}
	out = append(out, splitWindow(xs, lo, tau, o)...)
	return append(out, splitWindow(xs, tau, hi, o)...)
}

// bestSplit is E-divisive means' estimate of the one change point in xs (alpha 1): the tau in
// [minSeg, n-minSeg] maximising Q(tau) = m k / (m + k) x (2/(m k) sum|x_i - y_j| - sum|x_i - x_i'| /
// C(m,2) - sum|y_j - y_j'| / C(k,2)), where x = xs[:tau] (m values) and y = xs[tau:] (k values). The
// within and between sums are updated as tau moves, so this is O(n^2).
func bestSplit(xs []float64, minSeg int) (int, bool) {
	n := len(xs)
	if n < 2*minSeg {
		return 0, false
	}
	var total float64
	left := make([]float64, n)  // left[t] = sum_{i<t} |x_i - x_t|
	right := make([]float64, n) // right[t] = sum_{j>t} |x_t - x_j|
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			d := math.Abs(xs[i] - xs[j])
			total += d
			left[j] += d
			right[i] += d
		}
	}
	var within, withinR float64 = 0, total // sums of distances inside xs[:tau] and xs[tau:]
	best, bestQ := 0, math.Inf(-1)
	for tau := 1; tau < n; tau++ {
		within += left[tau-1]
		withinR -= right[tau-1]
		if tau < minSeg || n-tau < minSeg {
			continue
		}
		m, k := float64(tau), float64(n-tau)
		between := total - within - withinR
		e := 2 * between / (m * k)
		if m > 1 {
			e -= within / (m * (m - 1) / 2)
		}
		if k > 1 {
			e -= withinR / (k * (k - 1) / 2)
		}
		if q := m * k / (m + k) * e; q > bestQ {
			best, bestQ = tau, q
		}
	}
	return best, bestQ > 0
}

// tTest is the two-sided p-value of Student's two-sample t-test (equal variances: the noise of one
// benchmark on one kind of node, estimated from both sides, so a short new segment borrows the
// long history's estimate). Two constant samples: 0 if their values differ, else 1.
func tTest(a, b []float64) float64 {
	r, err := moremath.TwoSampleTTest(moremath.Sample{Xs: a}, moremath.Sample{Xs: b}, moremath.LocationDiffers)
	if err != nil {
		if err == moremath.ErrZeroVariance && len(a) > 0 && len(b) > 0 && a[0] != b[0] {
			return 0
		}
		return 1
	}
	if math.IsNaN(r.P) {
		return 1
	}
	return math.Max(r.P, 0)
}

// merge keeps the candidates that hold between their neighbours: it drops the weakest failing
// candidate (largest p, then smallest change) and tests again, until every candidate passes.
// Boundaries (fixed) are tested and reported but never dropped.
func merge(xs []float64, cands, fixed map[int]bool, o DetectOptions) []ChangePoint {
	all := map[int]bool{}
	for c := range cands {
		all[c] = true
	}
	for c := range fixed {
		all[c] = true
	}
	idx := slices.Sorted(maps.Keys(all))
	for {
		idx = refine(xs, idx, fixed, o)
		cps := make([]ChangePoint, len(idx))
		weakest := -1
		for i, c := range idx {
			lo, hi := 0, len(xs)
			if i > 0 {
				lo = idx[i-1]
			}
			if i+1 < len(idx) {
				hi = idx[i+1]
			}
			cps[i] = describeChange(xs[lo:c], xs[c:hi], c, o)
			cps[i].From, cps[i].To, cps[i].Boundary = lo, hi, fixed[c]
			if cps[i].Boundary || cps[i].Significant && settled(xs, lo, c, hi, cps[i].P, o) {
				continue
			}
			if weakest < 0 || cps[i].P > cps[weakest].P ||
				(cps[i].P == cps[weakest].P && math.Abs(cps[i].Change) < math.Abs(cps[weakest].Change)) {
				weakest = i
			}
		}
		if weakest < 0 {
			return cps
		}
		idx = slices.Delete(idx, weakest, weakest+1)
	}
}

// refine moves each found candidate by up to refineReach points, between its neighbours, to where
// the t-test between the neighbouring segments is strongest: E-divisive's split maximises a
// distance between distributions and can land a point or two off a shift of the mean when one side
// is short, and the change point should name the first run of the new level.
func refine(xs []float64, idx []int, fixed map[int]bool, o DetectOptions) []int {
	for i, c := range idx {
		if fixed[c] {
			continue
		}
		lo, hi := 0, len(xs)
		if i > 0 {
			lo = idx[i-1]
		}
		if i+1 < len(idx) {
			hi = idx[i+1]
		}
		best, bestP := c, tTest(xs[lo:c], xs[c:hi])
		for d := c - refineReach; d <= c+refineReach; d++ {
			if d-lo < o.MinSegment || hi-d < o.MinSegment {
				continue
			}
			if p := tTest(xs[lo:d], xs[d:hi]); p < bestP {
				best, bestP = d, p
			}
		}
		idx[i] = best
	}
	return slices.Compact(idx)
}

const refineReach = 2

// settled: a change point at c with the newest points after it is not better placed later, where
// fewer than MinSegment points would follow it. E-divisive with MinSegment points a side would
// otherwise take an old point into the new side when only MinSegment-1 new points exist yet, name
// the wrong run, and leave the change at the right run unreported.
func settled(xs []float64, lo, c, hi int, p float64, o DetectOptions) bool {
	if hi != len(xs) {
		return true
	}
	for d := max(c+1, hi-o.MinSegment+1); d < hi; d++ {
		if tTest(xs[lo:d], xs[d:hi]) < p {
			return false
		}
	}
	return true
}

// describeChange compares the segments before and after index c.
func describeChange(before, after []float64, c int, o DetectOptions) ChangePoint {
	cp := ChangePoint{Index: c, Before: meanStats(before), After: meanStats(after), P: 1}
	if cp.Before.Mean != 0 {
		cp.Change = cp.After.Mean/cp.Before.Mean - 1
	}
	if len(before) >= o.MinSegment && len(after) >= o.MinSegment {
		cp.P = tTest(before, after)
	}
	cp.Significant = cp.P < o.MaxP && bigEnough(cp.Before.Mean, cp.After.Mean, o)
	cp.Regression = (cp.After.Mean < cp.Before.Mean) == o.HigherIsBetter && cp.After.Mean != cp.Before.Mean
	return cp
}

// meanStats is the mean of xs with its 95% Student's t interval.
func meanStats(xs []float64) MeanStats {
	s := moremath.Sample{Xs: xs}
	m := MeanStats{N: len(xs)}
	if len(xs) == 0 {
		return m
	}
	m.Mean = s.Mean()
	m.CILow, m.CIHigh = m.Mean, m.Mean
	if len(xs) > 1 {
		m.StdDev = s.StdDev()
		half := moremath.InvCDF(moremath.TDist{V: float64(len(xs) - 1)})(0.975) * m.StdDev / math.Sqrt(float64(len(xs)))
		m.CILow, m.CIHigh = m.Mean-half, m.Mean+half
	}
	return m
}

// Watch is Detect as a schedule runs it after each new point. values are the series' kept history
// (oldest first), boundaries its provenance changes, and known the change points already reported
// or acknowledged: they are boundaries too, so they are neither moved nor reported again (a known
// index may be negative: a change point older than the kept history). Watch returns the
// significant change points after the last known one and within the newest Window points (a
// boundary counts when the series changed there): what lies further back was judged while it was
// new, and near the oldest kept point a segment is cut short by the history limit, not by a change.
// It looks at the newest 2 x Window points only (the history the detector's quality was measured
// with), so its cost does not grow with a long history.
func Watch(values []float64, boundaries, known []int, o DetectOptions) []ChangePoint {
	o = o.withDefaults()
	off := max(0, len(values)-2*o.Window)
	from := len(values) - o.Window
	var bounds []int
	for _, k := range known {
		from = max(from, k+1)
		bounds = append(bounds, k-off)
	}
	for _, b := range boundaries {
		bounds = append(bounds, b-off)
	}
	var out []ChangePoint
	for _, c := range Detect(values[off:], bounds, o).ChangePoints {
		c.Index, c.From, c.To = c.Index+off, c.From+off, c.To+off
		if c.Significant && c.Index >= from {
			out = append(out, c)
		}
	}
	return out
}
