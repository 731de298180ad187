// Package metrics exports KVBenchmark results as Prometheus series. The series of a benchmark are
// rebuilt on every reconcile from its status, and, for each run with a full result (the archive),
// from that result's series (RunSeries, built once when the archive is read or written), so they
// survive an operator restart; they are dropped when the benchmark is deleted. Every phase has its
// own series: the phase label is its index in the run.
package metrics

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/controllers/plan"
)

// resultLabels name one phase of one run. phase is the phase's index in the run ("load" for the
// dataset load), so two phases of one workload at one thread count (seed 000's readwhilewriting
// at two write rates) do not collide; workload, threads and iteration are there to select by.
// node is the node of a spread EachNode run (one run per engine per node), empty otherwise.
var resultLabels = []string{"namespace", "benchmark", "engine", "phase", "workload", "threads", "iteration", "medium", "dataset_bytes", "node"}

func with(extra ...string) []string { return append(append([]string{}, resultLabels...), extra...) }

// Limits on the series built from runner data (a benchmark's runner image is its author's
// choice, so workload and operation names, round numbers and values are tenant input).
const (
	// maxPulseRounds bounds the per-round series of one pulse phase.
	maxPulseRounds = 100
	// MaxSeries is a benchmark's series budget, split evenly between its runs; series beyond a
	// run's share are not exported (counted in kvbench_result_series_refused).
	MaxSeries = 10000
	// maxLabel bounds a label value taken from runner data; LabelAlphabet is what it may hold.
	maxLabel = 64
)

// LabelAlphabet describes the label values taken from runner data (workload, operation).
const LabelAlphabet = "1 to 64 of A-Z a-z 0-9 _ . : -"

