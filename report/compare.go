package report

import (
	"fmt"
	"strconv"

	"github.com/kvbench/kvbench-operator/stats"
)

// Comparison matches the phases of two benchmarks: B's numbers relative to A's.
type Comparison struct {
	A, B *Benchmark
	// Rows are the phases present in both, in A's order.
	Rows []ComparedPhase
	// OnlyA and OnlyB name the phases without a match.
	OnlyA, OnlyB []string
}

// ComparedPhase is one phase in both benchmarks.
type ComparedPhase struct {
	// Run is the run name; "a vs b" when two single-run benchmarks of different runs are compared.
	Run       string
	Workload  string
	Threads   int32
	Iteration int32
	A, B      *Phase
}

// Compare matches phases by run, workload (and its occurrence), threads and iteration, the
// dataset load included. When both benchmarks have a single run, runs match whatever their
// names, so that two one-engine benchmarks (or two bare result files) can be compared. Phases left
// over are then matched without the "dbbench:" prefix, so db_bench's fillseq lines up with the
// runner's fillseq (seed 001 runs the two side by side).
func Compare(a, b *Benchmark) *Comparison {
	pa, pb := a.Phases(true), b.Phases(true)
	anyRun := len(runNames(pa)) == 1 && len(runNames(pb)) == 1
	key := func(p *Phase, tool bool) string {
		r, w := p.Run, p.Name()
		if anyRun {
			r = ""
		}
		if !tool {
			w = stats.TrimTool(w)
		}
		return fmt.Sprintf("%s|%s|%d|%d", r, w, p.Threads, p.Iteration)
	}
	matchA, usedB := stats.Match(pa, pb, key)
	c := &Comparison{A: a, B: b}
	for i := range pa {
		p := &pa[i]
		if matchA[i] < 0 {
			c.OnlyA = append(c.OnlyA, label(p))
			continue
		}
		q := &pb[matchA[i]]
		run, workload := p.Run, p.Name()
		if p.Run != q.Run {
			run = p.Run + " vs " + q.Run
		}
		if p.Name() != q.Name() {
			workload = p.Name() + " vs " + q.Name()
		}
		c.Rows = append(c.Rows, ComparedPhase{Run: run, Workload: workload, Threads: p.Threads, Iteration: p.Iteration, A: p, B: q})
	}
	for j := range pb {
		if !usedB[j] {
			c.OnlyB = append(c.OnlyB, label(&pb[j]))
		}
	}
	return c
}

func label(p *Phase) string {
	s := fmt.Sprintf("%s %s threads=%d", p.Run, p.Name(), p.Threads)
	if p.Iteration > 0 {
		s += fmt.Sprintf(" iteration=%d", p.Iteration)
	}
	return s
}

// Table shows ops/s and p99 of A and B with the change in percent; unmatched phases are notes.
func (c *Comparison) Table() *Table {
	rep := false
	for _, r := range c.Rows {
		rep = rep || r.Iteration > 0
	}
	t := &Table{Title: "Comparison: " + OldNew(c.A, c.B), Headers: []string{"Run", "Workload", "Threads"}}
	if rep {
		t.Headers = append(t.Headers, "Iteration")
	}
	t.Headers = append(t.Headers, "ops/s A", "ops/s B", "change", "p99 A (us)", "p99 B (us)", "change")
	for _, r := range c.Rows {
		row := []string{r.Run, r.Workload, strconv.Itoa(int(r.Threads))}
		if rep {
			row = append(row, strconv.Itoa(int(r.Iteration)))
		}
		row = append(row, ops(r.A.OpsPerSec), ops(r.B.OpsPerSec), change(r.A.OpsPerSec, r.B.OpsPerSec))
		la, lb := r.A.LatencyMicros, r.B.LatencyMicros
		if la != nil && lb != nil {
			row = append(row, micros(la.P99), micros(lb.P99), change(la.P99, lb.P99))
		} else {
			row = append(row, p99(&r.A.PhaseSummary), p99(&r.B.PhaseSummary), Empty)
		}
		t.add(row...)
	}
	t.Notes = append(t.Notes, "change = (B - A) / A: more ops/s is better, a lower p99 is better")
	t.Notes = append(t.Notes, PlacementNotes(c.A, c.B)...)
	t.Notes = append(t.Notes, BuildNotes(c.A, c.B)...)
	for _, s := range c.OnlyA {
		t.Notes = append(t.Notes, "only in A: "+s)
	}
	for _, s := range c.OnlyB {
		t.Notes = append(t.Notes, "only in B: "+s)
	}
	return t
}
