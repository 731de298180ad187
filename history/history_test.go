package history

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// bench is a finished KVBenchmark with one run per engine and the given ops/s per repeat of
// readrandom at 4 threads (p99 = 1e6 / ops/s).
func bench(name string, phase api.BenchmarkPhase, node string, ops map[string][]float64) *api.KVBenchmark {
	b := &api.KVBenchmark{ObjectMeta: metav1.ObjectMeta{Name: name}}
	b.Spec.Storage.Medium = api.MediumTmpfs
	b.Status.Phase = phase
	for _, engine := range []string{"pebble", "rocksdb"} {
		vs, ok := ops[engine]
		if !ok {
			continue
		}
		r := api.RunStatus{Name: engine, Engine: api.EngineName(engine), Phase: api.RunSucceeded, EngineVersion: engine + " 1.0",
			Provenance: &api.ProvenanceSummary{ImageDigest: "sha256:aaa", Node: node}}
		for i, v := range vs {
			r.Results = append(r.Results, api.PhaseSummary{Workload: "readrandom", Threads: 4, Iteration: int32(i), OpsPerSec: v,
				LatencyMicros: &api.Percentiles{P50: 5e5 / v, P99: 1e6 / v, P999: 2e6 / v}})
		}
		b.Status.Runs = append(b.Status.Runs, r)
	}
	return b
}

const node1 = "AMD EPYC x 2 @ 2596 MHz, kernel 6.1, 23.5 GiB, tmpfs"

func TestRecord(t *testing.T) {
	h := New("nightly")
	at := metav1.NewTime(time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC))
	b := bench("nightly-1", api.PhaseSucceeded, node1, map[string][]float64{"rocksdb": {100, 110, 90, 105, 95, 100}})
	full := map[string]*api.Result{"rocksdb": {Phases: []api.PhaseResult{}}}
	for i, ph := range b.Status.Runs[0].Results {
		full["rocksdb"].Phases = append(full["rocksdb"].Phases, api.PhaseResult{PhaseSummary: ph,
			EngineStats: &api.EngineStats{WriteAmplification: ptr.To(2.0 + float64(i)/10), StallSeconds: ptr.To(0.5)}})
		full["rocksdb"].Phases[i].Seconds = 10
	}
	if d := h.Record(b, full, Run{Time: at, Cause: api.CauseSchedule, Generation: 1}, 10); d != 0 {
		t.Fatalf("dropped %d", d)
	}
	if d := h.Record(b, full, Run{Time: at}, 10); d != 0 || len(h.Runs) != 1 {
		t.Fatalf("recording twice: dropped %d, runs %d", d, len(h.Runs))
	}
	var names []string
	for _, s := range h.Series {
		names = append(names, s.Name())
	}
	want := []string{"rocksdb readrandom threads=4 opsPerSec", "rocksdb readrandom threads=4 p50Micros", "rocksdb readrandom threads=4 p99Micros",
		"rocksdb readrandom threads=4 p999Micros", "rocksdb readrandom threads=4 writeAmplification", "rocksdb readrandom threads=4 stallPercent"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Fatalf("series (-want +got):\n%s", diff)
	}
	ops := h.Find("rocksdb readrandom threads=4 opsPerSec").Points[0]
	// Median of 6 repeats, with the 95% interval of the median (x(1)..x(6) of 6 values).
	if ops.Child != "nightly-1" || ops.Median != 100 || ops.N != 6 || ops.CILow != 90 || ops.CIHigh != 110 || ops.Fingerprint == "" {
		t.Errorf("ops/s point %+v", ops)
	}
	if w := h.Find("rocksdb readrandom threads=4 writeAmplification").Points[0]; w.Median != 2.25 {
		t.Errorf("w-amp point %+v", w)
	}
	if s := h.Find("rocksdb readrandom threads=4 stallPercent").Points[0]; s.Median != 5 {
		t.Errorf("stall point %+v, want 5%% (0.5 s of 10 s)", s)
	}
	wantRun := Run{Name: "nightly-1", Time: at, Cause: api.CauseSchedule, Phase: api.PhaseSucceeded, Generation: 1,
		Provenance: []Provenance{{Run: "rocksdb", ImageDigest: "sha256:aaa", EngineVersion: "rocksdb 1.0", Node: "AMD EPYC x 2, kernel 6.1, 23.5 GiB, tmpfs", Storage: "tmpfs"}}}
	if diff := cmp.Diff(wantRun, h.Runs[0]); diff != "" {
		t.Errorf("run (-want +got):\n%s", diff)
	}

	// A failed benchmark is recorded, without points; the node's clock alone is no new provenance.
	h.Record(bench("nightly-2", api.PhaseFailed, node1, map[string][]float64{"rocksdb": {50}}), nil, Run{}, 10)
	h.Record(bench("nightly-3", api.PhaseSucceeded, strings.Replace(node1, "2596", "1800", 1), map[string][]float64{"rocksdb": {101}}), nil, Run{}, 10)
	h.Record(bench("nightly-4", api.PhaseSucceeded, strings.Replace(node1, "6.1", "6.2", 1), map[string][]float64{"rocksdb": {99}}), nil, Run{}, 10)
	s := h.Find("rocksdb readrandom threads=4 opsPerSec")
	if diff := cmp.Diff([]float64{100, 101, 99}, s.Values()); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{2}, s.Boundaries()); diff != "" {
		t.Errorf("boundaries (-want +got):\n%s", diff)
	}
	p3, _ := h.RunOf("nightly-3").ProvenanceOf("rocksdb")
	p4, _ := h.RunOf("nightly-4").ProvenanceOf("rocksdb")
	if diff := p3.Diff(p4); len(diff) != 1 || !strings.HasPrefix(diff[0], "node AMD EPYC x 2, kernel 6.1") {
		t.Errorf("diff %q", diff)
	}
	if len(h.Runs) != 4 || !h.Has("nightly-2") {
		t.Errorf("runs %+v", h.Runs)
	}

	// Trimming keeps the newest runs and their points.
	h.Trim(2)
	if len(h.Runs) != 2 || h.Runs[0].Name != "nightly-3" || len(h.Find("rocksdb readrandom threads=4 opsPerSec").Points) != 2 {
		t.Errorf("after trimming: %+v", h)
	}
	if h.Find("rocksdb readrandom threads=4 writeAmplification") != nil {
		t.Errorf("a series without points is kept")
	}
}

