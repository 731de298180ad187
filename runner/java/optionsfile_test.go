package java_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/archive"
	"github.com/kvbench/kvbench-operator/controllers/plan"
	"github.com/kvbench/kvbench-operator/runner/bench"
	"github.com/kvbench/kvbench-operator/runner/engine"
	"github.com/kvbench/kvbench-operator/runner/report"
	wrappers "github.com/kvbench/kvbench-operator/test/wrappers"
)

// The user's OPTIONS file, the same text runner/bench's tests give the Go runner.
var userOptions = wrappers.RocksDBUserOptions

func writeFile(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "OPTIONS")
	if err := os.WriteFile(p, []byte(text), 0o444); err != nil {
		t.Fatal(err)
	}
	return p
}

// runConfig runs the Java runner's run entry point on cfg and returns the result line's result.
func runConfig(t *testing.T, java []string, cfg api.RunnerConfig, summaryPath string) (*api.Result, string, int) {
	t.Helper()
	j, _ := json.Marshal(cfg)
	stdout, stderr, code := runJava(t, java, "run", "--config-json="+string(j), "--summary-file="+summaryPath)
	l, err := archive.ReadLog(strings.NewReader(stdout), api.DefaultResultLimits, true)
	if err != nil || l.Result == nil {
		t.Fatalf("no result line (%v); exit %d, stderr:\n%s", err, code, stderr)
	}
	return l.Result, stderr, code
}

// engines[].optionsFrom with rocksjava: the operator passes the mounted file's path; RocksJava's loader
// reads it as the base, the typed option that is set goes over it, and the overridden keys are listed
// exactly as the Go runner (engine rocksdb, the same RocksDB 7.8.3) lists them for the same file and
// options: in provenance and, one line each, in the termination summary.
func TestRocksJavaOptionsFileIsTheBaseAndTypedOptionsOverride(t *testing.T) {
	java := runEntryPoint(t)
	// The operator's config for a rocksjava engine with optionsFrom names the mounted file.
	b := wrappers.MakeKVBenchmark("of", "ns").Engines(api.EngineSpec{Name: api.EngineRocksJava,
		OptionsFrom: &api.OptionsFromSource{ConfigMapKeyRef: api.ConfigMapKeyRef{Name: "prod", Key: "OPTIONS"}}}).Obj()
	if runs := plan.Plan(b); len(runs) != 1 || runs[0].Config.OptionsFile != plan.OptionsDir+"/"+plan.OptionsFileName {
		t.Fatalf("plan: %+v; want one run with the mounted OPTIONS file", runs)
	}
	file := writeFile(t, userOptions)
	cfg := func(name api.EngineName) api.RunnerConfig {
		return api.RunnerConfig{Engine: api.EngineSpec{Name: name, Options: api.EngineOptions{WriteBufferSize: ptr(resource.MustParse("4Mi"))}},
			DBPath: filepath.Join(t.TempDir(), "db"), OptionsFile: file, Threads: []int32{1},
			Dataset:   api.DatasetSpec{Num: ptr[int64](5000), LoadMode: api.LoadNone},
			Workloads: []api.WorkloadSpec{{Name: api.WorkloadFillRandom}, {Name: api.WorkloadReadRandom}}}
	}
	summaryPath := filepath.Join(t.TempDir(), "summary.json")
	res, stderr, code := runConfig(t, java, cfg(api.EngineRocksJava), summaryPath)
	if code != 0 || res.Error != "" || len(res.Phases) != 2 {
		t.Fatalf("exit %d, error %q, %d phases\nstderr:\n%s", code, res.Error, len(res.Phases), stderr)
	}
	p := res.Provenance
	if p == nil || p.OptionsFile == nil {
		t.Fatalf("no effective OPTIONS file in provenance: %+v", p)
	}
	effective := map[string]string{}
	for _, e := range engine.ParseOptionsText(p.OptionsFile.Text) {
		effective[e.Key] = e.Value
	}
	for _, kv := range []string{"DBOptions/max_background_jobs=3", `CFOptions "default"/max_write_buffer_number=5`,
		`CFOptions "default"/level0_file_num_compaction_trigger=7`, `CFOptions "default"/compression=kNoCompression`,
		`TableOptions/BlockBasedTable "default"/block_size=16384`, `CFOptions "default"/write_buffer_size=4194304`} {
		k, v, _ := strings.Cut(kv, "=")
		if effective[k] != v {
			t.Errorf("effective %s = %q, want %q", k, effective[k], v)
		}
	}
	want := []api.OptionOverride{
		{Key: "DBOptions/create_if_missing", File: "false", Effective: "true", By: "runner: every run creates its database on its own volume"},
		{Key: `CFOptions "default"/write_buffer_size`, File: "8388608", Effective: "4194304", By: "engines[].options.writeBufferSize"},
	}
	if !reflect.DeepEqual(p.OptionsOverrides, want) {
		t.Errorf("rocksjava overrides %v\nwant %v", p.OptionsOverrides, want)
	}
	// The Go runner on the same file and options lists the same overrides.
	var out bytes.Buffer
	gres, err := bench.Run(context.Background(), cfg(api.EngineRocksDB), bench.Options{Stdout: &out, Stderr: &out})
	if err != nil {
		t.Fatalf("Go runner: %v\n%s", err, out.String())
	}
	if !reflect.DeepEqual(p.OptionsOverrides, gres.Provenance.OptionsOverrides) {
		t.Errorf("rocksjava overrides %v\nGo runner's %v", p.OptionsOverrides, gres.Provenance.OptionsOverrides)
	}
	data, err := os.ReadFile(summaryPath)
	if err != nil {
		t.Fatal(err)
	}
	var sum api.Summary
	strictDecode(t, data, &sum)
	if sum.Provenance == nil || !reflect.DeepEqual(sum.Provenance.OptionsOverrides, report.OverrideLines(want, api.MaxSummaryOverrides)) {
		t.Errorf("summary provenance %+v; want the override lines %q", sum.Provenance, report.OverrideLines(want, api.MaxSummaryOverrides))
	}
}

