package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

func TestBadInputExitsNonZero(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db")
	for _, args := range [][]string{
		{"bench", "--engine=nosuch", "--db=" + db},
		{"bench", "--db=" + db, "--no_such_flag=1"},
		{"bench", "--db=" + db, "--num=0"},
		{"bench", "--db=" + db, "--benchmarks=readrandom", "--use_existing_db=1"},
		{"run", "--config-json={not json"},
		// A thread count given twice ran its phase twice (issue 30).
		{"run", `--config-json={"engine":{"name":"pebble"},"dataset":{"num":10},"threads":[1,1],"workloads":[{"name":"readrandom"}],"dbPath":"` + db + `"}`},
		{"run", `--config-json={"engine":{"name":"pebble"},"dataset":{"num":10},"threads":[1],"workloads":[{"name":"readrandom","threads":[2,2]}],"dbPath":"` + db + `"}`},
	} {
		if code := run(args, io.Discard, io.Discard); code == 0 {
			t.Errorf("%v: exit 0", args)
		}
	}
}

func TestRunWritesResultAndSummary(t *testing.T) {
	dir := t.TempDir()
	cfg := `{"engine":{"name":"pebble"},"dataset":{"num":500,"loadMode":"bulk"},"threads":[1,2],
		"workloads":[{"name":"readrandom"},{"name":"seekrandom","seekNexts":2}],"dbPath":"` + filepath.Join(dir, "db") + `"}`
	js, sum := filepath.Join(dir, "result.json"), filepath.Join(dir, "summary")
	var stdout bytes.Buffer
	if code := run([]string{"run", "--config-json=" + cfg, "--json=" + js, "--summary-file=" + sum, "--metrics-addr=127.0.0.1:0"}, &stdout, io.Discard); code != 0 {
		t.Fatalf("exit %d", code)
	}
	var r api.Result
	b, _ := os.ReadFile(js)
	if err := json.Unmarshal(b, &r); err != nil || len(r.Phases) != 4 || r.Load == nil || r.SchemaVersion != api.ResultSchemaVersion {
		t.Fatalf("result %v: %s", err, b)
	}
	s, _ := os.ReadFile(sum)
	var su api.Summary
	if err := json.Unmarshal(s, &su); err != nil || len(s) > api.TerminationMessageLimit || len(su.Phases) != 4 {
		t.Fatalf("summary %v (%d bytes): %s", err, len(s), s)
	}
	// The log line carries the same full result as the --json file, as the last stdout line.
	lr := resultLine(t, stdout.String())
	if !reflect.DeepEqual(lr, r) {
		t.Errorf("log line result differs from --json:\n%+v\n%+v", lr, r)
	}
	if !strings.HasSuffix(stdout.String(), "\n") || !strings.HasPrefix(lastLine(stdout.String()), api.ResultLogPrefix) {
		t.Errorf("the result line is not the last stdout line:\n%s", stdout.String())
	}
	// Each finished phase was streamed as its own line, identical to the final result's phase.
	lines := phaseLines(t, stdout.String())
	if len(lines) != 1+len(r.Phases) || !reflect.DeepEqual(lines[0], *r.Load) {
		t.Fatalf("%d phase lines, want the load and %d phases", len(lines), len(r.Phases))
	}
	for i, p := range lines[1:] {
		if p.Index != int32(i) || !reflect.DeepEqual(p, r.Phases[i]) {
			t.Errorf("phase line %d (index %d) differs from the result's phase", i, p.Index)
		}
	}
}

