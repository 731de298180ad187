// Package java_test runs the RocksJava runner (runner/java, built by hack/rocksjava-runner.sh with the real
// rocksdbjni and its native library) and reads what it writes with the Go side's own decoders: the result
// JSON into api.Result with unknown fields refused, its log through the operator's archive.ReadLog, its
// stdout through the db_bench parser, its summary into api.Summary. This is the shared fixture test: both
// runners must write what the one decoder reads.
package java_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kvbench/kvbench-operator/archive"
	"github.com/kvbench/kvbench-operator/controllers/plan"
	"github.com/kvbench/kvbench-operator/controllers/render"
	"github.com/kvbench/kvbench-operator/runner/bench"
	"github.com/kvbench/kvbench-operator/runner/dbbench"
	_ "github.com/kvbench/kvbench-operator/runner/engine/all"
	"github.com/kvbench/kvbench-operator/runner/hist"
	wrappers "github.com/kvbench/kvbench-operator/test/wrappers"
)

// javaAddOpens lets the ycsb workload seed each thread's ThreadLocalRandom (YCSB's generators draw
// from it), as the image's entrypoint (hack/build-images.sh) does.
const javaAddOpens = "--add-opens=java.base/java.lang=ALL-UNNAMED"

// javaRunner returns the command line that starts the RocksJava runner, building it on first use.
func javaRunner(t *testing.T) []string {
	t.Helper()
	for _, tool := range []string{"java", "mvn"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: the RocksJava runner needs Java 17 and Maven (hack/install-deps.sh installs them)", tool)
		}
	}
	script, err := filepath.Abs("../../hack/rocksjava-runner.sh")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(script).Output()
	if err != nil {
		msg := err.Error()
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("the RocksJava runner did not build (hack/rocksjava-runner.sh): %s", msg)
	}
	return []string{javaAddOpens, "-cp", strings.TrimSpace(string(out)), "io.kvbench.rocksjava.Main", "bench"}
}

