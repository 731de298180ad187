package bench

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"time"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/runner/engine"
)

// isStatsWorkload: db_bench's stats, levelstats and waitforcompaction pseudo-benchmarks.
func isStatsWorkload(w api.WorkloadName) bool {
	return w == api.WorkloadStats || w == api.WorkloadLevelStats || w == api.WorkloadWaitForCompaction
}

// runPseudo runs a pseudo-benchmark: print the engine's stats, or wait for its compactions.
func runPseudo(ctx context.Context, w io.Writer, db engine.DB, which api.WorkloadName) error {
	if which != api.WorkloadWaitForCompaction {
		printEngineStats(w, db, which)
		return nil
	}
	return waitForCompaction(ctx, db)
}

// waitForCompaction waits for the engine's background work: through the engine's own test where
// it has one (RocksDB's and Pebble's properties), else until its counters and LSM size have not
// moved for a second (LevelDB reports no pending work).
func waitForCompaction(ctx context.Context, db engine.DB) error {
	if cw, ok := db.(engine.CompactionWaiter); ok {
		return cw.WaitForCompaction(ctx)
	}
	var last *api.EngineStats
	for still := 0; still < 5; {
		s := engineStats(db)
		if s == nil {
			return nil
		}
		if last != nil && reflect.DeepEqual(last, &s.Cumulative) {
			still++
		} else {
			still = 0
		}
		last = &s.Cumulative
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return nil
}

// printEngineStats is db_bench's PrintStats for the stats and levelstats pseudo-benchmarks: the
// engine's property text as it is now (rocksdb.stats or rocksdb.levelstats; Pebble's metrics and
// leveldb.stats for the other engines, whose level tables serve both).
func printEngineStats(w io.Writer, db engine.DB, which api.WorkloadName) {
	s := engineStats(db)
	if s == nil {
		fmt.Fprintf(w, "(%s: the engine gives no statistics)\n", which)
		return
	}
	want := "rocksdb.stats"
	if which == api.WorkloadLevelStats {
		want = "rocksdb.levelstats"
	}
	for _, d := range s.Dumps {
		if d.Name == want || !strings.HasPrefix(d.Name, "rocksdb.") {
			fmt.Fprintf(w, "%s\n", strings.TrimRight(d.Text, "\n"))
			return
		}
	}
}

// printStatistics is db_bench's end-of-run "STATISTICS:" block (--statistics).
func printStatistics(w io.Writer, db engine.DB) {
	if s := engineStats(db); s != nil {
		for _, d := range s.Dumps {
			if d.Name == "rocksdb.statistics" {
				fmt.Fprintf(w, "STATISTICS:\n%s\n", strings.TrimRight(d.Text, "\n"))
			}
		}
	}
}

// statsTicker prints db_bench's --stats_interval_seconds / --stats_interval lines from the
// sampler's ticks (never from the workers): "<time> ... thread 0: (interval,total) ops and
// (interval,total) ops/second in (interval,total) seconds", then rocksdb.stats with
// --stats_per_interval. db_bench prints one such line per thread; the runner prints the phase's.
type statsTicker struct {
	spec *api.StatsIntervalSpec
	out  io.Writer
	mu   sync.Mutex
	db   engine.DB
	// interval state of the current phase
	lastT   time.Duration
	lastOps int64
}

func newStatsTicker(spec *api.StatsIntervalSpec, out io.Writer) *statsTicker {
	if spec == nil || (spec.Seconds <= 0 && spec.Ops <= 0) {
		return nil
	}
	return &statsTicker{spec: spec, out: out}
}

// start resets the interval at a phase's start.
func (s *statsTicker) start(db engine.DB) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.db, s.lastT, s.lastOps = db, 0, 0
	s.mu.Unlock()
}

// tick is called by the sampler with the phase's elapsed time and operations so far.
func (s *statsTicker) tick(now time.Duration, ops int64) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	due := (s.spec.Seconds > 0 && now-s.lastT >= time.Duration(s.spec.Seconds)*time.Second) ||
		(s.spec.Seconds <= 0 && s.spec.Ops > 0 && ops-s.lastOps >= s.spec.Ops)
	if !due {
		return
	}
	iv, ivT := ops-s.lastOps, (now - s.lastT).Seconds()
	fmt.Fprintf(s.out, "%s ... thread 0: (%d,%d) ops and (%.1f,%.1f) ops/second in (%.6f,%.6f) seconds\n",
		time.Now().Format("2006/01/02-15:04:05"), iv, ops, float64(iv)/ivT, float64(ops)/now.Seconds(), ivT, now.Seconds())
	if s.spec.PerInterval {
		if st := engineStats(s.db); st != nil && len(st.Dumps) > 0 {
			fmt.Fprintf(s.out, "%s\n", strings.TrimRight(st.Dumps[0].Text, "\n"))
		}
	}
	s.lastT, s.lastOps = now, ops
}
