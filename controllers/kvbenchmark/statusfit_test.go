package kvbenchmark

import (
	"encoding/json"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/controllers/plan"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

// planOf is a spec of engines x workloads x threads x repeats, on nodes nodes under EachNode.
func planOf(engines, workloads, threads, repeats, nodes int) *kvv1.KVBenchmark {
	names := []kvv1.EngineName{kvv1.EngineRocksDB, kvv1.EngineLevelDB, kvv1.EnginePebble}
	b := w.MakeKVBenchmark("big", "ns").EngineNames(names[:engines]...).EditSpec(func(s *kvv1.KVBenchmarkSpec) {
		s.Workloads = nil
		for i := range workloads {
			s.Workloads = append(s.Workloads, kvv1.WorkloadSpec{Name: []kvv1.WorkloadName{kvv1.WorkloadReadRandomWriteRandom, kvv1.WorkloadReadRandom}[i%2]})
		}
		s.Threads = nil
		for i := range threads {
			s.Threads = append(s.Threads, int32(i+1))
		}
		s.Repeat = int32(repeats)
		if nodes > 0 {
			s.Placement.Spread, s.Placement.MaxNodes = kvv1.SpreadEachNode, ptr.To(int32(nodes))
		}
	}).Obj()
	return b
}

// finishedRuns are the runs of b's plan, finished, with every phase a mixed workload's full
// summary (latency, operations: the largest a runner reports) and a realistic run around it.
func finishedRuns(b *kvv1.KVBenchmark) []kvv1.RunStatus {
	lat := &kvv1.Percentiles{Mean: 12.3456, P50: 10.1234, P75: 13.3456, P99: 45.6789, P999: 120.5432, P9999: 900.1234, Max: 12345.6789}
	var nodes []string
	for i := range ptr.Deref(b.Spec.Placement.MaxNodes, 0) {
		nodes = append(nodes, fmt.Sprintf("node-%03d.fleet.example.internal", i))
	}
	var runs []kvv1.RunStatus
	for _, run := range plan.PlanOn(b, nodes) {
		r := kvv1.RunStatus{Name: run.Name, Engine: run.Engine.Name, JobName: run.JobName, Phase: kvv1.RunSucceeded,
			NodeName: "node-000.fleet.example.internal", StartTime: &metav1.Time{Time: t0}, CompletionTime: &metav1.Time{Time: t0},
			EngineVersion: "rocksdb 9.10.0", Dataset: &kvv1.DatasetInfo{Num: 1e7, KeySize: 16, ValueSizeAvg: 100, Bytes: 116e7},
			Load:       &kvv1.PhaseSummary{Workload: "load", Threads: 1, Ops: 1e7, Seconds: 12.3456, OpsPerSec: 810004.5, MicrosPerOp: 1.2345, LatencyMicros: lat},
			FullResult: &kvv1.ResultArchive{ConfigMap: run.JobName + "-result", SHA256: "0123456789012345678901234567890123456789012345678901234567890123"},
			Provenance: &kvv1.ProvenanceSummary{ImageDigest: testDigest, RunnerRevision: "0123456789abcdef0123456789abcdef01234567", Seed: 301,
				SpecHash: testDigest, Node: "AMD EPYC 7B13 x 64, kernel 6.1.0-18-cloud-amd64, nvme0n1 none"}}
		i := int32(0)
		for it := range b.Spec.Repeat {
			for _, wl := range b.Spec.Workloads {
				for _, th := range b.Spec.Threads {
					r.Results = append(r.Results, kvv1.PhaseSummary{Index: i, Workload: string(wl.Name), Threads: th, Iteration: it,
						Ops: 1000000, Seconds: 12.345678, OpsPerSec: 81004.53789012 + float64(i), MicrosPerOp: 12.3451234, MBPerSec: 9.123456,
						Found: ptr.To[int64](999999), LatencyMicros: lat, Operations: []kvv1.OperationSummary{
							{Name: "read", Ops: 500000, OpsPerSec: 40502.26, LatencyMicros: lat}, {Name: "write", Ops: 500000, OpsPerSec: 40502.27, LatencyMicros: lat}}})
					i++
				}
			}
		}
		runs = append(runs, r)
	}
	return runs
}

func statusBytes(t interface{ Fatal(...any) }, st *kvv1.KVBenchmarkStatus) int {
	raw, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	return len(raw)
}

// Issue 18: 1 node x 3 engines x 32 workloads x 16 threads x 2 repeats made a status etcd refuses
// (1.3 MiB capped at 1,000 phases per run; 2.3 MiB with the repeats' summaries uncapped here).
// Fitted, it is within the budget with every phase (the CRD accepts only plans whose compact
// phases fit), and fitting it again changes nothing.
func TestFitStatusOfIssue18Spec(t *testing.T) {
	b := planOf(3, 32, 16, 2, 0)
	if need := kvv1.StatusNeed(&b.Spec); need > kvv1.StatusBudgetBytes {
		t.Fatalf("the CRD would refuse this spec: it needs %d", need)
	}
	st := aggregate(b, finishedRuns(b), t0)
	before := statusBytes(t, &st)
	fitStatus(&st, 1, metav1.Time{Time: t0})
	after := statusBytes(t, &st)
	t.Logf("status of 3 x 1,024 phases: %d KiB, fitted %d KiB", before>>10, after>>10)
	if after > kvv1.StatusBudgetBytes || before <= kvv1.StatusBudgetBytes {
		t.Fatalf("status %d bytes, fitted %d; the budget is %d", before, after, kvv1.StatusBudgetBytes)
	}
	for _, r := range st.Runs {
		if len(r.Results) != 1024 || r.Truncated != 0 {
			t.Errorf("run %s: %d phases kept, %d truncated; want all 1,024", r.Name, len(r.Results), r.Truncated)
		}
	}
	c := meta.FindStatusCondition(st.Conditions, ConditionCompacted)
	if c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("no Compacted condition: %+v", st.Conditions)
	}
	again := *st.DeepCopy()
	fitStatus(&again, 1, metav1.Time{Time: t0.Add(3600e9)})
	if statusBytes(t, &again) != after || !meta.IsStatusConditionTrue(again.Conditions, ConditionCompacted) ||
		meta.FindStatusCondition(again.Conditions, ConditionCompacted).LastTransitionTime != c.LastTransitionTime {
		t.Errorf("a fitted status changed when fitted again")
	}
}

