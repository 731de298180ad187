package bench

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/runner/engine"
	"github.com/kvbench/kvbench-operator/runner/hist"
	"github.com/kvbench/kvbench-operator/runner/keygen"
)

// Op kinds of mixed workloads; each has its own histogram per thread.
type opKind int

const (
	opRead opKind = iota
	opWrite
	opDelete
	opSeek
	opUpdate
	opInsert
	opScan
	opRMW
	opReadInRMW   // a YCSB read-modify-write's read
	opUpdateInRMW // and its update
	numOpKinds
)

var opNames = [numOpKinds]string{"read", "write", "delete", "seek", "update", "insert", "scan", "readmodifywrite",
	"read in readmodifywrite", "update in readmodifywrite"}

// thread is one worker's state. Everything a worker touches per operation lives here, so the hot
// loop shares nothing but its own (padded) progress counter.
type thread struct {
	id     int
	rand   *keygen.Rand
	key    []byte
	values *keygen.Values
	// hists are the thread's latencies per op kind: of the current report interval when the
	// thread hands them over interval by interval (ivl), else of the whole phase.
	hists [numOpKinds]*hist.Histogram
	found int64
	reads int64
	bytes int64
	eng   engineOps // engine calls, where a workload counts them (YCSB)
	// last is the end of the previous operation: in a closed loop it is also the start of the
	// next, so each operation costs one clock read.
	last    time.Duration
	yielded time.Duration // when the thread last passed through the scheduler (maybeYield)
	start   time.Duration
	end     time.Duration
	// ivl collects the thread's per-interval histograms (nil for readwhilewriting's writer);
	// cur is the report interval the thread is recording (ivl.ticks ticks happened so far).
	ivl *intervals
	cur int64
	// run is the reusable engine.Ops of the batched workloads, for keys of format runKeys;
	// runN is its current size.
	run     *engine.Ops
	runKeys keygen.Keys
	runN    int
	ops     atomic.Int64
	_       [56]byte // keep ops counters of different threads on different cache lines
	base    time.Time
	stop    *atomic.Bool
	// service is the rate-limited writer's latency from each write's actual start (its engine
	// service time), next to hists measured from the schedule; nil for every other thread.
	service *hist.Histogram
}

func (t *thread) now() time.Duration { return time.Since(t.base) }

// done records one finished operation of kind k.
func (t *thread) done(k opKind) {
	now := t.now()
	t.record(k, now, int64(now-t.last))
	t.last = now
	t.ops.Add(1)
	t.maybeYield(now)
}

// record adds the latency of an operation of kind k that ended at end.
func (t *thread) record(k opKind, end time.Duration, nanos int64) {
	t.tick(end)
	t.hists[k].Record(nanos)
}

// tick moves the thread into the report interval of an operation that ended at end, before it
// is recorded. The test is one load of a word the sampler writes once per report interval.
func (t *thread) tick(end time.Duration) {
	if t.ivl != nil && t.ivl.ticks.Load() != t.cur {
		t.ivl.advance(t, end)
	}
}

// yieldInterval: a worker whose operations are back-to-back cgo calls never passes through the
// Go scheduler. After 10ms without a scheduling point sysmon treats it as a hog (forcePreemptNS):
// it signals the thread, takes its P away during a cgo call, and then polls every 20µs for the
// next millisecond: thousands of wake-ups a second (perf stat: ~5000 context switches/s against
// db_bench's ~300) on CPUs the engine's own threads need. A Gosched before that is a scheduling
// point and keeps sysmon asleep. As workers are locked to their OS thread (runPhase), a Gosched
// is a handoff: the P goes to another M, which finds the goroutine and wakes the worker's thread
// again, two wake-ups that take tens of µs on a busy 2-CPU machine (~1% of a readrandom thread's
// time at one yield per 5ms under load), so the interval is as long as the 10ms limit allows with
// a run (engine.Ops, about runTarget) of margin.
const yieldInterval = 8 * time.Millisecond