// runJava runs the Java runner with args and returns stdout, stderr and the exit code.
func runJava(t *testing.T, java []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command("java", append(slices.Clone(java), args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

func strictDecode(t *testing.T, data []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decoding %T: %v", v, err)
	}
}

// decodeFile strictly decodes the JSON file at path into v.
func decodeFile(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	strictDecode(t, data, v)
}

const (
	testNum     = 10000
	testReads   = 10000
	testThreads = 2
)

// workloads are every workload the Java runner supports, in an order where each reads what the
// fills wrote.
var workloads = []string{"fillseq", "fillrandom", "overwrite", "waitforcompaction", "readrandom", "readseq",
	"readwhilewriting", "seekrandom"}

func TestRocksJavaRunnerWritesWhatTheGoSideReads(t *testing.T) {
	java := javaRunner(t)
	dir := t.TempDir()
	resultPath, summaryPath := filepath.Join(dir, "result.json"), filepath.Join(dir, "summary.json")
	stdout, stderr, code := runJava(t, java, "--db="+filepath.Join(dir, "db"), "--benchmarks="+strings.Join(workloads, ","),
		"--num=10000", "--reads=10000", "--threads=2", "--seek_nexts=2", "--writes_per_second=2000", "--bloom_bits=10",
		"--statistics", "--histogram", "--write_buffer_size=262144", "--json="+resultPath, "--summary-file="+summaryPath, "--result-lines")
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s\nstdout: %s", code, stderr, stdout)
	}
	var res api.Result
	decodeFile(t, resultPath, &res)
	if !api.KnownResultSchema(res.SchemaVersion) || res.Engine != "rocksjava" || res.EngineVersion != "rocksdb 7.8.3" || res.Error != "" {
		t.Fatalf("result header: schema %q engine %q version %q error %q", res.SchemaVersion, res.Engine, res.EngineVersion, res.Error)
	}
	p := res.Provenance
	if p == nil || p.Libraries["rocksdbjni"] != "7.8.3" || p.Libraries["rocksdb"] != "7.8.3" || !strings.Contains(p.Libraries["jvm"], "17") ||
		p.Seed != 301 || p.OptionsFile == nil || !strings.HasPrefix(p.OptionsFile.Name, "OPTIONS-") ||
		!strings.Contains(p.OptionsFile.Text, "bloomfilter") || p.Node == nil || p.Node.CPUs < 1 {
		t.Fatalf("provenance: %+v", p)
	}
	// 256 KiB memtables: the fills flush and compact, so there are tables and levels to report.
	if res.EngineTotals == nil || res.EngineTotals.LSMBytes == nil || *res.EngineTotals.LSMBytes <= 0 || len(res.EngineTotals.Levels) == 0 ||
		res.EngineTotals.FlushCount == nil || *res.EngineTotals.FlushCount == 0 {
		t.Errorf("engine totals: %+v", res.EngineTotals)
	}

	var names []string
	for i, ph := range res.Phases {
		names = append(names, ph.Workload)
		if int(ph.Index) != i || ph.Threads != testThreads || ph.OpsPerSec <= 0 || ph.MicrosPerOp <= 0 || ph.LatencyMicros == nil {
			t.Errorf("%s: %+v", ph.Workload, ph.PhaseSummary)
		}
		want := int64(testThreads * testNum)
		if strings.HasPrefix(ph.Workload, "read") || ph.Workload == "seekrandom" {
			want = testThreads * testReads
		}
		if ph.Ops != want {
			t.Errorf("%s: %d ops, want %d", ph.Workload, ph.Ops, want)
		}
		// Every key of [0, num) was written by fillseq: random reads and seeks find them all.
		if ph.Workload == "readrandom" || ph.Workload == "readwhilewriting" || ph.Workload == "seekrandom" {
			if ph.Found == nil || *ph.Found != ph.Ops {
				t.Errorf("%s: found %v of %d", ph.Workload, ph.Found, ph.Ops)
			}
		}
		if ph.Usage == nil || ph.Usage.MaxRSSBytes <= 0 || ph.EngineStats == nil || ph.EngineStats.LSMBytes == nil ||
			ph.EngineStats.BlockCacheHits == nil || len(ph.EngineDumps) < 3 {
			t.Errorf("%s: evidence usage %+v stats %+v dumps %d", ph.Workload, ph.Usage, ph.EngineStats, len(ph.EngineDumps))
		}
		// The histogram is the Go layout: decoded by runner/hist, it holds every operation and
		// gives the percentiles the Java runner reported.
		h, err := hist.Decode(ph.LatencyHistogram)
		if err != nil {
			t.Fatalf("%s: %v", ph.Workload, err)
		}
		if h.Count() != ph.Ops {
			t.Errorf("%s: histogram holds %d values, the phase %d ops", ph.Workload, h.Count(), ph.Ops)
		}
		if got := h.Percentiles(); got.P50 != ph.LatencyMicros.P50 || got.P99 != ph.LatencyMicros.P99 || got.Max != ph.LatencyMicros.Max {
			t.Errorf("%s: Go reads the histogram as %+v, Java reported %+v", ph.Workload, got, ph.LatencyMicros)
		}
	}
	wantNames := slices.DeleteFunc(slices.Clone(workloads), func(w string) bool { return w == "waitforcompaction" })
	if !slices.Equal(names, wantNames) {
		t.Fatalf("phases %v, want %v", names, wantNames)
	}
	rww := res.Phases[slices.Index(names, "readwhilewriting")]
	if rww.WriteRate == nil || *rww.WriteRate <= 0 || len(rww.Operations) != 2 || rww.Operations[1].Name != "write" ||
		rww.TargetOpsPerSec == nil || *rww.TargetOpsPerSec != 2000 || rww.Protocol == nil || rww.Protocol.ServiceLatencyMicros == nil {
		t.Errorf("readwhilewriting: %+v", rww.PhaseSummary)
	}

	// No allocation on the Java heap per operation (so no GC work caused by the measured loops), except
	// seekrandom's fresh iterator per seek.
	for _, w := range wantNames {
		var perOp float64
		line := regexp.MustCompile(`note: ` + w + `: the measured loops allocated ([0-9.]+) bytes/op`).FindStringSubmatch(stderr)
		if line == nil {
			t.Errorf("%s: no allocation note in stderr", w)
			continue
		}
		perOp, _ = strconv.ParseFloat(line[1], 64)
		// Below a quarter of the smallest Java object (16 bytes) per operation: what remains are one-time
		// costs (JNI method linking, the readseq iterator: ~13 KB a thread, ~0.3 bytes/op at 50,000 ops).
		if w != "seekrandom" && perOp > 4 {
			t.Errorf("%s: the measured loop allocated %.2f bytes/op", w, perOp)
		}
	}

	// The pod log, as the operator reads it: a phase line per phase and the result line.
	l, err := archive.ReadLog(strings.NewReader(stdout), api.DefaultResultLimits, true)
	if err != nil || l.Result == nil || l.ResultErr != nil || l.Over != nil || l.Incomplete() != nil {
		t.Fatalf("ReadLog: %v, result error %v, over %v, not the whole log: %v", err, l.ResultErr, l.Over, l.Incomplete())
	}
	if len(l.Phases) != len(res.Phases) || len(l.Result.Phases) != len(res.Phases) || l.Result.Phases[3].LatencyHistogram != res.Phases[3].LatencyHistogram {
		t.Errorf("log: %d phase lines, result line with %d phases; want %d", len(l.Phases), len(l.Result.Phases), len(res.Phases))
	}
	// db_bench's result lines and histogram blocks, as the db_bench parser reads them.
	parsed := dbbench.Parse(stdout)
	if len(parsed) != len(res.Phases) {
		t.Fatalf("db_bench lines: %d, want %d\n%s", len(parsed), len(res.Phases), stdout)
	}
	for i, b := range parsed {
		ph := res.Phases[i]
		if b.Name != ph.Workload || b.Ops != ph.Ops || b.Histogram == nil || b.Histogram.Count != ph.Ops || b.HasFound != (ph.Found != nil) {
			t.Errorf("db_bench line %d: %+v, phase %+v", i, b, ph.PhaseSummary)
		}
	}
	// The termination message.
	sdata, err := os.ReadFile(summaryPath)
	if err != nil {
		t.Fatal(err)
	}
	var sum api.Summary
	strictDecode(t, sdata, &sum)
	if len(sdata) > api.TerminationMessageLimit || len(sum.Phases)+int(sum.Truncated) != len(res.Phases) || sum.Engine != "rocksjava" {
		t.Errorf("summary: %d bytes, %d phases + %d truncated", len(sdata), len(sum.Phases), sum.Truncated)
	}
}

func TestRocksJavaRunnerRefusesWhatItCannotDo(t *testing.T) {
	java := javaRunner(t)
	db := "--db=" + filepath.Join(t.TempDir(), "db")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{db, "--keys_per_prefix=10"}, "--keys_per_prefix is not supported by the rocksjava runner"},
		{[]string{db, "--benchmarks=fillseq,ycsba"}, "--benchmarks: not supported by the rocksjava runner: ycsba"},
		{[]string{db, "--no_such_flag=1"}, "unknown flag --no_such_flag"},
		{[]string{db, "--num=many"}, "--num: not a number: many"},
		{[]string{db, "--engine=rocksdb"}, "this runner drives rocksjava only"},
		{[]string{"--benchmarks=fillseq"}, "--db is required"},
		{[]string{db, "--key_size=4"}, "--key_size >= 8"},
	} {
		stdout, stderr, code := runJava(t, java, c.args...)
		if code != 1 || !strings.HasPrefix(stderr, "kvbench-runner-java: error: ") || !strings.Contains(stderr, c.want) || stdout != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit 1 and %q", c.args, code, stderr, stdout, c.want)
		}
	}
}

