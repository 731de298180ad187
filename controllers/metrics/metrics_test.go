package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

func bench() *kvv1.KVBenchmark {
	b := w.MakeKVBenchmark("b", "ns").Obj()
	b.Status.Phase = kvv1.PhaseSucceeded
	b.Status.Runs = []kvv1.RunStatus{{
		Name: "rocksdb", Engine: kvv1.EngineRocksDB, Phase: kvv1.RunSucceeded,
		Results: []kvv1.PhaseSummary{
			{Workload: "readrandom", Threads: 4, OpsPerSec: 1, MBPerSec: 1, Seconds: 10,
				LatencyMicros: &kvv1.Percentiles{P50: 1, P99: 2, P999: 3, Max: 4}},
			// The same workload again at the same thread count: its own series (phase label).
			{Workload: "readrandom", Threads: 4, OpsPerSec: 130339, MBPerSec: 14.4, Seconds: 10, Found: ptr.To[int64](99),
				LatencyMicros: &kvv1.Percentiles{P50: 5, P99: 12.5, P999: 40, Max: 900}},
			{Workload: "readwhilewriting", Threads: 4, OpsPerSec: 5000, WriteRate: ptr.To(9876.5),
				TargetOpsPerSec: ptr.To(80000.0), TargetMissed: true, ServiceP99Micros: ptr.To(36.5)},
		},
	}}
	return b
}

func TestCollectorUnitsLabelsAndDeletion(t *testing.T) {
	c := NewCollector()
	reg := prometheus.NewPedanticRegistry()
	if err := c.Register(reg); err != nil {
		t.Fatal(err)
	}
	c.Set(bench(), nil)
	// The text parser keeps label order; gathered series are sorted by label name.
	base := `benchmark="b",dataset_bytes="67108864",engine="rocksdb",iteration="0",medium="tmpfs",namespace="ns",node=""`
	labels := func(phase string) string { return base + `,phase="` + phase + `",threads="4"` }
	want := `
# HELP kvbench_result_ops_per_second Throughput of a measured phase (db_bench ops/sec).
# TYPE kvbench_result_ops_per_second gauge
kvbench_result_ops_per_second{` + labels("0") + `,workload="readrandom"} 1
kvbench_result_ops_per_second{` + labels("1") + `,workload="readrandom"} 130339
kvbench_result_ops_per_second{` + labels("2") + `,workload="readwhilewriting"} 5000
# HELP kvbench_result_latency_seconds Latency percentiles of a measured phase, from merged per-thread histograms (quantile 1 is the max).
# TYPE kvbench_result_latency_seconds gauge
kvbench_result_latency_seconds{` + base + `,phase="0",quantile="0.5",threads="4",workload="readrandom"} 1e-06
kvbench_result_latency_seconds{` + base + `,phase="0",quantile="0.99",threads="4",workload="readrandom"} 2e-06
kvbench_result_latency_seconds{` + base + `,phase="0",quantile="0.999",threads="4",workload="readrandom"} 3e-06
kvbench_result_latency_seconds{` + base + `,phase="0",quantile="1",threads="4",workload="readrandom"} 4e-06
kvbench_result_latency_seconds{` + base + `,phase="1",quantile="0.5",threads="4",workload="readrandom"} 5e-06
kvbench_result_latency_seconds{` + base + `,phase="1",quantile="0.99",threads="4",workload="readrandom"} 1.25e-05
kvbench_result_latency_seconds{` + base + `,phase="1",quantile="0.999",threads="4",workload="readrandom"} 4e-05
kvbench_result_latency_seconds{` + base + `,phase="1",quantile="1",threads="4",workload="readrandom"} 0.0009
# HELP kvbench_result_bytes_per_second Data rate of a measured phase (db_bench MB/s in bytes).
# TYPE kvbench_result_bytes_per_second gauge
kvbench_result_bytes_per_second{` + labels("0") + `,workload="readrandom"} 1.048576e+06
kvbench_result_bytes_per_second{` + labels("1") + `,workload="readrandom"} 1.50994944e+07
# HELP kvbench_result_achieved_writes_per_second Write rate actually reached (readwhilewriting, pulse).
# TYPE kvbench_result_achieved_writes_per_second gauge
kvbench_result_achieved_writes_per_second{` + labels("2") + `,workload="readwhilewriting"} 9876.5
# HELP kvbench_result_target_writes_per_second A rate-limited writer's target (readwhilewriting with writesPerSecond, pulse).
# TYPE kvbench_result_target_writes_per_second gauge
kvbench_result_target_writes_per_second{` + labels("2") + `,workload="readwhilewriting"} 80000
# HELP kvbench_result_target_missed 1 when a rate-limited phase fell more than 5% short of its target (its schedule latency is then mostly backlog), else 0.
# TYPE kvbench_result_target_missed gauge
kvbench_result_target_missed{` + labels("2") + `,workload="readwhilewriting"} 1
# HELP kvbench_result_service_latency_p99_seconds p99 of a rate-limited writer's writes from their actual start (the engine's own write time, without the schedule's backlog).
# TYPE kvbench_result_service_latency_p99_seconds gauge
kvbench_result_service_latency_p99_seconds{` + labels("2") + `,workload="readwhilewriting"} 3.65e-05
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "kvbench_result_ops_per_second",
		"kvbench_result_latency_seconds", "kvbench_result_bytes_per_second", "kvbench_result_achieved_writes_per_second",
		"kvbench_result_target_writes_per_second", "kvbench_result_target_missed", "kvbench_result_service_latency_p99_seconds"); err != nil {
		t.Error(err)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP kvbench_benchmark_phase 1 for the benchmark's current phase, 0 for the others.
# TYPE kvbench_benchmark_phase gauge
kvbench_benchmark_phase{benchmark="b",namespace="ns",phase="Failed"} 0
kvbench_benchmark_phase{benchmark="b",namespace="ns",phase="Pending"} 0
kvbench_benchmark_phase{benchmark="b",namespace="ns",phase="Running"} 0
kvbench_benchmark_phase{benchmark="b",namespace="ns",phase="Succeeded"} 1
`), "kvbench_benchmark_phase"); err != nil {
		t.Error(err)
	}

	c.JobsCreated.WithLabelValues("ns", "b", "rocksdb").Inc()
	c.Delete(types.NamespacedName{Namespace: "ns", Name: "b"})
	if n, err := testutil.GatherAndCount(reg); err != nil || n != 0 {
		t.Errorf("after Delete: %d series (err %v), want 0", n, err)
	}
}

