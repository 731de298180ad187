package kvbenchmark

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/stats"
)

// ConditionCompacted is True when the status left detail out to stay within its budget
// (kvv1.StatusBudgetBytes); the archives keep everything.
const ConditionCompacted = "Compacted"

// maxRunText bounds a runner-supplied text kept in a run's status once the status is compacted.
const maxRunText = 256

// statusSteps shrink a status, each keeping less than the one before, for every run alike: what a
// report can recompute or read from the archive goes first.
var statusSteps = []struct {
	what  string
	apply func(r *kvv1.RunStatus)
}{
	{"per-operation breakdowns", func(r *kvv1.RunStatus) { forPhases(r, func(p *kvv1.PhaseSummary) { p.Operations = nil }) }},
	{"the repeats' p99 summaries", func(r *kvv1.RunStatus) {
		for i := range r.Points {
			r.Points[i].P99Micros = nil
		}
	}},
	{"the repeats' summaries", func(r *kvv1.RunStatus) { r.Points = nil }},
	{"latency percentiles and rates (phases keep their throughput)", func(r *kvv1.RunStatus) { forPhases(r, compact) }},
	{"long runner texts", func(r *kvv1.RunStatus) {
		r.EngineVersion = cutText(r.EngineVersion)
		if p := r.Provenance; p != nil {
			p.Node, p.RunnerRevision, p.SpecHash = cutText(p.Node), cutText(p.RunnerRevision), cutText(p.SpecHash)
		}
	}},
}

// fitStatus keeps st's JSON within kvv1.StatusBudgetBytes: it applies statusSteps until it fits,
// then keeps the first phases of every run, as many in each as fit (the others counted in
// truncated), and as a last resort drops loads and provenance. It is a pure function of st, and
// a status it fitted fits unchanged, so passes do not flap. The Compacted condition says what
// went (now is its transition time, unless it was compacted before).
func fitStatus(st *kvv1.KVBenchmarkStatus, generation int64, now metav1.Time) {
	var was *metav1.Condition
	if c := meta.FindStatusCondition(st.Conditions, ConditionCompacted); c != nil {
		was = c.DeepCopy()
	}
	if statusSize(st) <= kvv1.StatusBudgetBytes {
		return // a status compacted before stays so (its sources may be gone), and says so
	}
	meta.RemoveStatusCondition(&st.Conditions, ConditionCompacted)
	var left []string
	done := func() bool { return statusSize(st) <= kvv1.StatusBudgetBytes-512 } // room for the condition
	for _, step := range statusSteps {
		for i := range st.Runs {
			step.apply(&st.Runs[i])
		}
		left = append(left, step.what)
		if done() {
			break
		}
	}
	if !done() {
		keepPhases(st, kvv1.StatusBudgetBytes-512)
		left = append(left, "phases beyond the first of each run (runs[].truncated counts them)")
	}
	if !done() {
		for i := range st.Runs {
			st.Runs[i].Load, st.Runs[i].Provenance = nil, nil
		}
		left = append(left, "loads and provenance")
	}
	if was != nil && was.Status == metav1.ConditionTrue {
		now = was.LastTransitionTime
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: ConditionCompacted, Status: metav1.ConditionTrue,
		Reason: "StatusBudget", LastTransitionTime: now, ObservedGeneration: generation,
		Message: truncate(fmt.Sprintf("status left out %s to stay within %d KiB; the archived full results hold everything (kubectl kvbench report)",
			joinList(left), kvv1.StatusBudgetBytes>>10))})
}

// keepPhases keeps the first k phases of every run, the most that fit within budget: the status
// without phases, plus each run's first k phases (each phase's JSON and a comma).
func keepPhases(st *kvv1.KVBenchmarkStatus, budget int) {
	all := make([][]kvv1.PhaseSummary, len(st.Runs))
	truncated := make([]int32, len(st.Runs))
	sizes := make([][]int, len(st.Runs)) // sizes[i][k]: run i's first k phases
	most := 0
	for i := range st.Runs {
		r := &st.Runs[i]
		all[i], truncated[i] = r.Results, r.Truncated
		sizes[i] = make([]int, len(r.Results)+1)
		for k := range r.Results {
			raw, _ := json.Marshal(&r.Results[k])
			sizes[i][k+1] = sizes[i][k] + len(raw) + 1
		}
		most = max(most, len(r.Results))
		r.Results, r.Truncated = nil, math.MaxInt32 // the widest count, for the size without phases
	}
	base := statusSize(st) + len(st.Runs)*len(`"results":[],`)
	k := sort.Search(most+1, func(k int) bool {
		n := base
		for i := range sizes {
			n += sizes[i][min(k, len(sizes[i])-1)]
		}
		return n > budget
	}) - 1 // the largest k that fits
	k = max(k, 0)
	for i := range st.Runs {
		st.Runs[i].Results, st.Runs[i].Truncated = all[i], truncated[i]
		capPhases(&st.Runs[i], k)
	}
}

// statusSize is the length of st's JSON. A status that does not marshal has a number that is not
// finite, which no step removes: those become finite first.
func statusSize(st *kvv1.KVBenchmarkStatus) int {
	raw, err := json.Marshal(st)
	if err != nil {
		finiteFloats(reflect.ValueOf(st))
		raw, _ = json.Marshal(st)
	}
	return len(raw)
}

// finiteFloats makes every float in v finite (stats.Finite).
func finiteFloats(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			finiteFloats(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				finiteFloats(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			finiteFloats(v.Index(i))
		}
	case reflect.Float32, reflect.Float64:
		if v.CanSet() {
			v.SetFloat(stats.Finite(v.Float()))
		}
	}
}

// compact keeps a phase's identity and throughput: index, workload, threads, iteration, ops,
// seconds, ops/s and micros/op (kvv1.StatusPhaseBytes).
func compact(p *kvv1.PhaseSummary) {
	*p = kvv1.PhaseSummary{Index: p.Index, Workload: cutText(p.Workload), Threads: p.Threads, Iteration: p.Iteration,
		Ops: p.Ops, Seconds: p.Seconds, OpsPerSec: p.OpsPerSec, MicrosPerOp: p.MicrosPerOp}
}

func forPhases(r *kvv1.RunStatus, f func(*kvv1.PhaseSummary)) {
	for i := range r.Results {
		f(&r.Results[i])
	}
	if r.Load != nil {
		f(r.Load)
	}
}

func cutText(s string) string {
	if len(s) <= maxRunText {
		return s
	}
	return s[:maxRunText-3] + "..."
}

func joinList(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	out := ""
	for i, x := range xs {
		switch {
		case i == 0:
			out = x
		case i == len(xs)-1:
			out += " and " + x
		default:
			out += ", " + x
		}
	}
	return out
}