// validLabel says whether a runner-supplied label value may be exported.
func validLabel(s string) bool {
	if len(s) == 0 || len(s) > maxLabel {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}

var (
	descOps = newDesc("kvbench_result_ops_per_second",
		"Throughput of a measured phase (db_bench ops/sec).", resultLabels, nil)
	descBytes = newDesc("kvbench_result_bytes_per_second",
		"Data rate of a measured phase (db_bench MB/s in bytes).", resultLabels, nil)
	descLatency = newDesc("kvbench_result_latency_seconds",
		"Latency percentiles of a measured phase, from merged per-thread histograms (quantile 1 is the max).",
		with("quantile"), nil)
	descOperationOps = newDesc("kvbench_result_operation_ops_per_second",
		"Throughput of one operation type of a mixed phase (YCSB READ/UPDATE/INSERT/SCAN/READ-MODIFY-WRITE, readrandomwriterandom read/write).",
		with("operation"), nil)
	descOperationLatency = newDesc("kvbench_result_operation_latency_seconds",
		"Latency percentiles of one operation type of a mixed phase (quantile 1 is the max).",
		with("operation", "quantile"), nil)
	descPulseRound = newDesc("kvbench_result_pulse_round_seconds",
		"Time of one pulse round and of its read, write and delete parts (first 100 rounds; full result only).",
		with("round", "part"), nil)
	descCPU = newDesc("kvbench_result_cpu_seconds",
		"CPU time of the runner process over the phase, engine background work included (full result only).", resultLabels, nil)
	descWriteAmp = newDesc("kvbench_result_engine_write_amplification",
		"Engine write amplification over the phase (engine counters; full result only).", resultLabels, nil)
	descStall = newDesc("kvbench_result_engine_stall_seconds",
		"Time writes were stalled or slowed by the engine over the phase (full result only).", resultLabels, nil)
	descLSM = newDesc("kvbench_result_engine_lsm_bytes",
		"Engine LSM size (table files) at the end of the phase (full result only).", resultLabels, nil)
	descCompactionWritten = newDesc("kvbench_result_engine_compaction_written_bytes",
		"Bytes written by engine compactions over the phase (full result only).", resultLabels, nil)
	descOpLatency = newDesc("kvbench_result_op_seconds",
		"Mean time per operation of a measured phase (db_bench micros/op).", resultLabels, nil)
	descDuration = newDesc("kvbench_result_duration_seconds",
		"Wall time of a measured phase.", resultLabels, nil)
	descOpsCount = newDesc("kvbench_result_operations",
		"Operations done in a measured phase.", resultLabels, nil)
	descFound = newDesc("kvbench_result_found_operations",
		"Reads of a measured phase that found their key.", resultLabels, nil)
	descWriteRate = newDesc("kvbench_result_achieved_writes_per_second",
		"Write rate actually reached (readwhilewriting, pulse).", resultLabels, nil)
	descTarget = newDesc("kvbench_result_target_writes_per_second",
		"A rate-limited writer's target (readwhilewriting with writesPerSecond, pulse).", resultLabels, nil)
	descTargetMissed = newDesc("kvbench_result_target_missed",
		"1 when a rate-limited phase fell more than 5% short of its target (its schedule latency is then mostly backlog), else 0.", resultLabels, nil)
	descServiceP99 = newDesc("kvbench_result_service_latency_p99_seconds",
		"p99 of a rate-limited writer's writes from their actual start (the engine's own write time, without the schedule's backlog).", resultLabels, nil)
	descPulseRounds = newDesc("kvbench_result_pulse_rounds",
		"Pulse rounds completed.", resultLabels, nil)
	descPulseMax = newDesc("kvbench_result_pulse_round_max_seconds",
		"Slowest pulse round.", resultLabels, nil)
	descPulseMean = newDesc("kvbench_result_pulse_round_mean_seconds",
		"Mean pulse round time.", resultLabels, nil)
	descBenchPhase = newDesc("kvbench_benchmark_phase",
		"1 for the benchmark's current phase, 0 for the others.", []string{"namespace", "benchmark", "phase"}, nil)
	descRunPhase = newDesc("kvbench_run_phase",
		"1 for a run's current phase, 0 for the others.", []string{"namespace", "benchmark", "engine", "medium", "dataset_bytes", "node", "phase"}, nil)
	descRunDuration = newDesc("kvbench_run_duration_seconds",
		"Wall time of a finished run (Job start to finish), including the dataset load.", []string{"namespace", "benchmark", "engine", "medium", "dataset_bytes", "node"}, nil)
	// One series per change in status.baseline.changes (at most 64 per benchmark).
	descChange = newDesc("kvbench_result_change_ratio",
		"A point's median against spec.baseline's (new / old); regressed=true marks a significant change beyond the threshold in the bad direction.",
		[]string{"namespace", "benchmark", "baseline", "engine", "workload", "threads", "metric", "regressed"}, nil)
	descRefused = newDesc("kvbench_result_series_refused",
		"Result series of a benchmark not exported: a label value from runner data outside the alphabet or over 64 bytes, a duplicate label set, a value that is not finite, or over the benchmark's series budget.",
		[]string{"namespace", "benchmark"}, nil)
	descRunStart = newDesc("kvbench_run_start_time_seconds",
		"Unix time a run started.", []string{"namespace", "benchmark", "engine", "medium", "dataset_bytes", "node"}, nil)
)

// descs are the descriptors, by the index a sample keeps.
var descs = []*prometheus.Desc{descOps, descBytes, descLatency, descOpLatency, descDuration, descOpsCount, descFound,
	descWriteRate, descTarget, descTargetMissed, descServiceP99, descPulseRounds, descPulseMax, descPulseMean, descBenchPhase, descRunPhase, descRunDuration, descRunStart,
	descOperationOps, descOperationLatency, descPulseRound, descCPU, descWriteAmp, descStall, descLSM, descCompactionWritten, descChange, descRefused}

var descIndex = func() map[*prometheus.Desc]uint8 {
	m := map[*prometheus.Desc]uint8{}
	for i, d := range descs {
		m[d] = uint8(i)
	}
	return m
}()

var benchPhases = []kvv1.BenchmarkPhase{kvv1.PhasePending, kvv1.PhaseRunning, kvv1.PhaseSucceeded, kvv1.PhaseFailed}
var runPhases = []kvv1.RunPhase{kvv1.RunPending, kvv1.RunRunning, kvv1.RunSucceeded, kvv1.RunFailed}

// Collector holds every benchmark's series, each set replaced atomically, so a scrape never sees
// half of an update.
type Collector struct {
	mu     sync.RWMutex
	series map[types.NamespacedName]benchmarkSeries

	// JobsCreated counts Jobs this operator process created (a process-local counter).
	JobsCreated *prometheus.CounterVec
}

// NewCollector returns an empty collector.
func NewCollector() *Collector {
	return &Collector{
		series: map[types.NamespacedName]benchmarkSeries{},
		JobsCreated: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kvbench_run_jobs_created_total",
			Help: "Runner Jobs created by this operator process.",
		}, []string{"namespace", "benchmark", "engine"}),
	}
}

