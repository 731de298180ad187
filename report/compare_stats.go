package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/stats"
)

// Points are the benchmark's measured sweep points over their repeats, run by run (the dataset
// load, done once per run, is not one). A run's full result, when present, is used, as in Phases.
func (b *Benchmark) Points() []stats.Point {
	var out []stats.Point
	for _, r := range b.runs() {
		var phases []api.PhaseSummary
		if r.full != nil {
			for _, p := range r.full.Phases {
				phases = append(phases, p.PhaseSummary)
			}
		} else if r.status != nil {
			phases = r.status.Results
		}
		out = append(out, stats.Group(r.name, r.engine, phases)...)
	}
	return out
}

// StatComparison is B against A over the repeats of each point, as benchstat compares: medians,
// their confidence intervals, and the Mann-Whitney U test's p-value.
type StatComparison struct {
	A, B *Benchmark
	*stats.Comparison
}

// CompareStats compares the points of a (old) and b (new).
func CompareStats(a, b *Benchmark, o stats.Options) *StatComparison {
	return &StatComparison{A: a, B: b, Comparison: stats.Compare(a.Points(), b.Points(), o)}
}

// Tables are one benchstat-style table per metric: A and B as median ± CI, the change of the
// medians ("~" when not significant) and the p-value with the sample sizes.
func (c *StatComparison) Tables() []*Table {
	var out []*Table
	for _, m := range c.Metrics {
		t := &Table{Title: fmt.Sprintf("%s: A = %s, B = %s", m.Label(), c.A.Title(), c.B.Title()),
			Headers: []string{"Run", "Workload", "Threads", "A", "B", "delta", "p", "n"}}
		format := micros
		if m == stats.OpsPerSec {
			format = ops
		}
		for _, ch := range c.Changes {
			if ch.Metric != m {
				continue
			}
			delta := ch.Delta()
			if ch.Regressed {
				delta += " !"
			}
			p := fmt.Sprintf("%.3f", ch.P)
			if ch.NoVerdict {
				p = Empty // the test cannot tell with these repeats: its p says nothing
			}
			t.add(ch.Run, ch.Workload, strconv.Itoa(int(ch.Threads)), stats.Format(ch.Old, format), stats.Format(ch.New, format),
				delta, p, fmt.Sprintf("%d+%d", ch.Old.N, ch.New.N))
		}
		if len(t.Rows) > 0 {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil
	}
	last := out[len(out)-1]
	last.Notes = append(last.Notes,
		fmt.Sprintf("median ± half-width of its 95%% interval (CoV); ∞ with fewer than 6 repeats; delta: change of the medians, ~ when p >= %g (Mann-Whitney U); ! marks a regression beyond %g%%", c.Alpha, c.ThresholdPercent))
	for _, s := range c.OnlyOld {
		last.Notes = append(last.Notes, "only in A: "+s)
	}
	for _, s := range c.OnlyNew {
		last.Notes = append(last.Notes, "only in B: "+s)
	}
	if warn := c.fewRepeats(); warn != "" {
		last.Notes = append(last.Notes, warn)
	}
	last.Notes = append(last.Notes, c.Verdict())
	return out
}

// fewRepeats notes the points without a verdict when another point regressed (without a
// regression, the verdict line says it).
func (c *StatComparison) fewRepeats() string {
	if n := len(c.Undecided()); n > 0 && c.Outcome() == stats.OutcomeRegressed {
		return fmt.Sprintf("note: %d change(s) marked \"no verdict\" had too few repeats for the U test (at least %d a side at alpha %g)", n, stats.MinRepeats(c.Alpha), c.Alpha)
	}
	return ""
}

// Write renders the comparison as text, markdown or json. Text and markdown start with a line that
// names A (old) and B (new) (OldNew).
func (c *StatComparison) Write(w io.Writer, format string) error {
	if format != "json" {
		fmt.Fprintf(w, "%s\n\n", OldNew(c.A, c.B))
	}
	switch format {
	case "json":
		return c.writeJSON(w)
	case "markdown":
		for i, t := range c.Tables() {
			if i > 0 {
				fmt.Fprintln(w)
			}
			t.Markdown(w)
		}
	default:
		for i, t := range c.Tables() {
			if i > 0 {
				fmt.Fprintln(w)
			}
			t.Text(w)
		}
	}
	return nil
}

// jsonComparison is the json format: every change, what did not match, and the verdict.
type jsonComparison struct {
	A                string         `json:"a"`
	B                string         `json:"b"`
	AFrom            string         `json:"aFrom"`
	BFrom            string         `json:"bFrom"`
	Outcome          stats.Outcome  `json:"outcome"`
	ThresholdPercent float64        `json:"thresholdPercent"`
	Alpha            float64        `json:"alpha"`
	Metrics          []stats.Metric `json:"metrics"`
	Regressed        bool           `json:"regressed"`
	Verdict          string         `json:"verdict"`
	Regressions      []string       `json:"regressions,omitempty"`
	Changes          []stats.Change `json:"changes"`
	OnlyA            []string       `json:"onlyA,omitempty"`
	OnlyB            []string       `json:"onlyB,omitempty"`
}

func (c *StatComparison) writeJSON(w io.Writer) error {
	out := jsonComparison{A: c.A.Title(), B: c.B.Title(), AFrom: c.A.From(), BFrom: c.B.From(), Outcome: c.Outcome(), ThresholdPercent: c.ThresholdPercent, Alpha: c.Alpha, Metrics: c.Metrics, Regressed: c.Regressed(),
		Verdict: c.Verdict(), Changes: c.Changes, OnlyA: c.OnlyOld, OnlyB: c.OnlyNew}
	for _, r := range c.Regressions() {
		out.Regressions = append(out.Regressions, r.Label())
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
