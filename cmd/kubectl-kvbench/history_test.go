package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/history"
)

// savedHistory writes a history of 13 runs (throughput halves at run 10, run 7 an outlier) and a
// reported change point, as `history -o json` writes them.
func savedHistory(t *testing.T) string {
	t.Helper()
	h := history.New("nightly")
	ops := []float64{1000, 1010, 990, 1005, 995, 1000, 1008, 600, 1002, 998, 500, 505, 495}
	for i, v := range ops {
		b := &api.KVBenchmark{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("nightly-%d", i)}}
		b.Spec.Storage.Medium = api.MediumTmpfs
		b.Status.Phase = api.PhaseSucceeded
		b.Status.Runs = []api.RunStatus{{Name: "rocksdb", Engine: api.EngineRocksDB, Phase: api.RunSucceeded,
			Results: []api.PhaseSummary{{Workload: "readrandom", Threads: 4, OpsPerSec: v, LatencyMicros: &api.Percentiles{P50: 1, P99: 1e6 / v, P999: 3}}}}}
		h.Record(b, nil, history.Run{Time: metav1.NewTime(time.Date(2026, 11, 20+i, 3, 0, 0, 0, time.UTC))}, 100)
	}
	v := history.View{History: h, ChangePoints: []api.ScheduleChangePoint{{Series: "rocksdb readrandom threads=4 opsPerSec", Child: "nightly-10",
		Direction: api.Regressed, ChangePercent: -50, P: 1e-9, Cause: "template generation 1 -> 2"}}}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "nightly.json")
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestHistoryTable(t *testing.T) {
	f := savedHistory(t)
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"history", "-f", f, "--metric", "opsPerSec"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	s := out.String()
	for _, want := range []string{
		"KVBenchmarkSchedule nightly: 13 runs (2026-11-20T03:00:00Z .. 2026-12-02T03:00:00Z), 4 series; 1 change points reported, 1 unacknowledged",
		"rocksdb readrandom threads=4 opsPerSec\n",
		"<- Regressed -50.0% (p=1e-09), likely cause: template generation 1 -> 2",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %q in\n%s", want, s)
		}
	}
	if strings.Contains(s, "p99Micros") {
		t.Errorf("--metric opsPerSec printed another metric:\n%s", s)
	}
	lines := strings.Split(s, "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, "nightly-7 ") && !strings.HasSuffix(strings.TrimSpace(l), "outlier") {
			t.Errorf("run 7 (600 among 1000s, then back) is not marked an outlier: %q", l)
		}
	}
}

func TestHistoryCSVAndJSON(t *testing.T) {
	f := savedHistory(t)
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"history", "-f", f, "-o", "csv", "--series", "opsPerSec", "--last", "3"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	rows, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || strings.Join(rows[0], ",") != strings.Join(history.CSVHeader, ",") || rows[1][1] != "nightly-10" || rows[1][10] != "500" {
		t.Errorf("csv rows %q", rows)
	}
	out.Reset()
	if code := run(context.Background(), []string{"history", "-f", f, "-o", "json"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var v history.View
	if err := json.Unmarshal(out.Bytes(), &v); err != nil || len(v.History.Runs) != 13 || len(v.ChangePoints) != 1 {
		t.Errorf("json: %v %+v", err, v)
	}
}

func TestHistoryErrors(t *testing.T) {
	f := savedHistory(t)
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"history":{"schemaVersion":"v0"}}`), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"history"}, "name a KVBenchmarkSchedule or give -f FILE"},
		{[]string{"history", "nightly", "-f", f}, "name a KVBenchmarkSchedule or give -f FILE"},
		{[]string{"history", "-f", f, "-o", "yaml"}, `unknown --output "yaml"`},
		{[]string{"history", "-f", f, "--metric", "cpu"}, `unknown --metric "cpu"`},
		{[]string{"history", "-f", f, "--last", "-1"}, "--last -1"},
		{[]string{"history", "-f", bad}, "not a history written by kubectl kvbench history -o json"},
		{[]string{"ack", "nightly"}, "name the run of the change point or give --all"},
		{[]string{"ack", "nightly", "nightly-5", "--all"}, "name the run of the change point or give --all"},
		{[]string{"trigger"}, "accepts 1 arg"},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), tc.args, &out, &errb); code != 1 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, errb.String(), tc.want)
		}
	}
}

func TestAckTargets(t *testing.T) {
	now := metav1.Now()
	s := &api.KVBenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Name: "nightly"}}
	s.Status.ChangePoints = []api.ScheduleChangePoint{
		{Series: "a", Child: "n-1", Direction: api.Regressed, ChangePercent: -10, AcknowledgedAt: &now},
		{Series: "a", Child: "n-5", Direction: api.Regressed, ChangePercent: -50},
		{Series: "b", Child: "n-5", Direction: api.Regressed, ChangePercent: 100},
	}
	if n, err := ackTargets(s, "n-5"); n != 2 || err != nil {
		t.Errorf("n-5: %d %v", n, err)
	}
	if n, err := ackTargets(s, "*"); n != 2 || err != nil {
		t.Errorf("*: %d %v", n, err)
	}
	if _, err := ackTargets(s, "n-1"); err == nil || !strings.Contains(err.Error(), "there are: n-5 (a Regressed -50.0%)") {
		t.Errorf("n-1 (acknowledged): %v", err)
	}
	s.Status.ChangePoints = nil
	if _, err := ackTargets(s, "*"); err == nil || !strings.Contains(err.Error(), "no unacknowledged change point") {
		t.Errorf("none: %v", err)
	}
}
