package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

func text(t *Table) string {
	var b bytes.Buffer
	t.Text(&b)
	return b.String()
}

func TestTableText(t *testing.T) {
	tb := &Table{Title: "T", Headers: []string{"Name", "Threads", "ops/s"}, Notes: []string{"a note"}}
	tb.add("readrandom", "1", "100")
	tb.add("ycsb-a", "16", Empty)
	want := "T\n" +
		"Name        Threads  ops/s\n" +
		"readrandom        1    100\n" +
		"ycsb-a           16      -\n" +
		"  a note\n"
	if diff := cmp.Diff(want, text(tb)); diff != "" {
		t.Errorf("text table (-want +got):\n%s", diff)
	}
}

func TestTableMarkdown(t *testing.T) {
	tb := &Table{Title: "T", Headers: []string{"Case", "R-QPS"}}
	tb.add("a|b", "12")
	var b bytes.Buffer
	tb.Markdown(&b)
	want := "#### T\n\n| Case | R-QPS |\n|---|---:|\n| a\\|b | 12 |\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("markdown table (-want +got):\n%s", diff)
	}
}

func TestFormats(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{micros(0.2449), "0.24"}, {micros(17.54), "17.5"}, {micros(2445.9), "2446"},
		{seconds(12.8), "12.8"}, {seconds(16), "16"}, {seconds(1.7512), "1.75"}, {seconds(0.0866), "0.0866"}, {seconds(123.4), "123"},
		{change(100, 125), "+25.0%"}, {change(10, 8), "-20.0%"}, {change(0, 5), Empty},
		{api.RatioOfPercent(50), "1:1"}, {api.RatioOfPercent(25), "1:3"}, {api.RatioOfPercent(95), "19:1"}, {api.RatioOfPercent(100), "1:0"}, {api.RatioOfPercent(0), "0:1"},
		{ops(99999.5), "100000"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestPhasesPreferFullResults(t *testing.T) {
	b := fixture(t)
	var got []string
	for _, p := range b.Phases(true) {
		got = append(got, label(&p)+map[bool]string{true: " full", false: ""}[p.Full])
	}
	want := []string{
		"rocksdb load threads=1 full",
		"rocksdb readrandom threads=1 full", "rocksdb ycsb-a threads=1 full", "rocksdb ycsb-c threads=1 full",
		"rocksdb readrandom threads=4 full", "rocksdb ycsb-a threads=4 full", "rocksdb ycsb-c threads=4 full",
		"rocksdb pulse threads=1 full", "rocksdb pulse threads=4 full",
		"leveldb load threads=1",
		"leveldb readrandom threads=1", "leveldb ycsb-a threads=1", "leveldb ycsb-c threads=1",
		"leveldb readrandom threads=4", "leveldb ycsb-a threads=4", "leveldb ycsb-c threads=4",
		"leveldb pulse threads=1", "leveldb pulse threads=4",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("phases (-want +got):\n%s", diff)
	}
	if n := len(b.Phases(false)); n != len(want)-2 {
		t.Errorf("without load: %d phases", n)
	}
}

func TestRepeatedWorkloadIsNumbered(t *testing.T) {
	b := fixture(t)
	b.Results = nil
	r := &b.Status.Runs[1]
	r.Results = append(r.Results, phase("readrandom", 1, 1, 1).PhaseSummary)
	var names []string
	for _, p := range b.Phases(false) {
		if p.Run == "leveldb" && p.Workload == "readrandom" {
			names = append(names, p.Name())
		}
	}
	if diff := cmp.Diff([]string{"readrandom", "readrandom", "readrandom#2"}, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}

func TestThreadsTable(t *testing.T) {
	want := `Throughput and p99 latency by threads
Workload    Threads  rocksdb ops/s  rocksdb p99 (us)  leveldb ops/s  leveldb p99 (us)
load              1         500000              2.00         250000              4.00
readrandom        1         100000              10.0          50000              20.0
readrandom        4         400000              10.0         200000              20.0
ycsb-a            1          80000              20.0          40000              40.0
ycsb-a            4         320000              20.0         160000              40.0
ycsb-c            1         150000              8.00          75000              16.0
ycsb-c            4         600000              8.00         300000              16.0
pulse             1         300000              12.0         100000              30.0
pulse             4         300000              12.0         100000              30.0
  ops/s over all threads; p99 over all operations of the phase, in microseconds
`
	if diff := cmp.Diff(want, text(ThreadsTable(fixture(t)))); diff != "" {
		t.Errorf("threads table (-want +got):\n%s", diff)
	}
}

func TestThreadsTableIterations(t *testing.T) {
	b := fixture(t)
	b.Results = nil
	b.Status.Runs = b.Status.Runs[1:]
	it := phase("readrandom", 1, 60000, 25).PhaseSummary
	it.Iteration = 1
	b.Status.Runs[0].Results = append(b.Status.Runs[0].Results, it)
	got := text(ThreadsTable(b))
	for _, line := range []string{
		"Workload    Threads  Iteration  leveldb ops/s  leveldb p99 (us)",
		"readrandom        1          0          50000              20.0",
		"readrandom        1          1          60000              25.0",
	} {
		if !strings.Contains(got, line+"\n") {
			t.Errorf("no line %q in\n%s", line, got)
		}
	}
}

func TestYCSBTable(t *testing.T) {
	want := `YCSB (Pegasus columns, latency in us)
Engine   Case    Threads  RW Ratio   R-QPS  R-AVG-Lat  R-P99-Lat  R-P999-Lat   W-QPS  W-AVG-Lat  W-P99-Lat  W-P999-Lat
rocksdb  ycsb-a        1       1:1   40000       10.0       30.0         300   40000       20.0       40.0         400
rocksdb  ycsb-c        1       1:0  150000       5.00       8.00        80.0       -          -          -           -
rocksdb  ycsb-a        4       1:1  160000       10.0       30.0         300  160000       20.0       40.0         400
rocksdb  ycsb-c        4       1:0  600000       5.00       8.00        80.0       -          -          -           -
leveldb  ycsb-a        1       1:1       -          -          -           -       -          -          -           -
leveldb  ycsb-c        1       1:0   75000       4.00       16.0         160       -          -          -           -
leveldb  ycsb-a        4       1:1       -          -          -           -       -          -          -           -
leveldb  ycsb-c        4       1:0  300000       4.00       16.0         160       -          -          -           -
  R = READ + SCAN, W = UPDATE + INSERT, as YCSB counts them (a READ-MODIFY-WRITE's read is a READ, its update an UPDATE); RW Ratio is the configured reads:writes
  some status summaries lack the per-operation breakdown (trimmed to 4 KiB): use the full results (runner pod logs, or kubectl kvbench save)
`
	if diff := cmp.Diff(want, text(YCSBTable(fixture(t)))); diff != "" {
		t.Errorf("ycsb table (-want +got):\n%s", diff)
	}
}

func TestYCSBWritesCombineAndRatio(t *testing.T) {
	b := fixture(t)
	twentyFive := int32(25)
	// No F workload of the spec runs at 8 threads: that ratio comes from the measured operations.
	// B's is the spec's (readPercent 25); seed 004's 30:1 is printed as configured.
	b.Spec.Workloads = []api.WorkloadSpec{
		{Name: api.WorkloadYCSB, YCSB: &api.YCSBSpec{Workload: "F"}, Threads: []int32{16}},
		{Name: api.WorkloadYCSB, YCSB: &api.YCSBSpec{Workload: "F"}, Threads: []int32{16}},
		{Name: api.WorkloadYCSB, YCSB: &api.YCSBSpec{Workload: "B", ReadPercent: &twentyFive}, Threads: []int32{8}},
		{Name: api.WorkloadYCSB, YCSB: &api.YCSBSpec{Workload: "B", ReadWriteRatio: "30:1"}, Threads: []int32{8}},
	}
	f := phase("ycsb-f", 8, 100000, 50)
	f.Operations = []api.OperationSummary{op("read", 25000, 10, 30, 300), op("readmodifywrite", 50000, 40, 90, 900), op("insert", 25000, 20, 60, 1200)}
	bb := phase("ycsb-b", 8, 100000, 50)
	bb.Operations = []api.OperationSummary{op("read", 24000, 10, 30, 300), op("update", 76000, 40, 90, 900)}
	bb2 := phase("ycsb-b", 8, 100000, 50)
	bb2.Operations = []api.OperationSummary{op("read", 96800, 10, 30, 300), op("update", 3200, 40, 90, 900)}
	b.Results["rocksdb"].Phases = []api.PhaseResult{f, bb, bb2}
	b.Status.Runs = b.Status.Runs[:1]
	got := text(YCSBTable(b))
	// Writes: rates add up, the mean is ops-weighted ((50000*40 + 25000*20) / 75000 = 33.3),
	// percentiles are the largest part's (an upper bound).
	for _, line := range []string{
		"rocksdb  ycsb-f          8       1:3  25000       10.0       30.0         300  75000       33.3       90.0        1200",
		"rocksdb  ycsb-b          8       1:3  24000       10.0       30.0         300  76000       40.0       90.0         900",
		"rocksdb  ycsb-b#2        8      30:1  96800       10.0       30.0         300   3200       40.0       90.0         900",
	} {
		if !strings.Contains(got, line+"\n") {
			t.Errorf("no line\n%s\nin\n%s", line, got)
		}
	}
}

// YCSB's names: a READ-MODIFY-WRITE's read is in READ and its update in UPDATE, so the sides are
// READ + SCAN and UPDATE + INSERT, and the read-modify-writes are not counted a second time.
func TestYCSBTableYCSBNames(t *testing.T) {
	b := fixture(t)
	b.Spec.Workloads = []api.WorkloadSpec{{Name: api.WorkloadYCSB, YCSB: &api.YCSBSpec{Workload: "F"}, Threads: []int32{8}}}
	f := phase("ycsb-f", 8, 100000, 50)
	f.Operations = []api.OperationSummary{op("READ", 100000, 10, 30, 300), op("UPDATE", 50000, 20, 60, 600),
		op("READ-MODIFY-WRITE", 50000, 40, 90, 900)}
	b.Results["rocksdb"].Phases = []api.PhaseResult{f}
	b.Status.Runs = b.Status.Runs[:1]
	line := "rocksdb  ycsb-f        8       1:1  100000       10.0       30.0         300  50000       20.0       60.0         600"
	if got := text(YCSBTable(b)); !strings.Contains(got, line+"\n") {
		t.Errorf("no line\n%s\nin\n%s", line, got)
	}
}

func TestPulseTable(t *testing.T) {
	want := `Pulse rounds
thread number  rocksdb time cost in seconds  leveldb mean round seconds
            1                       12.8~16                          30
            4                         3.2~4                         7.5
  time cost: the rounds' read times, min~max (each round reads its keys sorted, split over the threads)
  mean round seconds: reads + writes + deletes, from the status summary (full results have each round's read time)
`
	if diff := cmp.Diff(want, text(PulseTable(fixture(t)))); diff != "" {
		t.Errorf("pulse table (-want +got):\n%s", diff)
	}
}

func TestDBBenchLines(t *testing.T) {
	got := DBBenchLines(fixture(t))
	want := []string{
		"# rocksdb (rocksdb 7.8.3), load, threads=1",
		"load         :       2.000 micros/op 500000 ops/sec 10.000 seconds 5000000 operations;",
		"# rocksdb (rocksdb 7.8.3), threads=1",
		"readrandom   :      10.000 micros/op 100000 ops/sec 10.000 seconds 1000000 operations;",
		"ycsb-a       :      12.500 micros/op 80000 ops/sec 10.000 seconds 800000 operations;",
		"ycsb-c       :       6.667 micros/op 150000 ops/sec 10.000 seconds 1500000 operations;",
		"pulse        :       3.333 micros/op 300000 ops/sec 10.000 seconds 3000000 operations;",
		"# rocksdb (rocksdb 7.8.3), threads=4",
		"readrandom   :      10.000 micros/op 400000 ops/sec 10.000 seconds 4000000 operations;",
		"ycsb-a       :      12.500 micros/op 320000 ops/sec 10.000 seconds 3200000 operations;",
		"ycsb-c       :       6.667 micros/op 600000 ops/sec 10.000 seconds 6000000 operations;",
		"pulse        :      13.333 micros/op 300000 ops/sec 10.000 seconds 3000000 operations;",
		"",
		"# leveldb (leveldb 1.23), load, threads=1",
	}
	if len(got) < len(want) {
		t.Fatalf("%d lines:\n%s", len(got), strings.Join(got, "\n"))
	}
	if diff := cmp.Diff(want, got[:len(want)]); diff != "" {
		t.Errorf("db_bench lines (-want +got):\n%s", diff)
	}
}

// seed 001's db_bench command lines: three of them run fillseq, so three dbbench:fillseq lines,
// each under the command line it came from (they were three identical labels).
func TestDBBenchLinesNameTheirCommandLine(t *testing.T) {
	b := fixture(t)
	b.Results = nil
	b.Status.Runs = b.Status.Runs[:1]
	b.Spec.Workloads = []api.WorkloadSpec{
		{Name: api.WorkloadDBBench, DBBenchArgs: []string{"--benchmarks=fillseq", "--num=1000"}},
		{Name: api.WorkloadDBBench, DBBenchArgs: []string{"--benchmarks=fillseq", "--disable_wal=1", "--num=1000"}},
		{Name: api.WorkloadReadRandom},
		{Name: api.WorkloadDBBench, DBBenchArgs: []string{"--benchmarks=fillseq,readrandom", "--num=1000"}},
	}
	var rs []api.PhaseSummary
	for it := range int32(2) {
		for i, w := range []string{"dbbench:fillseq", "dbbench:fillseq", "readrandom", "dbbench:fillseq", "dbbench:readrandom"} {
			p := phase(w, 1, float64(1000*(i+1)), 10).PhaseSummary
			p.Iteration = it
			rs = append(rs, p)
		}
	}
	b.Status.Runs[0].Results = rs
	got := strings.Join(DBBenchLines(b), "\n")
	want := `# rocksdb (rocksdb 7.8.3), load, threads=1
load         :       2.000 micros/op 500000 ops/sec 10.000 seconds 5000000 operations;
# rocksdb (rocksdb 7.8.3), threads=1, iteration=0
# db_bench --benchmarks=fillseq --num=1000
dbbench:fillseq :    1000.000 micros/op 1000 ops/sec 10.000 seconds 10000 operations;
# db_bench --benchmarks=fillseq --disable_wal=1 --num=1000
dbbench:fillseq :     500.000 micros/op 2000 ops/sec 10.000 seconds 20000 operations;
readrandom   :     333.333 micros/op 3000 ops/sec 10.000 seconds 30000 operations;
# db_bench --benchmarks=fillseq,readrandom --num=1000
dbbench:fillseq :     250.000 micros/op 4000 ops/sec 10.000 seconds 40000 operations;
dbbench:readrandom :     200.000 micros/op 5000 ops/sec 10.000 seconds 50000 operations;
# rocksdb (rocksdb 7.8.3), threads=1, iteration=1
# db_bench --benchmarks=fillseq --num=1000
dbbench:fillseq :    1000.000 micros/op 1000 ops/sec 10.000 seconds 10000 operations;`
	if !strings.HasPrefix(got, want) {
		t.Errorf("db_bench lines:\n%s\nwant them to start\n%s", got, want)
	}
}

func TestWrite(t *testing.T) {
	var out bytes.Buffer
	if err := Write(&out, []*Benchmark{fixture(t)}, "auto", "markdown"); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, s := range []string{
		"### KVBenchmark default/demo: rocksdb,leveldb, 1000000 keys of 16+100 bytes, tmpfs, memory 1Gi, Succeeded\n",
		"#### Throughput and p99 latency by threads\n",
		"| Workload | Threads | rocksdb ops/s | rocksdb p99 (us) | leveldb ops/s | leveldb p99 (us) |\n|---|---:|---:|---:|---:|---:|\n",
		"#### YCSB (Pegasus columns, latency in us)\n",
		"| rocksdb | ycsb-a | 1 | 1:1 | 40000 | 10.0 | 30.0 | 300 | 40000 | 20.0 | 40.0 | 400 |\n",
		"#### Pulse rounds\n",
		"| 1 | 12.8~16 | 30 |\n",
	} {
		if !strings.Contains(got, s) {
			t.Errorf("no %q in\n%s", s, got)
		}
	}

	out.Reset()
	if err := Write(&out, []*Benchmark{fixture(t)}, "dbbench", "text"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "\n# leveldb (leveldb 1.23), threads=4\nreadrandom   :      20.000 micros/op 200000 ops/sec") {
		t.Errorf("db_bench output:\n%s", out.String())
	}
}

func TestWriteNotes(t *testing.T) {
	b := fixture(t)
	b.Results = nil
	b.Status.Runs[1].Phase, b.Status.Runs[1].Reason, b.Status.Runs[1].Message = api.RunFailed, api.ReasonOOMKilled, "container runner was OOM-killed\nmore"
	b.Status.Runs[0].Truncated = 3
	var out bytes.Buffer
	if err := Write(&out, []*Benchmark{b}, "threads", "text"); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"note: run rocksdb: 3 phases were left out of the status summary; the full result has them\n",
		"note: run leveldb failed (OOMKilled): container runner was OOM-killed\n",
	} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("no %q in\n%s", s, out.String())
		}
	}
}