func (t *thread) maybeYield(now time.Duration) {
	if now-t.yielded >= yieldInterval {
		t.yielded = now
		runtime.Gosched()
	}
}

// doneAt records one operation whose latency counts from intended (a scheduled start under a
// rate limit), so that a stall delays every later operation's measured latency too.
func (t *thread) doneAt(k opKind, intended time.Duration) time.Duration {
	now := t.now()
	t.record(k, now, int64(now-intended))
	t.last = now
	t.ops.Add(1)
	t.maybeYield(now)
	return now
}

// Runs (engine.Ops): the batched workloads hand the engine up to engine.MaxOps operations per
// call, sized so that a run takes about runTarget: long enough that the cgo crossing and the Go
// bookkeeping (clock read, progress counter, scheduling point) are paid once per dozens of
// operations, short enough that a --duration phase overshoots by no more than that and that a
// report tick falls inside a run rarely (the run's operations are then placed by their latencies).
const (
	runTarget = 500 * time.Microsecond
	runFirst  = 4
)

// nextRun starts a run of at most remaining operations on keys of format k.
func (t *thread) nextRun(k keygen.Keys, remaining int64) *engine.Ops {
	if t.run == nil || t.runKeys != k {
		t.run = engine.NewOps(k.KeySize)
		t.runKeys = k
		t.runN = runFirst
		for j := range engine.MaxOps {
			k.Put(t.run.Key(j), 0) // the padding putKey relies on
		}
	}
	t.run.Reset(int(min(int64(t.runN), remaining)))
	return t.run
}

// putKey writes the key for v into slot j of the current run: keygen.Keys.Put, with the common
// layout (no prefix groups, keys of 8 bytes or more) cut to one 8-byte store, the '0' padding
// after it having been written when the run was made.
func (t *thread) putKey(j int, v uint64) {
	dst := t.run.Key(j)
	if t.runKeys.KeysPerPrefix == 0 && len(dst) >= 8 {
		binary.BigEndian.PutUint64(dst, v)
		return
	}
	t.runKeys.Put(dst, v)
}

// doneOps records the operations of a run, each with the latency the engine measured; the gaps
// between runs (key generation, this bookkeeping) are in no operation's latency.
func (t *thread) doneOps(k opKind, o *engine.Ops) {
	now := t.now()
	lat := o.Lat[:o.Done]
	var took int64
	for _, l := range lat {
		took += l
	}
	h := t.hists[k]
	if t.ivl != nil && t.ivl.ticks.Load() != t.cur {
		// A tick during the run: place each operation by its end, counted back from now.
		end := now - time.Duration(took)
		for _, l := range lat {
			end += time.Duration(l)
			t.record(k, end, l)
		}
	} else {
		for _, l := range lat {
			h.Record(l)
		}
	}
	t.last = now
	t.ops.Add(int64(len(lat)))
	switch d := time.Duration(took); {
	case d > 2*runTarget && t.runN > 1:
		t.runN /= 2
	case d < runTarget/2 && t.runN < engine.MaxOps && o.Done == o.N:
		t.runN = min(2*t.runN, engine.MaxOps)
	}
	t.maybeYield(now)
}

func (t *thread) hist(k opKind) *hist.Histogram {
	if t.hists[k] == nil {
		t.hists[k] = hist.New()
	}
	return t.hists[k]
}

func (t *thread) stopped() bool { return t.stop.Load() }

// get reads key v and counts it as db_bench does: one read, found keys add key+value bytes.
func (t *thread) get(db engine.DB, keys keygen.Keys, v uint64) error {
	found, n, err := db.Get(keys.Put(t.key, v))
	if err != nil {
		return err
	}
	t.reads++
	if found {
		t.found++
		t.bytes += int64(len(t.key) + n)
	}
	return nil
}

// engineOps counts a thread's engine calls.
type engineOps struct{ gets, puts, seeks, nexts int64 }

