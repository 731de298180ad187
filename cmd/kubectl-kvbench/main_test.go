package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// testdata holds a saved benchmark of real runs (kvbench-runner, 200000 keys, tmpfs): the
// KVBenchmarks with their status as the operator writes it, and the runners' full results in
// the layout `save` writes.
const testdata = "../../report/testdata"

func td(name string) string { return filepath.Join(testdata, name) }

// kvbench runs the command line and returns stdout, stderr and the exit code.
func kvbench(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	return stdout.String(), stderr.String(), code
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := kvbench(t, args...)
	if code != 0 || errOut != "" {
		t.Fatalf("%v: exit %d, stderr %q", args, code, errOut)
	}
	return out
}

func contains(t *testing.T, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("no %q in\n%s", w, got)
		}
	}
}

func TestReportSavedBenchmark(t *testing.T) {
	out := mustRun(t, "report", "-f", td("baseline.yaml"))
	contains(t, out,
		"KVBenchmark default/baseline: leveldb,rocksdb, 200000 keys of 16+65.5 bytes, tmpfs, memory 1Gi, Succeeded\n",
		"Workload    Threads  leveldb ops/s  leveldb p99 (us)  rocksdb ops/s  rocksdb p99 (us)\n",
		"readrandom        1         247289              17.5         206721              16.1\n",
		// The results next to the YAML are attached: the YCSB breakdown and the pulse rounds.
		"leveldb  ycsb-a        1       1:1  134342       3.38       11.3        41.4  135112       4.04       8.09        41.1\n",
		"rocksdb  ycsb-c        4       1:0  314075       12.7       12.6        2372       -          -          -           -\n",
		"thread number  leveldb time cost in seconds  rocksdb time cost in seconds\n",
		"            1                  0.0473~0.131                  0.0866~0.138\n",
	)
}

// The db_bench lines reproduce what the runner printed while it ran (runner/report.Line).
func TestReportDBBench(t *testing.T) {
	out := mustRun(t, "report", "-f", td("baseline.yaml"), "--table", "dbbench")
	contains(t, out,
		"# rocksdb (rocksdb 7.8.3), threads=1\n"+
			"readrandom   :       4.837 micros/op 206720 ops/sec 1.000 seconds 206805 operations;   16.1 MB/s (206805 of 206805 found)\n",
		"# leveldb (leveldb 1.23), load, threads=1\n"+
			"load         :       1.399 micros/op 714488 ops/sec 0.280 seconds 200000 operations;   55.5 MB/s\n",
	)
}

func TestReportDirectoryMarkdown(t *testing.T) {
	out := mustRun(t, "report", "-f", testdata, "--table", "ycsb", "--format", "markdown")
	contains(t, out,
		"### KVBenchmark default/baseline: ",
		"### KVBenchmark default/bloom: ",
		"| Engine | Case | Threads | RW Ratio | R-QPS | R-AVG-Lat | R-P99-Lat | R-P999-Lat | W-QPS | W-AVG-Lat | W-P99-Lat | W-P999-Lat |\n",
		"| leveldb | ycsb-a | 1 | 1:1 | 134342 | 3.38 | 11.3 | 41.4 | 135112 | 4.04 | 8.09 | 41.1 |\n",
	)
	if n := strings.Count(out, "### KVBenchmark"); n != 2 {
		t.Errorf("%d benchmarks, want 2 (each once)", n)
	}
}

// Without the result files only the status summaries are left, trimmed to 4 KiB by the runner.
func TestReportStatusOnly(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, td("baseline.yaml"), filepath.Join(dir, "baseline.yaml"))
	out := mustRun(t, "report", "-f", filepath.Join(dir, "baseline.yaml"), "--table", "auto")
	contains(t, out,
		"thread number  leveldb mean round seconds  rocksdb mean round seconds\n",
		"leveldb  ycsb-a        1       1:1       -          -          -           -      -          -          -           -\n",
		"leveldb  ycsb-c        1       1:0  469299       2.13       8.05        26.4      -          -          -           -\n",
		"some status summaries lack the per-operation breakdown",
	)
}