// Register adds the collector and its counter to reg (controller-runtime's metrics.Registry in main).
func (c *Collector) Register(reg prometheus.Registerer) error {
	if err := reg.Register(c); err != nil {
		return err
	}
	return reg.Register(c.JobsCreated)
}

// Describe sends the fixed descriptors; the counter registers itself separately.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range descs {
		ch <- d
	}
}

// Collect sends the current series.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, ms := range c.series {
		ms.own.collect(ch)
		for _, rs := range ms.runs {
			rs.collect(ch)
		}
	}
}

// sample is one series, kept as its value: the metric is built when scraped. Its labels are its
// group's and at most two more (a quantile, an operation, a pulse round), by index in its set's
// strings. With a thousand benchmarks, a copy of the labels per series was most of the
// operator's heap; a sample is now 16 bytes.
type sample struct {
	value float64
	desc  uint8     // index in descs
	extra [2]uint16 // 1 + index in the set's strings; 0: none
}

// group is the series that share their labels (a phase's, a run's).
type group struct {
	labels  []string
	samples []sample
}

// seriesSet is a compact set of series.
type seriesSet struct {
	groups  []group
	strings []string
}

func (set *seriesSet) collect(ch chan<- prometheus.Metric) {
	for _, g := range set.groups {
		for _, s := range g.samples {
			labels := g.labels
			if s.extra[0] != 0 {
				labels = append(make([]string, 0, len(g.labels)+2), g.labels...)
				for _, e := range s.extra {
					if e != 0 {
						labels = append(labels, set.strings[e-1])
					}
				}
			}
			// Every sample was checked when built; an error here would only drop this one series.
			if metric, err := prometheus.NewConstMetric(descs[s.desc], prometheus.GaugeValue, s.value, labels...); err == nil {
				ch <- metric
			}
		}
	}
}

// compact copies the set into exact-size arrays, one for all its samples (appends leave up to
// half of an array unused).
func (set *seriesSet) compact() (n int) {
	for _, g := range set.groups {
		n += len(g.samples)
	}
	all := make([]sample, 0, n)
	groups := make([]group, len(set.groups))
	for i, g := range set.groups {
		all = append(all, g.samples...)
		groups[i] = group{labels: g.labels, samples: all[len(all)-len(g.samples) : len(all) : len(all)]}
	}
	set.groups, set.strings = groups, slices.Clip(append([]string(nil), set.strings...))
	return n
}

// head is the set's first n series.
func (set *seriesSet) head(n int) seriesSet {
	out := seriesSet{strings: set.strings}
	for _, g := range set.groups {
		if n <= 0 {
			break
		}
		k := min(n, len(g.samples))
		out.groups = append(out.groups, group{labels: g.labels, samples: g.samples[:k:k]})
		n -= k
	}
	return out
}

// benchmarkSeries are a benchmark's series: those built from its status (own) and, for the runs
// with an archived result, that result's series within the run's share of the budget.
type benchmarkSeries struct {
	own  seriesSet
	runs []seriesSet
}

// RunSeries are the series of one run's phases, built once from its archived full result: the
// operator keeps these rather than the results (a result is several times their size).
type RunSeries struct {
	set        seriesSet
	n, refused int
}