// phaseLines decodes the stdout lines that start with api.ResultPhaseLogPrefix.
func phaseLines(t *testing.T, stdout string) []api.PhaseResult {
	t.Helper()
	var out []api.PhaseResult
	for _, l := range strings.Split(stdout, "\n") {
		if !strings.HasPrefix(l, api.ResultPhaseLogPrefix) {
			continue
		}
		var p api.PhaseResult
		dec := json.NewDecoder(strings.NewReader(strings.TrimPrefix(l, api.ResultPhaseLogPrefix)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("phase line: %v\n%s", err, l)
		}
		out = append(out, p)
	}
	return out
}

// While a run is still going, its finished phases are already in the log and in the termination
// message: a run killed now (SIGKILL on OOM leaves no time to write anything) keeps them.
func TestRunStreamsFinishedPhases(t *testing.T) {
	dir := t.TempDir()
	cfg := `{"engine":{"name":"pebble"},"dataset":{"num":300,"loadMode":"none"},"threads":[1],
		"workloads":[{"name":"fillseq"},{"name":"readrandom","threads":[1,2]},{"name":"readrandom","duration":"5m"}],"dbPath":"` + filepath.Join(dir, "db") + `"}`
	sum := filepath.Join(dir, "summary")
	out := &watchWriter{want: api.ResultPhaseLogPrefix + `{"index":2,`, seen: make(chan struct{})}
	type snapshot struct {
		phases []api.PhaseResult
		sum    api.Summary
		err    error
	}
	got := make(chan snapshot, 1)
	go func() {
		<-out.seen
		// The third phase line is out; the fourth phase runs for minutes.
		var s snapshot
		s.phases = phaseLines(t, out.String())
		b, err := os.ReadFile(sum)
		if s.err = err; err == nil {
			s.err = json.Unmarshal(b, &s.sum)
		}
		got <- s
		_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
	}()
	code := run([]string{"run", "--config-json=" + cfg, "--summary-file=" + sum}, out, io.Discard)
	s := <-got
	if code != 1 || s.err != nil {
		t.Fatalf("exit %d, summary: %v", code, s.err)
	}
	var idx []int32
	for _, p := range s.phases {
		idx = append(idx, p.Index)
	}
	if !reflect.DeepEqual(idx, []int32{0, 1, 2}) || s.phases[1].Workload != "readrandom" || s.phases[2].Threads != 2 {
		t.Errorf("phase lines mid-run: indexes %v", idx)
	}
	if len(s.sum.Phases) != 3 || s.sum.Phases[2].Index != 2 || s.sum.Phases[2].Threads != 2 || s.sum.EngineVersion == "" {
		t.Errorf("termination message mid-run: %+v", s.sum)
	}
}

// resultLine returns the Result of the one stdout line that starts with api.ResultLogPrefix.
func resultLine(t *testing.T, stdout string) api.Result {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, api.ResultLogPrefix) {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("%d result lines, want 1; stdout:\n%s", len(lines), stdout)
	}
	var r api.Result
	dec := json.NewDecoder(strings.NewReader(strings.TrimPrefix(lines[0], api.ResultLogPrefix)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("result line: %v\n%s", err, lines[0])
	}
	if r.SchemaVersion != api.ResultSchemaVersion {
		t.Errorf("result line schema %q", r.SchemaVersion)
	}
	return r
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func workloads(r api.Result) []string {
	var out []string
	for _, p := range r.Phases {
		out = append(out, p.Workload)
	}
	return out
}

// A phase that fails: exit 1, and the result line (written after the summary) still carries the
// phases that completed and the error.
func TestRunResultLineOnFailure(t *testing.T) {
	dir := t.TempDir()
	cfg := `{"engine":{"name":"rocksdb"},"dataset":{"num":200,"loadMode":"none"},"threads":[1],
		"workloads":[{"name":"fillseq"},{"name":"readrandom"},{"name":"dbbench","dbBenchArgs":["--benchmarks=nosuchbench"]},{"name":"readseq"}],
		"dbPath":"` + filepath.Join(dir, "db") + `"}`
	sum := filepath.Join(dir, "summary")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"run", "--config-json=" + cfg, "--summary-file=" + sum}, &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr.String())
	}
	r := resultLine(t, stdout.String())
	if got := strings.Join(workloads(r), ","); got != "fillseq,readrandom" || r.Error == "" || r.EndTime == nil {
		t.Errorf("result line: phases %s, error %q", got, r.Error)
	}
	var su api.Summary
	if b, err := os.ReadFile(sum); err != nil || json.Unmarshal(b, &su) != nil || su.Error != r.Error || len(su.Phases) != 2 {
		t.Errorf("summary %v: %+v", err, su)
	}
	if !strings.Contains(stderr.String(), "kvbench-runner: error: "+r.Error) {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}

