package stats

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchmath"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// DefaultThresholdPercent is the change a significant difference must exceed to be a regression.
const DefaultThresholdPercent = 5

// Change is one metric of one point in both benchmarks.
type Change struct {
	// Run is the run name; "a vs b" when two single-run benchmarks of different runs are compared.
	Run    string         `json:"run"`
	Engine api.EngineName `json:"engine"`
	// Workload is the point's workload; "dbbench:fillseq vs fillseq" when matched without the prefix.
	Workload string          `json:"workload"`
	Threads  int32           `json:"threads"`
	Metric   Metric          `json:"metric"`
	Old      api.SampleStats `json:"old"`
	New      api.SampleStats `json:"new"`
	// Ratio is new / old of the medians (0 when the old median is 0).
	Ratio float64 `json:"ratio"`
	// P is the Mann-Whitney U test's p-value (1 when the test cannot tell, e.g. one repeat each).
	P float64 `json:"p"`
	// Significant: P < the comparison's alpha.
	Significant bool `json:"significant"`
	// Regressed: significant, and worse than the threshold (throughput down, latency up).
	Regressed bool `json:"regressed"`
	// NoVerdict: the repeats are too few for the U test to find any difference at alpha (MinP), so
	// neither "significant" nor "not significant" means anything; Ratio still says how big it is.
	NoVerdict bool `json:"noVerdict,omitempty"`
	// Warnings are benchmath's, e.g. "need >= 4 samples to detect a difference at alpha level 0.05".
	Warnings []string `json:"warnings,omitempty"`
}

// Label names the point and metric: "rocksdb readrandom threads=4 ops/s".
func (c *Change) Label() string {
	return fmt.Sprintf("%s %s threads=%d %s", c.Run, c.Workload, c.Threads, c.Metric.Label())
}

// Worse is the relative change in the bad direction: 0.2 when ops/s fell by 20% or a latency
// rose by 20%; negative for an improvement.
func (c *Change) Worse() float64 {
	if c.Ratio == 0 {
		return 0
	}
	if c.Metric.HigherIsBetter() {
		return 1 - c.Ratio
	}
	return c.Ratio - 1
}

// Delta is the change of the medians as benchstat prints it: "+12.34%", or "~" when not
// significant; "-67.74% no verdict" when the repeats are too few to tell.
func (c *Change) Delta() string {
	if c.NoVerdict && c.Ratio != 0 {
		return fmt.Sprintf("%+.2f%% no verdict", 100*(c.Ratio-1))
	}
	if c.NoVerdict {
		return "no verdict"
	}
	if !c.Significant {
		return "~"
	}
	if c.Ratio == 0 {
		return "?"
	}
	return fmt.Sprintf("%+.2f%%", 100*(c.Ratio-1))
}

// PointChange is the change as status.baseline carries it.
func (c *Change) PointChange() api.PointChange {
	p := c.P
	return api.PointChange{Engine: c.Engine, Workload: c.Workload, Threads: c.Threads, Metric: string(c.Metric),
		Old: c.Old.Median, New: c.New.Median, Ratio: c.Ratio, P: &p, Significant: c.Significant, Regressed: c.Regressed}
}

// Options of a comparison; the zero value is the defaults (5%, alpha 0.05, every metric).
type Options struct {
	// ThresholdPercent is how much worse a significant change must be to be a regression.
	ThresholdPercent float64
	// Alpha: a change is significant when p < Alpha (default 0.05).
	Alpha float64
	// Metrics to compare (default Metrics); a CI gate on a noisy machine may keep to ops/s.
	Metrics []Metric
}

// Defaults is the operator's comparison (spec.baseline without a threshold).
var Defaults = Options{ThresholdPercent: DefaultThresholdPercent, Alpha: Alpha}

func (o Options) withDefaults() Options {
	if o.Alpha <= 0 {
		o.Alpha = Alpha
	}
	if len(o.Metrics) == 0 {
		o.Metrics = Metrics
	}
	return o
}

