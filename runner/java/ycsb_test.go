package java_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/archive"
	"github.com/kvbench/kvbench-operator/runner/bench"
	"github.com/kvbench/kvbench-operator/runner/dbbench"
	"github.com/kvbench/kvbench-operator/runner/hist"
)

// ycsbConfig is a RunnerConfig of YCSB records and the given ycsb workloads, for engine.
func ycsbConfig(engine api.EngineName, db string, threads int32, ws ...api.YCSBSpec) api.RunnerConfig {
	cfg := api.RunnerConfig{Engine: api.EngineSpec{Name: engine}, DBPath: db, Threads: []int32{threads},
		Dataset: api.DatasetSpec{Num: ptr(int64(3000)), LoadMode: api.LoadFillSeq,
			YCSB: &api.YCSBRecordSpec{FieldCount: ptr(int32(4)), FieldLength: ptr(int32(50))}}}
	for _, y := range ws {
		cfg.Workloads = append(cfg.Workloads, api.WorkloadSpec{Name: api.WorkloadYCSB, Num: ptr(int64(4000)), YCSB: &y})
	}
	return cfg
}

// runJavaConfig runs the Java runner's run entry point on cfg and returns its result, decoded strictly
// into the Go schema (api.Result: a field the Go side does not know fails).
func runJavaConfig(t *testing.T, cfg api.RunnerConfig) api.Result {
	t.Helper()
	j, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path, summaryPath := filepath.Join(dir, "java.json"), filepath.Join(dir, "summary.json")
	out, stderr, code := runJava(t, runEntryPoint(t), "run", "--config-json="+string(j), "--json="+path, "--summary-file="+summaryPath)
	if code != 0 {
		t.Fatalf("java: exit %d: %s %s", code, stderr, out)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var res api.Result
	strictDecode(t, data, &res)
	// What the operator reads: the log (phase lines and the result line), the termination summary, and
	// db_bench's result lines with YCSB's "(N found)".
	l, err := archive.ReadLog(strings.NewReader(out), api.DefaultResultLimits, true)
	if err != nil || l.Result == nil || l.Result.Error != "" || len(l.Phases) != len(res.Phases) {
		t.Fatalf("log: %v, %d phases of %d\n%s", err, len(l.Phases), len(res.Phases), out)
	}
	sdata, err := os.ReadFile(summaryPath)
	if err != nil {
		t.Fatal(err)
	}
	var sum api.Summary
	strictDecode(t, sdata, &sum)
	parsed := dbbench.Parse(out)
	if len(sum.Phases) != len(res.Phases) || len(parsed) != len(res.Phases)+1 { // + the load
		t.Fatalf("summary %d phases, db_bench lines %d; want %d (+ the load)", len(sum.Phases), len(parsed), len(res.Phases))
	}
	for i, p := range res.Phases {
		if want := fmt.Sprintf("(%d found)", *p.Found); !strings.Contains(out, p.Workload) || !strings.Contains(out, want) {
			t.Errorf("phase %d: no %s line with %s in\n%s", i, p.Workload, want, out)
		}
	}
	return res
}

// ycsbCounts is what one seed determines of a YCSB phase: the operations by YCSB's names, the gets
// that found their record and the engine calls.
func ycsbCounts(p api.PhaseResult) string {
	s := fmt.Sprintf("%s ops=%d", p.Workload, p.Ops)
	if p.Found != nil {
		s += fmt.Sprintf(" found=%d", *p.Found)
	}
	for _, o := range p.Operations {
		s += fmt.Sprintf(" %s=%d", o.Name, o.Ops)
	}
	if p.EngineOps != nil {
		s += fmt.Sprintf(" engine=%+v", *p.EngineOps)
	}
	return s
}

// The Java runner's YCSB letters draw what the Go runner's draw (which ycsb_conformance_test.go holds
// to YCSB core's CoreWorkload): on the same dataset, seed and spec, one thread has the same
// operations per type, the same found count and the same engine calls in every phase; two threads
// (whose ThreadLocalRandom steps depend on the JVM's thread ids, so only the distribution is YCSB's)
// the same operation shares within sampling error. The result is one the Go side reads (schema,
// histograms that decode and hold every transaction).
func TestRocksJavaYCSBDrawsWhatTheGoRunnerDraws(t *testing.T) {
	runEntryPoint(t) // skips without Java
	letters := []api.YCSBSpec{
		{Workload: "A"}, {Workload: "B"}, {Workload: "C"}, {Workload: "D"}, {Workload: "E", MaxScanLength: ptr(int32(20))},
		{Workload: "F"},
		// the spec's overrides: a read share, a distribution, one field read and written, overwrite
		{Workload: "A", ReadWriteRatio: "30:1", RequestDistribution: ptr(api.YCSBDistribution("uniform")),
			ReadAllFields: ptr(false)},
		{Workload: "F", ReadPercent: ptr(int32(20)), WriteAllFields: ptr(true)},
		{Workload: "B", UpdateMode: api.YCSBUpdateOverwrite, RequestDistribution: ptr(api.YCSBDistribution("latest"))},
	}
	for _, threads := range []int32{1, 2} {
		ws := letters
		if threads > 1 {
			// Two threads interleave their inserts in no fixed order: only the letters without inserts.
			ws = slices.DeleteFunc(slices.Clone(letters), func(y api.YCSBSpec) bool { return y.Workload == "D" || y.Workload == "E" })
		}
		t.Run(fmt.Sprintf("threads=%d", threads), func(t *testing.T) {
			dir := t.TempDir()
			jres := runJavaConfig(t, ycsbConfig(api.EngineRocksJava, filepath.Join(dir, "java"), threads, ws...))
			var out bytes.Buffer
			gres, err := bench.Run(context.Background(), ycsbConfig(api.EngineRocksDB, filepath.Join(dir, "go"), threads, ws...),
				bench.Options{Stdout: &out, Stderr: &out})
			if err != nil {
				t.Fatalf("Go runner: %v\n%s", err, out.String())
			}
			if len(jres.Phases) != len(ws) || len(gres.Phases) != len(ws) {
				t.Fatalf("phases: java %d, go %d, want %d", len(jres.Phases), len(gres.Phases), len(ws))
			}
			if jres.Load == nil || jres.Load.Ops != 3000 {
				t.Fatalf("java load: %+v", jres.Load)
			}
			for i, jp := range jres.Phases {
				gp := gres.Phases[i]
				j, g := ycsbCounts(jp), ycsbCounts(gp)
				t.Logf("%s", j)
				if threads == 1 && j != g {
					t.Errorf("phase %d (%+v):\n java %s\n go   %s", i, ws[i], j, g)
				}
				if threads > 1 {
					shares := func(p api.PhaseResult) map[string]float64 {
						m := map[string]float64{}
						for _, o := range p.Operations {
							m[o.Name] = float64(o.Ops) / float64(p.Ops)
						}
						return m
					}
					js, gs := shares(jp), shares(gp)
					for name, share := range gs {
						// 8000 draws: a share's standard deviation is at most 0.56 points; 3 is over 5 of them.
						if d := js[name] - share; d > 0.03 || d < -0.03 || len(js) != len(gs) {
							t.Errorf("phase %d (%+v): %s share java %.3f, go %.3f\n java %s\n go   %s", i, ws[i], name, js[name], share, j, g)
						}
					}
					// Without inserts every record exists: every get finds it.
					if jp.EngineOps == nil || *jp.Found != jp.EngineOps.Gets || jp.Ops != gp.Ops {
						t.Errorf("phase %d: java %s, go %s", i, j, g)
					}
				}
				if !strings.HasPrefix(jp.Workload, "ycsb-") || jp.Found == nil || *jp.Found == 0 && jp.Workload != "ycsb-e" {
					t.Errorf("java phase %d: %s", i, j)
				}
				h, err := hist.Decode(jp.LatencyHistogram)
				if err != nil {
					t.Fatal(err)
				}
				if h.Count() != jp.Ops || jp.Ops != int64(threads)*4000 {
					t.Errorf("java phase %d: histogram holds %d of %d transactions", i, h.Count(), jp.Ops)
				}
			}
		})
	}
}

// Without --add-opens (a JVM started otherwise than by the image's entrypoint) YCSB's generators cannot be
// seeded: the config is refused before the load, with what to add.
func TestRocksJavaYCSBNeedsAddOpens(t *testing.T) {
	java := slices.DeleteFunc(runEntryPoint(t), func(a string) bool { return a == javaAddOpens })
	j, err := json.Marshal(ycsbConfig(api.EngineRocksJava, filepath.Join(t.TempDir(), "db"), 1, api.YCSBSpec{Workload: "A"}))
	if err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runJava(t, java, "run", "--config-json="+string(j))
	l, err := archive.ReadLog(strings.NewReader(out), api.DefaultResultLimits, true)
	want := "config: workloads[ycsb]: cannot seed ThreadLocalRandom for YCSB's generators: run the JVM with --add-opens=java.base/java.lang=ALL-UNNAMED"
	if code != 1 || err != nil || l.Result == nil || !strings.Contains(l.Result.Error, want) || l.Load != nil {
		t.Errorf("exit %d, result %+v (%v), stderr %q; want exit 1 before the load with %q", code, l.Result, err, stderr, want)
	}
}
