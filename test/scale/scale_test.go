package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/archive"
)

// The simulated termination message is what the operator accepts from a runner.
func TestSummaryTemplateIsARunnerSummary(t *testing.T) {
	tmpl, err := summaryTemplate()
	if err != nil {
		t.Fatal(err)
	}
	var s kvv1.Summary
	if err := json.Unmarshal([]byte(fmt.Sprintf(tmpl, "pebble")), &s); err != nil {
		t.Fatal(err)
	}
	if !kvv1.KnownResultSchema(s.SchemaVersion) || s.Engine != kvv1.EnginePebble || len(s.Phases) != 1 || s.Error != "" {
		t.Fatalf("summary %+v", s)
	}
	if n := len(fmt.Sprintf(tmpl, "leveldb")); n > kvv1.TerminationMessageLimit {
		t.Fatalf("message is %d bytes", n)
	}
}

// Every KWOK stage document is YAML with a kind and a name.
func TestStagesParse(t *testing.T) {
	st, err := stages(30000, 12345)
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(st, "\n---\n")
	if len(docs) != 4 {
		t.Fatalf("%d documents", len(docs))
	}
	for _, d := range docs {
		var m struct {
			Kind     string
			Metadata struct{ Name string }
		}
		if err := yaml.Unmarshal([]byte(d), &m); err != nil || m.Kind != "Stage" || m.Metadata.Name == "" {
			t.Fatalf("document %q: %v", d[:min(80, len(d))], err)
		}
	}
	if !strings.Contains(st, "durationMilliseconds: 30000") || !strings.Contains(st, "Port: 12345") {
		t.Fatal("run time or kubelet port missing")
	}
}

func TestQuantile(t *testing.T) {
	b := func(le float64, n uint64) *dto.Bucket { return &dto.Bucket{UpperBound: &le, CumulativeCount: &n} }
	h := &dto.Histogram{SampleCount: ptr.To[uint64](100), Bucket: []*dto.Bucket{b(0.1, 50), b(1, 90), b(10, 100), b(math.Inf(1), 100)}}
	for q, want := range map[float64]float64{0.5: 0.1, 0.7: 0.55, 0.99: 9.1} {
		if got := quantile(q, h); math.Abs(got-want) > 1e-9 {
			t.Errorf("q%.2f = %v, want %v", q, got, want)
		}
	}
	if got := quantile(0.99, &dto.Histogram{SampleCount: ptr.To[uint64](0)}); !math.IsNaN(got) {
		t.Errorf("empty histogram: %v", got)
	}
}