// Runner output is tenant input: a workload name that is no name does not become a series.
func TestRecordRejectsBadWorkloadNames(t *testing.T) {
	h := New("s")
	b := bench("s-1", api.PhaseSucceeded, node1, map[string][]float64{"rocksdb": {1}})
	b.Status.Runs[0].Results[0].Workload = "readrandom\"} evil{x=\""
	if d := h.Record(b, nil, Run{}, 10); d != 4 || len(h.Series) != 0 {
		t.Errorf("dropped %d, series %d", d, len(h.Series))
	}
}

func TestMaxSeries(t *testing.T) {
	h := New("s")
	b := bench("s-1", api.PhaseSucceeded, node1, map[string][]float64{"rocksdb": {1}})
	b.Status.Runs[0].Results = nil
	for i := 0; i < MaxSeries/4+10; i++ {
		b.Status.Runs[0].Results = append(b.Status.Runs[0].Results, api.PhaseSummary{Workload: fmt.Sprintf("w%d", i), Threads: 1, OpsPerSec: 1,
			LatencyMicros: &api.Percentiles{P50: 1, P99: 1, P999: 1}})
	}
	if d := h.Record(b, nil, Run{}, 10); d != 40 || len(h.Series) != MaxSeries {
		t.Errorf("dropped %d, series %d", d, len(h.Series))
	}
}

// The size bound, measured: 250 nightly runs of a big sweep (3 engines x 4 workloads x
// 5 thread counts x 6 metrics = 360 series), medians and intervals with 2% noise.
func TestEncodeSize(t *testing.T) {
	h := New("nightly")
	r := rand.New(rand.NewPCG(1, 2))
	index := h.index()
	for run := 0; run < 250; run++ {
		name := fmt.Sprintf("nightly-%d", 29400000+run*1440)
		h.Runs = append(h.Runs, Run{Name: name, Phase: api.PhaseSucceeded, Time: metav1.Unix(int64(run)*86400, 0),
			Provenance: []Provenance{{Run: "rocksdb", ImageDigest: "sha256:" + strings.Repeat("ab", 32), EngineVersion: "rocksdb 7.8.3", Node: node1, Storage: "tmpfs"}}})
		i := 0
		for _, engine := range []string{"rocksdb", "pebble", "leveldb"} {
			for _, w := range []string{"readrandom", "overwrite", "ycsb-a", "readwhilewriting"} {
				for _, threads := range []int32{1, 2, 4, 8, 16} {
					for _, m := range []api.HistoryMetric{api.MetricOpsPerSec, api.MetricP50Micros, api.MetricP99Micros, api.MetricP999Micros, api.MetricWriteAmplification, api.MetricStallPercent} {
						v := 1000 * float64(i+1) * (1 + 0.02*r.NormFloat64())
						p := newPoint{Series: Series{Run: engine, Engine: api.EngineName(engine), Workload: w, Threads: threads, Metric: m},
							Point: Point{Child: name, Median: round(v), CILow: round(v * 0.98), CIHigh: round(v * 1.02), N: 5, Fingerprint: "0123456789ab"}}
						h.add(p, index)
						i++
					}
				}
			}
		}
	}
	b, dropped, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > MaxBytes {
		t.Fatalf("%d bytes, over %d", len(b), MaxBytes)
	}
	t.Logf("250 runs x 360 series: %d runs kept (%d dropped by Encode) in %d bytes, %.1f bytes per point",
		len(h.Runs), dropped, len(b), float64(len(b))/float64(len(h.Runs)*360))
	if dropped == 0 || len(h.Runs) < 100 {
		t.Errorf("kept %d runs of a 360-series history within %d bytes, want at least 100 (the default limit)", len(h.Runs), MaxBytes)
	}
	back, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(h, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestDecodeErrors(t *testing.T) {
	gz := func(s string) []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write([]byte(s))
		zw.Close()
		return buf.Bytes()
	}
	for name, data := range map[string][]byte{
		"not gzip":     []byte("{}"),
		"not json":     gz("nope"),
		"wrong schema": gz(`{"schemaVersion":"kvbench.io/history/v0"}`),
		"too big":      gz(`{"schemaVersion":"` + strings.Repeat("x", maxDecompressed) + `"}`),
	} {
		if _, err := Decode(data); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestFromConfigMap(t *testing.T) {
	s := &api.KVBenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Name: "s", UID: types.UID("u1")}}
	data, _, err := New("s").Encode()
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName("s"),
		OwnerReferences: []metav1.OwnerReference{{UID: "u1", Controller: ptr.To(true), Name: "s"}}}, BinaryData: map[string][]byte{Key: data}}
	if _, err := FromConfigMap(cm, s); err != nil {
		t.Errorf("own ConfigMap: %v", err)
	}
	cm.OwnerReferences[0].UID = "other"
	if _, err := FromConfigMap(cm, s); err == nil {
		t.Errorf("a ConfigMap the schedule does not control was read")
	}
}
