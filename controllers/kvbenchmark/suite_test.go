package kvbenchmark

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"k8s.io/apimachinery/pkg/types"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	ctrlenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/controllers/metrics"
	"github.com/kvbench/kvbench-operator/controllers/render"
	"github.com/kvbench/kvbench-operator/test/envtest"
)

// envtest runs only kube-apiserver and etcd: no scheduler, kubelet, Job controller or garbage
// collector. The tests play those parts by writing pod and Job status themselves.
var (
	testEnv *ctrlenvtest.Environment
	cfg     *rest.Config
	k8s     client.Client
	scheme  *runtime.Scheme
	nsSeq   atomic.Int32
)

func TestControllers(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "KVBenchmark controller (envtest)")
}

var _ = BeforeSuite(func() {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	s, err := envtest.Start()
	Expect(err).NotTo(HaveOccurred(), "envtest assets are required; this suite fails rather than skips")
	testEnv, cfg, k8s, scheme = s.Env, s.Config, s.Client, s.Scheme
	// The cluster's nodes: the operator places exclusive runs on a free one itself.
	for _, n := range suiteNodes {
		readyNode(n, nil)
	}
})

// Every spec starts from a clean slate: envtest has no garbage collector, and a benchmark or
// runner Job left behind would take a later spec's slot or node.
var _ = AfterEach(func() {
	var bs kvv1.KVBenchmarkList
	Expect(k8s.List(context.Background(), &bs)).To(Succeed())
	for i := range bs.Items {
		Expect(client.IgnoreNotFound(k8s.Delete(context.Background(), &bs.Items[i]))).To(Succeed())
	}
	var jobs batchv1.JobList
	Expect(k8s.List(context.Background(), &jobs)).To(Succeed())
	for i := range jobs.Items {
		Expect(client.IgnoreNotFound(k8s.Delete(context.Background(), &jobs.Items[i]))).To(Succeed())
	}
})

// suiteNodes are the Ready nodes every test sees (tests bind pods to them, as the scheduler would).
var suiteNodes = []string{"node-a", "node-b", "node-c", "node-d", "node-e", "node-f"}

// readyNode creates a Ready node with room for any test's runner, as a kubelet would report it.
func readyNode(name string, labels map[string]string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	Expect(k8s.Create(context.Background(), n)).To(Succeed())
	// Admission taints a new node not-ready; the node lifecycle controller (absent here) lifts it.
	n.Spec.Taints = nil
	Expect(k8s.Update(context.Background(), n)).To(Succeed())
	room := corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Gi"), corev1.ResourceCPU: resource.MustParse("32")}
	n.Status = corev1.NodeStatus{Allocatable: room, Capacity: room,
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}}}
	Expect(k8s.Status().Update(context.Background(), n)).To(Succeed())
	return n
}

var _ = AfterSuite(func() {
	if testEnv != nil {
		Expect(testEnv.Stop()).To(Succeed())
	}
})

// operator is one running manager with its reconciler, clock and metrics registry.
type operator struct {
	reconciler *KVBenchmarkReconciler
	clock      *clocktesting.FakeClock
	registry   *prometheus.Registry
	collector  *metrics.Collector
	logs       *fakeLogs
	stop       context.CancelFunc
	done       chan struct{}
}

// fakeLogs plays the kubelet's log endpoint, which envtest lacks: it serves the runner logs a
// test gave to pods; for a pod given none, once its runner ended with a summary, the log a runner
// that wrote that summary writes (summaryLog); for the others it fails, as an unreachable kubelet
// would (and for a pod given unreadableLog).
type fakeLogs struct {
	mu    sync.Mutex
	byPod map[string]string
}

// unreadableLog, given to a pod, makes its log fail to open.
const unreadableLog = "\x00unreadable"

// summaryLog is the whole log of a runner that wrote summary s: a phase line per phase (and the
// load), then the result line.
func summaryLog(s *kvv1.Summary) string {
	res := &kvv1.Result{SchemaVersion: s.SchemaVersion, Engine: s.Engine, EngineVersion: s.EngineVersion, Error: s.Error}
	if s.Dataset != nil {
		res.Dataset = *s.Dataset
	}
	if s.Load != nil {
		res.Load = &kvv1.PhaseResult{PhaseSummary: *s.Load}
	}
	for _, p := range s.Phases {
		res.Phases = append(res.Phases, kvv1.PhaseResult{PhaseSummary: p})
	}
	return runnerLog(res)
}

func (f *fakeLogs) set(pod *corev1.Pod, text string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.byPod == nil {
		f.byPod = map[string]string{}
	}
	f.byPod[pod.Namespace+"/"+pod.Name] = text
}

