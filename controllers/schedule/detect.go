package schedule

import (
	"fmt"
	"math"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/history"
	"github.com/kvbench/kvbench-operator/stats"
)

// defaultMinChange is each metric's smallest change worth reporting (percent; for stallPercent
// percentage points). Throughput and the median latency move little between runs; tail latencies
// and stall time much more.
var defaultMinChange = map[api.HistoryMetric]float64{
	api.MetricOpsPerSec: 2, api.MetricP50Micros: 3, api.MetricP99Micros: 5, api.MetricP999Micros: 10,
	api.MetricWriteAmplification: 5, api.MetricStallPercent: 1,
}

// defaultWatched are the metrics watched when the schedule names none: each watched series is
// another chance of a false alarm.
var defaultWatched = []api.HistoryMetric{api.MetricOpsPerSec, api.MetricP99Micros}

// watched are the detector's options for each watched metric.
func watched(d api.DetectionSpec) map[api.HistoryMetric]stats.DetectOptions {
	base := stats.DetectOptions{}
	if d.MaxP != nil {
		base.MaxP = *d.MaxP
	}
	if d.Window != nil {
		base.Window = int(*d.Window)
	}
	out := map[api.HistoryMetric]stats.DetectOptions{}
	set := func(m api.HistoryMetric, pct *float64) {
		o := base
		o.HigherIsBetter = m == api.MetricOpsPerSec
		min := defaultMinChange[m]
		if pct != nil {
			min = *pct
		}
		if m == api.MetricStallPercent {
			o.MinAbsChange = min
		} else {
			o.MinChange = min / 100
		}
		out[m] = o
	}
	if len(d.Metrics) == 0 {
		for _, m := range defaultWatched {
			set(m, nil)
		}
	}
	for _, m := range d.Metrics {
		set(m.Name, m.MinChangePercent)
	}
	return out
}

// findings are what a newly recorded run changed.
type findings struct {
	// Report are change points to report now.
	Report []api.ScheduleChangePoint
	// Suspects is the new list of suspected regressions waiting for confirmation.
	Suspects []api.SuspectChangePoint
	// ConfirmOn is the node of a new suspect, when a confirmation run should start (Rerun); "" for
	// any node. Confirm is false when none is needed.
	Confirm   bool
	ConfirmOn string
	// Dropped are suspects the confirmation run did not find again.
	Dropped []api.SuspectChangePoint
}

// detect checks every watched series that got a point from child (just recorded in h) for change
// points, with the change points already reported and acknowledged as known ones.
func detect(h *history.History, child string, s *api.KVBenchmarkSchedule, now metav1.Time) findings {
	var f findings
	opts := watched(s.Spec.Detection)
	confirm := s.Spec.Detection.Confirm             // "" is the API's default, NextRun
	suspects := map[string]api.SuspectChangePoint{} // by series
	for _, sp := range s.Status.Suspects {
		suspects[sp.Series] = sp
	}
	for i := range h.Series {
		se := &h.Series[i]
		o, ok := opts[se.Metric]
		if !ok || se.Index(child) < 0 {
			continue
		}
		name := se.Name()
		sp, wasSuspect := suspects[name]
		delete(suspects, name)
		for _, c := range stats.Watch(se.Values(), se.Boundaries(), known(h, se, s.Status.ChangePoints), o) {
			cp := describe(h, se, c, now)
			if confirm == api.ConfirmNone {
				f.Report = append(f.Report, cp)
				continue
			}
			if wasSuspect && sp.Child == cp.Child {
				cp.Confirmed = true
				f.Report = append(f.Report, cp)
				wasSuspect = false
				continue
			}
			suspects[name] = api.SuspectChangePoint{Series: name, Child: cp.Child, Node: cp.Node}
			if !f.Confirm && confirm == api.ConfirmRerun {
				f.Confirm, f.ConfirmOn = true, nodeOf(h, cp.Child, se.Run)
			}
		}
		if wasSuspect {
			f.Dropped = append(f.Dropped, sp)
		}
	}
	for _, sp := range suspects {
		f.Suspects = append(f.Suspects, sp)
	}
	slices.SortFunc(f.Suspects, func(a, b api.SuspectChangePoint) int { return strings.Compare(a.Series, b.Series) })
	scope(h, f.Report)
	return f
}

