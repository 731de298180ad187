package java_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/runner/livemetrics"
)

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func parseMetrics(t *testing.T, text string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("not Prometheus's text format: %v\n%s", err, text)
	}
	return fams
}

// shape is a family's name, type, help and each sample's label names and values, sorted.
func shape(fams map[string]*dto.MetricFamily) []string {
	var out []string
	for name, f := range fams {
		for _, m := range f.Metric {
			var ls []string
			for _, l := range m.Label {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			sort.Strings(ls)
			out = append(out, name+" "+f.GetType().String()+" "+f.GetHelp()+" {"+strings.Join(ls, ",")+"}")
		}
	}
	sort.Strings(out)
	return out
}

func value(f *dto.MetricFamily, labels map[string]string) (float64, bool) {
	if f == nil {
		return 0, false
	}
	for _, m := range f.Metric {
		ok := true
		for _, l := range m.Label {
			if want, has := labels[l.GetName()]; has && want != l.GetValue() {
				ok = false
			}
		}
		if ok {
			if m.Counter != nil {
				return m.Counter.GetValue(), true
			}
			return m.Gauge.GetValue(), true
		}
	}
	return 0, false
}

// --metrics-addr: while a rocksjava run works, /metrics serves the Go runner's live series (the same
// names, types, help and labels as runner/livemetrics after the same phases, checked by parsing both),
// with the running phase in kvbench_runner_phase_info and each finished phase's operations and ops/s;
// a taken port fails the run at once with the listener's error in the result line.
func TestRocksJavaRunnerServesLiveMetrics(t *testing.T) {
	java := runEntryPoint(t)
	port := freePort(t)
	cfg := api.RunnerConfig{Engine: api.EngineSpec{Name: api.EngineRocksJava}, DBPath: t.TempDir() + "/db", Threads: []int32{1},
		Dataset: api.DatasetSpec{Num: ptr[int64](2000), LoadMode: api.LoadNone},
		Workloads: []api.WorkloadSpec{{Name: api.WorkloadFillRandom, Num: ptr[int64](2000)},
			{Name: api.WorkloadReadRandom, Duration: &metav1.Duration{Duration: 4 * time.Second}}}}
	j, _ := json.Marshal(cfg)
	cmd := exec.Command("java", append(slices.Clone(java), "run", "--config-json="+string(j), "--summary-file=-",
		"--metrics-addr=127.0.0.1:"+strconv.Itoa(port))...)
	cmd.Env = append(cmd.Environ(), api.EnvNamespace+"=ns", api.EnvBenchmark+"=bm")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	// Scrape until readrandom runs (fillrandom finished).
	var text string
	deadline := time.Now().Add(60 * time.Second)
	for ; time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(port) + "/metrics")
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 && strings.Contains(string(b), `workload="readrandom"`) {
			text = string(b)
			break
		}
	}
	if text == "" {
		t.Fatalf("no scrape showed readrandom running\nstderr:\n%s", stderr.String())
	}
	fams := parseMetrics(t, text)
	run := map[string]string{"engine": "rocksjava", "namespace": "ns", "benchmark": "bm"}
	with := func(extra map[string]string) map[string]string {
		l := map[string]string{}
		for k, v := range run {
			l[k] = v
		}
		for k, v := range extra {
			l[k] = v
		}
		return l
	}
	if v, ok := value(fams["kvbench_runner_phase_info"], with(map[string]string{"workload": "readrandom", "threads": "1", "iteration": "0"})); !ok || v != 1 {
		t.Errorf("phase_info for readrandom: %v %v\n%s", v, ok, text)
	}
	if v, ok := value(fams["kvbench_runner_operations_total"], with(map[string]string{"workload": "fillrandom", "threads": "1"})); !ok || v != 2000 {
		t.Errorf("operations_total for fillrandom = %v (%v), want 2000\n%s", v, ok, text)
	}
	if v, ok := value(fams["kvbench_runner_ops_per_second"], with(map[string]string{"workload": "fillrandom", "threads": "1"})); !ok || v <= 0 {
		t.Errorf("ops_per_second for fillrandom = %v (%v)\n%s", v, ok, text)
	}
	if v, ok := value(fams["kvbench_runner_phases_completed_total"], run); !ok || v != 1 {
		t.Errorf("phases_completed_total = %v (%v), want 1\n%s", v, ok, text)
	}
	// The Go runner's series after the same events, through its own registry and encoder.
	t.Setenv(api.EnvNamespace, "ns")
	t.Setenv(api.EnvBenchmark, "bm")
	m := livemetrics.New(livemetrics.RunLabels(api.EngineRocksJava))
	m.PhaseStarted("fillrandom", 1, 0)
	m.PhaseFinished(&api.PhaseResult{PhaseSummary: api.PhaseSummary{Workload: "fillrandom", Threads: 1, Ops: 2000, OpsPerSec: 1}})
	m.IntervalP99("fillrandom", 1, 10)
	m.PhaseStarted("readrandom", 1, 0)
	goPort := freePort(t)
	stop, err := m.Serve("127.0.0.1:" + strconv.Itoa(goPort))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(goPort) + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	gb, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if g, j := shape(parseMetrics(t, string(gb))), shape(fams); !slices.Equal(g, j) {
		t.Errorf("series differ\nGo runner:\n%s\nJava runner:\n%s", strings.Join(g, "\n"), strings.Join(j, "\n"))
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}

	// A taken port: the run fails at once, saying why, in the result line.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	out, errText, code := runJava(t, java, "run", "--config-json="+string(j), "--metrics-addr="+ln.Addr().String())
	if code != 1 || !strings.Contains(out, `"error":"metrics: `) || !strings.Contains(errText, "kvbench-runner-java: error: metrics: ") {
		t.Errorf("taken port: exit %d, stdout %q, stderr %q", code, out, errText)
	}
}
