package bench

import (
	"context"
	"fmt"
	"io"
	"runtime"
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
	numOpKinds
)

var opNames = [numOpKinds]string{"read", "write", "delete", "seek", "update", "insert", "scan", "readmodifywrite"}

// thread is one worker's state. Everything a worker touches per operation lives here, so the hot
// loop shares nothing but its own (padded) progress counter.
type thread struct {
	id     int
	rand   *keygen.Rand
	key    []byte
	values *keygen.Values
	hists  [numOpKinds]*hist.Histogram
	found  int64
	reads  int64
	bytes  int64
	// last is the end of the previous operation: in a closed loop it is also the start of the
	// next, so each operation costs one clock read.
	last    time.Duration
	yielded time.Duration // when the thread last passed through the scheduler (maybeYield)
	start   time.Duration
	end     time.Duration
	ops     atomic.Int64
	_       [56]byte // keep ops counters of different threads on different cache lines
	base    time.Time
	stop    *atomic.Bool
}

func (t *thread) now() time.Duration { return time.Since(t.base) }

// done records one finished operation of kind k.
func (t *thread) done(k opKind) {
	now := t.now()
	t.hists[k].Record(int64(now - t.last))
	t.last = now
	t.ops.Add(1)
	t.maybeYield(now)
}

// yieldInterval: a worker whose operations are back-to-back cgo calls never passes through the
// Go scheduler. After 10ms without a scheduling point sysmon treats it as a hog, takes its P away
// during a cgo call, and then polls every 20µs for the next millisecond: thousands of wake-ups
// a second (perf stat: ~5000 context switches/s against db_bench's ~300) on CPUs the engine's own
// threads need. A Gosched every 5ms is a scheduling point and keeps sysmon asleep; it costs ~0.2µs
// plus, when a P is idle, one wake-up of a spinning M (wakep): ~400 context switches/s in all.
const yieldInterval = 5 * time.Millisecond

func (t *thread) maybeYield(now time.Duration) {
	if now-t.yielded >= yieldInterval {
		t.yielded = now
		runtime.Gosched()
	}
}

// doneAt records one operation whose latency counts from intended (a scheduled start under a
// rate limit), so that a stall delays every later operation's measured latency too.
func (t *thread) doneAt(k opKind, intended time.Duration) {
	now := t.now()
	t.hists[k].Record(int64(now - intended))
	t.last = now
	t.ops.Add(1)
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
	// work is the per-thread body.
	work func(t *thread) error
	// background runs alongside the threads (readwhilewriting's writer) until they finish.
	background func(ctx context.Context, base time.Time) (*thread, error)
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
}

// Observer follows a run's progress (the Prometheus metrics implement it).
type Observer interface {
	PhaseStarted(workload string, threads, iteration int)
	Progress(workload string, threads int, ops int64, opsPerSec float64)
	PhaseFinished(r *api.PhaseResult)
}

// phaseOutcome is a phase's measurements before they become a PhaseResult.
type phaseOutcome struct {
	res     api.PhaseResult
	threads []*thread
	bg      *thread
	merged  *hist.Histogram
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
	ts := make([]*thread, p.threads)
	for i := range ts {
		seed := e.ds.Seed*1000003 + e.seedSalt*7919 + uint64(i) + 1
		t := &thread{id: i, rand: keygen.NewRand(seed), key: e.ds.Keys().Make(),
			values: keygen.NewValues(seed^0x5bd1e995, e.ds.Ratio, e.ds.ValueMin, e.ds.ValueMax),
			base:   base, stop: &stop}
		for _, k := range p.kinds {
			t.hist(k)
		}
		ts[i] = t
	}
	if p.duration > 0 {
		timer := time.AfterFunc(p.duration, func() { stop.Store(true) })
		defer timer.Stop()
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
	for i, t := range ts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.start = t.now()
			t.last = t.start
			errs[i] = p.work(t)
			t.end = t.now()
			if errs[i] != nil {
				stop.Store(true)
			}
		}()
	}
	samples := e.sample(p, ts, base, &wg)
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
		return nil, fmt.Errorf("%s: interrupted", p.name)
	}
	return e.summarize(p, ts, bg, endAll-startAll, samples), nil
}

// sample waits for the threads, taking a throughput sample each report interval and printing
// progress each progress interval.
func (e *env) sample(p *phase, ts []*thread, base time.Time, wg *sync.WaitGroup) []api.IntervalSample {
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	tick := time.NewTicker(e.reportInterval)
	defer tick.Stop()
	var samples []api.IntervalSample
	var lastOps int64
	lastT := time.Duration(0)
	lastProgress := time.Duration(0)
	for {
		select {
		case <-finished:
			return samples
		case <-tick.C:
			now := time.Since(base)
			var ops int64
			for _, t := range ts {
				ops += t.ops.Load()
			}
			rate := float64(ops-lastOps) / (now - lastT).Seconds()
			samples = append(samples, api.IntervalSample{OffsetSeconds: round3(now.Seconds()), OpsPerSec: round1(rate)})
			lastOps, lastT = ops, now
			if e.observer != nil {
				e.observer.Progress(p.name, p.threads, ops, rate)
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

func (e *env) summarize(p *phase, ts []*thread, bg *thread, elapsed time.Duration, samples []api.IntervalSample) *phaseOutcome {
	out := &phaseOutcome{threads: ts, bg: bg}
	r := &out.res
	r.Workload, r.Threads, r.Iteration = p.name, int32(p.threads), int32(p.iteration)
	var ops, found, reads, bytes int64
	var threadSeconds float64
	perKind := [numOpKinds]*hist.Histogram{}
	for _, t := range ts {
		ops += t.ops.Load()
		found += t.found
		reads += t.reads
		bytes += t.bytes
		threadSeconds += (t.end - t.start).Seconds()
		for k, h := range t.hists {
			if h == nil {
				continue
			}
			if perKind[k] == nil {
				perKind[k] = hist.New()
			}
			perKind[k].Merge(h)
		}
	}
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
	r.Intervals = samples
	if len(p.kinds) > 1 || bg != nil {
		for _, k := range p.kinds {
			h := perKind[k]
			if h == nil || h.Count() == 0 {
				continue
			}
			r.Operations = append(r.Operations, api.OperationSummary{Name: opNames[k], Ops: h.Count(),
				OpsPerSec: round1(float64(h.Count()) / secs), LatencyMicros: h.Percentiles()})
		}
	}
	if bg != nil {
		w := bg.ops.Load()
		rate := round1(float64(w) / secs)
		r.WriteRate = &rate
		r.Operations = append(r.Operations, api.OperationSummary{Name: "write", Ops: w, OpsPerSec: rate,
			LatencyMicros: bg.hists[opWrite].Percentiles()})
	}
	return out
}

func round1(x float64) float64 { return float64(int64(x*10+0.5)) / 10 }
func round3(x float64) float64 { return float64(int64(x*1e3+0.5)) / 1e3 }
func round6(x float64) float64 { return float64(int64(x*1e6+0.5)) / 1e6 }
