package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/test/envtest"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

// A real API server (envtest: kube-apiserver and etcd, no kubelet) for the commands that read
// the cluster: KVBenchmarks with the status the operator writes, runner pods long gone, so the
// plugin reports from status as it does after cleanup. Started once, by the first test that
// needs it, and stopped by TestMain.
var apiServer struct {
	once       sync.Once
	env        *ctrlenvtest.Environment
	client     client.Client
	kubeconfig string
	err        error
	namespaces int
}

func TestMain(m *testing.M) {
	code := m.Run()
	if apiServer.env != nil {
		if err := apiServer.env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping envtest:", err)
		}
	}
	os.Exit(code)
}

// cluster starts the API server once and returns a new namespace in it, and the kubeconfig file
// that reaches it (pass --kubeconfig and -n).
func testCluster(t *testing.T) (kubeconfig, namespace string) {
	t.Helper()
	apiServer.once.Do(func() {
		env, err := envtest.New()
		if err != nil {
			apiServer.err = err
			return
		}
		cfg, err := env.Start()
		if err != nil {
			apiServer.err = err
			return
		}
		apiServer.env = env
		scheme := runtime.NewScheme()
		_ = api.AddToScheme(scheme)
		_ = corev1.AddToScheme(scheme)
		if apiServer.client, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
			apiServer.err = err
			return
		}
		user, err := env.AddUser(ctrlenvtest.User{Name: "kvbench-test", Groups: []string{"system:masters"}}, nil)
		if err != nil {
			apiServer.err = err
			return
		}
		data, err := user.KubeConfig()
		if err != nil {
			apiServer.err = err
			return
		}
		dir, err := os.MkdirTemp("", "kvbench-plugin-envtest-")
		if err != nil {
			apiServer.err = err
			return
		}
		apiServer.kubeconfig = filepath.Join(dir, "kubeconfig")
		apiServer.err = os.WriteFile(apiServer.kubeconfig, data, 0o600)
	})
	if apiServer.err != nil {
		t.Fatalf("envtest (this test needs a real API server; it fails rather than skips): %v", apiServer.err)
	}
	apiServer.namespaces++
	ns := fmt.Sprintf("plugin-%d", apiServer.namespaces)
	if err := apiServer.client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	return apiServer.kubeconfig, ns
}

// repeatedPhases are readrandom at 1 thread, repeated n times around ops ops/s (p99 1e6/ops us).
func repeatedPhases(n int, ops float64) []api.PhaseSummary {
	var out []api.PhaseSummary
	for i := range n {
		f := 1 + 0.01*float64(i%3) - 0.01*float64(i%2) // 1, 0.99, 1.02, 0.99, 1.01 ...
		v := ops * f
		out = append(out, api.PhaseSummary{Workload: "readrandom", Threads: 1, Iteration: int32(i), Ops: int64(v), Seconds: 1,
			OpsPerSec: v, MicrosPerOp: 1e6 / v, LatencyMicros: &api.Percentiles{Mean: 1e6 / v, P50: 1e6 / v, P99: 2e6 / v, P999: 4e6 / v, Max: 8e6 / v}})
	}
	return out
}

// finishedBenchmark creates a Succeeded KVBenchmark in the API server: one pebble readrandom point
// (or one per engine) repeated `repeat` times at ops ops/s per engine; the spec leaves the seed
// unset and the run records the seed it resolved to (301), as the runner does.
func finishedBenchmark(t *testing.T, ns, name string, repeat int, ops map[api.EngineName]float64, engines ...api.EngineName) *api.KVBenchmark {
	t.Helper()
	if len(engines) == 0 {
		engines = []api.EngineName{api.EnginePebble}
	}
	b := w.MakeKVBenchmark(name, ns).EngineNames(engines...).Threads(1).
		EditSpec(func(s *api.KVBenchmarkSpec) { s.Repeat = int32(repeat) }).Obj()
	ctx := context.Background()
	if err := apiServer.client.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	b.Status.Phase = api.PhaseSucceeded
	for _, e := range engines {
		ds := api.DatasetInfo{Num: 1000, KeySize: 16, ValueSizeAvg: 100, Bytes: 116000}
		b.Status.Runs = append(b.Status.Runs, api.RunStatus{Name: string(e), Engine: e, Phase: api.RunSucceeded,
			Dataset: &ds, Provenance: &api.ProvenanceSummary{Seed: 301}, Results: repeatedPhases(repeat, ops[e])})
	}
	if err := apiServer.client.Status().Update(ctx, b); err != nil {
		t.Fatal(err)
	}
	return b
}