// The Go runner's and the Java runner's latency histograms of readrandom on the same database merge
// exactly: same layout, so every bucket of the merge is the sum of the two.
func TestGoAndJavaHistogramsMergeExactly(t *testing.T) {
	java := javaRunner(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "db")
	resultPath := filepath.Join(dir, "java.json")
	if out, stderr, code := runJava(t, java, "--db="+db, "--benchmarks=fillseq,readrandom", "--num=3000",
		"--json="+resultPath); code != 0 {
		t.Fatalf("java: exit %d: %s %s", code, stderr, out)
	}
	data, err := os.ReadFile(resultPath)
	if err != nil {
		t.Fatal(err)
	}
	var jres api.Result
	strictDecode(t, data, &jres)
	var out bytes.Buffer
	gres, err := bench.Run(context.Background(), api.RunnerConfig{Engine: api.EngineSpec{Name: api.EngineRocksDB}, DBPath: db,
		Threads: []int32{1}, Dataset: api.DatasetSpec{Num: ptr(int64(3000)), LoadMode: api.LoadExisting},
		Workloads: []api.WorkloadSpec{{Name: api.WorkloadReadRandom}}}, bench.Options{Stdout: &out, Stderr: &out})
	if err != nil {
		t.Fatalf("Go runner: %v\n%s", err, out.String())
	}
	jenc, genc := jres.Phases[1].LatencyHistogram, gres.Phases[0].LatencyHistogram
	jh, err := hist.Decode(jenc)
	if err != nil {
		t.Fatal(err)
	}
	gh, err := hist.Decode(genc)
	if err != nil {
		t.Fatal(err)
	}
	if jh.Count() != jres.Phases[1].Ops || gh.Count() != gres.Phases[0].Ops || *gres.Phases[0].Found != 3000 {
		t.Fatalf("counts: java %d of %d ops, go %d of %d ops", jh.Count(), jres.Phases[1].Ops, gh.Count(), gres.Phases[0].Ops)
	}
	merged := hist.Merged(jh, gh)
	menc, err := merged.Encode()
	if err != nil {
		t.Fatal(err)
	}
	// Bucket by bucket, through HdrHistogram's own decoder.
	counts := func(enc string) []int64 {
		h, err := hdrhistogram.Decode([]byte(enc))
		if err != nil {
			t.Fatal(err)
		}
		return h.Export().Counts
	}
	mc, jc, gc := counts(menc), counts(jenc), counts(genc)
	if len(mc) != len(jc) || len(mc) != len(gc) {
		t.Fatalf("bucket counts differ: merged %d, java %d, go %d", len(mc), len(jc), len(gc))
	}
	nonEmpty := 0
	for i := range mc {
		if mc[i] != jc[i]+gc[i] {
			t.Fatalf("bucket %d: merged %d, java %d + go %d", i, mc[i], jc[i], gc[i])
		}
		if jc[i] > 0 && gc[i] > 0 {
			nonEmpty++
		}
	}
	if merged.Count() != jh.Count()+gh.Count() || nonEmpty == 0 {
		t.Errorf("merged %d values, want %d; %d buckets hold values of both", merged.Count(), jh.Count()+gh.Count(), nonEmpty)
	}
}

