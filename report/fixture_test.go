package report

import (
	"testing"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// phase builds a phase with round numbers, so that expected table cells are easy to read.
func phase(workload string, threads int32, opsPerSec, p99 float64) api.PhaseResult {
	var p api.PhaseResult
	p.Workload, p.Threads = workload, threads
	p.Ops, p.Seconds, p.OpsPerSec = int64(opsPerSec*10), 10, opsPerSec
	p.MicrosPerOp = 1e6 * float64(threads) / opsPerSec
	p.LatencyMicros = &api.Percentiles{Mean: p99 / 4, P50: p99 / 5, P75: p99 / 3, P99: p99, P999: p99 * 10, P9999: p99 * 100, Max: p99 * 1000}
	return p
}

func op(name string, opsPerSec, mean, p99, p999 float64) api.OperationSummary {
	return api.OperationSummary{Name: name, Ops: int64(opsPerSec * 10), OpsPerSec: opsPerSec,
		LatencyMicros: &api.Percentiles{Mean: mean, P50: mean / 2, P99: p99, P999: p999, Max: p999 * 2}}
}

// fixture is a two-engine benchmark: rocksdb has its full result (time series, pulse rounds,
// per-operation breakdowns), leveldb only its trimmed status summaries, as after the runner
// pods are gone.
func fixture(t *testing.T) *Benchmark {
	t.Helper()
	b := &Benchmark{}
	b.Name, b.Namespace = "demo", "default"
	b.Spec.Engines = []api.EngineSpec{{Name: api.EngineRocksDB}, {Name: api.EngineLevelDB}}
	b.Spec.Workloads = []api.WorkloadSpec{
		{Name: api.WorkloadReadRandom},
		{Name: api.WorkloadYCSB, YCSB: &api.YCSBSpec{Workload: "A"}},
		{Name: api.WorkloadYCSB, YCSB: &api.YCSBSpec{Workload: "C"}},
		{Name: api.WorkloadPulse, Pulse: &api.PulseSpec{Reads: 90000, Writes: 210000, Deletes: 30000, Rounds: 3}},
	}
	b.Spec.Threads = []int32{1, 4}
	b.Spec.Storage.Medium = api.MediumTmpfs
	b.Spec.Resources.Memory = resource.MustParse("1Gi")
	b.Status.Phase = api.PhaseSucceeded

	full := &api.Result{SchemaVersion: api.ResultSchemaVersion, Engine: api.EngineRocksDB, EngineVersion: "rocksdb 7.8.3",
		Dataset: api.DatasetInfo{Num: 1000000, KeySize: 16, ValueSizeAvg: 100, Bytes: 116000000}, StartTime: metav1.Unix(1700000000, 0)}
	load := phase("load", 1, 500000, 2)
	full.Load = &load
	for _, th := range []int32{1, 4} {
		rr := phase("readrandom", th, 100000*float64(th), 10)
		rr.Intervals = []api.IntervalSample{{OffsetSeconds: 1, OpsPerSec: rr.OpsPerSec * 0.9}, {OffsetSeconds: 2, OpsPerSec: rr.OpsPerSec * 1.1}}
		a := phase("ycsb-a", th, 80000*float64(th), 20)
		a.Operations = []api.OperationSummary{op("read", 40000*float64(th), 10, 30, 300), op("update", 40000*float64(th), 20, 40, 400)}
		c := phase("ycsb-c", th, 150000*float64(th), 8)
		c.Operations = []api.OperationSummary{op("read", 150000*float64(th), 5, 8, 80)}
		full.Phases = append(full.Phases, rr, a, c)
	}
	for _, th := range []int32{1, 4} {
		p := phase("pulse", th, 300000, 12)
		p.PulseRounds = []api.PulseRound{{Round: 0, ReadSeconds: 12.8 / float64(th)}, {Round: 1, ReadSeconds: 16 / float64(th)}, {Round: 2, ReadSeconds: 14 / float64(th)}}
		p.Pulse = &api.PulseSummary{Rounds: 3, MeanRoundSeconds: 15, MaxRoundSeconds: 17}
		full.Phases = append(full.Phases, p)
	}
	rocks := api.RunStatus{Name: "rocksdb", Engine: api.EngineRocksDB, Phase: api.RunSucceeded, EngineVersion: full.EngineVersion, Load: &load.PhaseSummary}
	for _, p := range full.Phases {
		s := p.PhaseSummary
		s.Operations = nil // trimmed to fit the termination message
		rocks.Results = append(rocks.Results, s)
	}

	level := api.RunStatus{Name: "leveldb", Engine: api.EngineLevelDB, Phase: api.RunSucceeded, EngineVersion: "leveldb 1.23"}
	ll := phase("load", 1, 250000, 4)
	level.Load = &ll.PhaseSummary
	for _, th := range []int32{1, 4} {
		level.Results = append(level.Results, phase("readrandom", th, 50000*float64(th), 20).PhaseSummary,
			phase("ycsb-a", th, 40000*float64(th), 40).PhaseSummary, phase("ycsb-c", th, 75000*float64(th), 16).PhaseSummary)
	}
	for _, th := range []int32{1, 4} {
		p := phase("pulse", th, 100000, 30).PhaseSummary
		p.Pulse = &api.PulseSummary{Rounds: 3, MeanRoundSeconds: 30 / float64(th), MaxRoundSeconds: 40}
		level.Results = append(level.Results, p)
	}
	b.Status.Runs = []api.RunStatus{rocks, level}
	b.Results = map[string]*api.Result{"rocksdb": full}
	return b
}
