package report

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	runnerreport "github.com/kvbench/kvbench-operator/runner/report"
)

// Table kinds and output formats of Write.
var (
	TableKinds = []string{"auto", "dbbench", "ycsb", "pulse", "threads"}
	Formats    = []string{"text", "markdown"}
)

// Write prints each benchmark's tables of the given kind in the given format. "auto" prints the
// threads table and, when such phases exist, the ycsb and pulse tables.
func Write(w io.Writer, bs []*Benchmark, kind, format string) error {
	if !slices.Contains(TableKinds, kind) {
		return fmt.Errorf("unknown table %q (one of %s)", kind, strings.Join(TableKinds, ", "))
	}
	if !slices.Contains(Formats, format) {
		return fmt.Errorf("unknown format %q (one of %s)", format, strings.Join(Formats, ", "))
	}
	// Build everything first: an error leaves no partial report behind.
	var out bytes.Buffer
	for i, b := range bs {
		if err := writeHeading(&out, b, i, format, fmt.Sprintf("KVBenchmark %s: %s", b.Title(), describe(b)),
			true, append(append(b.Notes(), PlacementNotes(b)...), BuildNotes(b)...)); err != nil {
			return err
		}
		if kind == "dbbench" {
			fence := ""
			if format == "markdown" {
				fence = "```\n"
			}
			fmt.Fprint(&out, "\n"+fence)
			for _, l := range DBBenchLines(b) {
				fmt.Fprintln(&out, l)
			}
			fmt.Fprint(&out, fence)
			continue
		}
		tables, err := Tables(b, kind)
		if err != nil {
			return err
		}
		writeTables(&out, format, tables)
	}
	_, err := out.WriteTo(w)
	return err
}

// writeHeading starts the i-th benchmark's part of a report: a blank line after the one before,
// the heading (a markdown heading in markdown) and the notes. A benchmark without phases (counting
// the dataset loads when load) is an error.
func writeHeading(out *bytes.Buffer, b *Benchmark, i int, format, heading string, load bool, notes []string) error {
	if len(b.Phases(load)) == 0 {
		return fmt.Errorf("%s has no results (phase %s)", b.Title(), orPending(b.Status.Phase))
	}
	if i > 0 {
		fmt.Fprintln(out)
	}
	if format == "markdown" {
		fmt.Fprintf(out, "### %s\n", heading)
	} else {
		fmt.Fprintln(out, heading)
	}
	for _, n := range notes {
		fmt.Fprintln(out, "note: "+n)
	}
	return nil
}

// writeTables prints each table after a blank line, in the format.
func writeTables(out *bytes.Buffer, format string, ts []*Table) {
	for _, t := range ts {
		fmt.Fprintln(out)
		if format == "markdown" {
			t.Markdown(out)
		} else {
			t.Text(out)
		}
	}
}

// Tables builds the tables of one kind (not dbbench, which is lines) for one benchmark.
func Tables(b *Benchmark, kind string) ([]*Table, error) {
	phases := b.Phases(true)
	ycsb := slices.ContainsFunc(phases, func(p Phase) bool { return isYCSB(&p) })
	pulse := slices.ContainsFunc(phases, func(p Phase) bool { return isPulse(&p) })
	switch kind {
	case "threads":
		return withRepeats([]*Table{ThreadsTable(b)}, b), nil
	case "ycsb":
		if !ycsb {
			return nil, fmt.Errorf("%s has no ycsb phases", b.Title())
		}
		return []*Table{YCSBTable(b)}, nil
	case "pulse":
		if !pulse {
			return nil, fmt.Errorf("%s has no pulse phases", b.Title())
		}
		return []*Table{PulseTable(b)}, nil
	case "auto":
		out := []*Table{ThreadsTable(b)}
		if ycsb {
			out = append(out, YCSBTable(b))
		}
		if pulse {
			out = append(out, PulseTable(b))
		}
		return withRepeats(out, b), nil
	}
	return nil, fmt.Errorf("unknown table %q (one of %s)", kind, strings.Join(TableKinds, ", "))
}

