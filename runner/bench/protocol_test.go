package bench_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// A rate-limited writer that cannot reach its target says so, and reports its service time next
// to the latency from the schedule (which includes the backlog); one that reaches it does not.
func TestRateLimitedTarget(t *testing.T) {
	rww := func(rate int64) api.WorkloadSpec {
		return api.WorkloadSpec{Name: api.WorkloadReadWhileWriting, WritesPerSecond: i64(rate),
			Duration: &metav1.Duration{Duration: time.Second}}
	}
	cfg := api.RunnerConfig{Engine: api.EngineSpec{Name: api.EngineRocksDB}, DBPath: dbDir(t), Threads: []int32{1},
		Dataset:   api.DatasetSpec{Num: i64(testNum)},
		Workloads: []api.WorkloadSpec{rww(50_000_000), rww(500), {Name: api.WorkloadReadRandom, Num: i64(100)}}}
	res, out, err := run(t, cfg)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	missed, reached, unlimited := res.Phases[0], res.Phases[1], res.Phases[2]
	pr := missed.Protocol
	if pr == nil || pr.TargetOpsPerSec == nil || *pr.TargetOpsPerSec != 50_000_000 || !pr.TargetMissed || pr.ServiceLatencyMicros == nil {
		t.Fatalf("unreachable target: protocol %+v", pr)
	}
	var sched *api.Percentiles
	for _, o := range missed.Operations {
		if o.Name == "write" {
			sched = o.LatencyMicros
		}
	}
	// The backlog grows over the whole second: from the schedule the median write waited far
	// longer than the engine took to do it.
	if sched == nil || pr.ServiceLatencyMicros.P50*10 > sched.P50 {
		t.Errorf("service p50 %v µs against schedule p50 %v µs", pr.ServiceLatencyMicros.P50, sched)
	}
	if pr := reached.Protocol; pr == nil || pr.TargetMissed || *pr.TargetOpsPerSec != 500 || pr.ServiceLatencyMicros == nil {
		t.Errorf("reachable target: protocol %+v, write rate %v", pr, ptrVal(reached.WriteRate))
	}
	if unlimited.Protocol != nil {
		t.Errorf("unlimited readrandom has a protocol: %+v", unlimited.Protocol)
	}
}
