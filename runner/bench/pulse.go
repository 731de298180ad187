package bench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/runner/engine"
	"github.com/kvbench/kvbench-operator/runner/hist"
	"github.com/kvbench/kvbench-operator/runner/keygen"
)

// pulseState is the live key window: keys [lo, hi) exist. Writes append at hi, deletes remove
// from lo, so "existing keys" stay known without tracking a set. It survives across pulse phases.
type pulseState struct{ lo, hi uint64 }

// runPulse is seed 002's pulse: each round reads Reads random existing keys in sorted order
// (split over the threads), then writes Writes new keys, then deletes Deletes old ones; rounds
// start every Interval (at once if the previous one overran).
func (e *env) runPulse(ctx context.Context, db engine.DB, w api.WorkloadSpec, threads, iteration int, st *pulseState) (*api.PhaseResult, error) {
	ps := w.Pulse
	if e.observer != nil {
		e.observer.PhaseStarted("pulse", threads, iteration)
	}
	keys := e.ds.Keys()
	if !keys.Sorted() {
		return nil, fmt.Errorf("pulse needs keys that sort like their integers (no prefix groups)")
	}
	rnd := keygen.NewRand(e.ds.Seed*13 + uint64(iteration))
	vals := keygen.NewValues(e.ds.Seed*17, e.ds.Ratio, e.ds.ValueMin, e.ds.ValueMax)
	hr, hw, hd := hist.New(), hist.New(), hist.New()
	readHists := make([]*hist.Histogram, threads)
	for i := range readHists {
		readHists[i] = hist.New()
	}
	res := &api.PhaseResult{}
	res.Workload, res.Threads, res.Iteration = "pulse", int32(threads), int32(iteration)
	key := keys.Make()
	var bytes int64
	var found int64
	start := time.Now()
	sum := api.PulseSummary{}
	toRead := make([]uint64, 0, ps.Reads)
	for round := int32(0); round < ps.Rounds; round++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("pulse: %w", interrupted(ctx))
		}
		roundStart := time.Now()
		before := readUsage()
		toRead = toRead[:0]
		live := st.hi - st.lo
		if live > 0 {
			for i := int64(0); i < ps.Reads; i++ {
				toRead = append(toRead, st.lo+rnd.Uint64n(live))
			}
		}
		slices.Sort(toRead)
		// Reads: thread i takes a contiguous slice, so each thread still reads in key order.
		var wg sync.WaitGroup
		foundBy := make([]int64, threads)
		bytesBy := make([]int64, threads)
		errs := make([]error, threads)
		for i := 0; i < threads; i++ {
			lo, hi := len(toRead)*i/threads, len(toRead)*(i+1)/threads
			wg.Add(1)
			go func() {
				defer wg.Done()
				k := keys.Make()
				h := readHists[i]
				last := time.Now()
				for _, v := range toRead[lo:hi] {
					f, n, err := db.Get(keys.Put(k, v))
					if err != nil {
						errs[i] = err
						return
					}
					if f {
						foundBy[i]++
						bytesBy[i] += int64(len(k) + n)
					}
					now := time.Now()
					h.Record(int64(now.Sub(last)))
					last = now
				}
			}()
		}
		wg.Wait()
		var roundFound int64
		for i := range foundBy {
			if errs[i] != nil {
				return nil, fmt.Errorf("pulse read: %w", errs[i])
			}
			roundFound += foundBy[i]
			bytes += bytesBy[i]
		}
		readUse := readUsage().since(before)
		readDone := time.Now()
		last := readDone
		for i := int64(0); i < ps.Writes; i++ {
			v := vals.Next()
			if err := db.Put(keys.Put(key, st.hi), v); err != nil {
				return nil, fmt.Errorf("pulse write: %w", err)
			}
			st.hi++
			bytes += int64(len(key) + len(v))
			now := time.Now()
			hw.Record(int64(now.Sub(last)))
			last = now
		}
		writeDone := time.Now()
		last = writeDone
		for i := int64(0); i < ps.Deletes && st.lo < st.hi; i++ {
			if err := db.Delete(keys.Put(key, st.lo)); err != nil {
				return nil, fmt.Errorf("pulse delete: %w", err)
			}
			st.lo++
			now := time.Now()
			hd.Record(int64(now.Sub(last)))
			last = now
		}
		end := time.Now()
		r := api.PulseRound{Round: round, ReadSeconds: round6(readDone.Sub(roundStart).Seconds()),
			WriteSeconds: round6(writeDone.Sub(readDone).Seconds()), DeleteSeconds: round6(end.Sub(writeDone).Seconds()),
			TotalSeconds: round6(end.Sub(roundStart).Seconds()), Found: roundFound, ReadUsage: readUse}
		res.PulseRounds = append(res.PulseRounds, r)
		found += roundFound
		sum.Rounds++
		sum.MeanRoundSeconds += r.TotalSeconds
		sum.MaxRoundSeconds = max(sum.MaxRoundSeconds, r.TotalSeconds)
		if ps.Interval.Duration > 0 && end.Sub(roundStart) > ps.Interval.Duration {
			sum.Overruns++
		}
		fmt.Fprintf(e.out, "pulse round %d: read:%d found:%d elapsed:%.6f add:%d delete:%d elapsed:%.6f\n",
			round, len(toRead), roundFound, r.ReadSeconds, ps.Writes, ps.Deletes, r.WriteSeconds+r.DeleteSeconds)
		if e.observer != nil {
			e.observer.Progress("pulse", threads, int64(round+1)*(ps.Reads+ps.Writes+ps.Deletes), 0)
		}
		if round+1 < ps.Rounds && ps.Interval.Duration > 0 {
			if wait := time.Until(roundStart.Add(ps.Interval.Duration)); wait > 0 {
				select {
				case <-ctx.Done():
				case <-time.After(wait):
				}
			}
		}
	}
	elapsed := time.Since(start).Seconds()
	for _, h := range readHists {
		hr.Merge(h)
	}
	all := hist.Merged(hr, hw, hd)
	res.Ops = all.Count()
	res.Seconds = round6(elapsed)
	busy := 0.0
	for _, r := range res.PulseRounds {
		busy += r.TotalSeconds
	}
	if busy > 0 {
		// Rates over the busy time of the rounds, not the idle wait between them.
		res.OpsPerSec = round1(float64(res.Ops) / busy)
		res.MBPerSec = round1(float64(bytes) / 1048576 / busy)
		wr := round1(float64(hw.Count()) / busy)
		res.WriteRate = &wr
	}
	if res.Ops > 0 {
		res.MicrosPerOp = round3(busy * 1e6 / float64(res.Ops))
	}
	res.Found = &found
	res.LatencyMicros = all.Percentiles()
	if sum.Rounds > 0 {
		sum.MeanRoundSeconds = round6(sum.MeanRoundSeconds / float64(sum.Rounds))
	}
	res.Pulse = &sum
	for _, x := range []struct {
		name string
		h    *hist.Histogram
	}{{"read", hr}, {"write", hw}, {"delete", hd}} {
		if x.h.Count() > 0 {
			res.Operations = append(res.Operations, api.OperationSummary{Name: x.name, Ops: x.h.Count(),
				OpsPerSec: round1(float64(x.h.Count()) / busy), LatencyMicros: x.h.Percentiles()})
		}
	}
	return res, nil
}