func (a *engineOps) add(b engineOps) {
	a.gets, a.puts, a.seeks, a.nexts = a.gets+b.gets, a.puts+b.puts, a.seeks+b.seeks, a.nexts+b.nexts
}

// reportedOp is an operation of a phase's breakdown and the op kinds it merges.
type reportedOp struct {
	name  string
	kinds []opKind
}

// phase describes one measured run of a workload at a thread count.
type phase struct {
	name      string
	threads   int
	iteration int
	// expected is the total operation count when known (for progress percent and ETA); 0 if not.
	expected int64
	duration time.Duration
	// kinds are the op kinds this phase records; the first is the one db_bench would report.
	kinds []opKind
	// inner are op kinds recorded inside another operation (a YCSB read-modify-write's read and
	// update): in the breakdown (ops), not operations of their own, not in the phase's latency.
	inner []opKind
	// ops names the operation breakdown when it is not one entry per kind (YCSB's names).
	ops []reportedOp
	// engineOps reports the threads' engine call counts.
	engineOps bool
	// readWriteRatio is a YCSB mix's configured reads:writes, recorded in the result.
	readWriteRatio string
	// work is the per-thread body.
	work func(t *thread) error
	// background runs alongside the threads (readwhilewriting's writer) until they finish.
	background func(ctx context.Context, base time.Time) (*thread, error)
	// targetRate is the background writer's target (writes/s), 0 when unlimited.
	targetRate float64
	// valueSize for MB/s when the workload does not count bytes itself.
	countReads bool // report "(found of reads found)"
}

// env is what phases share: where to print, how often, and who observes progress.
type env struct {
	out              io.Writer
	progress         io.Writer
	reportInterval   time.Duration
	progressInterval time.Duration
	observer         Observer
	ds               Dataset
	seedSalt         uint64
	// cpus is the CPU budget (GOMAXPROCS as the run found it, before Run raised it).
	cpus int
	// stats prints db_bench's --stats_interval lines (nil: off).
	stats *statsTicker
}

// Observer follows a run's progress (the Prometheus metrics implement it).
type Observer interface {
	PhaseStarted(workload string, threads, iteration int)
	Progress(workload string, threads int, ops int64, opsPerSec float64)
	PhaseFinished(r *api.PhaseResult)
}

// LatencyObserver is an Observer that also takes the p99 latency of each report interval once
// every worker has moved past it (the sampler's work, outside the timed loop).
type LatencyObserver interface {
	IntervalP99(workload string, threads int, p99Micros float64)
}

// phaseOutcome is a phase's measurements before they become a PhaseResult.
type phaseOutcome struct {
	res     api.PhaseResult
	threads []*thread
	bg      *thread
	merged  *hist.Histogram
}

// intervals gives every throughput sample the p99 latency of the operations that ended in its
// report interval, without a lock or a second histogram record per operation: each worker records
// into its own histograms; when it sees that the sampler ticked (one atomic load per operation or
// run) it hands the finished interval's histograms over and takes fresh ones. The sampler merges
// the handed-over histograms into the phase totals and into the interval's, and fills in an
// interval's p99 once every worker has moved past it.
type intervals struct {
	ticks atomic.Int64     // report ticks so far; interval j ends at edges[j]
	kinds []opKind         // the kinds the workers record (phase.kinds and phase.inner)
	inner [numOpKinds]bool // phase.inner: in the totals, not in the intervals' p99

	mu     sync.Mutex
	edges  []time.Duration // since base
	closed []closedInterval
	spare  []*hist.Histogram
	cur    []int64 // each worker's current interval; math.MaxInt64 once it finished

	// The sampler's own: totals per kind, and merged histograms of the unfinished intervals.
	total [numOpKinds]*hist.Histogram
	open  map[int64]*hist.Histogram
	p99   map[int64]float64 // finished intervals' p99, µs, until their sample takes it
	// latest is the newest finished interval (-1: none yet), for live metrics.
	latest int64
}

type closedInterval struct {
	idx   int64
	hists [numOpKinds]*hist.Histogram
}

