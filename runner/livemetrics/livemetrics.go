// Package livemetrics is the runner's live Prometheus endpoint: progress, throughput and p99 of
// the running phase, labelled with the run's namespace, benchmark and engine.
package livemetrics

import (
	"errors"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// Metrics exposes live progress for Prometheus while the runner works; it implements
// bench.Observer and bench.LatencyObserver. Every series carries the run's namespace, benchmark
// and engine (constant labels: set by the operator through the environment, the engine also from
// the config), so live series join the operator's result series.
type Metrics struct {
	reg       *prometheus.Registry
	ops       *prometheus.CounterVec
	rate      *prometheus.GaugeVec
	p99       *prometheus.GaugeVec
	phase     *prometheus.GaugeVec
	completed prometheus.Counter

	mu      sync.Mutex
	lastOps int64
	current prometheus.Labels
}

// RunLabels are the constant labels of a run's live series: the engine always, namespace and
// benchmark when the operator set them (a run from the command line has none).
func RunLabels(engine api.EngineName) prometheus.Labels {
	l := prometheus.Labels{"engine": string(engine)}
	if v := os.Getenv(api.EnvRun); v != "" {
		l["engine"] = v // the run's name in status (the engine's name)
	}
	for env, name := range map[string]string{api.EnvNamespace: "namespace", api.EnvBenchmark: "benchmark"} {
		if v := os.Getenv(env); v != "" {
			l[name] = v
		}
	}
	return l
}

// New returns the metrics of one run, every series with constLabels.
func New(constLabels prometheus.Labels) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.ops = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kvbench_runner_operations_total",
		Help: "Operations completed, by workload and thread count."}, []string{"workload", "threads"})
	m.rate = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kvbench_runner_ops_per_second",
		Help: "Throughput over the last report interval."}, []string{"workload", "threads"})
	m.p99 = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kvbench_runner_latency_p99_seconds",
		Help: "p99 latency of the operations that ended in the last finished report interval."}, []string{"workload", "threads"})
	m.phase = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kvbench_runner_phase_info",
		Help: "1 for the phase running now."}, []string{"workload", "threads", "iteration"})
	m.completed = prometheus.NewCounter(prometheus.CounterOpts{Name: "kvbench_runner_phases_completed_total",
		Help: "Phases finished."})
	prometheus.WrapRegistererWith(constLabels, m.reg).MustRegister(m.ops, m.rate, m.p99, m.phase, m.completed)
	return m
}

// Serve listens on addr; the listener error is returned at once (e.g. port in use).
func (m *Metrics) Serve(addr string) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // metrics are best effort once the run has started
		}
	}()
	return func() { _ = srv.Close() }, nil
}

// PhaseStarted marks the phase running now (bench.Observer).
func (m *Metrics) PhaseStarted(workload string, threads, iteration int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.phase.Reset()
	m.current = prometheus.Labels{"workload": workload, "threads": strconv.Itoa(threads), "iteration": strconv.Itoa(iteration)}
	m.phase.With(m.current).Set(1)
	m.lastOps = 0
}

// Progress counts operations and sets the interval's throughput (bench.Observer).
func (m *Metrics) Progress(workload string, threads int, ops int64, opsPerSec float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := prometheus.Labels{"workload": workload, "threads": strconv.Itoa(threads)}
	if d := ops - m.lastOps; d > 0 {
		m.ops.With(l).Add(float64(d))
	}
	m.lastOps = ops
	m.rate.With(l).Set(opsPerSec)
}

// Describe sends the descriptors of every live series (without the constant labels).
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range []prometheus.Collector{m.ops, m.rate, m.p99, m.phase, m.completed} {
		c.Describe(ch)
	}
}

// IntervalP99 sets the last finished interval's p99 (bench.LatencyObserver).
func (m *Metrics) IntervalP99(workload string, threads int, p99Micros float64) {
	m.p99.With(prometheus.Labels{"workload": workload, "threads": strconv.Itoa(threads)}).Set(p99Micros / 1e6)
}

// PhaseFinished counts a finished phase (bench.Observer).
func (m *Metrics) PhaseFinished(r *api.PhaseResult) {
	m.Progress(r.Workload, int(r.Threads), r.Ops, r.OpsPerSec)
	m.completed.Inc()
}
