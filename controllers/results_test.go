package controllers

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/controllers/metrics"
	"github.com/kvbench/kvbench-operator/test/envtest"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

// The operator caches of each archived result only what the series read (forMetrics): the series
// built from the cached copy of real runner results are the series built from the whole results.
func TestForMetricsKeepsEverySeries(t *testing.T) {
	for _, file := range []string{"seed-000-prefix-rocksdb.result.json", "seed-000-point-rocksdb.result.json"} {
		data, err := os.ReadFile(filepath.Join(envtest.RepoRoot(), "docs/reproductions/seed-000-evidence", file))
		if err != nil {
			t.Fatal(err)
		}
		var full kvv1.Result
		if err := json.Unmarshal(data, &full); err != nil {
			t.Fatal(err)
		}
		b := w.MakeKVBenchmark("b", "ns").Obj()
		b.Status.Runs = []kvv1.RunStatus{{Name: "rocksdb", Engine: kvv1.EngineRocksDB, Phase: kvv1.RunSucceeded}}
		gather := func(res *kvv1.Result) []byte {
			c, reg := metrics.NewCollector(), prometheus.NewPedanticRegistry()
			if err := c.Register(reg); err != nil {
				t.Fatal(err)
			}
			c.Set(b, map[string]*kvv1.Result{"rocksdb": res})
			if n, err := testutil.GatherAndCount(reg); err != nil || n < 50 {
				t.Fatalf("%s: %d series (%v); the fixture should give many", file, n, err)
			}
			families, err := reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			out, _ := json.Marshal(families)
			return out
		}
		whole := gather(&full)
		cached := forMetrics(&full)
		if !bytes.Equal(gather(cached), whole) {
			t.Fatalf("%s: the series from the cached result differ from the whole result's", file)
		}
		if small, _ := json.Marshal(cached); len(small)*2 > len(data) {
			t.Fatalf("%s: the cached result is %d of %d bytes as JSON: it should keep far less", file, len(small), len(data))
		}
	}
}
