package schedule

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/history"
)

// fleet records runs of an EachNode schedule on three nodes; ops(i, node) is the throughput of run i.
func fleet(t *testing.T, n int, ops func(i int, node string) float64, image func(i int) string) *history.History {
	t.Helper()
	h := history.New("fleet")
	for i := 0; i < n; i++ {
		b := &api.KVBenchmark{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("fleet-%02d", i)}}
		b.Spec.Storage.Medium = api.MediumTmpfs
		b.Status.Phase = api.PhaseSucceeded
		for _, node := range []string{"n1", "n2", "n3"} {
			b.Status.Runs = append(b.Status.Runs, api.RunStatus{Name: "rocksdb@" + node, Engine: api.EngineRocksDB, Phase: api.RunSucceeded,
				NodeName: node, Provenance: &api.ProvenanceSummary{ImageDigest: image(i), Node: "cpu x 2"},
				Results: []api.PhaseSummary{{Workload: "readrandom", Threads: 4, OpsPerSec: ops(i, node)}}})
		}
		h.Record(b, nil, history.Run{Time: metav1.NewTime(time.Unix(int64(i)*3600, 0)), Generation: 1}, 100)
	}
	return h
}

func noise(i int) float64 { return []float64{0, 4, -3, 2, -5, 1, 3, -2, 5, -1}[i%10] }

func schedule1(confirm api.ConfirmPolicy) *api.KVBenchmarkSchedule {
	s := &api.KVBenchmarkSchedule{}
	s.Spec.Detection = api.DetectionSpec{Confirm: confirm, Metrics: []api.DetectionMetric{{Name: api.MetricOpsPerSec}}}
	return s
}

// A change on every node at one run is a software change; on one node, node drift.
func TestDetectScope(t *testing.T) {
	same := func(int) string { return "sha256:a" }
	for _, tc := range []struct {
		name  string
		slow  func(node string) bool
		want  int
		scope string
	}{
		{"every node", func(string) bool { return true }, 3, "all 3 nodes: a software change"},
		{"one node", func(node string) bool { return node == "n2" }, 1, "1 of 3 nodes: node drift"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := fleet(t, 15, func(i int, node string) float64 {
				if i >= 12 && tc.slow(node) {
					return 500 + noise(i)
				}
				return 1000 + noise(i)
			}, same)
			f := detect(h, "fleet-14", schedule1(api.ConfirmNone), metav1.Now())
			if len(f.Report) != tc.want {
				t.Fatalf("%d change points, want %d: %+v", len(f.Report), tc.want, f.Report)
			}
			for _, c := range f.Report {
				if c.Scope != tc.scope || c.Child != "fleet-12" || c.Node == "" || c.Direction != api.Regressed {
					t.Errorf("change point %+v", c)
				}
			}
		})
	}
}

// A new image digest starts a new segment; a change there names it as the likely cause.
func TestDetectProvenanceCause(t *testing.T) {
	image := func(i int) string {
		if i >= 12 {
			return "sha256:b"
		}
		return "sha256:a"
	}
	h := fleet(t, 15, func(i int, node string) float64 {
		if i >= 12 {
			return 700 + noise(i)
		}
		return 1000 + noise(i)
	}, image)
	f := detect(h, "fleet-14", schedule1(api.ConfirmNone), metav1.Now())
	if len(f.Report) != 3 {
		t.Fatalf("%+v", f.Report)
	}
	c := f.Report[0]
	if c.Child != "fleet-12" || c.Cause != "image digest sha256:a -> sha256:b" || c.Before.N != 12 || c.After.N != 3 ||
		c.Before.First != "fleet-00" || c.Before.Last != "fleet-11" || c.After.Last != "fleet-14" {
		t.Errorf("change point %+v", c)
	}
	if !strings.HasPrefix(message(&c), "rocksdb@n1 readrandom threads=4 opsPerSec fell 30.2% at fleet-12") {
		t.Errorf("message %q", message(&c))
	}
	// The same image throughout and no change: nothing to report.
	h = fleet(t, 15, func(i int, node string) float64 { return 1000 + noise(i) }, func(int) string { return "sha256:a" })
	if f := detect(h, "fleet-14", schedule1(api.ConfirmNone), metav1.Now()); len(f.Report) != 0 {
		t.Errorf("%+v", f.Report)
	}
}

