package schedule

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/history"
	"github.com/kvbench/kvbench-operator/test/envtest"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

// A real kube-apiserver and etcd; the tests call Reconcile themselves, with a fake clock, and play
// the KVBenchmark controller by writing the children's status (envtest runs no controllers and no
// garbage collector).
var (
	testEnv *ctrlenvtest.Environment
	k8s     client.Client
	scheme  *runtime.Scheme
	nsSeq   atomic.Int32
)

func TestSchedule(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "KVBenchmarkSchedule controller (envtest)")
}

var _ = BeforeSuite(func() {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	s, err := envtest.Start()
	Expect(err).NotTo(HaveOccurred(), "envtest assets are required; this suite fails rather than skips")
	testEnv, k8s, scheme = s.Env, s.Client, s.Scheme
})

var _ = AfterSuite(func() {
	if testEnv != nil {
		Expect(testEnv.Stop()).To(Succeed())
	}
})

// t0 is a Monday, 03:00 UTC.
var t0 = time.Date(2026, 11, 23, 3, 0, 0, 0, time.UTC)

// env is one test's namespace, reconciler and clock.
type env struct {
	ns     string
	clock  *clocktesting.FakeClock
	r      *Reconciler
	events *record.FakeRecorder
}

func newEnv(ctx context.Context) *env {
	ns := fmt.Sprintf("sched-%d", nsSeq.Add(1))
	Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	e := &env{ns: ns, clock: clocktesting.NewFakeClock(t0), events: record.NewFakeRecorder(1000)}
	e.r = &Reconciler{Client: k8s, APIReader: k8s, Recorder: e.events, Clock: e.clock, Metrics: NewCollector()}
	return e
}

// schedule creates a schedule (every hour at :00 unless changed) and returns it.
func (e *env) schedule(ctx context.Context, name string, f ...func(*api.KVBenchmarkSchedule)) *api.KVBenchmarkSchedule {
	s := &api.KVBenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec: api.KVBenchmarkScheduleSpec{Schedule: "0 * * * *", Template: api.KVBenchmarkTemplate{Spec: w.MakeKVBenchmark("x", e.ns).Obj().Spec}}}
	for _, fn := range f {
		fn(s)
	}
	Expect(k8s.Create(ctx, s)).To(Succeed())
	// The API server sets creationTimestamp from its own clock: the schedule counts from it, so
	// tests put the fake clock just after it.
	e.clock.SetTime(s.CreationTimestamp.Time.Add(time.Second))
	return s
}

// reconcile runs one pass at the fake clock's time.
func (e *env) reconcile(ctx context.Context, name string) ctrl.Result {
	GinkgoHelper()
	res, err := e.r.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: e.ns, Name: name}})
	Expect(err).NotTo(HaveOccurred())
	return res
}

func (e *env) get(ctx context.Context, name string) *api.KVBenchmarkSchedule {
	GinkgoHelper()
	var s api.KVBenchmarkSchedule
	Expect(k8s.Get(ctx, types.NamespacedName{Namespace: e.ns, Name: name}, &s)).To(Succeed())
	return &s
}

// children are the schedule's KVBenchmarks, oldest first.
func (e *env) children(ctx context.Context, name string) []api.KVBenchmark {
	GinkgoHelper()
	s := e.get(ctx, name)
	bs, err := e.r.children(ctx, s)
	Expect(err).NotTo(HaveOccurred())
	return bs
}

func childNames(bs []api.KVBenchmark) []string { return names(bs) }

// finish plays the KVBenchmark controller: the child ends in phase with readrandom at 4 threads at
// the given ops/s (p99 = 1e6 / ops), archived nowhere (fullResult says why).
func (e *env) finish(ctx context.Context, name string, phase api.BenchmarkPhase, ops float64) {
	GinkgoHelper()
	var b api.KVBenchmark
	Expect(k8s.Get(ctx, types.NamespacedName{Namespace: e.ns, Name: name}, &b)).To(Succeed())
	now := metav1.NewTime(e.clock.Now())
	run := api.RunStatus{Name: "rocksdb", Engine: api.EngineRocksDB, JobName: name + "-rocksdb", Phase: api.RunSucceeded,
		NodeName: "node-a", EngineVersion: "rocksdb 7.8.3", CompletionTime: &now,
		FullResult: &api.ResultArchive{Error: "not archived in this test"},
		Provenance: &api.ProvenanceSummary{ImageDigest: "sha256:aa", Node: "AMD EPYC x 2 @ 2596 MHz, kernel 6.1"},
		Results: []api.PhaseSummary{{Workload: "readrandom", Threads: 4, Ops: 1000, Seconds: 1, OpsPerSec: ops, MicrosPerOp: 1e6 / ops,
			LatencyMicros: &api.Percentiles{P50: 5e5 / ops, P99: 1e6 / ops, P999: 2e6 / ops}}}}
	if phase == api.PhaseFailed {
		run.Phase, run.Reason = api.RunFailed, "OOMKilled"
	}
	b.Status = api.KVBenchmarkStatus{Phase: phase, Runs: []api.RunStatus{run}, CompletionTime: &now}
	Expect(k8s.Status().Update(ctx, &b)).To(Succeed())
}

// history reads the schedule's history ConfigMap.
func (e *env) history(ctx context.Context, name string) *history.History {
	GinkgoHelper()
	s := e.get(ctx, name)
	var cm corev1.ConfigMap
	Expect(k8s.Get(ctx, types.NamespacedName{Namespace: e.ns, Name: history.ConfigMapName(name)}, &cm)).To(Succeed())
	h, err := history.FromConfigMap(&cm, s)
	Expect(err).NotTo(HaveOccurred())
	return h
}

// drain returns the events recorded so far.
func (e *env) drain() []string {
	var out []string
	for {
		select {
		case ev := <-e.events.Events:
			out = append(out, ev)
		default:
			return out
		}
	}
}

// gauge returns the label sets of a metric the collector exports now.
func gauge(c *Collector, name string) []map[string]string {
	GinkgoHelper()
	reg := prometheus.NewPedanticRegistry()
	Expect(reg.Register(c)).To(Succeed())
	mfs, err := reg.Gather()
	Expect(err).NotTo(HaveOccurred())
	var out []map[string]string
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			out = append(out, l)
		}
	}
	return out
}

func eventsWith(evs []string, sub string) []string {
	var out []string
	for _, ev := range evs {
		if strings.Contains(ev, sub) {
			out = append(out, ev)
		}
	}
	return out
}