// withRepeats adds the repeats table when the benchmark repeated its points.
func withRepeats(ts []*Table, b *Benchmark) []*Table {
	if t := RepeatsTable(b); t != nil {
		ts = append(ts, t)
	}
	return ts
}

func orPending(p api.BenchmarkPhase) api.BenchmarkPhase {
	if p == "" {
		return api.PhasePending
	}
	return p
}

// describe is the one-line context of a benchmark: engines, dataset, medium, phase.
func describe(b *Benchmark) string {
	var engines []string
	nodes := map[string]bool{}
	for _, r := range b.runs() {
		name := r.name
		if e, node, ok := strings.Cut(name, "@"); ok { // EachNode: engines once, then the node count
			name, nodes[node] = e, true
		}
		if !slices.Contains(engines, name) {
			engines = append(engines, name)
		}
	}
	parts := []string{strings.Join(engines, ",")}
	if len(nodes) > 0 {
		parts = append(parts, fmt.Sprintf("on %d nodes", len(nodes)))
	}
	if ds := datasetOf(b); ds != nil {
		parts = append(parts, fmt.Sprintf("%d keys of %d+%g bytes", ds.Num, ds.KeySize, ds.ValueSizeAvg))
	}
	if m := b.Spec.Storage.Medium; m != "" {
		parts = append(parts, string(m))
	}
	if b.Spec.Resources.Memory.Sign() > 0 {
		parts = append(parts, "memory "+b.Spec.Resources.Memory.String())
	}
	if b.Status.Phase != "" {
		parts = append(parts, string(b.Status.Phase))
	}
	return strings.Join(parts, ", ")
}

func datasetOf(b *Benchmark) *api.DatasetInfo {
	for _, r := range b.runs() {
		if r.full != nil {
			return &r.full.Dataset
		}
		if r.status != nil && r.status.Dataset != nil {
			return r.status.Dataset
		}
	}
	return nil
}

// DBBenchLines prints each run as db_bench would: a header per run and thread count, then one
// result line per phase (runner/report.Line), the dataset load first.
func DBBenchLines(b *Benchmark) []string {
	var out []string
	phases := b.Phases(true)
	for _, name := range runNames(phases) {
		version := ""
		for _, r := range b.runs() {
			if r.name == name {
				version = engineVersion(r)
			}
		}
		var own []Phase
		for _, p := range phases {
			if p.Run == name {
				own = append(own, p)
			}
		}
		// db_bench runs one thread count per invocation: group by iteration and thread count.
		type group struct{ iteration, threads int32 }
		var groups []group
		for _, p := range own {
			g := group{p.Iteration, p.Threads}
			if !p.Load && !slices.Contains(groups, g) {
				groups = append(groups, g)
			}
		}
		slices.SortStableFunc(groups, func(a, b group) int {
			if a.iteration != b.iteration {
				return int(a.iteration - b.iteration)
			}
			return int(a.threads - b.threads)
		})
		if len(out) > 0 {
			out = append(out, "")
		}
		for _, p := range own {
			if p.Load {
				out = append(out, fmt.Sprintf("# %s%s, load, threads=%d", name, version, p.Threads))
				out = append(out, runnerreport.Line("load", &p.PhaseSummary))
			}
		}
		from := dbBenchWorkloads(b.Spec.Workloads, own)
		for _, g := range groups {
			h := fmt.Sprintf("# %s%s, threads=%d", name, version, g.threads)
			if repeated(own) {
				h += fmt.Sprintf(", iteration=%d", g.iteration)
			}
			out = append(out, h)
			last := -1
			for i, p := range own {
				if p.Load || p.Iteration != g.iteration || p.Threads != g.threads {
					continue
				}
				// db_bench phases of one name (three dbbench:fillseq) differ by their command line.
				if w, ok := from[i]; ok && w != last {
					out = append(out, "# db_bench "+strings.Join(b.Spec.Workloads[w].DBBenchArgs, " "))
					last = w
				} else if !ok {
					last = -1
				}
				out = append(out, runnerreport.Line(p.Workload, &p.PhaseSummary))
			}
		}
	}
	return out
}