func newIntervals(kinds, inner []opKind, threads int) *intervals {
	iv := &intervals{kinds: append(slices.Clone(kinds), inner...), cur: make([]int64, threads), open: map[int64]*hist.Histogram{},
		p99: map[int64]float64{}, latest: -1}
	for _, k := range iv.kinds {
		iv.total[k] = hist.New()
	}
	for _, k := range inner {
		iv.inner[k] = true
	}
	return iv
}

// advance hands over t's intervals that ended before end (a tick at or before end).
func (iv *intervals) advance(t *thread, end time.Duration) {
	iv.mu.Lock()
	defer iv.mu.Unlock()
	for t.cur < int64(len(iv.edges)) && end >= iv.edges[t.cur] {
		iv.handOver(t)
		t.cur++
	}
	iv.cur[t.id] = t.cur
}

// finish hands over t's last interval: the worker is done.
func (iv *intervals) finish(t *thread) {
	iv.mu.Lock()
	defer iv.mu.Unlock()
	iv.handOver(t)
	iv.cur[t.id] = math.MaxInt64
}

// handOver queues t's histograms of interval t.cur, if any is not empty, and gives t fresh ones.
// iv.mu is held.
func (iv *intervals) handOver(t *thread) {
	c := closedInterval{idx: t.cur}
	some := false
	for _, k := range iv.kinds {
		if h := t.hists[k]; h != nil && h.Count() > 0 {
			some = true
			c.hists[k] = h
			if n := len(iv.spare); n > 0 {
				t.hists[k], iv.spare = iv.spare[n-1], iv.spare[:n-1]
			} else {
				t.hists[k] = hist.New()
			}
		}
	}
	if some {
		iv.closed = append(iv.closed, c)
	}
}

// tick publishes the end of interval len(edges) at now.
func (iv *intervals) tick(now time.Duration) {
	iv.mu.Lock()
	iv.edges = append(iv.edges, now)
	iv.ticks.Store(int64(len(iv.edges)))
	iv.mu.Unlock()
}

// collect merges what the workers handed over and records the p99 of every interval all of them
// have moved past (all intervals when the workers are done).
func (iv *intervals) collect() {
	iv.mu.Lock()
	closed := iv.closed
	iv.closed = nil
	low := int64(math.MaxInt64)
	for _, c := range iv.cur {
		low = min(low, c)
	}
	iv.mu.Unlock()
	var free []*hist.Histogram
	for _, c := range closed {
		for k, h := range c.hists {
			if h == nil {
				continue
			}
			iv.total[k].Merge(h)
			m := iv.open[c.idx]
			if m == nil {
				m = hist.New()
				iv.open[c.idx] = m
			}
			if !iv.inner[k] {
				m.Merge(h)
			}
			h.Reset()
			free = append(free, h)
		}
	}
	for idx, m := range iv.open {
		if idx < low {
			iv.p99[idx] = float64(m.Quantile(99)) / 1e3
			delete(iv.open, idx)
			iv.latest = max(iv.latest, idx)
		}
	}
	if len(free) > 0 {
		iv.mu.Lock()
		iv.spare = append(iv.spare, free...)
		iv.mu.Unlock()
	}
}

