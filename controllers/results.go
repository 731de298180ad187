package controllers

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/controllers/archive"
)

// resultCache keeps of the archived full results what the metrics are built from (forMetrics),
// so the archive ConfigMaps are read once per operator process rather than on every reconcile
// (and not cached wholesale by an informer).
type resultCache struct {
	mu sync.Mutex
	m  map[types.NamespacedName]cachedResult // by ConfigMap
}

type cachedResult struct {
	benchmark string
	res       *kvv1.Result
}

// archivedResults returns the full result of every run of b that has an archive, by run name.
// A run whose archive cannot be read has none here; its series come from status.
func (r *KVBenchmarkReconciler) archivedResults(ctx context.Context, b *kvv1.KVBenchmark) map[string]*kvv1.Result {
	out := map[string]*kvv1.Result{}
	for _, run := range b.Status.Runs {
		if run.FullResult == nil || run.FullResult.ConfigMap == "" {
			continue
		}
		key := types.NamespacedName{Namespace: b.Namespace, Name: run.FullResult.ConfigMap}
		r.results.mu.Lock()
		c, ok := r.results.m[key]
		r.results.mu.Unlock()
		if ok {
			out[run.Name] = c.res
			continue
		}
		var cm corev1.ConfigMap
		if err := r.APIReader.Get(ctx, key, &cm); err != nil {
			logf.FromContext(ctx).Info("cannot read the archived result; its series come from status", "configMap", key.Name, "error", err.Error())
			continue
		}
		res, err := archive.FromConfigMap(&cm, b, run.FullResult.SHA256)
		if err != nil {
			logf.FromContext(ctx).Info("cannot decode the archived result; its series come from status", "configMap", key.Name, "error", err.Error())
			continue
		}
		out[run.Name] = r.cacheResult(key, b.Name, res)
	}
	return out
}

// cacheResult keeps what the series read of the result archived in ConfigMap key, and returns it.
func (r *KVBenchmarkReconciler) cacheResult(key types.NamespacedName, benchmark string, res *kvv1.Result) *kvv1.Result {
	res = forMetrics(res)
	r.results.mu.Lock()
	defer r.results.mu.Unlock()
	if r.results.m == nil {
		r.results.m = map[types.NamespacedName]cachedResult{}
	}
	r.results.m[key] = cachedResult{benchmark: benchmark, res: res}
	return res
}

// haveArchivedResults says whether every archive b's status names is in the cache.
func (r *KVBenchmarkReconciler) haveArchivedResults(b *kvv1.KVBenchmark) bool {
	r.results.mu.Lock()
	defer r.results.mu.Unlock()
	for _, run := range b.Status.Runs {
		if fr := run.FullResult; fr != nil && fr.ConfigMap != "" {
			if _, ok := r.results.m[types.NamespacedName{Namespace: b.Namespace, Name: fr.ConfigMap}]; !ok {
				return false
			}
		}
	}
	return true
}

// forgetResults drops the cached results of a deleted benchmark.
func (r *KVBenchmarkReconciler) forgetResults(key types.NamespacedName) {
	r.results.mu.Lock()
	defer r.results.mu.Unlock()
	for k, c := range r.results.m {
		if k.Namespace == key.Namespace && c.benchmark == key.Name {
			delete(r.results.m, k)
		}
	}
}

// forMetrics keeps of a full result the phases and the load without what no series reads: time
// series, engine dumps, encoded histograms, device and protocol details, and the provenance (with
// its OPTIONS file, most of an archive). With a thousand finished runs in one operator, the whole
// results were its largest use of memory.
func forMetrics(res *kvv1.Result) *kvv1.Result {
	strip := func(p kvv1.PhaseResult) kvv1.PhaseResult {
		return kvv1.PhaseResult{PhaseSummary: p.PhaseSummary, PulseRounds: p.PulseRounds, Usage: p.Usage, EngineStats: p.EngineStats}
	}
	out := &kvv1.Result{SchemaVersion: res.SchemaVersion, Engine: res.Engine, Phases: make([]kvv1.PhaseResult, len(res.Phases))}
	for i := range res.Phases {
		out.Phases[i] = strip(res.Phases[i])
	}
	if res.Load != nil {
		l := strip(*res.Load)
		out.Load = &l
	}
	return out
}
