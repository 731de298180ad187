package bench

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	_ "github.com/kvbench/kvbench-operator/runner/engine/all"
	"github.com/kvbench/kvbench-operator/runner/hist"
)

// Each interval's p99 covers exactly the operations that ended in it, whichever thread did them
// and whenever the thread noticed the tick; the totals cover every operation. Times are given,
// not measured.
func TestIntervalP99(t *testing.T) {
	iv := newIntervals([]opKind{opRead}, nil, 2)
	ts := make([]*thread, 2)
	for i := range ts {
		ts[i] = &thread{id: i, ivl: iv}
		ts[i].hist(opRead)
	}
	ms := func(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }
	want := []*hist.Histogram{hist.New(), hist.New(), hist.New()}
	all := hist.New()
	rec := func(th int, end time.Duration, nanos int64, interval int) {
		ts[th].record(opRead, end, nanos)
		want[interval].Record(nanos)
		all.Record(nanos)
	}
	// Interval 0, up to the tick at 10ms.
	for i := range 99 {
		rec(0, ms(float64(i)/10), 1000, 0)
	}
	rec(0, ms(9.9), 50000, 0)
	for i := range 100 {
		rec(1, ms(float64(i)/10), 2000, 0)
	}
	iv.tick(ms(10))
	// Thread 0 records an operation that ended before the tick only after it: still interval 0.
	rec(0, ms(9.95), 900000, 0)
	iv.collect()
	if len(iv.p99) != 0 {
		t.Fatalf("interval 0 finished while thread 1 is still in it: %v", iv.p99)
	}
	// Interval 1: thread 0 only; thread 1 is stuck in one operation until 25ms, past two ticks.
	for i := range 10 {
		rec(0, ms(11+float64(i)/10), 3000, 1)
	}
	iv.tick(ms(20))
	rec(1, ms(25), 7000, 2)
	iv.collect()
	if len(iv.p99) != 1 {
		t.Fatalf("p99 of %d intervals, want interval 0's only: %v", len(iv.p99), iv.p99)
	}
	iv.finish(ts[0])
	iv.finish(ts[1])
	iv.collect()
	for j, h := range want {
		if got, w := iv.p99[int64(j)], float64(h.Quantile(99))/1e3; got != w {
			t.Errorf("interval %d: p99 %.3fµs, want %.3fµs", j, got, w)
		}
	}
	if len(iv.open) != 0 {
		t.Errorf("%d intervals left open", len(iv.open))
	}
	if got := iv.total[opRead]; got.Count() != all.Count() || got.Quantile(99.9) != all.Quantile(99.9) || got.Quantile(50) != all.Quantile(50) {
		t.Errorf("totals: %d values, p50 %d p99.9 %d; want %d, %d, %d", got.Count(), got.Quantile(50), got.Quantile(99.9),
			all.Count(), all.Quantile(50), all.Quantile(99.9))
	}
}

// A real run fills the time series' p99 for every engine and batched workload: no interval's
// p99 exceeds the phase's maximum latency, and some interval has one.
func TestRunIntervalP99(t *testing.T) {
	for _, eng := range []api.EngineName{api.EngineRocksDB, api.EngineLevelDB, api.EnginePebble} {
		t.Run(string(eng), func(t *testing.T) {
			dir := t.TempDir()
			if d, err := os.MkdirTemp("/dev/shm", "kvbench-test-"); err == nil {
				t.Cleanup(func() { os.RemoveAll(d) })
				dir = d
			}
			num, ops := int64(2000), int64(1<<40) // the phases run for their duration
			dur := &metav1.Duration{Duration: 300 * time.Millisecond}
			var ws []api.WorkloadSpec
			for _, n := range []api.WorkloadName{"fillrandom", "readrandom", "seekrandom", "deleterandom"} {
				ws = append(ws, api.WorkloadSpec{Name: n, Num: &ops, Duration: dur})
			}
			cfg := api.RunnerConfig{Engine: api.EngineSpec{Name: eng}, DBPath: filepath.Join(dir, "db"), Threads: []int32{2},
				Dataset: api.DatasetSpec{Num: &num, LoadMode: api.LoadNone}, Workloads: ws,
				ReportInterval: &metav1.Duration{Duration: 20 * time.Millisecond}}
			res, err := Run(context.Background(), cfg, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range res.Phases {
				with := 0
				for _, s := range p.Intervals {
					if s.P99Micros > p.LatencyMicros.Max {
						t.Errorf("%s: interval p99 %.3fµs above the phase's max %.3fµs", p.Workload, s.P99Micros, p.LatencyMicros.Max)
					}
					if s.P99Micros > 0 {
						with++
					}
				}
				if len(p.Intervals) >= 2 && with == 0 {
					t.Errorf("%s: none of %d intervals has a p99", p.Workload, len(p.Intervals))
				}
			}
		})
	}
}