// The full result, when there is one, gives every phase (also those the bounded summary dropped)
// and the detail status lacks: per-operation numbers, pulse rounds, engine statistics.
func TestCollectorPrefersFullResult(t *testing.T) {
	c := NewCollector()
	reg := prometheus.NewPedanticRegistry()
	if err := c.Register(reg); err != nil {
		t.Fatal(err)
	}
	b := bench()
	b.Status.Runs[0].Results = b.Status.Runs[0].Results[:1] // as if truncated
	wa := 3.5
	full := &kvv1.Result{SchemaVersion: kvv1.ResultSchemaVersion, Engine: kvv1.EngineRocksDB, Phases: []kvv1.PhaseResult{
		{PhaseSummary: kvv1.PhaseSummary{Workload: "ycsb-a", Threads: 4, OpsPerSec: 100,
			Operations: []kvv1.OperationSummary{{Name: "read", OpsPerSec: 60, LatencyMicros: &kvv1.Percentiles{P50: 1, P99: 2, P999: 3, Max: 4}}, {Name: "update", OpsPerSec: 40}}},
			EngineStats: &kvv1.EngineStats{WriteAmplification: &wa}, Usage: &kvv1.PhaseUsage{CPUSeconds: 7}},
		{PhaseSummary: kvv1.PhaseSummary{Index: 1, Workload: "pulse", Threads: 4, OpsPerSec: 10, Pulse: &kvv1.PulseSummary{Rounds: 1, MeanRoundSeconds: 2, MaxRoundSeconds: 2}},
			PulseRounds: []kvv1.PulseRound{{Round: 0, ReadSeconds: 0.5, WriteSeconds: 1, DeleteSeconds: 0.25, TotalSeconds: 2}}},
	}}
	c.Set(b, map[string]*kvv1.Result{"rocksdb": full})
	base := `benchmark="b",dataset_bytes="67108864",engine="rocksdb",iteration="0",medium="tmpfs",namespace="ns",node=""`
	want := `
# HELP kvbench_result_ops_per_second Throughput of a measured phase (db_bench ops/sec).
# TYPE kvbench_result_ops_per_second gauge
kvbench_result_ops_per_second{` + base + `,phase="0",threads="4",workload="ycsb-a"} 100
kvbench_result_ops_per_second{` + base + `,phase="1",threads="4",workload="pulse"} 10
# HELP kvbench_result_operation_ops_per_second Throughput of one operation type of a mixed phase (YCSB READ/UPDATE/INSERT/SCAN/READ-MODIFY-WRITE, readrandomwriterandom read/write).
# TYPE kvbench_result_operation_ops_per_second gauge
kvbench_result_operation_ops_per_second{` + base + `,operation="read",phase="0",threads="4",workload="ycsb-a"} 60
kvbench_result_operation_ops_per_second{` + base + `,operation="update",phase="0",threads="4",workload="ycsb-a"} 40
# HELP kvbench_result_engine_write_amplification Engine write amplification over the phase (engine counters; full result only).
# TYPE kvbench_result_engine_write_amplification gauge
kvbench_result_engine_write_amplification{` + base + `,phase="0",threads="4",workload="ycsb-a"} 3.5
# HELP kvbench_result_cpu_seconds CPU time of the runner process over the phase, engine background work included (full result only).
# TYPE kvbench_result_cpu_seconds gauge
kvbench_result_cpu_seconds{` + base + `,phase="0",threads="4",workload="ycsb-a"} 7
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "kvbench_result_ops_per_second",
		"kvbench_result_operation_ops_per_second", "kvbench_result_engine_write_amplification", "kvbench_result_cpu_seconds"); err != nil {
		t.Error(err)
	}
	for name, n := range map[string]int{"kvbench_result_operation_latency_seconds": 4, "kvbench_result_pulse_round_seconds": 4,
		"kvbench_result_engine_stall_seconds": 0} {
		if got, err := testutil.GatherAndCount(reg, name); err != nil || got != n {
			t.Errorf("%s: %d series (%v), want %d", name, got, err, n)
		}
	}
}

// Every exported name follows the conventions: kvbench_ prefix, base units.
func TestMetricNames(t *testing.T) {
	c := NewCollector()
	ch := make(chan *prometheus.Desc, 64)
	c.Describe(ch)
	close(ch)
	for d := range ch {
		s := d.String()
		s = s[:strings.Index(s, ", help:")] // the name only
		if !strings.Contains(s, `fqName: "kvbench_`) {
			t.Errorf("metric without kvbench_ prefix: %s", s)
		}
		for _, bad := range []string{"micros", "millis", "_mb", "_ms\""} {
			if strings.Contains(s, bad) {
				t.Errorf("metric not in base units (%s): %s", bad, s)
			}
		}
	}
}