// dbBenchWorkloads maps each db_bench phase of a run (its index in phases) to the spec workload
// (index in ws) whose command line produced it: within an iteration, the n-th dbbench:NAME phase
// comes from the n-th dbbench workload whose --benchmarks list NAME, in spec order.
func dbBenchWorkloads(ws []api.WorkloadSpec, phases []Phase) map[int]int {
	lists := map[string][]int{} // db_bench benchmark name -> the workloads that run it, in order
	for i, w := range ws {
		if w.Name != api.WorkloadDBBench {
			continue
		}
		for _, a := range w.DBBenchArgs {
			if v, ok := strings.CutPrefix(strings.TrimLeft(a, "-"), "benchmarks="); ok {
				for _, name := range strings.Split(v, ",") {
					lists[name] = append(lists[name], i)
				}
			}
		}
	}
	out := map[int]int{}
	seen := map[string]int{} // iteration/name -> phases seen
	for i, p := range phases {
		name, ok := strings.CutPrefix(p.Workload, "dbbench:")
		if !ok || p.Load {
			continue
		}
		k := fmt.Sprintf("%d/%s", p.Iteration, name)
		if n := seen[k]; n < len(lists[name]) {
			out[i] = lists[name][n]
		}
		seen[k]++
	}
	return out
}

func engineVersion(r run) string {
	v := ""
	if r.full != nil {
		v = r.full.EngineVersion
	} else if r.status != nil {
		v = r.status.EngineVersion
	}
	if v == "" {
		return ""
	}
	return " (" + v + ")"
}

// ThreadsTable has a row per workload and thread count (and iteration, when the sweep was
// repeated), and ops/s and p99 columns per run: the generic comparison of engines.
func ThreadsTable(b *Benchmark) *Table {
	phases := b.Phases(true)
	runs := runNames(phases)
	rep := repeated(phases)
	t := &Table{Title: "Throughput and p99 latency by threads", Headers: []string{"Workload", "Threads"}}
	if rep {
		t.Headers = append(t.Headers, "Iteration")
	}
	// Rate-limited writers get two more columns per run, only when some phase had a target, so
	// tables of unlimited phases keep their columns.
	limited := slices.ContainsFunc(phases, func(p Phase) bool { _, ok := rateOf(&p); return ok })
	for _, r := range runs {
		t.Headers = append(t.Headers, r+" ops/s", r+" p99 (us)")
		if limited {
			t.Headers = append(t.Headers, r+" writes/s", r+" write p99 (us) schedule/service")
		}
	}
	type key struct {
		name               string
		threads, iteration int32
	}
	var keys []key
	cells := map[key]map[string]*Phase{}
	for i := range phases {
		p := &phases[i]
		k := key{p.Name(), p.Threads, p.Iteration}
		if cells[k] == nil {
			keys = append(keys, k)
			cells[k] = map[string]*Phase{}
		}
		cells[k][p.Run] = p
	}
	// Workloads in the order they first ran, then threads, then iteration.
	first := map[string]int{}
	for i, k := range keys {
		if _, ok := first[k.name]; !ok {
			first[k.name] = i
		}
	}
	slices.SortStableFunc(keys, func(a, b key) int {
		if a.name != b.name {
			return first[a.name] - first[b.name]
		}
		if a.threads != b.threads {
			return int(a.threads - b.threads)
		}
		return int(a.iteration - b.iteration)
	})
	for _, k := range keys {
		row := []string{k.name, strconv.Itoa(int(k.threads))}
		if rep {
			row = append(row, strconv.Itoa(int(k.iteration)))
		}
		for _, r := range runs {
			p := cells[k][r]
			if p == nil {
				row = append(row, Empty, Empty)
				if limited {
					row = append(row, Empty, Empty)
				}
				continue
			}
			row = append(row, ops(p.OpsPerSec), p99(&p.PhaseSummary))
			if limited {
				row = append(row, rateCells(p)...)
			}
		}
		t.add(row...)
	}
	t.Notes = []string{"ops/s over all threads; p99 over all operations of the phase, in microseconds"}
	if limited {
		t.Notes = append(t.Notes, "writes/s: the rate-limited background writer's reached rate and its target; \"missed\" = more than 5% short",
			"write p99 schedule/service: from each write's scheduled time (includes any backlog) / from its actual start (the engine's own write time)")
		if slices.ContainsFunc(phases, func(p Phase) bool { r, ok := rateOf(&p); return ok && r.missed }) {
			t.Notes = append(t.Notes, "a missed target's schedule latency is mostly the writer's backlog, not the engine: read the service time")
		}
	}
	return t
}