// NewRunSeries builds the series of the phases of b's run named run (engine engine) from its full
// result; a run exports at most MaxSeries.
func NewRunSeries(b *kvv1.KVBenchmark, run string, engine kvv1.EngineName, res *kvv1.Result) *RunSeries {
	bl := newBuilder()
	bl.left = MaxSeries
	addRunPhases(bl, b, run, engine, runPhasesOf(nil, res))
	return &RunSeries{set: bl.set, n: bl.set.compact(), refused: bl.refused}
}

// Set replaces the series of b with what its runs' full results (by run name; nil or missing:
// none) and otherwise its status say.
func (c *Collector) Set(b *kvv1.KVBenchmark, full map[string]*kvv1.Result) {
	archived := map[string]*RunSeries{}
	for _, r := range b.Status.Runs {
		if res := full[r.Name]; res != nil {
			archived[r.Name] = NewRunSeries(b, r.Name, r.Engine, res)
		}
	}
	c.SetSeries(b, archived)
}

// SetSeries replaces the series of b with its status's and, for each run in archived (by run
// name), the series of its archived result.
func (c *Collector) SetSeries(b *kvv1.KVBenchmark, archived map[string]*RunSeries) {
	ms := build(b, archived)
	c.mu.Lock()
	c.series[types.NamespacedName{Namespace: b.Namespace, Name: b.Name}] = ms
	c.mu.Unlock()
}

// Has says whether the collector holds series of the benchmark.
func (c *Collector) Has(key types.NamespacedName) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, ok := c.series[key]
	return ok
}

// Delete drops every series of a deleted benchmark.
func (c *Collector) Delete(key types.NamespacedName) {
	c.mu.Lock()
	delete(c.series, key)
	c.mu.Unlock()
	c.JobsCreated.DeletePartialMatch(prometheus.Labels{"namespace": key.Namespace, "benchmark": key.Name})
}

// builder collects a benchmark's samples, refusing those that would break a scrape or flood it.
type builder struct {
	set     seriesSet
	index   map[string]uint16 // of set.strings
	seen    map[seenKey]bool
	refused int
	// left is how many more series the current run may add (negative: no bound).
	left int
}

func newBuilder() *builder {
	return &builder{index: map[string]uint16{}, seen: map[seenKey]bool{}, left: -1}
}

// seenKey is a series' identity: its descriptor and its label values, joined.
type seenKey struct {
	desc   *prometheus.Desc
	labels string
}

// add adds one series unless its value is not finite, its label set repeats one already added,
// or the run's share of the budget is spent. Series added one after the other with the same
// labels slice share it; extra labels (at most two) follow those.
func (b *builder) add(d *prometheus.Desc, v float64, labels []string, extra ...string) {
	key := seenKey{d, strings.Join(labels, "\xff") + "\xff\xff" + strings.Join(extra, "\xff")}
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0), b.seen[key], b.left == 0, len(b.set.strings)+len(extra) > math.MaxUint16:
		b.refused++
		return
	}
	b.seen[key] = true
	if b.left > 0 {
		b.left--
	}
	s := sample{value: v, desc: descIndex[d]}
	for i, e := range extra {
		s.extra[i] = b.str(e)
	}
	gs := b.set.groups
	if n := len(gs); n == 0 || len(gs[n-1].labels) != len(labels) || len(labels) > 0 && &gs[n-1].labels[0] != &labels[0] {
		b.set.groups = append(gs, group{labels: labels})
	}
	g := &b.set.groups[len(b.set.groups)-1]
	g.samples = append(g.samples, s)
}

// str is 1 + the index of s in the set's strings, added when new.
func (b *builder) str(s string) uint16 {
	if i, ok := b.index[s]; ok {
		return i
	}
	b.set.strings = append(b.set.strings, s)
	i := uint16(len(b.set.strings))
	b.index[s] = i
	return i
}