// A SIGTERM (the pod deleted) in the middle of a phase: the phases that finished are still written, to
// the file and as the result line, with the error saying why the run stopped.
func TestRocksJavaRunnerKeepsFinishedPhasesOnSIGTERM(t *testing.T) {
	java := javaRunner(t)
	dir := t.TempDir()
	resultPath := filepath.Join(dir, "result.json")
	cmd := exec.Command("java", append(slices.Clone(java), "--db="+filepath.Join(dir, "db"), "--benchmarks=fillseq,readrandom",
		"--num=3000", "--reads=1000000000", "--json="+resultPath, "--result-lines")...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 16<<20)
	var log strings.Builder
	signalled := false
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if !signalled && strings.HasPrefix(sc.Text(), api.ResultPhaseLogPrefix) { // fillseq done, readrandom running
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			signalled = true
		}
	}
	werr := cmd.Wait()
	if !signalled || werr == nil {
		t.Fatalf("signalled %v, exit %v; stderr %s", signalled, werr, stderr.String())
	}
	l, err := archive.ReadLog(strings.NewReader(log.String()), api.DefaultResultLimits, true)
	if err != nil || l.Result == nil {
		t.Fatalf("no result line (%v): %s", err, log.String())
	}
	if len(l.Result.Phases) != 1 || l.Result.Phases[0].Workload != "fillseq" || !strings.Contains(l.Result.Error, "interrupted by a signal") {
		t.Errorf("result line: %d phases, error %q", len(l.Result.Phases), l.Result.Error)
	}
	data, err := os.ReadFile(resultPath)
	if err != nil {
		t.Fatal(err)
	}
	var res api.Result
	strictDecode(t, data, &res)
	if len(res.Phases) != 1 || res.Error == "" || !strings.Contains(stderr.String(), "interrupted by a signal") {
		t.Errorf("result file: %d phases, error %q; stderr %s", len(res.Phases), res.Error, stderr.String())
	}
}

func ptr[T any](v T) *T { return &v }

// runEntryPoint is javaRunner's command line without the subcommand: the image's entrypoint, which
// the operator's Job args (run ...) follow.
func runEntryPoint(t *testing.T) []string {
	java := javaRunner(t)
	return java[: len(java)-1 : len(java)-1]
}