// Comparison is new relative to old, point by point.
type Comparison struct {
	// Changes, in old's point order and Metrics order; a metric missing on either side is left out.
	Changes []Change
	// Matched counts the points present in both.
	Matched int
	// OnlyOld and OnlyNew name the points without a match.
	OnlyOld, OnlyNew []string
	// Options the verdict used.
	Options
}

// Compare matches the points of two benchmarks by run, workload and threads and tests each metric
// for a difference. When both sides have a single run, runs match whatever their names (two
// one-engine benchmarks, or two bare result files). Points left over are then matched without the
// "dbbench:" prefix, so db_bench's fillseq lines up with the runner's fillseq.
func Compare(old, new []Point, o Options) *Comparison {
	o = o.withDefaults()
	anyRun := len(runs(old)) == 1 && len(runs(new)) == 1
	key := func(p *Point, tool bool) string {
		r, w := p.Run, p.Workload
		if anyRun {
			r = ""
		}
		if !tool {
			w = TrimTool(w)
		}
		return fmt.Sprintf("%s|%s|%d", r, w, p.Threads)
	}
	match, used := Match(old, new, key)
	c := &Comparison{Options: o}
	for i := range old {
		if match[i] < 0 {
			c.OnlyOld = append(c.OnlyOld, old[i].Label())
			continue
		}
		c.Matched++
		c.Changes = append(c.Changes, comparePoint(&old[i], &new[match[i]], o)...)
	}
	for j := range new {
		if !used[j] {
			c.OnlyNew = append(c.OnlyNew, new[j].Label())
		}
	}
	return c
}

// Match pairs old's items with new's by key: first by the whole key (tool true), then the items
// left over by the key without the "dbbench:" prefix (tool false). Each new item matches at most
// once, the first unused one of its key. match[i] is old[i]'s index in new, or -1; used[j] says
// new[j] matched.
func Match[T any](old, new []T, key func(t *T, tool bool) string) (match []int, used []bool) {
	match = make([]int, len(old))
	for i := range match {
		match[i] = -1
	}
	used = make([]bool, len(new))
	for _, tool := range []bool{true, false} {
		inNew := map[string]int{}
		for j := range new {
			if k := key(&new[j], tool); !used[j] {
				if _, dup := inNew[k]; !dup {
					inNew[k] = j
				}
			}
		}
		for i := range old {
			if match[i] >= 0 {
				continue
			}
			if j, ok := inNew[key(&old[i], tool)]; ok {
				match[i], used[j] = j, true
				delete(inNew, key(&old[i], tool))
			}
		}
	}
	return match, used
}

func runs(ps []Point) []string {
	var names []string
	for _, p := range ps {
		if !slices.Contains(names, p.Run) {
			names = append(names, p.Run)
		}
	}
	return names
}

func comparePoint(a, b *Point, o Options) []Change {
	t := &benchmath.Thresholds{CompareAlpha: o.Alpha}
	run, workload := a.Run, a.Workload
	if a.Run != b.Run {
		run = a.Run + " vs " + b.Run
	}
	if a.Workload != b.Workload {
		workload = a.Workload + " vs " + b.Workload
	}
	var out []Change
	for _, m := range o.Metrics {
		va, vb := a.Values(m), b.Values(m)
		if len(va) == 0 || len(vb) == 0 {
			continue
		}
		sa := benchmath.NewSample(append([]float64(nil), va...), t)
		sb := benchmath.NewSample(append([]float64(nil), vb...), t)
		res := benchmath.AssumeNothing.Compare(sa, sb)
		ch := Change{Run: run, Engine: a.Engine, Workload: workload, Threads: a.Threads, Metric: m,
			Old: Summarize(va), New: Summarize(vb), P: res.P}
		if !finite(ch.P) {
			ch.P = 1
		}
		for _, w := range res.Warnings {
			ch.Warnings = append(ch.Warnings, w.Error())
		}
		if ch.Old.Median != 0 {
			ch.Ratio = Finite(ch.New.Median / ch.Old.Median) // 1e308 over 1e-308 is +Inf
		}
		ch.Significant = ch.P < o.Alpha
		ch.NoVerdict = !decidable(ch.Old.N, ch.New.N, o.Alpha)
		ch.Regressed = ch.Significant && ch.Worse() > o.ThresholdPercent/100
		out = append(out, ch)
	}
	return out
}