// With NextRun, a change point waits as a suspect for one more run that finds it again.
func TestDetectConfirmNextRun(t *testing.T) {
	ops := func(i int, node string) float64 {
		if i >= 12 {
			return 500 + noise(i)
		}
		return 1000 + noise(i)
	}
	s := schedule1(api.ConfirmNextRun)
	h := fleet(t, 15, ops, func(int) string { return "sha256:a" })
	f := detect(h, "fleet-14", s, metav1.Now())
	if len(f.Report) != 0 || len(f.Suspects) != 3 || f.Confirm {
		t.Fatalf("first sighting: %+v", f)
	}
	s.Status.Suspects = f.Suspects
	h = fleet(t, 16, ops, func(int) string { return "sha256:a" })
	f = detect(h, "fleet-15", s, metav1.Now())
	if len(f.Report) != 3 || len(f.Suspects) != 0 || !f.Report[0].Confirmed {
		t.Fatalf("second sighting: %+v", f)
	}
	// A suspect the next run does not find again is dropped.
	s.Status.Suspects = []api.SuspectChangePoint{{Series: "rocksdb@n1 readrandom threads=4 opsPerSec", Child: "fleet-03"}}
	h = fleet(t, 16, func(i int, node string) float64 { return 1000 + noise(i) }, func(int) string { return "sha256:a" })
	f = detect(h, "fleet-15", s, metav1.Now())
	if len(f.Dropped) != 1 || len(f.Suspects) != 0 {
		t.Errorf("unconfirmed: %+v", f)
	}
}

// A change of more series at once than status keeps: every one is reported once (and known from
// the history afterwards), with at most maxEvents events and a summary.
func TestManyChangePointsAtOnce(t *testing.T) {
	h := history.New("wide")
	s := schedule1(api.ConfirmNone)
	p := &pass{s: s, h: h, now: metav1.Now()}
	record := func(i int, ops float64) string {
		b := &api.KVBenchmark{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("wide-%02d", i)}}
		b.Status.Phase = api.PhaseSucceeded
		r := api.RunStatus{Name: "rocksdb", Engine: api.EngineRocksDB, Phase: api.RunSucceeded}
		for w := 0; w < 60; w++ {
			r.Results = append(r.Results, api.PhaseSummary{Workload: fmt.Sprintf("w%02d", w), Threads: 1, OpsPerSec: ops + noise(i+w)})
		}
		b.Status.Runs = []api.RunStatus{r}
		h.Record(b, nil, history.Run{}, 100)
		return b.Name
	}
	for i := 0; i < 16; i++ {
		ops := 1000.0
		if i >= 12 {
			ops = 500
		}
		p.findings(detect(h, record(i, ops), s, p.now), "")
	}
	if len(h.Reported) != 60 || len(s.Status.ChangePoints) != maxChangePoints {
		t.Fatalf("reported %d in the history, %d in status", len(h.Reported), len(s.Status.ChangePoints))
	}
	if len(p.events) != maxEvents+1 || !strings.HasPrefix(p.events[maxEvents].message, "and 50 more change points") {
		t.Errorf("%d events, the last %+v", len(p.events), p.events[len(p.events)-1])
	}
	p.events = nil
	p.findings(detect(h, record(16, 500), s, p.now), "")
	if len(h.Reported) != 60 || len(p.events) != 0 {
		t.Errorf("reported again: %d in the history, events %+v", len(h.Reported), p.events)
	}
}