// A file RocksDB's loader refuses fails the run before any phase, with the loader's message in the result
// line, its first line as the Go runner's (engine rocksdb, the same RocksDB) for the same file: RocksDB's
// Status string, "Invalid argument: ..."; so do a second column family and the table options the Java
// runner cannot set over a file.
func TestRocksJavaOptionsFileTheLoaderRefusesFailsTheRun(t *testing.T) {
	java := runEntryPoint(t)
	for _, tc := range []struct {
		name string
		file string
		opts api.EngineOptions
		want string
	}{
		{"unknown key", strings.Replace(userOptions, "max_background_jobs=3", "max_backgruond_jobs=3", 1), api.EngineOptions{},
			"rocksdb OPTIONS file %s: Invalid argument: Could not find option: : max_backgruond_jobs"},
		{"bad value", strings.Replace(userOptions, "write_buffer_size=8388608", "write_buffer_size=lots", 1), api.EngineOptions{},
			"rocksdb OPTIONS file %s: Invalid argument: Error parsing write_buffer_size"},
		{"not an OPTIONS file", "write_buffer_size: 64Mi\n", api.EngineOptions{}, "rocksdb OPTIONS file %s: "},
		{"another column family", userOptions + "[CFOptions \"events\"]\n  write_buffer_size=1048576\n", api.EngineOptions{},
			"has column families default, events: the runner benchmarks the default column family only"},
		{"a table option over the file", userOptions, api.EngineOptions{BloomBits: ptr[int32](10)},
			"engine.options bloomBits with an OPTIONS file: the rocksjava runner cannot set BlockBasedTable options"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := writeFile(t, tc.file)
			want := tc.want
			if strings.Contains(want, "%s") {
				want = strings.Replace(want, "%s", file, 1)
			}
			res, stderr, code := runConfig(t, java, api.RunnerConfig{Engine: api.EngineSpec{Name: api.EngineRocksJava, Options: tc.opts},
				DBPath: filepath.Join(t.TempDir(), "db"), OptionsFile: file, Threads: []int32{1},
				Dataset: api.DatasetSpec{Num: ptr[int64](100)}, Workloads: []api.WorkloadSpec{{Name: api.WorkloadReadRandom}}},
				filepath.Join(t.TempDir(), "summary.json"))
			if code != 1 || !strings.Contains(res.Error, want) || len(res.Phases) != 0 {
				t.Errorf("exit %d, error %q, %d phases; want exit 1 and an error with %q\nstderr:\n%s", code, res.Error, len(res.Phases), want, stderr)
			}
			if !strings.HasPrefix(want, "rocksdb OPTIONS file") {
				return
			}
			var out bytes.Buffer
			_, err := bench.Run(context.Background(), api.RunnerConfig{Engine: api.EngineSpec{Name: api.EngineRocksDB},
				DBPath: filepath.Join(t.TempDir(), "db"), OptionsFile: file, Threads: []int32{1},
				Dataset: api.DatasetSpec{Num: ptr[int64](100)}, Workloads: []api.WorkloadSpec{{Name: api.WorkloadReadRandom}}},
				bench.Options{Stdout: &out, Stderr: &out})
			if err == nil {
				t.Fatalf("the Go runner took the file\n%s", out.String())
			}
			goLine, _, _ := strings.Cut(err.Error(), "\n")
			javaLine, _, _ := strings.Cut(res.Error, "\n")
			if javaLine != goLine {
				t.Errorf("first line of the error:\nrocksjava: %s\nGo runner: %s", javaLine, goLine)
			}
		})
	}
}

