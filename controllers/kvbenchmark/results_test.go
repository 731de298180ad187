package kvbenchmark

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/types"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/controllers/metrics"
	"github.com/kvbench/kvbench-operator/test/envtest"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

// The operator keeps of each archived result only its series (metrics.RunSeries), built once when
// the archive is written or first read: the series it exports from the cache, without reading the
// archive again, are those built from the whole result of a real runner.
func TestCachedSeriesAreTheResultsSeries(t *testing.T) {
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
		b.Status.Runs = []kvv1.RunStatus{{Name: "rocksdb", Engine: kvv1.EngineRocksDB, Phase: kvv1.RunSucceeded,
			FullResult: &kvv1.ResultArchive{ConfigMap: "b-rocksdb-result"}}}
		gather := func(set func(*metrics.Collector)) []byte {
			c, reg := metrics.NewCollector(), prometheus.NewPedanticRegistry()
			if err := c.Register(reg); err != nil {
				t.Fatal(err)
			}
			set(c)
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
		whole := gather(func(c *metrics.Collector) { c.Set(b, map[string]*kvv1.Result{"rocksdb": &full}) })
		// No API reader: archivedSeries must not read the archive the cache has.
		r := &KVBenchmarkReconciler{}
		r.cacheResult(types.NamespacedName{Namespace: "ns", Name: "b-rocksdb-result"}, b, "rocksdb", kvv1.EngineRocksDB, &full)
		if !r.haveArchivedResults(b) {
			t.Fatalf("%s: the cache does not have the result just cached", file)
		}
		cached := gather(func(c *metrics.Collector) { c.SetSeries(b, r.archivedSeries(context.Background(), b)) })
		if !bytes.Equal(cached, whole) {
			t.Fatalf("%s: the series from the cache differ from the whole result's", file)
		}
	}
}