// A run that cannot start (bad config, invalid spec, unknown flag) still ends with the result line,
// so the pod log says why.
func TestRunResultLineWithoutPhases(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--config-json={not json"}, "config: "},
		{[]string{"run", "--config-json={}"}, "no database path"},
		{[]string{"run", "--config-json=" + `{"engine":{"name":"pebble"},"dataset":{"num":10},"workloads":[{"name":"ycsb","ycsb":{"workload":"B","readWriteRatio":"30"}}],"dbPath":"` + db + `"}`},
			`readWriteRatio "30" must be R:W`},
		{[]string{"run", "--no-such-flag"}, "unknown flag"},
	} {
		var stdout bytes.Buffer
		if code := run(c.args, &stdout, io.Discard); code != 1 {
			t.Errorf("%v: exit %d", c.args, code)
		}
		if r := resultLine(t, stdout.String()); !strings.Contains(r.Error, c.want) || len(r.Phases) != 0 {
			t.Errorf("%v: result line %+v, want error %q", c.args, r, c.want)
		}
	}
}

// SIGTERM (activeDeadlineSeconds, kubectl delete) ends the run early, with the result line.
func TestRunResultLineOnSIGTERM(t *testing.T) {
	dir := t.TempDir()
	cfg := `{"engine":{"name":"pebble"},"dataset":{"num":500,"loadMode":"none"},"threads":[1],
		"workloads":[{"name":"fillseq"},{"name":"readrandom","duration":"5m"},{"name":"readseq"}],"dbPath":"` + filepath.Join(dir, "db") + `"}`
	out := &watchWriter{want: "fillseq", seen: make(chan struct{})}
	go func() {
		<-out.seen
		_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
	}()
	start := time.Now()
	code := run([]string{"run", "--config-json=" + cfg}, out, io.Discard)
	if time.Since(start) > time.Minute {
		t.Fatalf("SIGTERM did not end the run")
	}
	r := resultLine(t, out.String())
	if got := strings.Join(workloads(r), ","); code != 1 || got != "fillseq" || !strings.Contains(r.Error, "interrupted by SIGTERM (in Kubernetes: the runner pod was deleted") {
		t.Errorf("exit %d, result line %+v", code, r)
	}
}