// take is the first of a run's archived series that its share of the budget allows.
func (b *builder) take(rs *RunSeries) seriesSet {
	n := rs.n
	if b.left >= 0 {
		n = min(n, b.left)
		b.left -= n
	}
	b.refused += rs.refused + rs.n - n
	if n == rs.n {
		return rs.set
	}
	return rs.set.head(n)
}

func build(b *kvv1.KVBenchmark, archived map[string]*RunSeries) benchmarkSeries {
	bl := newBuilder()
	var out benchmarkSeries
	add := bl.add
	for _, p := range benchPhases {
		add(descBenchPhase, boolValue(b.Status.Phase == p), []string{b.Namespace, b.Name}, string(p))
	}
	share := MaxSeries / max(1, len(b.Status.Runs))
	for _, r := range b.Status.Runs {
		bl.left = share
		runLabels := []string{b.Namespace, b.Name, string(r.Engine), string(b.Spec.Storage.Medium), datasetLabel(b), nodeOf(r.Name)}
		for _, p := range runPhases {
			add(descRunPhase, boolValue(r.Phase == p), runLabels, string(p))
		}
		if r.StartTime != nil {
			add(descRunStart, float64(r.StartTime.Unix()), runLabels)
			if r.CompletionTime != nil {
				add(descRunDuration, r.CompletionTime.Sub(r.StartTime.Time).Seconds(), runLabels)
			}
		}
		if rs := archived[r.Name]; rs != nil {
			out.runs = append(out.runs, bl.take(rs))
			continue
		}
		addRunPhases(bl, b, r.Name, r.Engine, runPhasesOf(&r, nil))
	}
	bl.left = -1
	if c := b.Status.Baseline; c != nil {
		seen := map[string]bool{} // a workload listed twice would repeat a point (regressed aside)
		for _, ch := range c.Changes {
			l := []string{b.Namespace, b.Name, c.Baseline, string(ch.Engine), ch.Workload, strconv.Itoa(int(ch.Threads)), ch.Metric, strconv.FormatBool(ch.Regressed)}
			k := strings.Join(l[:7], "\xff")
			if !validLabel(ch.Workload) || seen[k] {
				bl.refused++
				continue
			}
			seen[k] = true
			add(descChange, ch.Ratio, l)
		}
	}
	add(descRefused, float64(bl.refused), []string{b.Namespace, b.Name})
	bl.set.compact()
	out.own = bl.set
	return out
}

// addRunPhases adds the series of the phases of b's run named run.
func addRunPhases(bl *builder, b *kvv1.KVBenchmark, run string, engine kvv1.EngineName, phases []labelledPhase) {
	medium, dataset, node := string(b.Spec.Storage.Medium), datasetLabel(b), nodeOf(run)
	for _, p := range phases {
		if !validLabel(p.Workload) {
			bl.refused++ // the phase's series, counted as one
			continue
		}
		l := []string{b.Namespace, b.Name, string(engine), p.label, p.Workload, strconv.Itoa(int(p.Threads)),
			strconv.Itoa(int(p.Iteration)), medium, dataset, node}
		addPhase(bl, l, p.PhaseResult)
	}
}

func datasetLabel(b *kvv1.KVBenchmark) string {
	return strconv.FormatInt(plan.DatasetBytes(b.Spec.Dataset), 10)
}

// nodeOf is the node of an EachNode run ("<engine>@<node>"), empty for others.
func nodeOf(run string) string {
	_, node, _ := strings.Cut(run, "@")
	return node
}

// labelledPhase is a phase with its phase label.
type labelledPhase struct {
	label string
	*kvv1.PhaseResult
}