// runPhase runs p's threads, samples throughput every report interval, prints progress, and
// merges the per-thread histograms at the end.
func (e *env) runPhase(ctx context.Context, p *phase) (*phaseOutcome, error) {
	if e.observer != nil {
		e.observer.PhaseStarted(p.name, p.threads, p.iteration)
	}
	var stop atomic.Bool
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	base := time.Now()
	iv := newIntervals(p.kinds, p.inner, p.threads)
	ts := make([]*thread, p.threads)
	for i := range ts {
		seed := e.ds.Seed*1000003 + e.seedSalt*7919 + uint64(i) + 1
		t := &thread{id: i, rand: keygen.NewRand(seed), key: e.ds.Keys().Make(),
			values: keygen.NewValues(seed^0x5bd1e995, e.ds.Ratio, e.ds.ValueMin, e.ds.ValueMax),
			base:   base, stop: &stop, ivl: iv}
		for _, k := range iv.kinds {
			t.hist(k)
		}
		ts[i] = t
	}
	go func() {
		<-ctx.Done()
		stop.Store(true)
	}()

	var wg sync.WaitGroup
	errs := make([]error, len(ts))
	var bgDone = make(chan struct{})
	var bg *thread
	var bgErr error
	bgCtx, bgCancel := context.WithCancel(ctx)
	if p.background != nil {
		go func() {
			defer close(bgDone)
			bg, bgErr = p.background(bgCtx, base)
		}()
	} else {
		close(bgDone)
	}
	startAll := time.Since(base)
	// The duration counts from the phase's own start, so its elapsed time is never shorter than
	// asked (started before the set-up above, a loaded machine reported 0.198 s for 0.2 s).
	if p.duration > 0 {
		timer := time.AfterFunc(p.duration, func() { stop.Store(true) })
		defer timer.Stop()
	}
	for i, t := range ts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// One OS thread per worker for the whole phase, as db_bench's threads: the engine's
			// per-thread state (glibc malloc arena and tcache, RocksDB's thread-local
			// SuperVersion and perf context, the CPU caches) stays with the worker. Unlocked,
			// the goroutine moved between Ms at every yield (perf: one readrandom thread's work
			// spread over three OS threads, 2x db_bench's page faults, the C++ side freeing
			// blocks another thread's malloc arena had allocated). readwhilewriting's writer
			// sleeps ~100 times a second and stays unlocked: a locked thread's every wake-up
			// would be two.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			t.start = t.now()
			t.last = t.start
			errs[i] = p.work(t)
			t.end = t.now()
			iv.finish(t)
			if errs[i] != nil {
				stop.Store(true)
			}
		}()
	}
	samples := e.sample(p, ts, iv, base, &wg)
	bgCancel()
	<-bgDone
	endAll := time.Since(base)

	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.name, err)
		}
	}
	if bgErr != nil {
		return nil, fmt.Errorf("%s: background writer: %w", p.name, bgErr)
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%s: %w", p.name, interrupted(ctx))
	}
	return e.summarize(p, ts, iv, bg, endAll-startAll, samples), nil
}

// sample waits for the threads, taking a throughput sample each report interval and printing
// progress each progress interval.
func (e *env) sample(p *phase, ts []*thread, iv *intervals, base time.Time, wg *sync.WaitGroup) []api.IntervalSample {
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	tick := time.NewTicker(e.reportInterval)
	defer tick.Stop()
	var samples []api.IntervalSample
	var lastOps int64
	lastT := time.Duration(0)
	lastProgress := time.Duration(0)
	reportedP99 := int64(-1)
	for {
		select {
		case <-finished:
			iv.collect()
			for j := range samples {
				samples[j].P99Micros = iv.p99[int64(j)]
			}
			return samples
		case <-tick.C:
			now := time.Since(base)
			iv.tick(now)
			var ops int64
			for _, t := range ts {
				ops += t.ops.Load()
			}
			rate := float64(ops-lastOps) / (now - lastT).Seconds()
			samples = append(samples, api.IntervalSample{OffsetSeconds: round3(now.Seconds()), OpsPerSec: round1(rate)})
			lastOps, lastT = ops, now
			e.stats.tick(now, ops)
			iv.collect()
			if e.observer != nil {
				e.observer.Progress(p.name, p.threads, ops, rate)
				if lo, ok := e.observer.(LatencyObserver); ok && iv.latest > reportedP99 {
					reportedP99 = iv.latest
					lo.IntervalP99(p.name, p.threads, iv.p99[iv.latest])
				}
			}
			if e.progress != nil && e.progressInterval > 0 && now-lastProgress >= e.progressInterval {
				lastProgress = now
				avg := float64(ops) / now.Seconds()
				line := fmt.Sprintf("progress %s threads=%d: %d ops, %.0f ops/s", p.name, p.threads, ops, avg)
				if p.expected > 0 && avg > 0 {
					eta := time.Duration(float64(p.expected-ops) / avg * float64(time.Second))
					line += fmt.Sprintf(", %.1f%%, ETA %s", 100*float64(ops)/float64(p.expected), eta.Round(time.Second))
				} else if p.duration > 0 {
					line += fmt.Sprintf(", %.1f%% of %s", 100*now.Seconds()/p.duration.Seconds(), p.duration)
				}
				fmt.Fprintln(e.progress, line)
			}
		}
	}
}

