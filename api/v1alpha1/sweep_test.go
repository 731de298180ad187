package v1alpha1_test

import (
	"testing"

	"k8s.io/utils/ptr"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

func TestWritesAndEffectiveReset(t *testing.T) {
	ycsb := func(y kvv1.YCSBSpec) kvv1.WorkloadSpec { return kvv1.WorkloadSpec{Name: kvv1.WorkloadYCSB, YCSB: &y} }
	for _, tc := range []struct {
		w      kvv1.WorkloadSpec
		writes bool
	}{
		{kvv1.WorkloadSpec{Name: kvv1.WorkloadReadRandom}, false},
		{kvv1.WorkloadSpec{Name: kvv1.WorkloadSeekRandom}, false},
		{kvv1.WorkloadSpec{Name: kvv1.WorkloadStats}, false},
		{kvv1.WorkloadSpec{Name: kvv1.WorkloadDBBench}, false}, // db_bench starts its own database each time
		{kvv1.WorkloadSpec{Name: kvv1.WorkloadFillRandom}, true},
		{kvv1.WorkloadSpec{Name: kvv1.WorkloadDeleteSeq}, true},
		{kvv1.WorkloadSpec{Name: kvv1.WorkloadReadWhileWriting, WritesPerSecond: ptr.To[int64](100)}, true},
		{kvv1.WorkloadSpec{Name: kvv1.WorkloadReadRandomWriteRandom}, true},
		{kvv1.WorkloadSpec{Name: kvv1.WorkloadReadRandomWriteRandom, ReadWritePercent: ptr.To[int32](100)}, false},
		{kvv1.WorkloadSpec{Name: kvv1.WorkloadPulse, Pulse: &kvv1.PulseSpec{Reads: 10}}, false},
		{kvv1.WorkloadSpec{Name: kvv1.WorkloadPulse, Pulse: &kvv1.PulseSpec{Reads: 10, Deletes: 1}}, true},
		{ycsb(kvv1.YCSBSpec{Workload: "C"}), false},
		{ycsb(kvv1.YCSBSpec{Workload: "A"}), true},
		{ycsb(kvv1.YCSBSpec{Workload: "A", ReadWriteRatio: "1:0"}), false},
		{ycsb(kvv1.YCSBSpec{Workload: "A", ReadWriteRatio: "30:1"}), true},
		{ycsb(kvv1.YCSBSpec{Workload: "C", ReadPercent: ptr.To[int32](99)}), true},
		{ycsb(kvv1.YCSBSpec{Workload: "B", ReadPercent: ptr.To[int32](100)}), false},
		{ycsb(kvv1.YCSBSpec{Workload: "E", ReadPercent: ptr.To[int32](100)}), true}, // E's rest stays scan/insert
	} {
		if got := tc.w.Writes(); got != tc.writes {
			t.Errorf("%s %+v: writes %v, want %v", tc.w.Name, tc.w.YCSB, got, tc.writes)
		}
	}
	read := []kvv1.WorkloadSpec{{Name: kvv1.WorkloadReadRandom}}
	write := []kvv1.WorkloadSpec{{Name: kvv1.WorkloadReadRandom}, {Name: kvv1.WorkloadFillRandom}}
	for _, tc := range []struct {
		workloads []kvv1.WorkloadSpec
		repeat    int32
		reset     kvv1.ResetMode
		want      kvv1.ResetMode
		shares    bool
	}{
		{write, 3, "", kvv1.ResetPerIteration, false}, // issue 21: repeats measure the same database
		{write, 1, "", kvv1.ResetNone, false},
		{read, 3, "", kvv1.ResetNone, false},
		{write, 3, kvv1.ResetNone, kvv1.ResetNone, true}, // asked for: Noisy says StateDrift
		{write, 3, kvv1.ResetPerPoint, kvv1.ResetPerPoint, false},
	} {
		s := &kvv1.KVBenchmarkSpec{Workloads: tc.workloads, Repeat: tc.repeat, Reset: tc.reset}
		if got := kvv1.EffectiveReset(s); got != tc.want {
			t.Errorf("%d workloads, repeat %d, reset %q: effective %q, want %q", len(tc.workloads), tc.repeat, tc.reset, got, tc.want)
		}
		if got := kvv1.SharesState(s); got != tc.shares {
			t.Errorf("%d workloads, repeat %d, reset %q: shares state %v, want %v", len(tc.workloads), tc.repeat, tc.reset, got, tc.shares)
		}
	}
}
