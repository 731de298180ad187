package report

import (
	"strings"
	"testing"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// A repeated benchmark's report adds median ± CI (CoV) per point and flags the noisy one.
//
// ops/s over 6 repeats, sorted: readrandom 1 thread [1000 1010 1020 1030 1040 1050]: median 1025;
// the 95% interval of the median of 6 values is [x(1), x(6)] (coverage 1 - 2/64 = 0.969), so its
// half-width is max(1050/1025-1, 1-1000/1025) = 2.4%; CoV = stdev/mean (Python statistics):
// 18.708286933869708 / 1025 = 1.8%. readrandom 4 threads [800 .. 1300 step 100]: median 1050,
// interval [800, 1300], half-width max(1300/1050-1, 1-800/1050) = 23.8%, CoV 187.08286933869707 / 1050 = 17.8%: noisy.
func TestRepeatsTable(t *testing.T) {
	b := fixture(t)
	b.Results = nil
	b.Status.Runs = b.Status.Runs[1:]
	var rs []api.PhaseSummary
	for it := range int32(6) {
		a := phase("readrandom", 1, 1000+10*float64(it), 10).PhaseSummary
		c := phase("readrandom", 4, 800+100*float64(it), 20).PhaseSummary
		a.Iteration, c.Iteration = it, it
		rs = append(rs, a, c)
	}
	b.Status.Runs[0].Results = rs
	var out strings.Builder
	if err := Write(&out, []*Benchmark{b}, "threads", "text"); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, line := range []string{
		"Repeats: median ± 95% interval (CoV)",
		"Run      Workload    Threads  n  ops/s                     p99 (us)                noisy",
		"leveldb  readrandom        1  6  1025 ± 2.4% (CoV 1.8%)    10.0 ± 0.0% (CoV 0.0%)",
		"leveldb  readrandom        4  6  1050 ± 23.8% (CoV 17.8%)  20.0 ± 0.0% (CoV 0.0%)  noisy",
	} {
		if !strings.Contains(got, line+"\n") {
			t.Errorf("no line\n%s\nin\n%s", line, got)
		}
	}
	// Without repeats there is no such table.
	out.Reset()
	if err := Write(&out, []*Benchmark{fixture(t)}, "auto", "text"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "Repeats") {
		t.Errorf("repeats table without repeats:\n%s", out.String())
	}
}
