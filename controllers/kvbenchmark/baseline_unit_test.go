package kvbenchmark

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

// aggregate summarises repeated points in status and names the noisy ones in the Noisy condition.
func TestAggregatePointsAndNoisy(t *testing.T) {
	b := w.MakeKVBenchmark("b", "ns").EngineNames(kvv1.EnginePebble).Obj()
	var results []kvv1.PhaseSummary
	// ops/s at 1 thread: CoV 1.6%; at 4 threads [100 130 70 100 100]: stdev 21.2 / mean 100 = 21.2% (Python statistics).
	for i, ops := range [][2]float64{{1000, 100}, {1010, 130}, {990, 70}, {1020, 100}, {980, 100}} {
		a, c := phase("readrandom", 1, ops[0], 10), phase("readrandom", 4, ops[1], 10)
		a.Iteration, c.Iteration = int32(i), int32(i)
		results = append(results, a, c)
	}
	runs := []kvv1.RunStatus{{Name: "pebble", Engine: kvv1.EnginePebble, Phase: kvv1.RunSucceeded, Results: results}}
	st := aggregate(b, runs, t0)
	pts := st.Runs[0].Points
	if len(pts) != 2 || pts[0].OpsPerSec.N != 5 || pts[0].Noisy || !pts[1].Noisy || pts[1].OpsPerSec.Median != 100 {
		t.Fatalf("points %+v", pts)
	}
	c := meta.FindStatusCondition(st.Conditions, kvv1.ConditionNoisy)
	if c == nil || c.Status != "True" || c.Message != "ops/s vary by more than 5% (CoV) over the repeats of: pebble readrandom threads=4 (CoV 21.2%)" {
		t.Errorf("Noisy condition %+v", c)
	}
	// Without repeats: no points, no Noisy condition.
	st = aggregate(b, []kvv1.RunStatus{{Name: "pebble", Engine: kvv1.EnginePebble, Phase: kvv1.RunSucceeded, Results: results[:2]}}, t0)
	if st.Runs[0].Points != nil || meta.FindStatusCondition(st.Conditions, kvv1.ConditionNoisy) != nil {
		t.Errorf("without repeats: points %+v, conditions %+v", st.Runs[0].Points, st.Conditions)
	}
}

// spec.baseline's options become the comparison's; values the API server would have refused
// (an object stored before the validation existed) are a clear error, not a silent default.
func TestBaselineOptions(t *testing.T) {
	o, err := baselineOptions(&kvv1.BaselineRef{Name: "a"})
	if err != nil || o.ThresholdPercent != 5 || o.Alpha != 0.05 || len(o.Metrics) != 0 || gateText(o) != "compared ops, p50, p99, p999 at alpha 0.05, threshold 5%" {
		t.Errorf("defaults: %+v, %v, %q", o, err, gateText(o))
	}
	o, err = baselineOptions(&kvv1.BaselineRef{Name: "a", ThresholdPercent: ptrTo[int32](2), Alpha: ptrTo(0.01),
		Metrics: []kvv1.BaselineMetric{kvv1.BaselineP999, kvv1.BaselineOpsPerSec}})
	if err != nil || gateText(o) != "compared ops, p999 at alpha 0.01, threshold 2%" {
		t.Errorf("set: %+v, %v, %q", o, err, gateText(o))
	}
	for _, ref := range []kvv1.BaselineRef{{Name: "a", Alpha: ptrTo(0.0)}, {Name: "a", Alpha: ptrTo(1.0)}, {Name: "a", Metrics: []kvv1.BaselineMetric{"p95"}}} {
		if _, err := baselineOptions(&ref); err == nil {
			t.Errorf("%+v: no error", ref)
		}
	}
}
