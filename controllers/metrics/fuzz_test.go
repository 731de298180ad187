package metrics

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/archive"
)

// FuzzGather: whatever result the bounded decoder accepts from a runner, as a full result and as
// the summaries in status, the registry's Gather succeeds (issue 18: duplicate pulse round numbers
// made it fail, and /metrics answered 500 for every tenant), and the text served on
// /metrics/results parses to the same series.
func FuzzGather(f *testing.F) {
	if real, err := os.ReadFile("../../report/testdata/baseline-rocksdb.result.json"); err == nil {
		f.Add(real)
	}
	f.Add([]byte(`{"schemaVersion":"kvbench.io/result/v2","phases":[{"workload":"pulse","threads":1,"pulseRounds":[{"round":1},{"round":1}]},` +
		`{"workload":"ycsb-a","opsPerSec":1e308,"mbPerSec":1e308,"operations":[{"name":"read"},{"name":"read"},{"name":"r e a d"}]},{"index":1,"workload":""},{"workload":"x\u0000"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var res kvv1.Result
		if archive.NewDecoder(kvv1.DefaultResultLimits).Decode(bytes.NewReader(data), &res) != nil {
			return
		}
		b := bench()
		b.Status.Runs = append(b.Status.Runs, *b.Status.Runs[0].DeepCopy())
		b.Status.Runs[1].Name = "rocksdb@n1"
		b.Status.Runs[1].Results = nil
		for _, p := range res.Phases {
			b.Status.Runs[1].Results = append(b.Status.Runs[1].Results, p.PhaseSummary)
		}
		c := NewCollector()
		reg := prometheus.NewPedanticRegistry()
		if err := c.Register(reg); err != nil {
			t.Fatal(err)
		}
		c.Set(b, map[string]*kvv1.Result{"rocksdb": &res})
		if _, err := reg.Gather(); err != nil {
			raw, _ := json.Marshal(&res)
			t.Fatalf("gather: %v\nresult: %.2000s", err, raw)
		}
		sameAsGather(t, c)
	})
}
