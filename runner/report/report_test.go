package report

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

func phase(i int) api.PhaseResult {
	found := int64(i * 10)
	rate := 1234.5
	var p api.PhaseResult
	p.Workload, p.Threads, p.Iteration = "readwhilewriting", int32(i%32+1), int32(i/32)
	p.Ops, p.Seconds, p.OpsPerSec, p.MicrosPerOp, p.MBPerSec = 1000000, 12.345678, 81000.5, 12.345, 88.8
	p.Found, p.WriteRate = &found, &rate
	p.LatencyMicros = &api.Percentiles{Mean: 1.5, P50: 1.2, P75: 1.4, P99: 9.9, P999: 99.9, P9999: 999.9, Max: 12345}
	p.Operations = []api.OperationSummary{{Name: "read", Ops: 1000000, OpsPerSec: 81000.5, LatencyMicros: p.LatencyMicros},
		{Name: "write", Ops: 5000, OpsPerSec: 400, LatencyMicros: p.LatencyMicros}}
	p.Intervals = []api.IntervalSample{{OffsetSeconds: 1, OpsPerSec: 80000}, {OffsetSeconds: 2, OpsPerSec: 82000}}
	return p
}

func result(phases int, errMsg string) *api.Result {
	r := &api.Result{SchemaVersion: api.ResultSchemaVersion, Engine: api.EngineRocksDB, EngineVersion: "rocksdb 7.8.3",
		Dataset:   api.DatasetInfo{Num: 1000, KeySize: 16, ValueSizeAvg: 100, Bytes: 116000},
		StartTime: metav1.Unix(1700000000, 0), Error: errMsg}
	l := phase(0)
	l.Workload = "load"
	r.Load = &l
	for i := 0; i < phases; i++ {
		r.Phases = append(r.Phases, phase(i))
	}
	return r
}

func TestResultJSONRoundTrip(t *testing.T) {
	r := result(3, "")
	r.Phases[0].PulseRounds = []api.PulseRound{{Round: 0, ReadSeconds: 1, WriteSeconds: 2, DeleteSeconds: 3, TotalSeconds: 6, Found: 9}}
	r.Phases[0].Pulse = &api.PulseSummary{Rounds: 1, MeanRoundSeconds: 6, MaxRoundSeconds: 6}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back api.Result
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r, &back) {
		t.Fatalf("round trip changed the result:\n%s", b)
	}
	if !strings.Contains(string(b), `"schemaVersion":"kvbench.io/result/v2"`) {
		t.Errorf("no schema version in %s", b[:80])
	}
}

func TestSummaryFitsTerminationMessage(t *testing.T) {
	for _, n := range []int{0, 1, 5, 20, 100, 1000} {
		for _, e := range []string{"", strings.Repeat("disk full! ", 2000)} {
			s := Summarize(result(n, e))
			b, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) > api.TerminationMessageLimit {
				t.Errorf("%d phases: summary is %d bytes", n, len(b))
			}
			if int(s.Truncated)+len(s.Phases) != n {
				t.Errorf("%d phases: kept %d + truncated %d", n, len(s.Phases), s.Truncated)
			}
			if e != "" && s.Error == "" {
				t.Errorf("error dropped")
			}
			var back api.Summary
			if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(*s, back) {
				t.Errorf("summary round trip: %v", err)
			}
		}
	}
	// Small results keep their detail.
	s := Summarize(result(2, ""))
	if s.Truncated != 0 || s.Phases[0].Operations == nil || s.Phases[1].LatencyMicros == nil {
		t.Errorf("detail dropped needlessly: %+v", s.Phases[0])
	}
}

func TestLineMatchesDBBenchFormat(t *testing.T) {
	found := int64(632356)
	s := api.PhaseSummary{Workload: "readrandom", Ops: 1000000, Seconds: 4.653, OpsPerSec: 214893.4, MicrosPerOp: 4.653, MBPerSec: 15.0, Found: &found}
	got := Line("readrandom", &s)
	want := "readrandom   :       4.653 micros/op 214893 ops/sec 4.653 seconds 1000000 operations;   15.0 MB/s (632356 of 1000000 found)"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