// A bare result is a one-run benchmark named after its file.
func TestReportResultFile(t *testing.T) {
	out := mustRun(t, "report", "-f", td("baseline-rocksdb.result.json"), "--table", "threads")
	contains(t, out, "KVBenchmark "+td("baseline-rocksdb")+": rocksdb, 200000 keys of 16+65.5 bytes\n",
		"readrandom        1         206721              16.1\n")
}

// A bare result of YCSB B at readWriteRatio 30:1 (kvbench-runner bench --engine=pebble --benchmarks=ycsb
// --ycsb_workload=B --ycsb_read_write_ratio=30:1 --num=2000 --load=fillseq): its RW Ratio is the 30:1 the
// result recorded, not the sampled share rounded to a percent (1934 reads : 66 updates, shown as 97:3
// before the result recorded the mix).
func TestReportResultFileShowsTheConfiguredRatio(t *testing.T) {
	out := mustRun(t, "report", "-f", filepath.Join("testdata", "ycsb-b-30to1-pebble.result.json"), "--table", "ycsb")
	contains(t, out, "pebble  ycsb-b        1      30:1  ")
}

// Multi-document YAML, lists and JSON.
func TestReportDocumentKinds(t *testing.T) {
	base, err := os.ReadFile(td("baseline.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	bloom, err := os.ReadFile(td("bloom.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	indent := func(b []byte) string { return "  " + strings.ReplaceAll(strings.TrimSpace(string(b)), "\n", "\n  ") }
	list := "# kubectl get kvb -o yaml\napiVersion: v1\nkind: List\nitems:\n-" + indent(base)[1:] + "\n"
	multi := "---\n# comment only\n---\n" + string(bloom) + "---\n" + list
	writeFile(t, filepath.Join(dir, "multi.yaml"), multi)
	out := mustRun(t, "report", "-f", filepath.Join(dir, "multi.yaml"), "--table", "threads")
	if strings.Count(out, "KVBenchmark default/bloom") != 1 || strings.Count(out, "KVBenchmark default/baseline") != 1 {
		t.Errorf("want bloom and baseline once each:\n%s", out)
	}
	// JSON: a KVBenchmarkList.
	writeFile(t, filepath.Join(dir, "list.json"), `{"apiVersion":"kvbench.io/v1alpha1","kind":"KVBenchmarkList","items":[`+
		`{"apiVersion":"kvbench.io/v1alpha1","kind":"KVBenchmark","metadata":{"name":"x"},"spec":{"engines":[{"name":"pebble"}]},`+
		`"status":{"runs":[{"name":"pebble","engine":"pebble","phase":"Succeeded","results":[{"workload":"readseq","threads":1,"ops":5,"seconds":1,"opsPerSec":5,"microsPerOp":200000}]}]}}]}`)
	out = mustRun(t, "report", "-f", filepath.Join(dir, "list.json"), "--table", "threads")
	contains(t, out, "KVBenchmark x: pebble\n", "readseq         1             5                -\n")
}

// Results attach to the benchmark of the same name in their own directory only.
func TestResultsStayInTheirDirectory(t *testing.T) {
	full, statusOnly := filepath.Join(t.TempDir(), "full"), filepath.Join(t.TempDir(), "status")
	for _, d := range []string{full, statusOnly} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		copyFile(t, td("baseline.yaml"), filepath.Join(d, "baseline.yaml"))
	}
	for _, run := range []string{"leveldb", "rocksdb"} {
		copyFile(t, td("baseline-"+run+".result.json"), filepath.Join(full, "baseline-"+run+".result.json"))
	}
	out := mustRun(t, "compare", "-f", statusOnly, "-f", full, "--by-phase")
	if n := strings.Count(out, "\n"); n != 27 { // title, header, 24 phases, the legend: all matched
		t.Errorf("%d lines:\n%s", n, out)
	}
	out = mustRun(t, "report", "-f", statusOnly, "-f", full, "--table", "pulse")
	first, second, _ := strings.Cut(out, "\n\nKVBenchmark")
	contains(t, first, "leveldb mean round seconds")
	contains(t, second, "leveldb time cost in seconds")
}

func TestCompareFiles(t *testing.T) {
	out := mustRun(t, "compare", "-f", td("baseline.yaml"), "-f", td("bloom.yaml"), "--by-phase")
	contains(t, out,
		"Comparison: A (old) = default/baseline ("+td("baseline.yaml")+"), B (new) = default/bloom ("+td("bloom.yaml")+")\n",
		"Run      Workload    Threads  ops/s A  ops/s B  change  p99 A (us)  p99 B (us)   change\n",
		"rocksdb  readrandom        1   206721   195490   -5.4%        16.1        13.3   -17.3%\n",
	)
	md := mustRun(t, "compare", "-f", td("baseline.yaml"), "-f", td("bloom.yaml"), "--format", "markdown", "--by-phase")
	contains(t, md, "| rocksdb | readrandom | 1 | 206721 | 195490 | -5.4% | 16.1 | 13.3 | -17.3% |\n")
	// Two bare results of different engines compare engine against engine.
	out = mustRun(t, "compare", "-f", td("baseline-leveldb.result.json"), "-f", td("baseline-rocksdb.result.json"), "--by-phase")
	contains(t, out, "leveldb vs rocksdb  readrandom        2   395516   199836  -49.5%        7.71        18.0  +133.3%\n")

	// Statistics: one repeat a side can never be a significant difference, so the gate has no
	// verdict (exit 3, never the 0 of "no regression"); the changes are shown with their size.
	out, errOut, code := kvbench(t, "compare", "-f", td("baseline.yaml"), "-f", td("bloom.yaml"), "--fail-on-regression")
	if code != exitNoVerdict || !strings.HasPrefix(errOut, "default/bloom against default/baseline: no verdict: too few repeats in 22 of 22 point(s) (n=1+1): the U test needs at least 4 repeats a side") {
		t.Errorf("one repeat a side: exit %d, stderr %q", code, errOut)
	}
	contains(t, out,
		"A (old) = default/baseline ("+td("baseline.yaml")+"), B (new) = default/bloom ("+td("bloom.yaml")+")\n\nops/s: A = default/baseline, B = default/bloom\n",
		"Run      Workload    Threads       A       B  delta               p    n\n",
		"rocksdb  readrandom        1  206721  195490  -5.43% no verdict   -  1+1\n",
		"p99.9 (us): A = default/baseline, B = default/bloom\n",
		"  no verdict: too few repeats in 22 of 22 point(s) (n=1+1): the U test needs at least 4 repeats a side to find a difference at alpha 0.05 (spec.repeat: 4 or more); largest change: rocksdb ycsb-c threads=1 p99.9 (us) +4144.44% (n=1+1)\n",
	)
	if _, _, code := kvbench(t, "compare", "-f", td("baseline.yaml"), "-f", td("bloom.yaml")); code != 0 {
		t.Errorf("without --fail-on-regression no verdict is no failure: exit %d", code)
	}
	md = mustRun(t, "compare", "-f", td("baseline.yaml"), "-f", td("bloom.yaml"), "--format", "markdown")
	contains(t, md, "#### ops/s: A = default/baseline, B = default/bloom\n", "| rocksdb | readrandom | 1 | 206721 | 195490 | -5.43% no verdict | - | 1+1 |\n")
	// --metrics keeps one table.
	out = mustRun(t, "compare", "-f", td("baseline.yaml"), "-f", td("bloom.yaml"), "--metrics", "p99")
	if _, rest, _ := strings.Cut(out, "\n\n"); !strings.HasPrefix(rest, "p99 (us): A = default/baseline") || strings.Contains(out, "ops/s: ") {
		t.Errorf("--metrics p99:\n%s", out)
	}
	js := mustRun(t, "compare", "-f", td("baseline.yaml"), "-f", td("bloom.yaml"), "--format", "json")
	var got struct {
		Regressed    bool
		Outcome      string
		AFrom, BFrom string
		Changes      []struct {
			Run, Workload, Metric string
			Threads               int32
			Old, New              struct{ Median float64 }
		}
	}
	if err := json.Unmarshal([]byte(js), &got); err != nil {
		t.Fatalf("json: %v\n%s", err, js)
	}
	if got.Outcome != "NoVerdict" || got.AFrom != td("baseline.yaml") || got.BFrom != td("bloom.yaml") {
		t.Errorf("json: outcome %q, from %q and %q", got.Outcome, got.AFrom, got.BFrom)
	}
	if got.Regressed || len(got.Changes) != 4*22 || got.Changes[0].Metric != "opsPerSec" || got.Changes[0].Old.Median == 0 {
		t.Errorf("json: regressed %v, %d changes, first %+v", got.Regressed, len(got.Changes), got.Changes[0])
	}
}

func TestPlotCommand(t *testing.T) {
	dir := t.TempDir()
	for _, kind := range []string{"threads", "latency", "pulse", "timeseries"} {
		for _, ext := range []string{"png", "svg"} {
			path := filepath.Join(dir, kind+"."+ext)
			out := mustRun(t, "plot", "-f", td("baseline.yaml"), "--kind", kind, "-o", path)
			if out != "wrote "+path+"\n" {
				t.Errorf("stdout %q", out)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if ext == "svg" {
				if !bytes.Contains(data[:200], []byte("<svg")) {
					t.Errorf("%s: no svg element at the start", path)
				}
				continue
			}
			img, err := png.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if b := img.Bounds(); b.Dx() != 960 || b.Dy() != 576 {
				t.Errorf("%s: %v", path, b)
			}
		}
	}
	path := filepath.Join(dir, "ycsb-a.svg")
	mustRun(t, "plot", "-f", testdata, "--kind", "timeseries", "--workload", "ycsb-a", "-o", path)
	svg, _ := os.ReadFile(path)
	contains(t, string(svg), "baseline: rocksdb ycsb-a t=4", "bloom: leveldb ycsb-a t=1")
}

// Every error is one line on stderr and exit code 1, with nothing on stdout.
func TestErrors(t *testing.T) {
	dir := t.TempDir()
	statusOnly := filepath.Join(dir, "baseline.yaml")
	copyFile(t, td("baseline.yaml"), statusOnly)
	writeFile(t, filepath.Join(dir, "pod.yaml"), "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n")
	writeFile(t, filepath.Join(dir, "v9.json"), `{"schemaVersion":"kvbench.io/result/v9","engine":"rocksdb"}`)
	writeFile(t, filepath.Join(dir, "garbage.yaml"), "{{{ not yaml")
	writeFile(t, filepath.Join(dir, "new.yaml"), "apiVersion: kvbench.io/v1alpha1\nkind: KVBenchmark\nmetadata:\n  name: new\nspec:\n  engines: [{name: rocksdb}]\n")
	writeFile(t, filepath.Join(dir, "old.yaml"), "apiVersion: kvbench.io/v1beta9\nkind: KVBenchmark\nmetadata:\n  name: old\n")
	mixed := filepath.Join(dir, "mixed")
	if err := os.Mkdir(mixed, 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, td("baseline.yaml"), filepath.Join(mixed, "baseline.yaml"))
	copyFile(t, td("baseline-rocksdb.result.json"), filepath.Join(mixed, "baseline-leveldb.result.json"))
	png := filepath.Join(dir, "x.png")
	other, _ := os.ReadFile(td("bloom.yaml"))
	other = []byte(strings.Replace(strings.Replace(strings.Replace(string(other), "seed: 7", "seed: 8", 1), "name: bloom", "name: other-seed", 1), "duration: 1s", "duration: 2s", 1))
	writeFile(t, filepath.Join(dir, "other-seed.yaml"), string(other))

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report"}, "name a KVBenchmark or give -f FILE"},
		{[]string{"report", "-f", filepath.Join(dir, "missing.yaml")}, "stat " + filepath.Join(dir, "missing.yaml") + ": no such file or directory"},
		{[]string{"report", "-f", statusOnly, "--table", "pegasus"}, `unknown --table "pegasus" (one of auto, dbbench, ycsb, pulse, threads)`},
		{[]string{"report", "-f", statusOnly, "--format", "html"}, `unknown --format "html" (one of text, markdown, tsv, json)`},
		{[]string{"report", "-f", filepath.Join(dir, "pod.yaml")}, filepath.Join(dir, "pod.yaml") + `: not a KVBenchmark, KVBenchmarkList or runner result (kind "Pod")`},
		{[]string{"report", "-f", filepath.Join(dir, "v9.json")}, filepath.Join(dir, "v9.json") + `: runner result schema "kvbench.io/result/v9" is not supported (this kubectl-kvbench reads kvbench.io/result/v2)`},
		{[]string{"report", "-f", filepath.Join(dir, "garbage.yaml")}, filepath.Join(dir, "garbage.yaml") + ": "},
		{[]string{"report", "-f", filepath.Join(dir, "new.yaml")}, "new has no results (phase Pending)"},
		{[]string{"report", "-f", filepath.Join(dir, "old.yaml")}, filepath.Join(dir, "old.yaml") + `: KVBenchmark of apiVersion "kvbench.io/v1beta9", want kvbench.io/v1alpha1`},
		{[]string{"report", "-f", mixed}, filepath.Join(mixed, "baseline-leveldb.result.json") + ": a rocksdb result, but run leveldb of baseline is leveldb"},
		{[]string{"report", "-f", statusOnly, "--table", "pulse", "-f", filepath.Join(dir, "new.yaml")}, "new has no results (phase Pending)"},
		{[]string{"report", "--kubeconfig", filepath.Join(dir, "no-kubeconfig"), "demo"}, "kubeconfig: stat " + filepath.Join(dir, "no-kubeconfig") + ": no such file or directory"},
		{[]string{"compare", "-f", td("baseline-rocksdb.result.json")}, td("baseline-rocksdb") + " has one run (rocksdb): compare needs two benchmarks, or one with two engines or more"},
		{[]string{"compare", "-f", statusOnly, "-f", td("bloom.yaml"), "-f", td("baseline-rocksdb.result.json")}, "compare needs two benchmarks (old, then new), or one to compare its engines; got 3"},
		{[]string{"compare", "-f", statusOnly, "-f", td("bloom.yaml"), "--engines", "leveldb,rocksdb"}, "--engines compares the runs of one benchmark, not of two"},
		{[]string{"compare", "-f", statusOnly, "--engines", "leveldb,pebble"}, `--engines: default/baseline has no run "pebble" (its runs: leveldb, rocksdb)`},
		{[]string{"compare", "-f", statusOnly, "--engines", "leveldb"}, "--engines wants two runs, A then B, e.g. --engines leveldb,rocksdb"},
		{[]string{"compare", "--old", statusOnly, "--new", td("bloom.yaml"), "demo"}, "--old and --new name both benchmarks; drop the other names and -f files"},
		{[]string{"compare", "-f", statusOnly, "-f", filepath.Join(dir, "other-seed.yaml"), "--fail-on-regression"}, "default/baseline and default/other-seed are not comparable (dataset.seed: 7 vs 8; workload readrandom.duration: 1s vs 2s): no gate on a pair spec.baseline would refuse"},
		{[]string{"compare", "-f", statusOnly, "--threshold", "5x"}, `--threshold: threshold "5x": want a percentage between 0 and 100, e.g. 5%`},
		{[]string{"compare", "-f", statusOnly, "--format", "csv"}, `unknown --format "csv" (one of text, markdown, json)`},
		{[]string{"compare", "-f", statusOnly, "--metrics", "ops,p95"}, `--metrics: unknown metric "p95" (ops, p50, p99, p999)`},
		{[]string{"compare", "-f", statusOnly, "--alpha", "0"}, `--alpha 0: want a significance level between 0 and 1, e.g. 0.05`},
		{[]string{"compare", "-f", statusOnly, "-f", filepath.Join(dir, "new.yaml")}, "new has no results"},
		{[]string{"plot", "-f", statusOnly, "--kind", "histogram", "-o", png}, `unknown --kind "histogram" (one of threads, latency, pulse, timeseries)`},
		{[]string{"plot", "-f", statusOnly, "-o", filepath.Join(dir, "x.pdf")}, `unknown plot file extension ".pdf" in ` + filepath.Join(dir, "x.pdf") + ": use .png or .svg"},
		{[]string{"plot", "-f", statusOnly}, "plot needs -o FILE.png or -o FILE.svg"},
		{[]string{"plot", "-f", statusOnly, "--kind", "timeseries", "-o", png}, "baseline: no time series: timeseries needs the runners' full results"},
		{[]string{"plot", "-f", statusOnly, "--workload", "fillseq", "-o", png}, "baseline: no fillseq phases to plot"},
		{[]string{"save", "demo"}, "save needs -d DIR"},
		{[]string{"frobnicate"}, `unknown command "frobnicate" for "kubectl kvbench"`},
	} {
		out, errOut, code := kvbench(t, c.args...)
		if code != 1 || out != "" {
			t.Errorf("%v: exit %d, stdout %q", c.args, code, out)
		}
		if !strings.HasPrefix(errOut, "error: "+c.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v:\ngot  %q\nwant one line starting %q", c.args, errOut, "error: "+c.want)
		}
	}
	if _, err := os.Stat(png); !os.IsNotExist(err) {
		t.Errorf("a failed plot left %s behind", png)
	}
}

// save writes the layout that -f DIR reads back.
func TestSaveLayoutRoundTrip(t *testing.T) {
	bs, err := loadFiles([]string{td("baseline.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	b := bs[0]
	b.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kvbench-operator"}} // as the API server returns it
	dir := t.TempDir()
	var out bytes.Buffer
	if err := save(&out, dir, b); err != nil {
		t.Fatal(err)
	}
	want := "wrote " + filepath.Join(dir, "baseline-leveldb.result.json") + "\nwrote " + filepath.Join(dir, "baseline-rocksdb.result.json") +
		"\nwrote " + filepath.Join(dir, "baseline.yaml") + "\n"
	if out.String() != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", out.String(), want)
	}
	yml, _ := os.ReadFile(filepath.Join(dir, "baseline.yaml"))
	contains(t, string(yml), "apiVersion: kvbench.io/v1alpha1\n", "kind: KVBenchmark\n")
	if strings.Contains(string(yml), "managedFields") {
		t.Errorf("managedFields saved")
	}
	back, err := loadFiles([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != 1 || len(back[0].Results) != 2 {
		t.Fatalf("read back %d benchmarks", len(back))
	}
	for run, r := range back[0].Results {
		if !api.KnownResultSchema(r.SchemaVersion) || len(r.Phases) != 11 || string(r.Engine) != run {
			t.Errorf("run %s: %s, %d phases", run, r.Engine, len(r.Phases))
		}
	}
	if a, b := mustRun(t, "report", "-f", td("baseline.yaml")), mustRun(t, "report", "-f", dir); a != b {
		t.Errorf("the saved copy reports differently")
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, to, string(data))
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// report --by node on a saved spread EachNode benchmark: per-node rows and the spread.
func TestReportByNode(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "fleet.yaml")
	writeFile(t, f, `apiVersion: kvbench.io/v1alpha1
kind: KVBenchmark
metadata: {name: fleet, namespace: default}
spec:
  engines: [{name: rocksdb}]
  dataset: {size: 64Mi}
  storage: {medium: localNVMe}
  resources: {memory: 1Gi}
  placement: {spread: EachNode, maxNodes: 3}
status:
  phase: Succeeded
  runs:
  - {name: rocksdb@n1, engine: rocksdb, jobName: fleet-rocksdb-n1, phase: Succeeded, nodeName: n1,
     results: [{workload: readrandom, threads: 1, ops: 1000, seconds: 1, opsPerSec: 100000, microsPerOp: 10}]}
  - {name: rocksdb@n2, engine: rocksdb, jobName: fleet-rocksdb-n2, phase: Succeeded, nodeName: n2,
     results: [{workload: readrandom, threads: 1, ops: 1000, seconds: 1, opsPerSec: 80000, microsPerOp: 12.5}]}
  - {name: rocksdb@n3, engine: rocksdb, jobName: fleet-rocksdb-n3, phase: Succeeded, nodeName: n3,
     results: [{workload: readrandom, threads: 1, ops: 1000, seconds: 1, opsPerSec: 101000, microsPerOp: 9.9}]}
`)
	out := mustRun(t, "report", "-f", f, "--by", "node")
	contains(t, out, "KVBenchmark default/fleet by node: rocksdb, on 3 nodes, localNVMe", "Per node", "n2    rocksdb  readrandom        1   80000     -20.0%", "21.0%  n2 (-20.0%)\n")
	out = mustRun(t, "report", "-f", f, "--by", "node", "--tolerance", "25")
	contains(t, out, "more than 25.0% from the median")
	if strings.Contains(out, "n2 (") {
		t.Errorf("n2 is within 25%%:\n%s", out)
	}
	if _, errOut, code := kvbench(t, "report", "-f", f, "--by", "engine"); code == 0 || !strings.Contains(errOut, `unknown --by "engine" (one of run, node)`) {
		t.Errorf("--by engine: exit %d, %q", code, errOut)
	}
	if _, errOut, code := kvbench(t, "report", "-f", f, "--by", "node", "--tolerance", "-1"); code == 0 || !strings.Contains(errOut, "--tolerance -1") {
		t.Errorf("--tolerance -1: exit %d, %q", code, errOut)
	}
}

// One benchmark compares its engines point by point (it needed save and two -f files).
func TestCompareEngines(t *testing.T) {
	out := mustRun(t, "compare", "-f", td("baseline.yaml"), "--metrics", "ops")
	contains(t, out,
		"A (old) = default/baseline run leveldb ("+td("baseline.yaml")+"), B (new) = default/baseline run rocksdb ("+td("baseline.yaml")+")\n",
		"leveldb vs rocksdb  readrandom        2  395516  199836  -49.47% no verdict  -  1+1\n")
	out = mustRun(t, "compare", "-f", td("baseline.yaml"), "--engines", "rocksdb,leveldb", "--by-phase")
	contains(t, out, "Comparison: A (old) = default/baseline run rocksdb (", "rocksdb vs leveldb  readrandom        2   199836   395516  +97.9%")
}

// Two benchmarks with different datasets or workload settings: a warning naming the fields, and
// no gate (spec.baseline refuses the same pair).
func TestCompareWarnsWhenNotComparable(t *testing.T) {
	dir := t.TempDir()
	other, _ := os.ReadFile(td("bloom.yaml"))
	writeFile(t, filepath.Join(dir, "bigger.yaml"), strings.Replace(string(other), "num: 200000", "num: 400000", 1))
	out, errOut, code := kvbench(t, "compare", "-f", td("baseline.yaml"), "-f", filepath.Join(dir, "bigger.yaml"), "--metrics", "ops")
	if code != 0 || errOut != "warning: default/baseline and default/bloom are not comparable (dataset.num: 200000 vs 400000)\n" || !strings.HasPrefix(out, "A (old) = ") {
		t.Errorf("exit %d, stderr %q, stdout %.80q", code, errOut, out)
	}
}
