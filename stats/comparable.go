package stats

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// Mismatch lists what makes the numbers of two benchmarks incomparable, one difference per line
// in the form "dataset.size: 128Mi vs 64Mi" (old's value first): the dataset, and the settings of
// the workloads both ran (threads aside: points are matched by them). An unset seed and the seed
// it resolved to (status.runs[].provenance.seed) are the same seed, so a benchmark saved with its
// seed pinned matches a rerun of the spec as written. Engines, their options, resources and
// storage may differ: they are what a comparison compares. Nil when comparable.
//
// A benchmark known only from a runner result file has no spec; its runs' dataset (key count,
// key and value sizes) stands in for it.
func Mismatch(old, new *api.KVBenchmark) []string {
	var out []string
	if hasDataset(old) && hasDataset(new) {
		a, b := old.Spec.Dataset, new.Spec.Dataset
		a.Seed, b.Seed = resolvedSeed(old), resolvedSeed(new)
		out = append(out, fieldDiff("dataset", a, b)...)
	} else if a, b := runDataset(old), runDataset(new); a != nil && b != nil {
		out = append(out, fieldDiff("dataset", *a, *b)...)
	}
	wa, wb := workloadsByPoint(old.Spec.Workloads), workloadsByPoint(new.Spec.Workloads)
	for _, k := range slices.Sorted(maps.Keys(wa)) {
		if w, ok := wb[k]; ok {
			out = append(out, fieldDiff("workload "+k, wa[k], w)...)
		}
	}
	return out
}

func hasDataset(b *api.KVBenchmark) bool {
	return b.Spec.Dataset.Size != nil || b.Spec.Dataset.Num != nil
}

// resolvedSeed is the spec's seed, or the one the runs recorded when the spec left it unset (0
// when no run recorded one).
func resolvedSeed(b *api.KVBenchmark) int64 {
	if s := b.Spec.Dataset.Seed; s != 0 {
		return s
	}
	for _, r := range b.Status.Runs {
		if r.Provenance != nil && r.Provenance.Seed != 0 {
			return r.Provenance.Seed
		}
	}
	return 0
}

func runDataset(b *api.KVBenchmark) *api.DatasetInfo {
	for _, r := range b.Status.Runs {
		if r.Dataset != nil {
			d := *r.Dataset
			d.Bytes = 0 // follows from the others
			return &d
		}
	}
	return nil
}

// workloadsByPoint keys the spec's workloads as their points are named (ycsb-a, readrandom#2),
// without their thread counts.
func workloadsByPoint(ws []api.WorkloadSpec) map[string]api.WorkloadSpec {
	out := map[string]api.WorkloadSpec{}
	for _, w := range ws {
		name := string(w.Name)
		if w.YCSB != nil && w.YCSB.Workload != "" {
			name = "ycsb-" + strings.ToLower(string(w.YCSB.Workload))
		}
		k := name
		for n := 2; ; n++ {
			if _, dup := out[k]; !dup {
				break
			}
			k = fmt.Sprintf("%s#%d", name, n)
		}
		w.Threads = nil
		out[k] = w
	}
	return out
}

// fieldDiff names the fields (dotted JSON paths under prefix) whose values differ between a and b.
func fieldDiff(prefix string, a, b any) []string {
	fa, fb := flatten(a), flatten(b)
	keys := slices.Sorted(maps.Keys(fa))
	for _, k := range slices.Sorted(maps.Keys(fb)) {
		if _, ok := fa[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		va, oka := fa[k]
		vb, okb := fb[k]
		if oka && okb && va == vb {
			continue
		}
		if !oka {
			va = "unset"
		}
		if !okb {
			vb = "unset"
		}
		out = append(out, fmt.Sprintf("%s.%s: %s vs %s", prefix, k, va, vb))
	}
	return out
}

// flatten turns v's JSON form into dotted paths and their values as text ("valueSizeRange.min").
func flatten(v any) map[string]string {
	data, err := json.Marshal(v)
	if err != nil {
		return map[string]string{"": err.Error()}
	}
	var tree any
	if err := json.Unmarshal(data, &tree); err != nil {
		return map[string]string{"": err.Error()}
	}
	out := map[string]string{}
	var walk func(path string, t any)
	walk = func(path string, t any) {
		switch t := t.(type) {
		case map[string]any:
			for k, v := range t {
				if path != "" {
					k = path + "." + k
				}
				walk(k, v)
			}
		case nil:
		default:
			text, _ := json.Marshal(t)
			out[path] = strings.Trim(string(text), `"`)
		}
	}
	walk("", tree)
	return out
}