// The Java runner's run entry point takes exactly the arguments the operator renders for a rocksjava
// Job (render.Job: the run subcommand, --config-json, --summary-file, --json, --metrics-addr; only the
// database and output paths are moved into a temporary directory) and writes what the operator reads:
// the log through archive.ReadLog, the termination summary as api.Summary, the result file as
// api.Result and through the result archive; with the measurement protocol applied per phase.
func TestRocksJavaRunnerRunsTheJobTheOperatorRenders(t *testing.T) {
	java := runEntryPoint(t)
	dir := t.TempDir()
	ws := []api.WorkloadSpec{
		{Name: api.WorkloadFillRandom, Num: ptr[int64](1000)},
		{Name: api.WorkloadReadRandom, Num: ptr[int64](2000), Warmup: &api.WarmupSpec{Ops: ptr[int64](500)}},
		{Name: api.WorkloadReadWhileWriting, WritesPerSecond: ptr[int64](1000), Duration: &metav1.Duration{Duration: 300 * time.Millisecond}},
		{Name: api.WorkloadSeekRandom, Num: ptr[int64](500), SeekNexts: ptr[int32](5), Threads: []int32{1}},
		{Name: api.WorkloadStats},
	}
	b := wrappers.MakeKVBenchmark("jb", "ns").EngineNames(api.EngineRocksDB, api.EngineRocksJava).DatasetNum(5000).
		Workloads(ws...).Threads(1, 2).EditSpec(func(s *api.KVBenchmarkSpec) {
		s.Repeat = 2 // a sweep that writes: the operator renders reset perIteration
		s.Settle = &api.SettleSpec{Timeout: metav1.Duration{Duration: 10 * time.Second}}
		s.Dataset.LoadMode = api.LoadFillSeq
	}).Obj()
	var run *plan.Run
	for _, r := range plan.Plan(b) {
		if r.Engine.Name == api.EngineRocksJava {
			run = &r
		}
	}
	if run == nil || run.Config.Reset != api.ResetPerIteration {
		t.Fatalf("plan: no rocksjava run with reset perIteration: %+v", run)
	}
	resultPath, summaryPath := filepath.Join(dir, "result.json"), filepath.Join(dir, "summary.json")
	args := jobArgs(t, b, *run, dir)
	stdout, stderr, code := runJava(t, java, args...)
	if code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, stderr)
	}
	// 3 workloads x 2 thread counts + seekrandom x 1, twice; stats is no phase.
	const phases = 2 * (3*2 + 1)
	l, err := archive.ReadLog(strings.NewReader(stdout), api.DefaultResultLimits, true)
	if err != nil || l.Result == nil || l.ResultErr != nil || l.Over != nil || l.Incomplete() != nil {
		t.Fatalf("ReadLog: %v, result error %v, over %v, not the whole log: %v", err, l.ResultErr, l.Over, l.Incomplete())
	}
	if l.Load == nil || l.Load.Ops != 5000 || len(l.Phases) != phases || len(l.Result.Phases) != phases || l.Result.Engine != api.EngineRocksJava || l.Result.Error != "" {
		t.Fatalf("log: load %+v, %d phase lines, result with %d phases (engine %s, error %q); want the load and %d phases",
			l.Load, len(l.Phases), len(l.Result.Phases), l.Result.Engine, l.Result.Error, phases)
	}
	var res api.Result
	data, err := os.ReadFile(resultPath)
	if err != nil {
		t.Fatal(err)
	}
	strictDecode(t, data, &res)
	for i, p := range res.Phases {
		pr := p.Protocol
		if p.Index != int32(i) || p.Iteration != int32(i/(phases/2)) || pr == nil || pr.SettleSeconds == nil || pr.SettleTimedOut {
			t.Fatalf("phase %d (%s x%d, iteration %d, index %d): protocol %+v; want settled", i, p.Workload, p.Threads, p.Iteration, p.Index, pr)
		}
		if (p.Workload == "readrandom") != (pr.WarmupOps > 0) || (p.Workload == "readrandom" && pr.WarmupOps != 500*int64(p.Threads)) {
			t.Errorf("phase %d %s x%d: warmupOps %d; want 500 per thread for readrandom only", i, p.Workload, p.Threads, pr.WarmupOps)
		}
		// The first phase of the second iteration starts from the restored post-load checkpoint.
		if (i == phases/2) != (pr.ResetSeconds != nil) {
			t.Errorf("phase %d: resetSeconds %v; want it on phase %d only", i, pr.ResetSeconds, phases/2)
		}
		if (p.Workload == "readwhilewriting") != (pr.TargetOpsPerSec != nil) {
			t.Errorf("phase %d %s: targetOpsPerSec %v", i, p.Workload, pr.TargetOpsPerSec)
		}
		want := int64(p.Threads) * map[string]int64{"fillrandom": 1000, "readrandom": 2000, "seekrandom": 500}[p.Workload]
		if p.Workload != "readwhilewriting" && p.Ops != want {
			t.Errorf("phase %d %s x%d: %d ops, want %d", i, p.Workload, p.Threads, p.Ops, want)
		}
	}
	// Reads after the reset find every key: the checkpoint holds the whole load.
	for _, p := range res.Phases {
		if p.Workload == "readrandom" && p.Found != nil && *p.Found != p.Ops {
			t.Errorf("%s x%d iteration %d: %d of %d found", p.Workload, p.Threads, p.Iteration, *p.Found, p.Ops)
		}
	}
	// The termination message and the result archive, as the operator keeps them.
	sdata, err := os.ReadFile(summaryPath)
	if err != nil {
		t.Fatal(err)
	}
	var sum api.Summary
	strictDecode(t, sdata, &sum)
	if len(sdata) > api.TerminationMessageLimit || sum.Load == nil || len(sum.Phases)+int(sum.Truncated) != phases {
		t.Errorf("summary: %d bytes, load %v, %d phases + %d truncated", len(sdata), sum.Load, len(sum.Phases), sum.Truncated)
	}
	cm, _, err := archive.ConfigMap(b, run.Name, run.JobName, l.Result)
	if err != nil {
		t.Fatal(err)
	}
	back, err := archive.FromConfigMap(cm, b, archive.Digest(cm))
	if err != nil || len(back.Phases) != phases || back.Engine != api.EngineRocksJava {
		t.Errorf("archive round trip: %v", err)
	}
	if strings.Contains(stderr, "kvbench-runner-java: error") {
		t.Errorf("stderr has an error:\n%s", stderr)
	}
}

