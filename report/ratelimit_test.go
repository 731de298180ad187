package report

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	runnerreport "github.com/kvbench/kvbench-operator/runner/report"
)

// rateLimited is a real runner result (kvbench-runner run, RocksDB, 20000 keys): readwhilewriting
// with a writer target of 50M writes/s (missed: 53930 reached), then of 500/s (489 reached,
// within 5%), then an unlimited readrandom.
func rateLimited(t *testing.T) *api.Result {
	t.Helper()
	data, err := os.ReadFile("testdata/ratelimit/ratelimit-rocksdb.result.json")
	if err != nil {
		t.Fatal(err)
	}
	var r api.Result
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

const rateLimitedTable = `Throughput and p99 latency by threads
Workload            Threads  rocksdb ops/s  rocksdb p99 (us)  rocksdb writes/s                rocksdb write p99 (us) schedule/service
load                      2          88662              8.38  -                               -
readwhilewriting          1          33625              62.3  53930 (target 50000000 missed)  984089 / 36.3
readwhilewriting#2        1         173086              9.62  489 (target 500)                120586 / 124
readrandom                1         165788              8.45  -                               -
  ops/s over all threads; p99 over all operations of the phase, in microseconds
  writes/s: the rate-limited background writer's reached rate and its target; "missed" = more than 5% short
  write p99 schedule/service: from each write's scheduled time (includes any backlog) / from its actual start (the engine's own write time)
  a missed target's schedule latency is mostly the writer's backlog, not the engine: read the service time
`

// A missed target is marked on the writer's rate, with the service time next to the latency from
// the schedule, from the full result.
func TestThreadsTableRateTarget(t *testing.T) {
	b := &Benchmark{Results: map[string]*api.Result{"rocksdb": rateLimited(t)}}
	if diff := cmp.Diff(rateLimitedTable, text(ThreadsTable(b))); diff != "" {
		t.Errorf("threads table (-want +got):\n%s", diff)
	}
}

// In the cluster without the archive the table comes from the status summaries (the runner's
// termination message): the verdict and service p99 are there too; when the summary was trimmed
// of its per-operation breakdown the schedule latency is unknown, never made up.
func TestThreadsTableRateTargetFromStatus(t *testing.T) {
	res := rateLimited(t)
	sum := runnerreport.Summarize(res)
	run := api.RunStatus{Name: "rocksdb", Engine: res.Engine, Phase: api.RunSucceeded, Load: sum.Load, Results: sum.Phases}
	b := &Benchmark{}
	b.Status.Runs = []api.RunStatus{run}
	if diff := cmp.Diff(rateLimitedTable, text(ThreadsTable(b))); diff != "" {
		t.Errorf("threads table from status (-want +got):\n%s", diff)
	}

	for i := range run.Results {
		run.Results[i].Operations = nil
	}
	b.Status.Runs = []api.RunStatus{run}
	got := ThreadsTable(b)
	if c := got.Rows[1][4:]; !cmp.Equal(c, []string{"53930 (target 50000000 missed)", "- / 36.3"}) {
		t.Errorf("trimmed summary: missed target cells %q", c)
	}
	if c := got.Rows[3][4:]; !cmp.Equal(c, []string{Empty, Empty}) {
		t.Errorf("unlimited readrandom: %q", c)
	}
}

// Without any rate target the threads table keeps its columns (the e2e suite parses them).
func TestThreadsTableNoRateColumns(t *testing.T) {
	res := rateLimited(t)
	res.Phases = res.Phases[2:]
	b := &Benchmark{Results: map[string]*api.Result{"rocksdb": res}}
	if h := ThreadsTable(b).Headers; !cmp.Equal(h, []string{"Workload", "Threads", "rocksdb ops/s", "rocksdb p99 (us)"}) {
		t.Errorf("headers %q", h)
	}
}