// watchWriter collects output and closes seen once a line contains want.
type watchWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (w *watchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// The bench subcommand prints db_bench lines for humans, no result line.
func TestBenchPrintsNoResultLine(t *testing.T) {
	var stdout bytes.Buffer
	args := []string{"bench", "--engine=pebble", "--db=" + filepath.Join(t.TempDir(), "db"), "--benchmarks=fillseq,readrandom", "--num=300"}
	if code := run(args, &stdout, io.Discard); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(stdout.String(), "readrandom") || strings.Contains(stdout.String(), api.ResultLogPrefix) {
		t.Errorf("stdout:\n%s", stdout.String())
	}
}

// Nothing but the result lines start with a guarded prefix, however the output is split into writes.
func TestLogWriterEscapesPrefix(t *testing.T) {
	for _, p := range guardedPrefixes {
		testLogWriterEscapes(t, p)
	}
}

func testLogWriterEscapes(t *testing.T, p string) {
	in := "a\n" + p + "fake\n" + "kvbench-res\n" + p[:5] + "x\n\n" + p + "\n" + "mid " + p + "\n" + "kvb"
	want := "a\n " + p + "fake\n" + "kvbench-res\n" + p[:5] + "x\n\n " + p + "\n" + "mid " + p + "\n" + "kvb"
	for _, size := range []int{1, 2, 3, 7, 16, 17, len(in)} {
		var buf bytes.Buffer
		g := newLogWriter(&buf)
		for i := 0; i < len(in); i += size {
			n, err := g.Write([]byte(in[i:min(i+size, len(in))]))
			if err != nil || n != min(size, len(in)-i) {
				t.Fatalf("write: %d, %v", n, err)
			}
		}
		if err := g.writeResult(&api.Result{SchemaVersion: api.ResultSchemaVersion, Error: "x\ny"}); err != nil {
			t.Fatal(err)
		}
		got := buf.String()
		if !strings.HasPrefix(got, want+"\n"+api.ResultLogPrefix+"{") || !strings.HasSuffix(got, "}\n") || strings.Count(got, "\n") != strings.Count(want, "\n")+2 {
			t.Errorf("write size %d:\n%q\nwant %q then the result line", size, got, want)
		}
	}
}

func TestSeedFlagsAccepted(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db")
	// Seed 000's flags (scaled down): legacy flags are accepted with a note, PlainTable works.
	args := []string{"bench", "--db=" + db, "--num_levels=6", "--key_size=20", "--prefix_size=20", "--keys_per_prefix=0",
		"--value_size=100", "--cache_size=17179869184", "--cache_numshardbits=6", "--compression_type=none",
		"--compression_ratio=1", "--hard_rate_limit=2", "--write_buffer_size=134217728", "--max_write_buffer_number=2",
		"--level0_file_num_compaction_trigger=8", "--disable_wal=0", "-sync=0", "--disable_data_sync=1",
		"--use_plain_table=1", "--open_files=-1", "--mmap_read=1", "--memtablerep=prefix_hash", "--bloom_bits=10",
		"--benchmarks=filluniquerandom,readrandom", "--use_existing_db=0", "--num=2000", "--threads=1"}
	if code := run(args, io.Discard, io.Discard); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

func TestBenchYCSBReadWriteRatioFlag(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(dir, "result.json")
	args := []string{"bench", "--engine=pebble", "--db=" + filepath.Join(dir, "db"), "--benchmarks=ycsbc", "--load=fillseq",
		"--num=500", "--ycsb_read_write_ratio=0:1", "--json=" + js}
	if code := run(args, io.Discard, io.Discard); code != 0 {
		t.Fatalf("exit %d", code)
	}
	var r api.Result
	b, _ := os.ReadFile(js)
	if err := json.Unmarshal(b, &r); err != nil || len(r.Phases) != 1 || r.Load == nil || r.Load.Ops != 500 {
		t.Fatalf("result %v: %s", err, b)
	}
	if ops := r.Phases[0].Operations; len(ops) != 1 || ops[0].Name != "UPDATE" || ops[0].Ops != 500 {
		t.Errorf("ycsb-c at 0:1: %+v", ops)
	}
	// Both overrides at once is an error, as in the API.
	args = append(args, "--ycsb_read_percent=50")
	if code := run(args, io.Discard, io.Discard); code != 1 {
		t.Errorf("readPercent and readWriteRatio: exit %d", code)
	}
}

// The protocol flags reach every phase's result; contradictory ones fail before anything runs.
func TestBenchProtocolFlags(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(dir, "result.json")
	args := []string{"bench", "--engine=pebble", "--db=" + filepath.Join(dir, "db"), "--benchmarks=readrandom,readrandom",
		"--num=500", "--load=bulk", "--warmup_ops=100", "--settle_timeout=1m", "--reset=perPoint", "--json=" + js}
	if code := run(args, io.Discard, io.Discard); code != 0 {
		t.Fatalf("exit %d", code)
	}
	var r api.Result
	b, _ := os.ReadFile(js)
	if err := json.Unmarshal(b, &r); err != nil || len(r.Phases) != 2 {
		t.Fatalf("result %v: %s", err, b)
	}
	for _, p := range r.Phases {
		if pr := p.Protocol; pr == nil || pr.WarmupOps != 100 || pr.SettleSeconds == nil || pr.ResetSeconds == nil || p.Ops != 500 {
			t.Errorf("%s: %d ops, protocol %+v", p.Workload, p.Ops, pr)
		}
	}
	for _, bad := range [][]string{{"--warmup_ops=1", "--warmup_seconds=1"}, {"--reset=always"}, {"--warmup_ops=-1"}} {
		if code := run(append(args[:len(args)-4:len(args)-4], bad...), io.Discard, io.Discard); code != 1 {
			t.Errorf("%v: exit %d", bad, code)
		}
	}
}

// The live series of a runner the operator started carry namespace, benchmark and engine, so they
// join the operator's series; the per-interval p99 is among them.
func TestLiveMetricsCarryRunLabels(t *testing.T) {
	t.Setenv(api.EnvNamespace, "ns1")
	t.Setenv(api.EnvBenchmark, "bench1")
	t.Setenv(api.EnvRun, "pebble")
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cfg := `{"engine":{"name":"pebble"},"dataset":{"num":2000,"loadMode":"bulk"},"threads":[2],"reportInterval":"100ms",
		"workloads":[{"name":"readrandom","duration":"3s"}],"dbPath":"` + filepath.Join(dir, "db") + `"}`
	scraped := make(chan string, 1)
	go func() {
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			if resp, err := http.Get("http://" + addr + "/metrics"); err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if strings.Contains(string(b), "kvbench_runner_latency_p99_seconds{") {
					scraped <- string(b)
					return
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
		scraped <- ""
	}()
	if code := run([]string{"run", "--config-json=" + cfg, "--metrics-addr=" + addr}, io.Discard, io.Discard); code != 0 {
		t.Fatalf("exit %d", code)
	}
	text := <-scraped
	if text == "" {
		t.Fatal("no live p99 series while the phase ran")
	}
	n := 0
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "kvbench_runner_") {
			continue
		}
		n++
		for _, want := range []string{`namespace="ns1"`, `benchmark="bench1"`, `engine="pebble"`} {
			if !strings.Contains(line, want) {
				t.Errorf("series without %s: %s", want, line)
			}
		}
	}
	if n == 0 {
		t.Errorf("no runner series:\n%s", text)
	}
}

// The ycsb_* record and operation flags reach the dataset and the workload; db_bench benchmarks
// cannot share a run with YCSB's records.
func TestBenchYCSBRecordFlags(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(dir, "result.json")
	args := []string{"bench", "--engine=pebble", "--db=" + filepath.Join(dir, "db"), "--benchmarks=ycsba", "--load=bulk",
		"--num=300", "--ycsb_fieldcount=1", "--ycsb_fieldlength=320", "--ycsb_insertorder=ordered", "--ycsb_zeropadding=8",
		"--ycsb_update_mode=overwrite", "--ycsb_writeallfields", "--json=" + js}
	if code := run(args, io.Discard, io.Discard); code != 0 {
		t.Fatalf("exit %d", code)
	}
	var r api.Result
	b, _ := os.ReadFile(js)
	if err := json.Unmarshal(b, &r); err != nil || len(r.Phases) != 1 {
		t.Fatalf("result %v: %s", err, b)
	}
	if r.Dataset.KeySize != api.YCSBKeyBytes || r.Dataset.ValueSizeAvg != 4+6+4+320 {
		t.Errorf("dataset %+v, want one 320-byte field", r.Dataset)
	}
	ops := map[string]int64{}
	for _, o := range r.Phases[0].Operations {
		ops[o.Name] = o.Ops
	}
	if e := r.Phases[0].EngineOps; e == nil || e.Gets != ops["READ"] || e.Puts != ops["UPDATE"] {
		t.Errorf("overwrite updates: engine calls %+v for %v", e, ops)
	}
	var errOut strings.Builder
	args = []string{"bench", "--engine=pebble", "--db=" + filepath.Join(dir, "db2"), "--benchmarks=fillseq,ycsba", "--num=300"}
	if code := run(args, io.Discard, &errOut); code != 1 || !strings.Contains(errOut.String(), "workload fillseq needs db_bench's keys") {
		t.Errorf("fillseq with ycsba: exit %d, %s", code, errOut.String())
	}
}
