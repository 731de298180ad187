package schedule

import (
	"encoding/json"
	"io"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/history"
)

// FuzzHistory: the history ConfigMap is tenant-writable (its owner reference proves only who made
// it), and kubectl kvbench history -f reads files: any document decodes, prints, is checked for
// change points and exported as metrics without panicking or making the scrape fail.
func FuzzHistory(f *testing.F) {
	h := history.New("s")
	for i, v := range []float64{100, 101, 99, 100, 102, 98, 100, 50, 51, 49} {
		b := &api.KVBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "s-" + string(rune('a'+i))}}
		b.Status.Phase = api.PhaseSucceeded
		b.Status.Runs = []api.RunStatus{{Name: "rocksdb", Engine: api.EngineRocksDB, Phase: api.RunSucceeded,
			Results: []api.PhaseSummary{{Workload: "readrandom", Threads: 1, OpsPerSec: v, LatencyMicros: &api.Percentiles{P99: 1000 / v}}}}}
		h.Record(b, nil, history.Run{Generation: int64(1 + i/7)}, 100)
	}
	seed, _ := json.Marshal(history.View{History: h, ChangePoints: []api.ScheduleChangePoint{{Series: "rocksdb readrandom threads=1 opsPerSec", Child: "s-h"}}})
	f.Add(seed)
	f.Add([]byte(`{"history":{"schemaVersion":"kvbench.io/history/v1","series":[{"run":"rocksdb","points":[{"c":"x","v":1e308},{"c":"x","v":-1e308},{"c":"y","v":0}]}],"acks":[{"child":"x"}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var v history.View
		if json.Unmarshal(data, &v) != nil || v.History == nil {
			return
		}
		_ = v.WriteTable(io.Discard)
		_ = v.WriteCSV(io.Discard)
		s := &api.KVBenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s"}}
		s.Status.ChangePoints = v.ChangePoints
		for _, confirm := range []api.ConfirmPolicy{api.ConfirmNone, api.ConfirmRerun} {
			s.Spec.Detection.Confirm = confirm
			for _, se := range v.History.Series {
				if len(se.Points) > 0 {
					detect(v.History, se.Points[len(se.Points)-1].Child, s, metav1.Now()) // as after a recorded run
				}
			}
		}
		c := NewCollector()
		c.Set(s, v.History)
		reg := prometheus.NewPedanticRegistry()
		if err := reg.Register(c); err != nil {
			t.Fatal(err)
		}
		if _, err := reg.Gather(); err != nil {
			t.Fatalf("the scrape fails: %v", err)
		}
		if _, _, err := v.History.Encode(); err != nil {
			t.Fatal(err)
		}
	})
}
