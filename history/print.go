package history

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/stats"
)

// View is what kubectl kvbench history prints: the history, the change points the operator
// reported, and which series and how many of the newest runs to show.
type View struct {
	History      *History                  `json:"history"`
	ChangePoints []api.ScheduleChangePoint `json:"changePoints,omitempty"`
	// Match keeps the series whose name contains it; Metric those of one metric; Last the newest
	// runs (0: all).
	Match  string            `json:"-"`
	Metric api.HistoryMetric `json:"-"`
	Last   int               `json:"-"`
}

func (v *View) series() []*Series {
	var out []*Series
	for i := range v.History.Series {
		s := &v.History.Series[i]
		if strings.Contains(s.Name(), v.Match) && (v.Metric == "" || s.Metric == v.Metric) {
			out = append(out, s)
		}
	}
	return out
}

// mark is what a point's row says beside its numbers: a reported change point (and whether it was
// acknowledged), or an outlier the detector set aside.
func (v *View) marks(s *Series) map[string]string {
	m := map[string]string{}
	name := s.Name()
	for _, c := range v.ChangePoints {
		if c.Series != name {
			continue
		}
		t := fmt.Sprintf("<- %s %+.1f%% (%s)", c.Direction, c.ChangePercent, pValue(c.P))
		if c.Cause != "" {
			t += ", likely cause: " + c.Cause
		}
		if c.AcknowledgedAt != nil {
			t += ", acknowledged"
		}
		m[c.Child] = t
	}
	for _, a := range v.History.Acks {
		if a.Series == name && m[a.Child] == "" {
			m[a.Child] = "<- acknowledged"
		}
	}
	for _, r := range v.History.Reported { // reported, no longer among status's latest 50
		if r.Series == name && m[r.Child] == "" {
			m[r.Child] = "<- change point"
		}
	}
	for _, i := range stats.Detect(s.Values(), s.Boundaries(), stats.DetectOptions{}).Outliers {
		if m[s.Points[i].Child] == "" {
			m[s.Points[i].Child] = "outlier"
		}
	}
	for _, b := range s.Boundaries() {
		if m[s.Points[b].Child] == "" {
			m[s.Points[b].Child] = "new provenance"
		}
	}
	return m
}

func pValue(p float64) string {
	if p < 1e-15 {
		return "p<1e-15"
	}
	return fmt.Sprintf("p=%.2g", p)
}

func (v *View) points(s *Series) []Point {
	if v.Last > 0 && len(s.Points) > v.Last {
		return s.Points[len(s.Points)-v.Last:]
	}
	return s.Points
}

func (v *View) times() map[string]time.Time {
	m := map[string]time.Time{}
	for _, r := range v.History.Runs {
		m[r.Name] = r.Time.Time
	}
	return m
}

// WriteTable prints one table per series: a row per run with its median, interval, repeats and
// provenance, change points and outliers marked.
func (v *View) WriteTable(w io.Writer) error {
	h := v.History
	open := 0
	for _, c := range v.ChangePoints {
		if c.AcknowledgedAt == nil {
			open++
		}
	}
	span := ""
	if len(h.Runs) > 0 {
		span = fmt.Sprintf(" (%s .. %s)", h.Runs[0].Time.UTC().Format(time.RFC3339), h.Runs[len(h.Runs)-1].Time.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(w, "KVBenchmarkSchedule %s: %d runs%s, %d series; %d change points reported, %d unacknowledged\n",
		h.Schedule, len(h.Runs), span, len(h.Series), len(v.ChangePoints), open)
	times := v.times()
	series := v.series()
	if len(series) == 0 {
		fmt.Fprintln(w, "no series match")
		return nil
	}
	for _, s := range series {
		fmt.Fprintf(w, "\n%s\n", s.Name())
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "RUN\tTIME\tMEDIAN\t95% CI\tN\tPROVENANCE\t")
		marks := v.marks(s)
		for _, p := range v.points(s) {
			ci := "-"
			if p.CILow != 0 || p.CIHigh != 0 {
				ci = fmt.Sprintf("%s .. %s", num(p.CILow), num(p.CIHigh))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", p.Child, times[p.Child].UTC().Format(time.RFC3339), num(p.Median), ci, p.N, p.Fingerprint, marks[p.Child])
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// CSVHeader are WriteCSV's columns.
var CSVHeader = []string{"schedule", "child", "time", "series", "run", "engine", "node", "workload", "threads", "metric",
	"median", "ci_low", "ci_high", "n", "fingerprint", "mark"}

// WriteCSV prints one row per point, for spreadsheets and pandas.
func (v *View) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	times := v.times()
	for _, s := range v.series() {
		marks := v.marks(s)
		for _, p := range v.points(s) {
			row := []string{v.History.Schedule, p.Child, times[p.Child].UTC().Format(time.RFC3339), s.Name(), s.Run, string(s.Engine), s.Node,
				s.Workload, strconv.Itoa(int(s.Threads)), string(s.Metric), num(p.Median), num(p.CILow), num(p.CIHigh),
				strconv.Itoa(int(p.N)), p.Fingerprint, marks[p.Child]}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