// status.baseline's changes become kvbench_result_change_ratio, one series per point and metric.
func TestChangeRatio(t *testing.T) {
	c := NewCollector()
	reg := prometheus.NewPedanticRegistry()
	if err := c.Register(reg); err != nil {
		t.Fatal(err)
	}
	b := bench()
	c.Set(b, nil) // no baseline: no series
	if n, err := testutil.GatherAndCount(reg, "kvbench_result_change_ratio"); err != nil || n != 0 {
		t.Errorf("without a baseline: %d series (err %v)", n, err)
	}
	b.Status.Baseline = &kvv1.BaselineComparison{Baseline: "kvbenchmark/nightly-1", Changes: []kvv1.PointChange{
		{Engine: kvv1.EnginePebble, Workload: "readrandom", Threads: 2, Metric: "opsPerSec", Old: 100, New: 50, Ratio: 0.5, Significant: true, Regressed: true},
		{Engine: kvv1.EnginePebble, Workload: "readrandom", Threads: 2, Metric: "p99Micros", Old: 10, New: 11, Ratio: 1.1},
	}}
	c.Set(b, nil)
	l := `baseline="kvbenchmark/nightly-1",benchmark="b",engine="pebble"`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP kvbench_result_change_ratio A point's median against spec.baseline's (new / old); regressed=true marks a significant change beyond the threshold in the bad direction.
# TYPE kvbench_result_change_ratio gauge
kvbench_result_change_ratio{`+l+`,metric="opsPerSec",namespace="ns",regressed="true",threads="2",workload="readrandom"} 0.5
kvbench_result_change_ratio{`+l+`,metric="p99Micros",namespace="ns",regressed="false",threads="2",workload="readrandom"} 1.1
`), "kvbench_result_change_ratio"); err != nil {
		t.Error(err)
	}
}

// Spread EachNode has one run per engine per node: their series differ by node, so gathering
// does not fail on duplicates.
func TestCollectorEachNodeRunsHaveDistinctSeries(t *testing.T) {
	c := NewCollector()
	reg := prometheus.NewPedanticRegistry()
	if err := c.Register(reg); err != nil {
		t.Fatal(err)
	}
	b := bench()
	one := b.Status.Runs[0]
	b.Status.Runs = nil
	for _, node := range []string{"n1", "n2"} {
		r := *one.DeepCopy()
		r.Name = "rocksdb@" + node
		b.Status.Runs = append(b.Status.Runs, r)
	}
	c.Set(b, nil)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	nodes := map[string]bool{}
	for _, mf := range mfs {
		if mf.GetName() != "kvbench_result_ops_per_second" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "node" {
					nodes[l.GetValue()] = true
				}
			}
		}
	}
	if !nodes["n1"] || !nodes["n2"] || len(nodes) != 2 {
		t.Fatalf("node label values = %v", nodes)
	}
}

// Runner data cannot break or flood the registry: duplicate pulse rounds and operations, label
// values outside the alphabet, values that are not finite and series over the budget are refused
// and counted, and Gather succeeds.
func TestCollectorRefusesWhatWouldBreakAScrape(t *testing.T) {
	c := NewCollector()
	reg := prometheus.NewPedanticRegistry()
	if err := c.Register(reg); err != nil {
		t.Fatal(err)
	}
	b := bench()
	b.Status.Runs[0].Results = nil
	full := &kvv1.Result{SchemaVersion: kvv1.ResultSchemaVersion, Phases: []kvv1.PhaseResult{
		{PhaseSummary: kvv1.PhaseSummary{Workload: "pulse", Threads: 1, OpsPerSec: 1},
			PulseRounds: []kvv1.PulseRound{{Round: 1, TotalSeconds: 1}, {Round: 1, TotalSeconds: 2}}}, // 4 refused
		{PhaseSummary: kvv1.PhaseSummary{Index: 1, Workload: "ycsb-a", Threads: 1, OpsPerSec: 1, MBPerSec: 1e308, // bytes/s is +Inf: 1 refused
			Operations: []kvv1.OperationSummary{{Name: "read"}, {Name: "read"}, {Name: "re\"ad"}, {Name: strings.Repeat("r", 65)}}}}, // 3 refused
		{PhaseSummary: kvv1.PhaseSummary{Index: 2, Workload: "bad workload", OpsPerSec: 1}},          // 1 refused
		{PhaseSummary: kvv1.PhaseSummary{Index: 3, Workload: strings.Repeat("w", 65), OpsPerSec: 1}}, // 1 refused
	}}
	c.Set(b, map[string]*kvv1.Result{"rocksdb": full})
	if _, err := reg.Gather(); err != nil {
		t.Fatal(err)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP kvbench_result_series_refused Result series of a benchmark not exported: a label value from runner data outside the alphabet or over 64 bytes, a duplicate label set, a value that is not finite, or over the benchmark's series budget.
# TYPE kvbench_result_series_refused gauge
kvbench_result_series_refused{benchmark="b",namespace="ns"} 10
`), "kvbench_result_series_refused"); err != nil {
		t.Error(err)
	}
	if n, _ := testutil.GatherAndCount(reg, "kvbench_result_pulse_round_seconds"); n != 4 {
		t.Errorf("pulse round series: %d, want the first round's 4", n)
	}
	if n, _ := testutil.GatherAndCount(reg, "kvbench_result_ops_per_second"); n != 2 {
		t.Errorf("ops series: %d, want the 2 phases with valid workloads", n)
	}

	// The budget: a run of 20,000 phases gets MaxSeries, split between the runs.
	big := &kvv1.Result{SchemaVersion: kvv1.ResultSchemaVersion}
	for i := range 20000 {
		big.Phases = append(big.Phases, kvv1.PhaseResult{PhaseSummary: kvv1.PhaseSummary{Index: int32(i), Workload: "readrandom", Threads: 1, OpsPerSec: 1}})
	}
	b.Status.Runs = append(b.Status.Runs, *b.Status.Runs[0].DeepCopy())
	b.Status.Runs[1].Name, b.Status.Runs[1].Engine = "pebble", kvv1.EnginePebble
	c.Set(b, map[string]*kvv1.Result{"rocksdb": big, "pebble": big})
	n, err := testutil.GatherAndCount(reg)
	if err != nil || n > MaxSeries+4+2 || n < MaxSeries {
		t.Errorf("%d series (err %v), want about the budget of %d", n, err, MaxSeries)
	}
	if n, _ := testutil.GatherAndCount(reg, "kvbench_run_phase"); n != 8 {
		t.Errorf("run phase series: %d, want every run's", n)
	}
}