// runPhasesOf lists a run's phases and its load (label "load"), from the full result when there
// is one (every phase, every detail), else from status r (the bounded summary, or the phases
// streamed so far). Lists without indexes (schema v1) are numbered by position.
func runPhasesOf(r *kvv1.RunStatus, res *kvv1.Result) []labelledPhase {
	var phases []kvv1.PhaseResult
	var load *kvv1.PhaseResult
	if res != nil {
		phases, load = res.Phases, res.Load
	} else {
		for _, p := range r.Results {
			phases = append(phases, kvv1.PhaseResult{PhaseSummary: p})
		}
		if r.Load != nil {
			load = &kvv1.PhaseResult{PhaseSummary: *r.Load}
		}
	}
	indexed := true
	for i := 1; i < len(phases); i++ {
		indexed = indexed && phases[i].Index > phases[i-1].Index
	}
	var out []labelledPhase
	for i := range phases {
		idx := int(phases[i].Index)
		if !indexed {
			idx = i
		}
		out = append(out, labelledPhase{strconv.Itoa(idx), &phases[i]})
	}
	if load != nil {
		l := *load
		if l.Workload == "" {
			l.Workload = "load"
		}
		out = append(out, labelledPhase{"load", &l})
	}
	return out
}

// addPhase adds one phase's series; absent numbers (nil fields) make no series.
func addPhase(bl *builder, l []string, p *kvv1.PhaseResult) {
	add := bl.add
	add(descOps, p.OpsPerSec, l)
	add(descOpLatency, p.MicrosPerOp/1e6, l)
	add(descDuration, p.Seconds, l)
	add(descOpsCount, float64(p.Ops), l)
	if p.MBPerSec != 0 {
		add(descBytes, p.MBPerSec*1024*1024, l)
	}
	if p.Found != nil {
		add(descFound, float64(*p.Found), l)
	}
	if p.WriteRate != nil {
		add(descWriteRate, *p.WriteRate, l)
	}
	if p.TargetOpsPerSec != nil {
		add(descTarget, *p.TargetOpsPerSec, l)
		add(descTargetMissed, boolValue(p.TargetMissed), l)
	}
	if p.ServiceP99Micros != nil {
		add(descServiceP99, *p.ServiceP99Micros/1e6, l)
	}
	if p.Pulse != nil {
		add(descPulseRounds, float64(p.Pulse.Rounds), l)
		add(descPulseMax, p.Pulse.MaxRoundSeconds, l)
		add(descPulseMean, p.Pulse.MeanRoundSeconds, l)
	}
	for _, q := range quantiles(p.LatencyMicros) {
		add(descLatency, q.v/1e6, l, q.q)
	}
	for _, op := range p.Operations {
		if !validLabel(op.Name) {
			bl.refused++
			continue
		}
		add(descOperationOps, op.OpsPerSec, l, op.Name)
		for _, q := range quantiles(op.LatencyMicros) {
			add(descOperationLatency, q.v/1e6, l, op.Name, q.q)
		}
	}
	for i, rd := range p.PulseRounds {
		if i >= maxPulseRounds {
			break
		}
		round := strconv.Itoa(int(rd.Round))
		for _, part := range []struct {
			name string
			v    float64
		}{{"total", rd.TotalSeconds}, {"read", rd.ReadSeconds}, {"write", rd.WriteSeconds}, {"delete", rd.DeleteSeconds}} {
			add(descPulseRound, part.v, l, round, part.name)
		}
	}
	if p.Usage != nil {
		add(descCPU, p.Usage.CPUSeconds, l)
	}
	if es := p.EngineStats; es != nil {
		if es.WriteAmplification != nil {
			add(descWriteAmp, *es.WriteAmplification, l)
		}
		if es.StallSeconds != nil {
			add(descStall, *es.StallSeconds, l)
		}
		if es.LSMBytes != nil {
			add(descLSM, float64(*es.LSMBytes), l)
		}
		if es.CompactionBytesWritten != nil {
			add(descCompactionWritten, float64(*es.CompactionBytesWritten), l)
		}
	}
}

type quantile struct {
	q string
	v float64
}

// quantiles are the exported percentiles of lat (none for nil).
func quantiles(lat *kvv1.Percentiles) []quantile {
	if lat == nil {
		return nil
	}
	return []quantile{{"0.5", lat.P50}, {"0.99", lat.P99}, {"0.999", lat.P999}, {"1", lat.Max}}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
