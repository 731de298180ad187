package report

import (
	"fmt"
	"strconv"

	"github.com/kvbench/kvbench-operator/stats"
)

// RepeatsTable summarises each repeated point: ops/s and p99 as median ± the half-width of the
// median's 95% interval (CoV), and whether the point is noisy. Nil when nothing was repeated.
func RepeatsTable(b *Benchmark) *Table {
	t := &Table{Title: "Repeats: median ± 95% interval (CoV)", Headers: []string{"Run", "Workload", "Threads", "n", "ops/s", "p99 (us)", "noisy"}}
	for _, p := range b.Points() {
		if len(p.Phases) < 2 {
			continue
		}
		s := stats.Summary(&p, stats.DefaultNoisyCoV)
		lat := Empty
		if s.P99Micros != nil {
			lat = stats.Format(*s.P99Micros, micros)
		}
		noisy := ""
		if s.Noisy {
			noisy = "noisy"
		}
		t.add(p.Run, p.Workload, strconv.Itoa(int(p.Threads)), strconv.Itoa(int(s.OpsPerSec.N)), stats.Format(s.OpsPerSec, ops), lat, noisy)
	}
	if len(t.Rows) == 0 {
		return nil
	}
	t.Notes = append(t.Notes, fmt.Sprintf("∞: fewer than 6 repeats give no finite 95%% interval for the median; noisy: CoV of ops/s above %g%%", 100*stats.DefaultNoisyCoV))
	return t
}
