// Package report turns KVBenchmarks and the runners' full results into the seed documents'
// tables, db_bench-style lines, comparisons and plots. Its functions are pure: the caller loads
// the benchmarks (kubectl kvbench reads them from the cluster or from saved files).
package report

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// Benchmark is one KVBenchmark (spec and status) with, optionally, the runners' full results.
type Benchmark struct {
	api.KVBenchmark
	// Results are the runners' full results by run name. A run without one is reported from the
	// summaries in status, which carry no time series and may be trimmed.
	Results map[string]*api.Result
	// Source is the file (the -f argument) the benchmark was read from; empty for the cluster.
	Source string
	// Label, when set, replaces the title (one run of a benchmark: "default/demo run rocksdb").
	Label string
}

// Title names the benchmark as namespace/name (just name when it has no namespace).
func (b *Benchmark) Title() string {
	if b.Label != "" {
		return b.Label
	}
	if b.Namespace == "" {
		return b.Name
	}
	return b.Namespace + "/" + b.Name
}

// From says where the benchmark was read: its file, or "cluster".
func (b *Benchmark) From() string {
	if b.Source == "" {
		return "cluster"
	}
	return b.Source
}

// OldNew is the first line of a comparison: which benchmark is A, the old one, and which is B,
// the new one, and where each was read, e.g. "A (old) = default/nightly (baseline/nightly.yaml),
// B (new) = default/nightly-2026-11-23 (cluster)".
func OldNew(a, b *Benchmark) string {
	return fmt.Sprintf("A (old) = %s (%s), B (new) = %s (%s)", a.Title(), a.From(), b.Title(), b.From())
}

// RunNames are the benchmark's runs: status order, then runs known only from a full result.
func (b *Benchmark) RunNames() []string {
	var out []string
	for _, r := range b.runs() {
		out = append(out, r.name)
	}
	return out
}

// OnlyRun is the benchmark with just one of its runs, titled "namespace/name run RUN", so that
// the engines of one benchmark can be compared with each other.
func (b *Benchmark) OnlyRun(name string) *Benchmark {
	out := &Benchmark{KVBenchmark: *b.KVBenchmark.DeepCopy(), Source: b.Source, Label: b.Title() + " run " + name}
	out.Status.Runs = slices.DeleteFunc(out.Status.Runs, func(r api.RunStatus) bool { return r.Name != name })
	if r, ok := b.Results[name]; ok {
		out.Results = map[string]*api.Result{name: r}
	}
	return out
}

// Phase is one measured phase (or the dataset load) of one run.
type Phase struct {
	Run    string
	Engine api.EngineName
	api.PhaseResult
	// Full is true when the phase comes from the runner's full result, so Intervals and
	// PulseRounds are present and Operations are not trimmed.
	Full bool
	// Load marks the dataset preparation.
	Load bool
	// Occurrence counts earlier phases of the run with the same workload, threads and iteration
	// (a spec may list a workload twice); it keeps such phases apart in tables and comparisons.
	Occurrence int
}

// Name is the workload, with "#2", "#3" ... for a repeated workload at the same threads and iteration.
func (p *Phase) Name() string {
	if p.Occurrence == 0 {
		return p.Workload
	}
	return fmt.Sprintf("%s#%d", p.Workload, p.Occurrence+1)
}

// run is one run with what is known about it.
type run struct {
	name   string
	engine api.EngineName
	status *api.RunStatus // nil for a run known only from a full result
	full   *api.Result
}

// runs lists the runs in status order, then runs that only have a full result, by name.
func (b *Benchmark) runs() []run {
	var out []run
	seen := map[string]bool{}
	for i := range b.Status.Runs {
		s := &b.Status.Runs[i]
		out = append(out, run{name: s.Name, engine: s.Engine, status: s, full: b.Results[s.Name]})
		seen[s.Name] = true
	}
	var extra []string
	for name := range b.Results {
		if !seen[name] {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	for _, name := range extra {
		out = append(out, run{name: name, engine: b.Results[name].Engine, full: b.Results[name]})
	}
	return out
}

// Phases returns every run's phases in the order they ran, run by run; with load, each run's
// dataset load comes first. A run's full result, when present, replaces its status summaries: it
// holds the same phases plus the ones a trimmed summary left out.
func (b *Benchmark) Phases(load bool) []Phase {
	var out []Phase
	for _, r := range b.runs() {
		var list []Phase
		if r.full != nil {
			if load && r.full.Load != nil {
				list = append(list, Phase{PhaseResult: *r.full.Load, Full: true, Load: true})
			}
			for _, p := range r.full.Phases {
				list = append(list, Phase{PhaseResult: p, Full: true})
			}
		} else if r.status != nil {
			if load && r.status.Load != nil {
				list = append(list, Phase{PhaseResult: api.PhaseResult{PhaseSummary: *r.status.Load}, Load: true})
			}
			for _, s := range r.status.Results {
				list = append(list, Phase{PhaseResult: api.PhaseResult{PhaseSummary: s}})
			}
		}
		seen := map[string]int{}
		for i := range list {
			p := &list[i]
			p.Run, p.Engine = r.name, r.engine
			k := fmt.Sprintf("%s/%d/%d", p.Workload, p.Threads, p.Iteration)
			p.Occurrence = seen[k]
			seen[k]++
		}
		out = append(out, list...)
	}
	return out
}

// Notes are remarks about the benchmark's state that the tables cannot show: failed runs, runs
// without results, trimmed summaries.
func (b *Benchmark) Notes() []string {
	var notes []string
	for _, r := range b.runs() {
		s := r.status
		if s == nil {
			continue
		}
		if s.Phase == api.RunFailed {
			msg := fmt.Sprintf("run %s failed", r.name)
			if s.Reason != "" {
				msg += " (" + s.Reason + ")"
			}
			if s.Message != "" {
				msg += ": " + firstLine(s.Message)
			}
			notes = append(notes, msg)
		} else if s.Phase != api.RunSucceeded {
			notes = append(notes, fmt.Sprintf("run %s is %s", r.name, strings.ToLower(string(s.Phase))))
		}
		if s.Truncated > 0 && r.full == nil {
			notes = append(notes, fmt.Sprintf("run %s: %d phases were left out of the status summary; the full result has them", r.name, s.Truncated))
		}
	}
	return notes
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// runNames are the distinct run names of phases, in order of appearance.
func runNames(ps []Phase) []string {
	var names []string
	for _, p := range ps {
		if !slices.Contains(names, p.Run) {
			names = append(names, p.Run)
		}
	}
	return names
}

// sortedThreads are the distinct thread counts of phases, ascending.
func sortedThreads(ps []Phase) []int32 {
	var ts []int32
	for _, p := range ps {
		if !slices.Contains(ts, p.Threads) {
			ts = append(ts, p.Threads)
		}
	}
	slices.Sort(ts)
	return ts
}

func repeated(ps []Phase) bool {
	return slices.ContainsFunc(ps, func(p Phase) bool { return p.Iteration > 0 })
}

func isYCSB(p *Phase) bool  { return strings.HasPrefix(p.Workload, "ycsb-") }
func isPulse(p *Phase) bool { return p.Workload == string(api.WorkloadPulse) }
