package dbbench

import (
	"os"
	"strings"
	"testing"
)

func TestParseCurrentFormatWithHistogram(t *testing.T) {
	out, err := os.ReadFile("testdata/dbbench-7.8.3-histogram.txt")
	if err != nil {
		t.Fatal(err)
	}
	bs := Parse(string(out))
	if len(bs) != 2 || bs[0].Name != "fillseq" || bs[1].Name != "readrandom" {
		t.Fatalf("parsed %+v", bs)
	}
	rr := bs[1]
	if rr.Ops != 2000 || !rr.HasFound || rr.Found != 2000 || rr.Reads != 2000 || rr.OpsPerSec <= 0 || rr.Seconds <= 0 {
		t.Errorf("readrandom: %+v", rr)
	}
	if rr.Histogram == nil || rr.Histogram.Count != 2000 || !rr.Histogram.HasPercentiles || rr.Histogram.P99 <= 0 {
		t.Errorf("readrandom histogram: %+v", rr.Histogram)
	}
	if bs[0].Histogram == nil || bs[0].Histogram.Op != "write" {
		t.Errorf("fillseq histogram: %+v", bs[0].Histogram)
	}
	pr := rr.PhaseResult(1)
	if pr.Found == nil || *pr.Found != 2000 || pr.LatencyMicros == nil || pr.LatencyMicros.P99 != rr.Histogram.P99 {
		t.Errorf("phase result: %+v", pr)
	}
}

func TestParseOldFormat(t *testing.T) {
	out, err := os.ReadFile("testdata/dbbench-old.txt")
	if err != nil {
		t.Fatal(err)
	}
	bs := Parse(string(out))
	if len(bs) != 2 {
		// "fillseq : 1.765 micros/op;" has no ops/sec, so only the two lines that do count.
		t.Fatalf("got %d results: %+v", len(bs), bs)
	}
	rr := bs[0]
	if rr.Name != "readrandom" || rr.OpsPerSec != 214893 || rr.MBPerSec != 15.0 || rr.Found != 632356 || rr.Reads != 1000000 {
		t.Errorf("readrandom: %+v", rr)
	}
	if rr.Histogram == nil || rr.Histogram.Count != 1000000 || rr.Histogram.Median != 3.9 || rr.Histogram.HasPercentiles {
		t.Errorf("histogram: %+v", rr.Histogram)
	}
	pr := rr.PhaseResult(1)
	if pr.Ops != 1000000 || pr.Seconds <= 0 {
		t.Errorf("derived ops/seconds: %+v", pr.PhaseSummary)
	}
}

func TestParseSkipsProgressNoise(t *testing.T) {
	out := "... finished 100 ops       \r... finished 200 ops   \rDB path: [/x]\n" +
		"readwhilewriting :       2.816 micros/op 696584 ops/sec 0.057 seconds 40000 operations;   77.1 MB/s (20000 of 20000 found)\n"
	bs := Parse(out)
	if len(bs) != 1 || bs[0].Name != "readwhilewriting" || bs[0].Ops != 40000 {
		t.Fatalf("%+v", bs)
	}
}

func TestRewriteSeedFlags(t *testing.T) {
	args, notes := Rewrite([]string{"--db=/mnt/db/rocksdb", "--key_size=20", "--value_size=100", "--hard_rate_limit=2",
		"--disable_data_sync=1", "--writes_per_second=81920", "-benchmarks=readwhilewriting"}, "/tmp/db")
	got := strings.Join(args, " ")
	want := "--db=/tmp/db --key_size=20 --value_size=100 --benchmarks=readwhilewriting --benchmark_write_rate_limit=9830400"
	if got != want {
		t.Errorf("args = %s\nwant   %s", got, want)
	}
	if len(notes) != 3 {
		t.Errorf("notes = %v", notes)
	}
}

// FuzzParse: any input parses without panicking, and every result has sane fields.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"testdata/dbbench-7.8.3-histogram.txt", "testdata/dbbench-old.txt"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("readrandom : 1 micros/op 1 ops/sec 1 seconds 99999999999999999999999 operations; (1 of 2 found)\n")
	f.Add("x : nan micros/op 1e999 ops/sec;\nMicroseconds per read:\nCount: 1 Average: -nan  StdDev: nan\n")
	f.Add("Microseconds per read:\nPercentiles: P50: 1 P75: 2 P99: 3 P99.9: 4 P99.99: 5\n")
	f.Add("\r\r\r : micros/op")
	f.Fuzz(func(t *testing.T, s string) {
		for _, b := range Parse(s) {
			if b.Name == "" {
				t.Fatalf("empty name from %q", s)
			}
			_ = b.PhaseResult(1)
		}
	})
}