func TestWriteErrors(t *testing.T) {
	empty := &Benchmark{}
	empty.Name = "new"
	noPulse := fixture(t)
	noPulse.Results = nil
	for i := range noPulse.Status.Runs {
		noPulse.Status.Runs[i].Results = noPulse.Status.Runs[i].Results[:1]
	}
	for _, c := range []struct {
		bs           []*Benchmark
		kind, format string
		want         string
	}{
		{[]*Benchmark{fixture(t)}, "pegasus", "text", `unknown table "pegasus" (one of auto, dbbench, ycsb, pulse, threads)`},
		{[]*Benchmark{fixture(t)}, "auto", "html", `unknown format "html" (one of text, markdown)`},
		{[]*Benchmark{empty}, "auto", "text", "new has no results (phase Pending)"},
		{[]*Benchmark{noPulse}, "pulse", "text", "default/demo has no pulse phases"},
		{[]*Benchmark{noPulse}, "ycsb", "text", "default/demo has no ycsb phases"},
	} {
		err := Write(&bytes.Buffer{}, c.bs, c.kind, c.format)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s/%s: got error %v, want %q", c.kind, c.format, err, c.want)
		}
	}
}

func TestPulseTableUsage(t *testing.T) {
	b := fixture(t)
	for i := range b.Results["rocksdb"].Phases {
		p := &b.Results["rocksdb"].Phases[i]
		for j := range p.PulseRounds {
			// 1 thread: one core busy, 40 MB read per round; 4 threads: two cores, 60 MB.
			u := &api.PhaseUsage{CPUPercent: 100, ReadBytes: 40e6}
			if p.Threads == 4 {
				u = &api.PhaseUsage{CPUPercent: 190 + float64(20*j), ReadBytes: 60e6}
			}
			p.PulseRounds[j].ReadUsage = u
		}
	}
	got := text(PulseTable(b))
	for _, want := range []string{
		"thread number  rocksdb time cost in seconds  rocksdb cpu %  rocksdb MB read  leveldb mean round seconds\n",
		"            1                       12.8~16            100               40                          30\n",
		"cpu %, MB read: the runner process during a round's reads",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
}