// jobArgs are the container arguments of run's Job as render.Job makes them, after checking it runs in
// the Java runner's image; the database and output paths are moved into dir.
func jobArgs(t *testing.T, b *api.KVBenchmark, run plan.Run, dir string) []string {
	t.Helper()
	opts := render.DefaultOptions()
	job, err := render.Job(b, run, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctr := job.Spec.Template.Spec.Containers[0]
	if ctr.Image != opts.JavaRunnerImage {
		t.Fatalf("%s runs in %s, want the Java runner's image %s", run.Engine.Name, ctr.Image, opts.JavaRunnerImage)
	}
	args, err := wrappers.LocalRunnerArgs(ctr.Args, dir)
	if err != nil {
		t.Fatal(err)
	}
	return args
}

// engines[].version: the image's Launcher (here on the layout hack/rocksjava-runner.sh --home builds, with
// rocksdbjni 7.8.3 and 9.10.0 as ROCKSDBJNI_VERSIONS would put them in the image) runs the release the
// rendered config asks for, with that release's JNI library (java.io.tmpdir points nowhere, so nothing can
// be unpacked from a jar), and provenance records it; a release it lacks fails with the list it has.
func TestRocksJavaLauncherRunsTheRequestedRocksdbjniRelease(t *testing.T) {
	javaRunner(t) // builds the runner, or skips without java and mvn
	script, _ := filepath.Abs("../../hack/rocksjava-runner.sh")
	cmd := exec.Command(script, "--home")
	cmd.Env = append(os.Environ(), "ROCKSDBJNI_VERSIONS=7.8.3 9.10.0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hack/rocksjava-runner.sh --home: %v", err)
	}
	home := strings.TrimSpace(string(out))
	launcher := []string{"-Dkvbench.home=" + home, "-Djava.io.tmpdir=" + filepath.Join(t.TempDir(), "no-such-dir"),
		javaAddOpens, "-cp", filepath.Join(home, "lib", "kvbench-runner-java-1.jar"), "io.kvbench.rocksjava.Launcher"}
	for _, c := range []struct{ version, want, err string }{
		{"", "7.8.3", ""},
		{"9.10.0", "9.10.0", ""},
		{"7.8.3", "7.8.3", ""},
		{"8.0.0", "", "engines[].version 8.0.0: this runner carries rocksdbjni 7.8.3, 9.10.0"},
	} {
		b := wrappers.MakeKVBenchmark("jv", "ns").Engines(api.EngineSpec{Name: api.EngineRocksJava, Version: c.version}).DatasetNum(2000).
			Workloads(api.WorkloadSpec{Name: api.WorkloadReadRandom}).Threads(1).
			EditSpec(func(s *api.KVBenchmarkSpec) { s.Dataset.LoadMode = api.LoadFillSeq }).Obj()
		dir := t.TempDir()
		stdout, stderr, code := runJava(t, launcher, jobArgs(t, b, plan.Plan(b)[0], dir)...)
		l, err := archive.ReadLog(strings.NewReader(stdout), api.DefaultResultLimits, true)
		if err != nil || l.Result == nil {
			t.Fatalf("version %q: no result line (%v); exit %d, stderr:\n%s", c.version, err, code, stderr)
		}
		if c.err != "" {
			if code != 1 || !strings.Contains(l.Result.Error, c.err) {
				t.Errorf("version %q: exit %d, error %q; want exit 1 and %q", c.version, code, l.Result.Error, c.err)
			}
			continue
		}
		lib := map[string]string{}
		if l.Result.Provenance != nil {
			lib = l.Result.Provenance.Libraries
		}
		if code != 0 || l.Result.EngineVersion != "rocksdb "+c.want || lib["rocksdbjni"] != c.want || lib["rocksdb"] != c.want || len(l.Result.Phases) != 1 {
			t.Errorf("version %q: exit %d, engine %q, libraries %v, %d phases; want rocksdbjni and RocksDB %s\n%s",
				c.version, code, l.Result.EngineVersion, lib, len(l.Result.Phases), c.want, stderr)
		}
	}
}