// rate is a rate-limited background writer's verdict on one phase.
type rate struct {
	target, reached float64
	missed          bool
	// schedule and service are the writes' p99 from their scheduled and their actual start; nil
	// when unknown (a trimmed status summary).
	schedule, service *float64
}

// rateOf reads a phase's rate target from the full result's protocol or, for a phase known only
// from status, from its summary; false when the phase had no target.
func rateOf(p *Phase) (rate, bool) {
	var r rate
	switch pr := p.Protocol; {
	case pr != nil && pr.TargetOpsPerSec != nil:
		r.target, r.missed = *pr.TargetOpsPerSec, pr.TargetMissed
		if pr.ServiceLatencyMicros != nil {
			r.service = &pr.ServiceLatencyMicros.P99
		}
	case p.TargetOpsPerSec != nil:
		r.target, r.missed, r.service = *p.TargetOpsPerSec, p.TargetMissed, p.ServiceP99Micros
	default:
		return r, false
	}
	if p.WriteRate != nil {
		r.reached = *p.WriteRate
	}
	for _, o := range p.Operations {
		if o.Name == "write" && o.LatencyMicros != nil {
			r.schedule = &o.LatencyMicros.P99
		}
	}
	return r, true
}

// rateCells are a phase's writes/s and write p99 cells: "6400 (target 80000 missed)" and
// "29000000 / 3.4"; empty for a phase without a target.
func rateCells(p *Phase) []string {
	r, ok := rateOf(p)
	if !ok {
		return []string{Empty, Empty}
	}
	verdict := ""
	if r.missed {
		verdict = " missed"
	}
	lat := func(v *float64) string {
		if v == nil {
			return Empty
		}
		return micros(*v)
	}
	return []string{fmt.Sprintf("%s (target %s%s)", ops(r.reached), ops(r.target), verdict), lat(r.schedule) + " / " + lat(r.service)}
}

func p99(s *api.PhaseSummary) string {
	if s.LatencyMicros == nil {
		return Empty
	}
	return micros(s.LatencyMicros.P99)
}

// side is one side (reads or writes) of a YCSB phase, as the Pegasus tables show it.
type side struct {
	qps, avg, p99, p999 float64
	ok                  bool
}

// combine merges operation types into one side. Rates and means add up exactly; percentiles of a
// merged distribution cannot be computed from the parts, so the largest part's value is an upper
// bound (YCSB letters have one write type, where it is exact).
func combine(opsList []api.OperationSummary, names ...string) side {
	var s side
	var n int64
	var weighted float64
	for _, o := range opsList {
		if !slices.Contains(names, o.Name) {
			continue
		}
		s.ok = true
		s.qps += o.OpsPerSec
		if o.LatencyMicros != nil {
			n += o.Ops
			weighted += o.LatencyMicros.Mean * float64(o.Ops)
			s.p99 = max(s.p99, o.LatencyMicros.P99)
			s.p999 = max(s.p999, o.LatencyMicros.P999)
		}
	}
	if n > 0 {
		s.avg = weighted / float64(n)
	}
	return s
}

func wholePhase(p *api.PhaseSummary) side {
	s := side{qps: p.OpsPerSec, ok: true}
	if l := p.LatencyMicros; l != nil {
		s.avg, s.p99, s.p999 = l.Mean, l.P99, l.P999
	}
	return s
}

func (s side) cells() []string {
	if !s.ok {
		return []string{Empty, Empty, Empty, Empty}
	}
	lat := func(v float64) string {
		if v == 0 {
			return Empty
		}
		return micros(v)
	}
	return []string{ops(s.qps), lat(s.avg), lat(s.p99), lat(s.p999)}
}