func (e *env) summarize(p *phase, ts []*thread, iv *intervals, bg *thread, elapsed time.Duration, samples []api.IntervalSample) *phaseOutcome {
	out := &phaseOutcome{threads: ts, bg: bg}
	r := &out.res
	r.Workload, r.Threads, r.Iteration = p.name, int32(p.threads), int32(p.iteration)
	var ops, found, reads, bytes int64
	var eng engineOps
	var threadSeconds float64
	for _, t := range ts {
		ops += t.ops.Load()
		found += t.found
		reads += t.reads
		bytes += t.bytes
		eng.add(t.eng)
		threadSeconds += (t.end - t.start).Seconds()
	}
	if p.engineOps {
		r.EngineOps = &api.EngineOps{Gets: eng.gets, Puts: eng.puts, Seeks: eng.seeks, Nexts: eng.nexts}
	}
	r.ReadWriteRatio = p.readWriteRatio
	// Every worker handed all its histograms over (finish) and the sampler merged them.
	perKind := iv.total
	secs := elapsed.Seconds()
	r.Ops = ops
	r.Seconds = round6(secs)
	if secs > 0 {
		r.OpsPerSec = round1(float64(ops) / secs)
		r.MBPerSec = round1(float64(bytes) / 1048576 / secs)
	}
	if ops > 0 {
		// db_bench's micros/op is thread-seconds per operation: the latency a thread sees.
		r.MicrosPerOp = round3(threadSeconds * 1e6 / float64(ops))
	}
	if p.countReads {
		f := found
		r.Found = &f
	}
	all := hist.New()
	for _, k := range p.kinds {
		all.Merge(perKind[k])
	}
	out.merged = all
	r.LatencyMicros = all.Percentiles()
	if all.Count() > 0 {
		// Encoding an in-memory histogram into a buffer cannot fail; an empty string is "none".
		r.LatencyHistogram, _ = all.Encode()
	}
	r.Intervals = samples
	report := p.ops
	if report == nil && (len(p.kinds) > 1 || bg != nil) {
		for _, k := range p.kinds {
			report = append(report, reportedOp{opNames[k], []opKind{k}})
		}
	}
	for _, o := range report {
		h := perKind[o.kinds[0]]
		if len(o.kinds) > 1 {
			h = hist.New()
			for _, k := range o.kinds {
				h.Merge(perKind[k])
			}
		}
		if h == nil || h.Count() == 0 {
			continue
		}
		r.Operations = append(r.Operations, api.OperationSummary{Name: o.name, Ops: h.Count(),
			OpsPerSec: round1(float64(h.Count()) / secs), LatencyMicros: h.Percentiles()})
	}
	if bg != nil {
		w := bg.ops.Load()
		rate := round1(float64(w) / secs)
		r.WriteRate = &rate
		r.Operations = append(r.Operations, api.OperationSummary{Name: "write", Ops: w, OpsPerSec: rate,
			LatencyMicros: bg.hists[opWrite].Percentiles()})
		rateProtocol(r, p.targetRate, rate, bg.service)
	}
	return out
}

func round1(x float64) float64 { return float64(int64(x*10+0.5)) / 10 }
func round3(x float64) float64 { return float64(int64(x*1e3+0.5)) / 1e3 }
func round6(x float64) float64 { return float64(int64(x*1e6+0.5)) / 1e6 }