// The bench CLI's --options_file means what the Go runner's flag means: the file is the base, only the
// engine flags given explicitly go over it (not the flags' defaults), and the keys they override are
// listed in provenance as the Go runner lists them for the same file and flags (--write_buffer_size ->
// engines[].options.writeBufferSize). The table flags are refused with a file, as optionsFile's are.
func TestRocksJavaBenchOptionsFileFlag(t *testing.T) {
	java := javaRunner(t)
	file := writeFile(t, userOptions)
	resultPath := filepath.Join(t.TempDir(), "r.json")
	stdout, stderr, code := runJava(t, java, "--db="+filepath.Join(t.TempDir(), "db"), "--options_file="+file,
		"--write_buffer_size=4194304", "--benchmarks=fillrandom,readrandom", "--num=5000", "--json="+resultPath)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var res api.Result
	decodeFile(t, resultPath, &res)
	p := res.Provenance
	if p == nil || p.OptionsFile == nil || len(res.Phases) != 2 {
		t.Fatalf("%d phases, provenance %+v; want 2 phases and the effective OPTIONS file", len(res.Phases), p)
	}
	effective := map[string]string{}
	for _, e := range engine.ParseOptionsText(p.OptionsFile.Text) {
		effective[e.Key] = e.Value
	}
	// max_write_buffer_number, max_background_jobs, compression: the file's, not the flags' defaults (2, 2, snappy).
	for _, kv := range []string{"DBOptions/max_background_jobs=3", `CFOptions "default"/max_write_buffer_number=5`,
		`CFOptions "default"/compression=kNoCompression`, `CFOptions "default"/write_buffer_size=4194304`,
		`TableOptions/BlockBasedTable "default"/block_size=16384`} {
		k, v, _ := strings.Cut(kv, "=")
		if effective[k] != v {
			t.Errorf("effective %s = %q, want %q", k, effective[k], v)
		}
	}
	// The Go runner's bench --options_file=F --write_buffer_size=4194304 is this config (benchcmd.go sets
	// only the flags given).
	var out bytes.Buffer
	gres, err := bench.Run(context.Background(), api.RunnerConfig{
		Engine: api.EngineSpec{Name: api.EngineRocksDB, Options: api.EngineOptions{WriteBufferSize: resource.NewQuantity(4194304, resource.BinarySI)}},
		DBPath: filepath.Join(t.TempDir(), "db"), OptionsFile: file, Threads: []int32{1},
		Dataset:   api.DatasetSpec{Num: ptr[int64](5000), LoadMode: api.LoadNone},
		Workloads: []api.WorkloadSpec{{Name: api.WorkloadFillRandom}}}, bench.Options{Stdout: &out, Stderr: &out})
	if err != nil {
		t.Fatalf("Go runner: %v\n%s", err, out.String())
	}
	if len(p.OptionsOverrides) != 2 || !reflect.DeepEqual(p.OptionsOverrides, gres.Provenance.OptionsOverrides) {
		t.Errorf("rocksjava --options_file overrides %v\nGo runner's %v", p.OptionsOverrides, gres.Provenance.OptionsOverrides)
	}
	stdout, stderr, code = runJava(t, java, "--db="+filepath.Join(t.TempDir(), "db"), "--options_file="+file, "--bloom_bits=10", "--block_size=8192")
	want := "kvbench-runner-java: error: --block_size, --bloom_bits with --options_file: the rocksjava runner cannot set BlockBasedTable options"
	if code != 1 || !strings.HasPrefix(stderr, want) || stdout != "" {
		t.Errorf("table flags with --options_file: exit %d, stderr %q; want exit 1 and %q", code, stderr, want)
	}
}
