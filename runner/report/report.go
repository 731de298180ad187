// Package report prints results as db_bench does and bounds the summary to the container
// termination message limit.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// Line formats a phase as db_bench 7.8.3's result line:
//
//	readrandom   :       1.422 micros/op 1404593 ops/sec 0.028 seconds 40000 operations;  155.4 MB/s (20000 of 20000 found)
func Line(name string, r *api.PhaseSummary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-12s : %11.3f micros/op %d ops/sec %.3f seconds %d operations;",
		name, r.MicrosPerOp, int64(r.OpsPerSec), r.Seconds, r.Ops)
	extra := ""
	if r.MBPerSec > 0 {
		extra = fmt.Sprintf("%6.1f MB/s", r.MBPerSec)
	}
	if r.Found != nil {
		reads := r.Ops
		for _, o := range r.Operations {
			if o.Name == "read" {
				reads = o.Ops
			}
		}
		if r.Workload == "pulse" || strings.HasPrefix(r.Workload, "ycsb") {
			reads = -1
		}
		msg := fmt.Sprintf("(%d of %d found)", *r.Found, reads)
		if reads < 0 {
			msg = fmt.Sprintf("(%d found)", *r.Found)
		}
		if extra != "" {
			extra += " "
		}
		extra += msg
	}
	if r.WriteRate != nil {
		if extra != "" {
			extra += " "
		}
		extra += fmt.Sprintf("(%.0f writes/sec reached)", *r.WriteRate)
	}
	if extra != "" {
		b.WriteString(" ")
		b.WriteString(extra)
	}
	return b.String()
}

// Histogram prints db_bench's --histogram summary block (without the bucket table).
func Histogram(w io.Writer, what string, count int64, p *api.Percentiles) {
	if p == nil {
		return
	}
	fmt.Fprintf(w, "Microseconds per %s:\nCount: %d Average: %.4f  StdDev: 0.00\n", what, count, p.Mean)
	fmt.Fprintf(w, "Min: 0  Median: %.4f  Max: %.0f\n", p.P50, p.Max)
	fmt.Fprintf(w, "Percentiles: P50: %.2f P75: %.2f P99: %.2f P99.9: %.2f P99.99: %.2f\n", p.P50, p.P75, p.P99, p.P999, p.P9999)
	fmt.Fprintln(w, "------------------------------------------------------")
	fmt.Fprintln(w)
}

// Summarize builds the bounded summary of a result: it always marshals to at most
// api.TerminationMessageLimit bytes. It drops detail first (per-operation breakdowns, pulse
// summaries, then latency; a rate target and whether it was missed stay), then whole phases from the end, counting them in Truncated.
func Summarize(r *api.Result) *api.Summary {
	s := &api.Summary{SchemaVersion: r.SchemaVersion, Engine: r.Engine, EngineVersion: r.EngineVersion, Error: r.Error,
		Provenance: ProvenanceSummary(r.Provenance)}
	if p := s.Provenance; p != nil {
		// The run's engine's library build only: a line, not one per library linked.
		p.Builds = slices.DeleteFunc(p.Builds, func(l string) bool { return !strings.HasPrefix(l, string(r.Engine)+": ") })
		if len(p.Builds) == 0 {
			p.Builds = nil
		}
	}
	ds := r.Dataset
	s.Dataset = &ds
	if r.Load != nil {
		l := r.Load.PhaseSummary
		s.Load = &l
	}
	for _, p := range r.Phases {
		s.Phases = append(s.Phases, p.PhaseSummary)
	}
	const limit = api.TerminationMessageLimit
	if len(s.Error) > 1024 {
		s.Error = s.Error[:1021] + "..."
	}
	fits := func() bool { b, _ := json.Marshal(s); return len(b) <= limit }
	strip := []func(p *api.PhaseSummary){
		func(p *api.PhaseSummary) { p.Operations = nil },
		func(p *api.PhaseSummary) { p.Pulse = nil },
		func(p *api.PhaseSummary) {
			if p.LatencyMicros != nil {
				p.LatencyMicros.P75, p.LatencyMicros.P9999 = 0, 0
			}
		},
		func(p *api.PhaseSummary) { p.LatencyMicros, p.ServiceP99Micros = nil, nil },
	}
	for _, f := range strip {
		if fits() {
			return s
		}
		for i := range s.Phases {
			f(&s.Phases[i])
		}
		if s.Load != nil {
			f(s.Load)
		}
	}
	if p := s.Provenance; !fits() && p != nil && len(p.OptionsOverrides) > 1 {
		// Before any phase: one line that says where the overrides are.
		p.OptionsOverrides = []string{fmt.Sprintf("%d OPTIONS file keys overridden: see provenance.optionsOverrides in the result", len(r.Provenance.OptionsOverrides))}
	}
	if p := s.Provenance; !fits() && p != nil {
		p.Builds = nil // the result's provenance.libraryBuilds has it
	}
	for !fits() && len(s.Phases) > 0 {
		s.Phases = s.Phases[:len(s.Phases)-1]
		s.Truncated++
	}
	if !fits() {
		s.Load, s.Dataset = nil, nil
	}
	for !fits() && len(s.Error) > 64 {
		s.Error = s.Error[:len(s.Error)/2] + "..."
	}
	return s
}
