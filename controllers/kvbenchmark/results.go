package kvbenchmark

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/archive"
	"github.com/kvbench/kvbench-operator/controllers/metrics"
)

// resultCache keeps, of each archived full result, the series built from it (metrics.RunSeries),
// so an archive ConfigMap is read and decoded once per operator process rather than on every
// reconcile (and not cached wholesale by an informer), and the result itself is not kept.
type resultCache struct {
	mu sync.Mutex
	m  map[types.NamespacedName]cachedResult // by ConfigMap
}

type cachedResult struct {
	benchmark string
	series    *metrics.RunSeries
}

// archivedSeries returns the series of the archived result of every run of b that has an archive,
// by run name. A run whose archive cannot be read has none here; its series come from status.
func (r *KVBenchmarkReconciler) archivedSeries(ctx context.Context, b *kvv1.KVBenchmark) map[string]*metrics.RunSeries {
	out := map[string]*metrics.RunSeries{}
	for _, run := range b.Status.Runs {
		if run.FullResult == nil || run.FullResult.ConfigMap == "" {
			continue
		}
		key := types.NamespacedName{Namespace: b.Namespace, Name: run.FullResult.ConfigMap}
		r.results.mu.Lock()
		c, ok := r.results.m[key]
		r.results.mu.Unlock()
		if ok {
			out[run.Name] = c.series
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
		out[run.Name] = r.cacheResult(key, b, run.Name, run.Engine, res)
	}
	return out
}

// cacheResult keeps the series of the result of b's run archived in ConfigMap key, and returns them.
func (r *KVBenchmarkReconciler) cacheResult(key types.NamespacedName, b *kvv1.KVBenchmark, run string, engine kvv1.EngineName, res *kvv1.Result) *metrics.RunSeries {
	series := metrics.NewRunSeries(b, run, engine, res)
	r.results.mu.Lock()
	defer r.results.mu.Unlock()
	if r.results.m == nil {
		r.results.m = map[types.NamespacedName]cachedResult{}
	}
	r.results.m[key] = cachedResult{benchmark: b.Name, series: series}
	return series
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