func TestRangesCheck(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.yaml")
	if err := os.WriteFile(path, []byte("maxSecondsToAllSucceeded: 300\nmaxOperatorRSSMiB: 150\nmaxBenchmarksFailed: 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := loadRanges(path)
	if err != nil {
		t.Fatal(err)
	}
	ok := &figures{SecondsToAllSucceeded: 250, MaxRSSMiB: 100}
	if v := r.check(ok); len(v) != 0 {
		t.Fatalf("in range: %v", v)
	}
	bad := &figures{SecondsToAllSucceeded: -1, MaxRSSMiB: 250, BenchmarksFailed: 2}
	v := r.check(bad)
	want := []string{"secondsToAllSucceeded: never reached (limit 300)", "operatorRSSMiB = 250, limit 150", "benchmarksFailed = 2, limit 0"}
	if strings.Join(v, "|") != strings.Join(want, "|") {
		t.Fatalf("violations %q, want %q", v, want)
	}
	if err := os.WriteFile(path, []byte("maxRSS: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadRanges(path); err == nil {
		t.Fatal("unknown field accepted")
	}
}

func TestRepoRangesLoad(t *testing.T) {
	for _, f := range []string{"ranges-full.yaml", "ranges-small.yaml"} {
		r, err := loadRanges(f)
		if err != nil {
			t.Fatal(err)
		}
		if r.MaxSecondsToAllSucceeded == nil || r.MaxReconcileP99Seconds == nil || r.MaxOperatorRSSMiB == nil || r.MaxReconcileErrors == nil {
			t.Errorf("%s lacks one of the issue's targets", f)
		}
	}
}

// A simulated runner's log is a real runner's: a phase line for the load and each phase, then the
// result line, without the engine (each run's archive takes its own); the whole log by the
// operator's rule (archive.Log.Incomplete).
func TestRunnerLogIsARunnersLog(t *testing.T) {
	file := filepath.Join("..", "..", "docs", "reproductions", "seed-002-10gi-evidence", "seed-002-defaults-rocksdb.result.json")
	log, err := runnerLog(file)
	if err != nil {
		t.Fatal(err)
	}
	got, err := archive.ReadLog(strings.NewReader(log), kvv1.DefaultResultLimits, true)
	if err != nil || got.Over != nil || got.ResultErr != nil || got.Incomplete() != nil {
		t.Fatalf("read: %v, over %v, result %v, not whole: %v", err, got.Over, got.ResultErr, got.Incomplete())
	}
	res := got.Result
	if res.Engine != "" || len(res.Phases) == 0 || len(got.Phases) != len(res.Phases) || (res.Load != nil) != (got.Load != nil) || len(log) < 64<<10 {
		t.Fatalf("engine %q, %d phases, %d phase lines, %d bytes", res.Engine, len(res.Phases), len(got.Phases), len(log))
	}
	for i, p := range got.Phases {
		if p.Index != res.Phases[i].Index {
			t.Fatalf("phase line %d: index %d", i, p.Index)
		}
	}
}

func TestCRILogSplitsLongLines(t *testing.T) {
	long := strings.Repeat("x", 40<<10)
	got := criLog("a\n"+long+"\n", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != 4 || lines[0] != "2026-01-01T00:00:00Z stdout F a" || !strings.HasPrefix(lines[1], "2026-01-01T00:00:00Z stdout P x") ||
		!strings.HasPrefix(lines[3], "2026-01-01T00:00:00Z stdout F x") {
		t.Fatalf("%d lines: %.60q", len(lines), lines)
	}
	var back strings.Builder
	for _, l := range lines[1:] {
		back.WriteString(l[len("2026-01-01T00:00:00Z stdout P "):])
	}
	if back.String() != long {
		t.Fatal("the chunks do not join back into the line")
	}
}

// The hostile tenant's log is over the operator's limits in every way issue 18 names, after the
// real phases: the operator reads it (as it does at the run's end) within its limits and says so.
func TestHostileLogIsOverTheLimits(t *testing.T) {
	file := filepath.Join("..", "..", "docs", "reproductions", "seed-000-evidence", "seed-000-prefix-rocksdb.result.json")
	log, err := hostileLog(file, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) < 32<<20 {
		t.Fatalf("%d bytes: the result line should be about 31 MiB", len(log))
	}
	got, err := archive.ReadLog(strings.NewReader(log), kvv1.DefaultResultLimits, true)
	if err != nil {
		t.Fatal(err)
	}
	over := fmt.Sprint(got.Over)
	for _, want := range []string{"phase line(s) over the limit", "string(s) cut", "phases item(s) over the limit", "numbers no engine reaches"} {
		if !strings.Contains(over, want) {
			t.Errorf("limits left out %q, want it to name %q", over, want)
		}
	}
	// What is kept still reaches status and metrics: duplicate pulse rounds and odd names; the
	// phase of 1e308 is refused (issue 29).
	if r := got.Result; r == nil || len(r.Phases) < 3 || len(r.Phases[0].PulseRounds) != 2 || r.Phases[0].PulseRounds[1].Round != 1 || r.Phases[2].Workload == "x" {
		t.Errorf("the kept result line lacks the duplicate rounds, or kept the phase of 1e308: %.300v", r)
	}
	base, err := runnerLog(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(log, base[:strings.LastIndex(base, kvv1.ResultLogPrefix)]) || got.Phases[0].Workload == "x" {
		t.Errorf("the hostile log does not begin with the real phases (first phase %q)", got.Phases[0].Workload)
	}
}

// Issue 18: both scale targets run the slot path (a slot limit that binds: fewer slots than the
// runs that could start at once), real runner logs and the hostile tenant.
func TestMakeTargetsRunTheSlotPath(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"test-scale", "test-scale-small"} {
		_, recipe, ok := strings.Cut(string(raw), "\n"+target+":")
		if !ok {
			t.Fatalf("no target %s", target)
		}
		recipe, _, _ = strings.Cut(recipe, "\n\n")
		flags := map[string]int{}
		f := strings.Fields(recipe)
		for i := 0; i+1 < len(f); i++ {
			if n, err := strconv.Atoi(f[i+1]); err == nil && strings.HasPrefix(f[i], "--") {
				flags[f[i]] = n
			}
		}
		if !strings.Contains(recipe, "--result $(SCALE_RESULT)") || flags["--hostile"] < 1 || flags["--slots"] < 1 ||
			flags["--slots"] >= flags["--benchmarks"] {
			t.Errorf("%s: want --result, --hostile and a binding --slots (fewer than --benchmarks): %v", target, flags)
		}
	}
}