// A RunnerConfig the Java runner cannot run (the CRD refuses it for rocksjava; an older operator or a
// hand-written config may still send it) fails with its reason in the result line, as the Go runner's.
func TestRocksJavaRunEntryPointRefusesWhatItCannotDo(t *testing.T) {
	java := runEntryPoint(t)
	db := filepath.Join(t.TempDir(), "db")
	good := func(edit func(c *api.RunnerConfig)) string {
		c := api.RunnerConfig{Engine: api.EngineSpec{Name: api.EngineRocksJava}, Dataset: api.DatasetSpec{Num: ptr[int64](100)},
			Workloads: []api.WorkloadSpec{{Name: api.WorkloadReadRandom}}, Threads: []int32{1}, DBPath: db}
		edit(&c)
		j, _ := json.Marshal(c)
		return "--config-json=" + string(j)
	}
	for _, c := range []struct {
		arg  string
		want string
	}{
		{good(func(c *api.RunnerConfig) { c.Workloads[0].Name = api.WorkloadDeleteRandom }), "workload deleterandom is not supported by the rocksjava runner"},
		{good(func(c *api.RunnerConfig) { c.Engine.Options.MmapRead = ptr(true) }), "engine.options.mmapRead"},
		{good(func(c *api.RunnerConfig) { c.Engine.Name = api.EngineRocksDB }), "engine rocksdb is not rocksjava"},
		{good(func(c *api.RunnerConfig) { c.CacheMode = api.CacheCold }), "cacheMode cold is not supported by the rocksjava runner"},
		{good(func(c *api.RunnerConfig) { c.OptionsFile = "/etc/kvbench/no-such/OPTIONS" }), "rocksdb OPTIONS file /etc/kvbench/no-such/OPTIONS: "},
		{good(func(c *api.RunnerConfig) { c.Dataset.ValueSizeRange = &api.SizeRange{Min: 1, Max: 9} }), "dataset.valueSizeRange is not supported"},
		{good(func(c *api.RunnerConfig) {
			c.Workloads[0] = api.WorkloadSpec{Name: api.WorkloadYCSB, YCSB: &api.YCSBSpec{Workload: "A"}}
		}),
			"ycsb workloads need YCSB records (dataset.ycsb)"},
		{good(func(c *api.RunnerConfig) {
			c.Dataset.YCSB = &api.YCSBRecordSpec{}
			c.Workloads[0] = api.WorkloadSpec{Name: api.WorkloadYCSB, YCSB: &api.YCSBSpec{Workload: "A", RequestDistribution: ptr(api.YCSBDistribution("permutedZipfian"))}}
		}), "ycsb requestDistribution permutedZipfian (the Go runner's own, not YCSB core's) is not supported by the rocksjava runner"},
		{good(func(c *api.RunnerConfig) { c.Dataset.YCSB = &api.YCSBRecordSpec{} }),
			"workload readrandom needs db_bench's keys; the dataset holds YCSB records"},
		{good(func(c *api.RunnerConfig) {
			c.Dataset.YCSB = &api.YCSBRecordSpec{}
			c.Workloads[0] = api.WorkloadSpec{Name: api.WorkloadYCSB, YCSB: &api.YCSBSpec{Workload: "G"}}
		}), `workloads[ycsb].ycsb: unknown YCSB workload "G" (A-F)`},
		{`--config-json={"engine":{"name":"rocksjava"},"newField":1}`, "unknown field newField"},
		{"--config-json=not json", "config: "},
		{"--no-such-flag=1", "unknown flag --no-such-flag"},
	} {
		stdout, stderr, code := runJava(t, java, "run", c.arg)
		l, err := archive.ReadLog(strings.NewReader(stdout), api.DefaultResultLimits, true)
		if code != 1 || err != nil || l.Result == nil || !strings.Contains(l.Result.Error, c.want) || !strings.Contains(stderr, "kvbench-runner-java: error: ") {
			t.Errorf("%s: exit %d, result %+v (%v), stderr %q; want exit 1 and a result line with %q", c.arg, code, l.Result, err, stderr, c.want)
		}
	}
	// A JNI library that does not load (rocksdbjni unpacks it into java.io.tmpdir, which is missing here)
	// is an error in the result line too, not a stack trace without one.
	noTmp := append([]string{"-Djava.io.tmpdir=" + filepath.Join(t.TempDir(), "no-such-dir")}, java...)
	stdout, stderr, code := runJava(t, noTmp, "run", good(func(*api.RunnerConfig) {}))
	l, err := archive.ReadLog(strings.NewReader(stdout), api.DefaultResultLimits, true)
	if code != 1 || err != nil || l.Result == nil || !strings.Contains(l.Result.Error, "Unable to load the RocksDB shared library") {
		t.Errorf("no JNI library: exit %d, result %+v (%v), stderr %q", code, l.Result, err, stderr)
	}
}

