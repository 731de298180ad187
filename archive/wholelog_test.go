package archive

import (
	"encoding/json"
	"strings"
	"testing"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

func line(t *testing.T, prefix string, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return prefix + string(b) + "\n"
}

// Issue 29: a full read says when it is not the whole log a runner writes.
func TestLogIncomplete(t *testing.T) {
	load := api.PhaseResult{PhaseSummary: api.PhaseSummary{Workload: "load", Threads: 1, Ops: 10, Seconds: 1, OpsPerSec: 10}}
	p0 := api.PhaseResult{PhaseSummary: api.PhaseSummary{Index: 0, Workload: "readrandom", Threads: 1, Ops: 5, Seconds: 1, OpsPerSec: 5}}
	p1 := api.PhaseResult{PhaseSummary: api.PhaseSummary{Index: 1, Workload: "readrandom", Threads: 2, Ops: 9, Seconds: 1, OpsPerSec: 9}}
	res := &api.Result{SchemaVersion: api.ResultSchemaVersion, Engine: api.EngineRocksDB, Load: &load, Phases: []api.PhaseResult{p0, p1}}
	whole := "Engine: x\n" + line(t, api.ResultPhaseLogPrefix, load) + line(t, api.ResultPhaseLogPrefix, p0) +
		line(t, api.ResultPhaseLogPrefix, p1) + line(t, api.ResultLogPrefix, res)
	cases := map[string]struct {
		log, want string
	}{
		"whole": {log: whole},
		// Rotated after the result line: the current file holds what came after it, here nothing.
		"rotated after the result line": {log: "", want: "no result line"},
		"cut before the result line":    {log: strings.Split(whole, api.ResultLogPrefix)[0], want: "no result line"},
		// Rotated before it: the earlier phase lines are in a file the kubelet no longer serves.
		"rotated before the result line": {log: line(t, api.ResultPhaseLogPrefix, p1) + line(t, api.ResultLogPrefix, res),
			want: "1 of the result line's 2 phases have no phase line (indexes 0-0), nor has its load"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			l, err := ReadLog(strings.NewReader(c.log), api.DefaultResultLimits, true)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if e := l.Incomplete(); e != nil {
				got = e.Error()
			}
			if (got == "") != (c.want == "") || !strings.Contains(got, c.want) {
				t.Errorf("Incomplete() = %q, want %q", got, c.want)
			}
		})
	}
}

// Impossible numbers are refused at decoding, the phase named, like output over the limits: in
// phase lines, in the result line, in an archive.
func TestImpossibleNumbersAreRefused(t *testing.T) {
	ok := api.PhaseResult{PhaseSummary: api.PhaseSummary{Index: 0, Workload: "readrandom", Threads: 1, Ops: 5, Seconds: 1, OpsPerSec: 5}}
	huge := api.PhaseResult{PhaseSummary: api.PhaseSummary{Index: 1, Workload: "x", Threads: 1, Ops: 1, Seconds: 1, OpsPerSec: 1e308}}
	res := &api.Result{SchemaVersion: api.ResultSchemaVersion, Engine: api.EngineRocksDB, Phases: []api.PhaseResult{ok, huge}}
	log := line(t, api.ResultPhaseLogPrefix, ok) + line(t, api.ResultPhaseLogPrefix, huge) + line(t, api.ResultLogPrefix, res)
	for _, full := range []bool{false, true} {
		l, err := ReadLog(strings.NewReader(log), api.DefaultResultLimits, full)
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Phases) != 1 || l.Phases[0].OpsPerSec != 5 {
			t.Errorf("full=%v: phase lines kept %+v, want the valid one", full, l.Phases)
		}
		if l.Over == nil || !strings.Contains(l.Over.Error(), `phase(s) with numbers no engine reaches (the first: phase 1 ("x" threads=1): ops/s 1e+308 is outside 0-1e+09`) {
			t.Errorf("full=%v: Over = %v", full, l.Over)
		}
		if full && (l.Result == nil || len(l.Result.Phases) != 1) {
			t.Errorf("the result line kept %+v", l.Result)
		}
	}
	// An archive (or a file given to kubectl kvbench) with them is refused whole.
	data, err := compress(res)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Decompress(data); err == nil || !strings.Contains(err.Error(), "numbers no engine reaches") {
		t.Errorf("Decompress: %v, want refused", err)
	}
}