// YCSB operation types by side, as YCSB's output names and counts them: scans are the reads of
// workload E, and a READ-MODIFY-WRITE is in both sides (YCSB counts its read as a READ and its
// update as an UPDATE). Results from before the runner's YCSB records named them in lower case and
// counted a read-modify-write once, as a write.
var (
	readOps  = []string{"READ", "SCAN", "read", "scan"}
	writeOps = []string{"UPDATE", "INSERT", "update", "insert", "readmodifywrite"}
)

// YCSBTable is seed 004's Pegasus table: per YCSB phase the read and write sides' QPS, average,
// p99 and p99.9 latency. Status summaries may lack the per-operation breakdown (trimmed to fit
// the termination message); then only read-only or write-only mixes can be shown.
func YCSBTable(b *Benchmark) *Table {
	phases := b.Phases(false)
	rep := repeated(phases)
	t := &Table{Title: "YCSB (Pegasus columns, latency in us)", Headers: []string{"Engine", "Case", "Threads"}}
	if rep {
		t.Headers = append(t.Headers, "Iteration")
	}
	t.Headers = append(t.Headers, "RW Ratio", "R-QPS", "R-AVG-Lat", "R-P99-Lat", "R-P999-Lat", "W-QPS", "W-AVG-Lat", "W-P99-Lat", "W-P999-Lat")
	missing := false
	for i := range phases {
		p := &phases[i]
		if !isYCSB(p) {
			continue
		}
		// The ratio the result recorded (a result file read on its own has no spec), else the spec's.
		ratio, known := p.ReadWriteRatio, p.ReadWriteRatio != ""
		if !known {
			ratio, known = specRatio(b, p)
		}
		var r, w side
		switch {
		case len(p.Operations) > 0:
			r, w = combine(p.Operations, readOps...), combine(p.Operations, writeOps...)
			if !known {
				var share int
				if share, known = measuredReadPercent(p.Operations); known {
					ratio = api.RatioOfPercent(share)
				}
			}
		case known && strings.HasSuffix(ratio, ":0"):
			r = wholePhase(&p.PhaseSummary)
		case known && strings.HasPrefix(ratio, "0:"):
			w = wholePhase(&p.PhaseSummary)
		default:
			missing = true
		}
		if !known {
			ratio = Empty
		}
		row := []string{p.Run, p.Name(), strconv.Itoa(int(p.Threads))}
		if rep {
			row = append(row, strconv.Itoa(int(p.Iteration)))
		}
		row = append(row, ratio)
		row = append(row, r.cells()...)
		row = append(row, w.cells()...)
		t.add(row...)
	}
	t.Notes = []string{"R = READ + SCAN, W = UPDATE + INSERT, as YCSB counts them (a READ-MODIFY-WRITE's read is a READ, its update an UPDATE); RW Ratio is the configured reads:writes"}
	if missing {
		t.Notes = append(t.Notes, "some status summaries lack the per-operation breakdown (trimmed to 4 KiB): use the full results (runner pod logs, or kubectl kvbench save)")
	}
	return t
}

// specRatio is the reads:writes ratio of a YCSB phase as the spec configured it. The phase is
// matched to its spec workload by letter, thread count and occurrence (a spec may list letter A
// several times with different ratios, as seed 004 does). Letters' defaults as in runner/bench ycsbMix.
func specRatio(b *Benchmark, p *Phase) (string, bool) {
	var found *api.YCSBSpec
	seen := 0
	for _, w := range b.Spec.Workloads {
		if w.Name != api.WorkloadYCSB || w.YCSB == nil || "ycsb-"+strings.ToLower(string(w.YCSB.Workload)) != p.Workload {
			continue
		}
		threads := w.Threads
		if len(threads) == 0 {
			threads = b.Spec.Threads
		}
		if !slices.Contains(threads, p.Threads) {
			continue
		}
		if seen == p.Occurrence {
			found = w.YCSB
			break
		}
		seen++
	}
	if found == nil {
		return "", false
	}
	return found.RWRatio()
}

