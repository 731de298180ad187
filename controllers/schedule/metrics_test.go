package schedule

import (
	"math"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/history"
)

// The history ConfigMap and status are tenant-writable: values of the wrong shape make no series,
// and nothing makes the scrape fail or the operator panic.
func TestMetricsRejectHostileLabels(t *testing.T) {
	s := &api.KVBenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s"}}
	h := history.New("s")
	ok := history.Series{Run: "rocksdb@node-1", Engine: api.EngineRocksDB, Node: "node-1", Workload: "readrandom", Threads: 4,
		Metric: api.MetricOpsPerSec, Points: []history.Point{{Child: "s-1", Median: 10, CILow: 9, CIHigh: 11}}}
	h.Series = append(h.Series, ok)
	java := ok // every engine's series is exported: rocksjava's were left out
	java.Run, java.Engine, java.Node = "rocksjava", api.EngineRocksJava, ""
	h.Series = append(h.Series, java)
	for _, bad := range []func(*history.Series){
		func(x *history.Series) { x.Engine = "rocksdb-and-more" }, // longer than the run name
		func(x *history.Series) { x.Run, x.Engine = "lmdb", "lmdb" },
		func(x *history.Series) { x.Workload = `readrandom"} x{y="` },
		func(x *history.Series) { x.Node = "other-node" },
		func(x *history.Series) { x.Run = "rocksdb@Node_1"; x.Node = "Node_1" },
		func(x *history.Series) { x.Metric = "cpu" },
		func(x *history.Series) { x.Threads = 0 },
		func(x *history.Series) { x.Points[0].Median = math.NaN() },
		func(x *history.Series) { x.Points = nil },
	} {
		x := ok
		x.Points = []history.Point{ok.Points[0]}
		bad(&x)
		h.Series = append(h.Series, x)
	}
	// The same labels twice (a history edited by hand): one series, or the scrape fails (FuzzHistory).
	twin := ok
	twin.Points = []history.Point{{Child: "s-1", Median: 20}}
	h.Series = append(h.Series, twin)
	s.Status.ChangePoints = []api.ScheduleChangePoint{
		{Series: "e", Run: "rocksdb", Engine: api.EngineRocksDB, Workload: "readrandom", Threads: 4, Metric: api.MetricOpsPerSec, Child: "s-2", Direction: api.Regressed, ChangePercent: -40},
		{Series: "a", Run: "rocksdb", Engine: api.EngineRocksDB, Workload: "readrandom", Threads: 4, Metric: api.MetricOpsPerSec, Child: "s-2", Direction: api.Improved, ChangePercent: 30},
		{Series: "a", Run: "rocksdb", Engine: api.EngineRocksDB, Workload: "readrandom", Threads: 4, Metric: api.MetricOpsPerSec, Child: "s-2", Direction: api.Regressed, ChangePercent: -50},
		{Series: "a", Run: "rocksdb", Engine: api.EngineRocksDB, Workload: "readrandom", Threads: 4, Metric: api.MetricOpsPerSec, Child: "s-2", Direction: api.Regressed, ChangePercent: -50},
		{Series: "b", Run: "rocksdb", Engine: api.EngineRocksDB, Workload: "readrandom", Threads: 4, Metric: api.MetricOpsPerSec, Child: "S 2", Direction: api.Regressed, ChangePercent: -50},
		{Series: "c", Run: "rocksdb", Engine: api.EngineRocksDB, Workload: "readrandom", Threads: 4, Metric: api.MetricOpsPerSec, Child: "s-3", Direction: "Sideways", ChangePercent: -50},
		{Series: "d", Run: "rocksdb", Engine: api.EngineRocksDB, Workload: "readrandom", Threads: 4, Metric: api.MetricOpsPerSec, Child: "s-4", Direction: api.Improved, ChangePercent: math.Inf(1)},
	}
	c := NewCollector()
	c.Set(s, h)
	if got := gaugeOf(t, c, "kvbench_schedule_series_median"); len(got) != 2 || got[0]["node"] != "node-1" && got[1]["node"] != "node-1" {
		t.Errorf("median series %v", got)
	}
	if got := gaugeOf(t, c, "kvbench_schedule_series_ci_upper"); len(got) != 2 {
		t.Errorf("ci series %v", got)
	}
	if got := gaugeOf(t, c, "kvbench_schedule_change_point"); len(got) != 1 || got[0]["child"] != "s-2" {
		t.Errorf("change points %v", got)
	}
}

func gaugeOf(t *testing.T, c *Collector, name string) []map[string]string {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			out = append(out, l)
		}
	}
	return out
}