// Whatever it is given, fitStatus fits: more phases than fit (10,000 per run over 12 runs, which
// aggregate would have cut to each run's plan) keep the first ones of each run alike and count the
// others, and texts are cut.
func TestFitStatusKeepsTheFirstPhasesOfEveryRun(t *testing.T) {
	b := planOf(3, 1, 1, 1, 4)
	st := aggregate(b, finishedRuns(b), t0)
	for i := range st.Runs {
		r := &st.Runs[i]
		r.EngineVersion = string(make([]byte, 4000))
		for j := 1; j < 10000; j++ {
			p := r.Results[0]
			p.Index = int32(j)
			r.Results = append(r.Results, p)
		}
	}
	fitStatus(&st, 1, metav1.Time{Time: t0})
	if n := statusBytes(t, &st); n > kvv1.StatusBudgetBytes {
		t.Fatalf("fitted status is %d bytes", n)
	}
	k := len(st.Runs[0].Results)
	for _, r := range st.Runs {
		if len(r.Results) != k || int(r.Truncated) != 10000-k || k == 0 || len(r.EngineVersion) > maxRunText {
			t.Errorf("run %s: %d phases, %d truncated, engine version %d bytes", r.Name, len(r.Results), r.Truncated, len(r.EngineVersion))
		}
	}
	t.Logf("12 runs of 10,000 phases keep %d each", k)
}

// A small status is left alone.
func TestFitStatusLeavesASmallStatus(t *testing.T) {
	b := planOf(2, 2, 2, 3, 0)
	st := aggregate(b, finishedRuns(b), t0)
	want := st.DeepCopy()
	fitStatus(&st, 1, metav1.Time{Time: t0})
	if statusBytes(t, &st) != statusBytes(t, want) || meta.FindStatusCondition(st.Conditions, ConditionCompacted) != nil {
		t.Error("a status within the budget was changed")
	}
}