func measuredReadPercent(list []api.OperationSummary) (int, bool) {
	var r, w int64
	for _, o := range list {
		switch {
		case slices.Contains(readOps, o.Name):
			r += o.Ops
		case slices.Contains(writeOps, o.Name):
			w += o.Ops
		}
	}
	if r+w == 0 {
		return 0, false
	}
	return int(math.Round(float64(r) * 100 / float64(r+w))), true
}

// PulseTable is seed 002's "thread number | time cost in seconds" table: a row per thread count,
// per run the range (min~max) of the rounds' read times. A run known only from status summaries
// shows the mean round time instead (reads + writes + deletes; the rounds are not in status).
func PulseTable(b *Benchmark) *Table {
	var phases []Phase
	for _, p := range b.Phases(false) {
		if isPulse(&p) {
			phases = append(phases, p)
		}
	}
	runs := runNames(phases)
	t := &Table{Title: "Pulse rounds", Headers: []string{"thread number"}}
	hasRounds, hasUsage := map[string]bool{}, map[string]bool{}
	for _, r := range runs {
		hasRounds[r] = !slices.ContainsFunc(phases, func(p Phase) bool { return p.Run == r && len(p.PulseRounds) == 0 })
		hasUsage[r] = hasRounds[r] && !slices.ContainsFunc(phases, func(p Phase) bool {
			return p.Run == r && slices.ContainsFunc(p.PulseRounds, func(x api.PulseRound) bool { return x.ReadUsage == nil })
		})
		if hasRounds[r] {
			t.Headers = append(t.Headers, r+" time cost in seconds")
		} else {
			t.Headers = append(t.Headers, r+" mean round seconds")
		}
		if hasUsage[r] {
			t.Headers = append(t.Headers, r+" cpu %", r+" MB read")
		}
	}
	for _, th := range sortedThreads(phases) {
		row := []string{strconv.Itoa(int(th))}
		for _, r := range runs {
			lo, hi, sum, n := math.Inf(1), math.Inf(-1), 0.0, 0
			var cpu, read float64
			for _, p := range phases {
				if p.Run != r || p.Threads != th {
					continue
				}
				if hasRounds[r] {
					for _, round := range p.PulseRounds {
						lo, hi = min(lo, round.ReadSeconds), max(hi, round.ReadSeconds)
						if u := round.ReadUsage; u != nil {
							cpu += u.CPUPercent
							read += float64(u.ReadBytes)
						}
						n++
					}
				} else if p.Pulse != nil && p.Pulse.Rounds > 0 {
					sum += p.Pulse.MeanRoundSeconds * float64(p.Pulse.Rounds)
					n += int(p.Pulse.Rounds)
				}
			}
			switch {
			case n == 0:
				row = append(row, Empty)
			case hasRounds[r]:
				row = append(row, seconds(lo)+"~"+seconds(hi))
			default:
				row = append(row, seconds(sum/float64(n)))
			}
			if hasUsage[r] {
				if n == 0 {
					row = append(row, Empty, Empty)
				} else {
					row = append(row, strconv.Itoa(int(math.Round(cpu/float64(n)))), strconv.Itoa(int(math.Round(read/float64(n)/1e6))))
				}
			}
		}
		t.add(row...)
	}
	if slices.ContainsFunc(runs, func(r string) bool { return hasRounds[r] }) {
		t.Notes = append(t.Notes, "time cost: the rounds' read times, min~max (each round reads its keys sorted, split over the threads)")
	}
	if slices.ContainsFunc(runs, func(r string) bool { return hasUsage[r] }) {
		t.Notes = append(t.Notes, "cpu %, MB read: the runner process during a round's reads, mean over rounds (cpu 200 = two cores busy; MB read from storage, i.e. page-cache misses)")
	}
	if slices.ContainsFunc(runs, func(r string) bool { return !hasRounds[r] }) {
		t.Notes = append(t.Notes, "mean round seconds: reads + writes + deletes, from the status summary (full results have each round's read time)")
	}
	return t
}
