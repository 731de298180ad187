package v1alpha1

import (
	"strings"
	"testing"
)

func TestImplausible(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	n := func(v int64) *int64 { return &v }
	valid := PhaseSummary{Index: 3, Workload: "readrandom", Threads: 4, Ops: 4e6, Seconds: 1, OpsPerSec: 4e6, MicrosPerOp: 1,
		LatencyMicros: &Percentiles{Mean: 1, P50: 1, P99: 3, P999: 9, Max: 800}, Found: n(10)}
	cases := map[string]struct {
		edit func(p *PhaseSummary)
		want string
	}{
		"a real phase":                {edit: func(*PhaseSummary) {}},
		"an empty phase (no ops)":     {edit: func(p *PhaseSummary) { *p = PhaseSummary{Workload: "w"} }},
		"3.9e9 ops/s on 4 threads":    {edit: func(p *PhaseSummary) { p.OpsPerSec = 3.9e9 }},
		"1e308 ops/s":                 {edit: func(p *PhaseSummary) { p.OpsPerSec = 1e308 }, want: `phase 3 ("readrandom" threads=4): ops/s 1e+308 is outside 0-4e+09`},
		"negative ops/s":              {edit: func(p *PhaseSummary) { p.OpsPerSec = -1 }, want: "ops/s -1"},
		"ops in no time":              {edit: func(p *PhaseSummary) { p.Seconds = 0 }, want: "4000000 ops in 0 seconds"},
		"negative seconds":            {edit: func(p *PhaseSummary) { p.Seconds = -1 }, want: "seconds -1"},
		"negative ops":                {edit: func(p *PhaseSummary) { p.Ops = -1 }, want: "ops -1"},
		"a negative latency":          {edit: func(p *PhaseSummary) { p.LatencyMicros.P99 = -2 }, want: "latency p99 -2"},
		"a latency of 1e308":          {edit: func(p *PhaseSummary) { p.MicrosPerOp = 1e308 }, want: "micros/op 1e+308"},
		"an operation's 1e308 ops/s":  {edit: func(p *PhaseSummary) { p.Operations = []OperationSummary{{Name: "read", OpsPerSec: 1e308}} }, want: `operation "read": ops/s`},
		"a writer's impossible rate":  {edit: func(p *PhaseSummary) { p.WriteRate = f(1e300) }, want: "write rate 1e+300"},
		"a pulse round of 1e308 s":    {edit: func(p *PhaseSummary) { p.Pulse = &PulseSummary{Rounds: 1, MaxRoundSeconds: 1e308} }, want: "pulse round seconds"},
		"threads do not buy a rate":   {edit: func(p *PhaseSummary) { p.Threads, p.OpsPerSec = 1<<30, 1e18 }, want: "ops/s 1e+18"},
		"a long workload name is cut": {edit: func(p *PhaseSummary) { p.Workload, p.Ops = strings.Repeat("w", 5000), -1 }, want: `"` + strings.Repeat("w", 64) + `…"`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			p := valid
			l := *valid.LatencyMicros
			p.LatencyMicros = &l
			c.edit(&p)
			got := p.Implausible()
			if (got == "") != (c.want == "") || !strings.Contains(got, c.want) {
				t.Errorf("Implausible() = %q, want %q", got, c.want)
			}
		})
	}
}