// known are the indexes in se of its reported change points and acknowledgements (from status and
// from the history, which keeps them all while their runs are in it).
func known(h *history.History, se *history.Series, reported []api.ScheduleChangePoint) []int {
	name := se.Name()
	var out []int
	add := func(child string) {
		if i := se.Index(child); i >= 0 {
			out = append(out, i)
		} else if !h.Has(child) {
			out = append(out, -1) // older than the kept history
		}
	}
	for _, c := range reported {
		if c.Series == name {
			add(c.Child)
		}
	}
	for _, marks := range [][]history.Mark{h.Reported, h.Acks} {
		for _, m := range marks {
			if m.Series == name {
				add(m.Child)
			}
		}
	}
	return out
}

// describe is a change point as status reports it.
func describe(h *history.History, se *history.Series, c stats.ChangePoint, now metav1.Time) api.ScheduleChangePoint {
	pts := se.Points
	child := pts[c.Index].Child
	cp := api.ScheduleChangePoint{Series: se.Name(), Run: se.Run, Engine: se.Engine, Node: se.Node, Workload: se.Workload,
		Threads: se.Threads, Metric: se.Metric, Child: child, Direction: api.Improved, P: c.P, DetectedAt: now,
		ChangePercent: math.Round(1000*c.Change) / 10,
		Before:        segment(c.Before, pts[c.From].Child, pts[c.Index-1].Child),
		After:         segment(c.After, child, pts[c.To-1].Child)}
	if c.Regression {
		cp.Direction = api.Regressed
	}
	if r := h.RunOf(child); r != nil {
		cp.Time = r.Time
		if prev := h.RunOf(pts[c.Index-1].Child); prev != nil {
			cp.Cause = cause(prev, r, se.Run)
		}
	}
	return cp
}

func segment(m stats.MeanStats, first, last string) api.SegmentStats {
	return api.SegmentStats{N: int32(m.N), First: first, Last: last, Mean: m.Mean, CILow: m.CILow, CIHigh: m.CIHigh}
}

// cause names what changed between two recorded runs for one of their runs: provenance fields,
// and the template's generation.
func cause(prev, cur *history.Run, run string) string {
	var parts []string
	a, okA := prev.ProvenanceOf(run)
	b, okB := cur.ProvenanceOf(run)
	if okA && okB {
		parts = a.Diff(b)
	}
	if prev.Generation != cur.Generation && prev.Generation != 0 && cur.Generation != 0 {
		parts = append(parts, fmt.Sprintf("template generation %d -> %d", prev.Generation, cur.Generation))
	}
	return strings.Join(parts, "; ")
}

// nodeOf is the node a run of a recorded KVBenchmark ran on, as far as the history knows: the
// node of an EachNode run's name.
func nodeOf(h *history.History, child, run string) string {
	if _, node, ok := strings.Cut(run, "@"); ok {
		return node
	}
	if r := h.RunOf(child); r != nil {
		p, _ := r.ProvenanceOf(run)
		return p.NodeName
	}
	return ""
}

// scope says, for change points of a schedule spread over nodes, whether the same series changed
// at the same run on every node (a software change) or on some (node drift).
func scope(h *history.History, cps []api.ScheduleChangePoint) {
	key := func(engine api.EngineName, workload string, threads int32, m api.HistoryMetric, child string) string {
		return fmt.Sprintf("%s/%s/%d/%s/%s", engine, workload, threads, m, child)
	}
	changed := map[string]int{}
	for _, c := range cps {
		if c.Node != "" {
			changed[key(c.Engine, c.Workload, c.Threads, c.Metric, c.Child)+"/"+string(c.Direction)]++
		}
	}
	for i := range cps {
		c := &cps[i]
		if c.Node == "" {
			continue
		}
		of := 0 // nodes with this series and a point at the change point's run
		for j := range h.Series {
			se := &h.Series[j]
			if se.Node != "" && se.Engine == c.Engine && se.Workload == c.Workload && se.Threads == c.Threads && se.Metric == c.Metric && se.Index(c.Child) >= 0 {
				of++
			}
		}
		n := changed[key(c.Engine, c.Workload, c.Threads, c.Metric, c.Child)+"/"+string(c.Direction)]
		if n == of && of > 1 {
			c.Scope = fmt.Sprintf("all %d nodes: a software change", of)
		} else if of > 1 {
			c.Scope = fmt.Sprintf("%d of %d nodes: node drift", n, of)
		}
	}
}
