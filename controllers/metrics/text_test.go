package metrics

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// seriesOf lists every series of families as "name{labels} value", sorted.
func seriesOf(families map[string]*dto.MetricFamily) []string {
	var out []string
	for name, mf := range families {
		for _, m := range mf.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			slices.Sort(ls)
			out = append(out, name+"{"+strings.Join(ls, ",")+"} "+strings.TrimSpace(strings.TrimPrefix(m.GetGauge().String(), "value:")))
		}
	}
	slices.Sort(out)
	return out
}

// sameAsGather fails unless c's text, parsed by Prometheus' own parser, has exactly the series a
// registry's Gather of c has, with their help.
func sameAsGather(t *testing.T, c *Collector) int {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	gathered, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*dto.MetricFamily{}
	for _, mf := range gathered {
		want[mf.GetName()] = mf
	}
	var text bytes.Buffer
	if err := c.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	got, err := parser.TextToMetricFamilies(bytes.NewReader(text.Bytes()))
	if err != nil {
		t.Fatalf("the text does not parse: %v\n%.3000s", err, text.String())
	}
	if diff := cmp.Diff(seriesOf(want), seriesOf(got)); diff != "" {
		t.Fatalf("text and Gather differ (-Gather +text):\n%s", diff)
	}
	for name, mf := range want {
		if got[name].GetHelp() != mf.GetHelp() || got[name].GetType() != dto.MetricType_GAUGE {
			t.Errorf("%s: help %q type %v, want %q gauge", name, got[name].GetHelp(), got[name].GetType(), mf.GetHelp())
		}
	}
	return len(seriesOf(want))
}

// The text written straight from the samples is what Gather gives, for real runner results, every
// kind of series (baseline changes, pulse rounds, operations) and label values that need escaping.
func TestWriteTextIsWhatGatherGives(t *testing.T) {
	data, err := os.ReadFile("../../report/testdata/baseline-rocksdb.result.json")
	if err != nil {
		t.Fatal(err)
	}
	var real kvv1.Result
	if err := json.Unmarshal(data, &real); err != nil {
		t.Fatal(err)
	}
	c := NewCollector()
	b := bench()
	b.Status.Baseline = &kvv1.BaselineComparison{Baseline: `base "line"\ 1`, Changes: []kvv1.PointChange{
		{Engine: kvv1.EngineRocksDB, Workload: "readrandom", Threads: 4, Metric: "opsPerSec", Ratio: 0.5, Regressed: true}}}
	c.Set(b, nil)
	other := bench()
	other.Name = "other"
	other.Status.Runs = append(other.Status.Runs, *other.Status.Runs[0].DeepCopy())
	other.Status.Runs[1].Name, other.Status.Runs[1].Engine = "pebble", kvv1.EnginePebble
	pulse := &kvv1.Result{SchemaVersion: kvv1.ResultSchemaVersion, Phases: []kvv1.PhaseResult{{
		PhaseSummary: kvv1.PhaseSummary{Workload: "pulse", Threads: 1, OpsPerSec: 1e-300, Seconds: 1e300,
			Operations: []kvv1.OperationSummary{{Name: "read", OpsPerSec: 3, LatencyMicros: &kvv1.Percentiles{P50: 1, P99: 2, P999: 3, Max: 4}}}},
		PulseRounds: []kvv1.PulseRound{{Round: 1, TotalSeconds: 1, ReadSeconds: 0.5}, {Round: 2, TotalSeconds: 2}}}}}
	c.Set(other, map[string]*kvv1.Result{"rocksdb": &real, "pebble": pulse})
	if n := sameAsGather(t, c); n < 200 {
		t.Fatalf("%d series: the fixtures should give many", n)
	}
}

// Served over HTTP, gzipped when asked for, as Prometheus asks.
func TestServeHTTPGzips(t *testing.T) {
	c := NewCollector()
	c.Set(bench(), nil)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/metrics/results", nil)
	req.Header.Set("Accept-Encoding", "gzip; q=1, identity; q=0.5")
	c.ServeHTTP(rec, req)
	if rec.Code != 200 || rec.Header().Get("Content-Encoding") != "gzip" || rec.Header().Get("Content-Type") != ContentType {
		t.Fatalf("code %d, headers %v", rec.Code, rec.Header())
	}
	zr, err := gzip.NewReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	text, err := io.ReadAll(zr)
	if err != nil || !strings.Contains(string(text), `kvbench_result_ops_per_second{benchmark="b",dataset_bytes="67108864",engine="rocksdb",iteration="0",medium="tmpfs",namespace="ns",node="",phase="1"`) {
		t.Fatalf("%v: %.500s", err, text)
	}
}