// Regressions are the regressed changes, worst first.
func (c *Comparison) Regressions() []Change {
	var out []Change
	for _, ch := range c.Changes {
		if ch.Regressed {
			out = append(out, ch)
		}
	}
	sortWorstFirst(out)
	return out
}

// Regressed says whether any point regressed.
func (c *Comparison) Regressed() bool { return len(c.Regressions()) > 0 }

// Worst is the worst regression or, without one, the change that moved furthest in the bad
// direction (significant or not); nil when nothing was compared.
func (c *Comparison) Worst() *Change {
	if r := c.Regressions(); len(r) > 0 {
		return &r[0]
	}
	all := slices.Clone(c.Changes)
	sortWorstFirst(all)
	if len(all) == 0 {
		return nil
	}
	return &all[0]
}

// sortWorstFirst orders regressions before other changes, then by how much worse, the metric
// order breaking ties (stable, so point order is kept last).
func sortWorstFirst(cs []Change) {
	slices.SortStableFunc(cs, func(a, b Change) int {
		if a.Regressed != b.Regressed {
			if a.Regressed {
				return -1
			}
			return 1
		}
		wa, wb := a.Worse(), b.Worse()
		switch {
		case wa > wb:
			return -1
		case wa < wb:
			return 1
		}
		return 0
	})
}

// PointChanges are the changes for status.baseline: worst first, at most max of them.
func (c *Comparison) PointChanges(max int) []api.PointChange {
	all := slices.Clone(c.Changes)
	sortWorstFirst(all)
	if len(all) > max {
		all = all[:max]
	}
	out := make([]api.PointChange, 0, len(all))
	for i := range all {
		out = append(out, all[i].PointChange())
	}
	return out
}

// Verdict is one line: "regressed: rocksdb readrandom threads=4 ops/s -23.10% (p=0.008, n=5+5),
// and 2 more", "no verdict: too few repeats ..." (Outcome), or "no significant regression beyond
// 5% in 12 point(s) (worst: ...)", the worst being the change furthest in the bad direction,
// significant or not.
func (c *Comparison) Verdict() string {
	if r := c.Regressions(); len(r) > 0 {
		s := "regressed: " + describe(&r[0])
		if len(r) > 1 {
			s += fmt.Sprintf(", and %d more", len(r)-1)
		}
		return s
	}
	if c.Outcome() == OutcomeNoVerdict {
		return c.noVerdict()
	}
	s := fmt.Sprintf("no significant regression beyond %g%% in %d point(s)", c.ThresholdPercent, c.Matched)
	if w := c.Worst(); w != nil {
		s += " (worst: " + describe(w) + ")"
	}
	return s
}

func describe(c *Change) string {
	return fmt.Sprintf("%s %+.2f%% (p=%.3f, n=%d+%d)", c.Label(), 100*(c.Ratio-1), c.P, c.Old.N, c.New.N)
}

// ParseMetrics reads a comma-separated list of metrics: "ops" (or "opsPerSec"), "p50", "p99",
// "p999" (or their names in status: "p99Micros").
func ParseMetrics(s string) ([]Metric, error) {
	var out []Metric
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		var m Metric
		switch f {
		case "ops", string(OpsPerSec):
			m = OpsPerSec
		case "p50", string(P50Micros):
			m = P50Micros
		case "p99", string(P99Micros):
			m = P99Micros
		case "p999", "p99.9", string(P999Micros):
			m = P999Micros
		default:
			return nil, fmt.Errorf("unknown metric %q (ops, p50, p99, p999)", f)
		}
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out, nil
}

// ParseThreshold reads "5%", "5" or "0.5%" as percent; it must be in [0, 100].
func ParseThreshold(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil || !finite(v) || v < 0 || v > 100 {
		return 0, fmt.Errorf("threshold %q: want a percentage between 0 and 100, e.g. 5%%", s)
	}
	return v, nil
}