func (f *fakeLogs) open(_ context.Context, namespace, pod, container string) (io.ReadCloser, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	text, ok := f.byPod[namespace+"/"+pod]
	if !ok && container == kvv1.ContainerName {
		text, ok = logOfSummary(namespace, pod)
	}
	if !ok || text == unreadableLog || container != kvv1.ContainerName {
		return nil, fmt.Errorf("container %q in pod %s/%s: log not available", container, namespace, pod)
	}
	return io.NopCloser(strings.NewReader(text)), nil
}

// logOfSummary is summaryLog of the summary the pod's runner ended with, if it did.
func logOfSummary(namespace, name string) (string, bool) {
	var pod corev1.Pod
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &pod); err != nil {
		return "", false
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if t := cs.State.Terminated; cs.Name == kvv1.ContainerName && t != nil {
			var s kvv1.Summary
			if json.Unmarshal([]byte(t.Message), &s) == nil && s.SchemaVersion != "" {
				return summaryLog(&s), true
			}
		}
	}
	return "", false
}

type operatorOpts struct {
	config      Config
	leaderElect bool
	clock       *clocktesting.FakeClock
	// restConfig is the manager's API identity (default: the suite's system:masters config).
	restConfig *rest.Config
	// intercept, when set, sits between the reconciler and the API server (to fail some writes).
	intercept *interceptor.Funcs
}

// startOperator runs a manager like cmd/manager does, with a fake clock and its own metrics registry.
func startOperator(o operatorOpts) *operator {
	if o.clock == nil {
		o.clock = clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	}
	if o.config.Render.RunnerImage == "" {
		o.config.Render = render.DefaultOptions()
	}
	if o.config.UnschedulableTimeout == 0 {
		o.config.UnschedulableTimeout = 10 * time.Minute
	}
	// Generous: a 1 s API stall on a loaded CI machine must not lose the lease (a takeover is
	// immediate anyway: the leader releases it on stop).
	leaseDuration, renewDeadline, retryPeriod := 15*time.Second, 10*time.Second, time.Second
	if o.restConfig == nil {
		o.restConfig = cfg
	}
	mgr, err := ctrl.NewManager(o.restConfig, ctrl.Options{
		Scheme:                        scheme,
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        "0",
		LeaderElection:                o.leaderElect,
		LeaderElectionID:              "kvbench-operator.kvbench.io",
		LeaderElectionNamespace:       "default",
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &leaseDuration,
		RenewDeadline:                 &renewDeadline,
		RetryPeriod:                   &retryPeriod,
		Cache:                         CacheOptions(),
		Controller:                    ctrlControllerOpts(),
	})
	Expect(err).NotTo(HaveOccurred())
	op := &operator{clock: o.clock, registry: prometheus.NewRegistry(), collector: metrics.NewCollector(), logs: &fakeLogs{}, done: make(chan struct{})}
	Expect(op.collector.Register(op.registry)).To(Succeed())
	op.reconciler = &KVBenchmarkReconciler{
		Client: mgr.GetClient(), Recorder: mgr.GetEventRecorderFor("kvbench-operator"),
		Clock: o.clock, Metrics: op.collector, Config: o.config, Logs: op.logs.open, Nodes: directNodes,
	}
	if o.intercept != nil {
		op.reconciler.Client = interceptor.NewClient(noWatch{mgr.GetClient()}, *o.intercept)
	}
	Expect(op.reconciler.SetupWithManager(mgr)).To(Succeed())
	ctx, cancel := context.WithCancel(context.Background())
	op.stop = cancel
	go func() {
		defer GinkgoRecover()
		defer close(op.done)
		Expect(mgr.Start(ctx)).To(Succeed())
	}()
	return op
}

// noWatch is the manager's client as the client.WithWatch the interceptor wraps (the reconciler never watches).
type noWatch struct{ client.Client }

func (noWatch) Watch(context.Context, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
	return nil, fmt.Errorf("the reconciler does not watch")
}

// heldJobs are the Jobs the slot queue's entry of benchmark k holds slots and nodes for.
func (o *operator) heldJobs(k types.NamespacedName) []string {
	o.reconciler.slotMu.Lock()
	defer o.reconciler.slotMu.Unlock()
	var out []string
	if d := o.reconciler.queue[k]; d != nil {
		for _, h := range d.Holds {
			out = append(out, h.Job.String())
		}
	}
	return out
}

// Stop stops the manager and waits for it to exit.
func (o *operator) Stop() {
	o.stop()
	Eventually(o.done, 30*time.Second).Should(BeClosed())
}

// newNamespace creates a namespace per test so tests do not see each other's Jobs.
func newNamespace() string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("kvb-test-%d", nsSeq.Add(1))}}
	Expect(k8s.Create(context.Background(), ns)).To(Succeed())
	return ns.Name
}