// A SIGTERM while a load runs (a pod deleted mid-run): the runner ends on its own, without a JVM crash
// (RocksDB's handles closed or its static destructors run while the worker threads are inside native
// calls), and answers as the Go runner does: exit 1, the result line, file and summary with the error.
func TestRocksJavaRunnerEndsCleanlyOnSIGTERMDuringALoad(t *testing.T) {
	java := javaRunner(t)
	for _, load := range []string{"fillseq", "fillrandom"} {
		t.Run(load, func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "db")
			resultPath, summaryPath := filepath.Join(dir, "result.json"), filepath.Join(dir, "summary.json")
			cmd := exec.Command("java", append(slices.Clone(java), "--db="+db, "--benchmarks="+load,
				"--num=1000000000", "--threads=2", "--json="+resultPath, "--summary-file="+summaryPath, "--result-lines")...)
			cmd.Dir = dir // where the JVM writes hs_err_pid*.log
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cmd.Process.Kill() }()
			// The load is well under way once memtables were flushed: background jobs run beside the writers.
			began := time.Now()
			for {
				if ssts, _ := filepath.Glob(filepath.Join(db, "*.sst")); len(ssts) >= 2 {
					break
				}
				if time.Since(began) > 60*time.Second {
					t.Fatalf("the load did not begin; stderr %s", stderr.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			var werr error
			select {
			case werr = <-exited:
			case <-time.After(30 * time.Second):
				t.Fatalf("still running 30s after SIGTERM; stderr %s", stderr.String())
			}
			if crashes, _ := filepath.Glob(filepath.Join(dir, "hs_err_pid*.log")); len(crashes) > 0 {
				t.Errorf("the JVM crashed: %v", crashes)
			}
			for _, s := range []string{"SIGSEGV", "A fatal error has been detected"} {
				if strings.Contains(stderr.String(), s) || strings.Contains(stdout.String(), s) {
					t.Errorf("output holds %q; stderr %s", s, stderr.String())
				}
			}
			ee, ok := werr.(*exec.ExitError)
			if !ok || ee.ExitCode() != 1 {
				t.Errorf("exit %v, want status 1 (as the Go runner); stderr %s", werr, stderr.String())
			}
			l, err := archive.ReadLog(strings.NewReader(stdout.String()), api.DefaultResultLimits, true)
			if err != nil || l.Result == nil || !strings.Contains(l.Result.Error, "interrupted") {
				t.Fatalf("no result line with the error (%v): %s", err, stdout.String())
			}
			var res api.Result
			decodeFile(t, resultPath, &res)
			var sum api.Summary
			decodeFile(t, summaryPath, &sum)
			// The load did not finish: no phase, the error names it, as the Go runner's "fillseq: interrupted by SIGTERM".
			if len(res.Phases) != 0 || !strings.HasPrefix(res.Error, load+": interrupted by a signal") || sum.Error != res.Error ||
				!strings.Contains(stderr.String(), "kvbench-runner-java: error: "+load+": interrupted by a signal") {
				t.Errorf("result file: %d phases, error %q; summary error %q; stderr %s", len(res.Phases), res.Error, sum.Error, stderr.String())
			}
		})
	}
}
