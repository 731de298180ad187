// Package metrics exports KVBenchmark results as Prometheus series. The series of a benchmark are
// rebuilt from its status on every reconcile (so they survive an operator restart) and dropped when
// the benchmark is deleted.
package metrics

import (
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/controllers/plan"
)

// node is the node of a spread EachNode run (one run per engine per node), empty otherwise.
var resultLabels = []string{"namespace", "benchmark", "engine", "workload", "threads", "iteration", "medium", "dataset_bytes", "node"}

var (
	descOps = prometheus.NewDesc("kvbench_result_ops_per_second",
		"Throughput of a measured phase (db_bench ops/sec).", resultLabels, nil)
	descBytes = prometheus.NewDesc("kvbench_result_bytes_per_second",
		"Data rate of a measured phase (db_bench MB/s in bytes).", resultLabels, nil)
	descLatency = prometheus.NewDesc("kvbench_result_latency_seconds",
		"Latency percentiles of a measured phase, from merged per-thread histograms (quantile 1 is the max).",
		append(append([]string{}, resultLabels...), "quantile"), nil)
	descOpLatency = prometheus.NewDesc("kvbench_result_op_seconds",
		"Mean time per operation of a measured phase (db_bench micros/op).", resultLabels, nil)
	descDuration = prometheus.NewDesc("kvbench_result_duration_seconds",
		"Wall time of a measured phase.", resultLabels, nil)
	descOpsCount = prometheus.NewDesc("kvbench_result_operations",
		"Operations done in a measured phase.", resultLabels, nil)
	descFound = prometheus.NewDesc("kvbench_result_found_operations",
		"Reads of a measured phase that found their key.", resultLabels, nil)
	descWriteRate = prometheus.NewDesc("kvbench_result_achieved_writes_per_second",
		"Write rate actually reached (readwhilewriting, pulse).", resultLabels, nil)
	descPulseRounds = prometheus.NewDesc("kvbench_result_pulse_rounds",
		"Pulse rounds completed.", resultLabels, nil)
	descPulseMax = prometheus.NewDesc("kvbench_result_pulse_round_max_seconds",
		"Slowest pulse round.", resultLabels, nil)
	descPulseMean = prometheus.NewDesc("kvbench_result_pulse_round_mean_seconds",
		"Mean pulse round time.", resultLabels, nil)
	descBenchPhase = prometheus.NewDesc("kvbench_benchmark_phase",
		"1 for the benchmark's current phase, 0 for the others.", []string{"namespace", "benchmark", "phase"}, nil)
	descRunPhase = prometheus.NewDesc("kvbench_run_phase",
		"1 for a run's current phase, 0 for the others.", []string{"namespace", "benchmark", "engine", "medium", "dataset_bytes", "node", "phase"}, nil)
	descRunDuration = prometheus.NewDesc("kvbench_run_duration_seconds",
		"Wall time of a finished run (Job start to finish), including the dataset load.", []string{"namespace", "benchmark", "engine", "medium", "dataset_bytes", "node"}, nil)
	descRunStart = prometheus.NewDesc("kvbench_run_start_time_seconds",
		"Unix time a run started.", []string{"namespace", "benchmark", "engine", "medium", "dataset_bytes", "node"}, nil)
)

var benchPhases = []kvv1.BenchmarkPhase{kvv1.PhasePending, kvv1.PhaseRunning, kvv1.PhaseSucceeded, kvv1.PhaseFailed}
var runPhases = []kvv1.RunPhase{kvv1.RunPending, kvv1.RunRunning, kvv1.RunSucceeded, kvv1.RunFailed}

// Collector holds every benchmark's series, each set replaced atomically, so a scrape never sees
// half of an update.
type Collector struct {
	mu     sync.RWMutex
	series map[types.NamespacedName][]prometheus.Metric

	// JobsCreated counts Jobs this operator process created (a process-local counter).
	JobsCreated *prometheus.CounterVec
}

// NewCollector returns an empty collector.
func NewCollector() *Collector {
	return &Collector{
		series: map[types.NamespacedName][]prometheus.Metric{},
		JobsCreated: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kvbench_run_jobs_created_total",
			Help: "Runner Jobs created by this operator process.",
		}, []string{"namespace", "benchmark", "engine"}),
	}
}

// Register adds the collector and its counter to reg (controller-runtime's metrics.Registry in main).
func (c *Collector) Register(reg prometheus.Registerer) error {
	if err := reg.Register(c); err != nil {
		return err
	}
	return reg.Register(c.JobsCreated)
}

// Describe sends the fixed descriptors; the counter registers itself separately.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descOps, descBytes, descLatency, descOpLatency, descDuration, descOpsCount, descFound,
		descWriteRate, descPulseRounds, descPulseMax, descPulseMean, descBenchPhase, descRunPhase, descRunDuration, descRunStart} {
		ch <- d
	}
}

// Collect sends the current series.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, ms := range c.series {
		for _, m := range ms {
			ch <- m
		}
	}
}

// Set replaces the series of b with what its status says.
func (c *Collector) Set(b *kvv1.KVBenchmark) {
	ms := build(b)
	c.mu.Lock()
	c.series[types.NamespacedName{Namespace: b.Namespace, Name: b.Name}] = ms
	c.mu.Unlock()
}

// Delete drops every series of a deleted benchmark.
func (c *Collector) Delete(key types.NamespacedName) {
	c.mu.Lock()
	delete(c.series, key)
	c.mu.Unlock()
	c.JobsCreated.DeletePartialMatch(prometheus.Labels{"namespace": key.Namespace, "benchmark": key.Name})
}

func build(b *kvv1.KVBenchmark) []prometheus.Metric {
	var out []prometheus.Metric
	add := func(d *prometheus.Desc, v float64, labels ...string) {
		out = append(out, prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...))
	}
	medium := string(b.Spec.Storage.Medium)
	dataset := strconv.FormatInt(plan.DatasetBytes(b.Spec.Dataset), 10)
	for _, p := range benchPhases {
		add(descBenchPhase, boolValue(b.Status.Phase == p), b.Namespace, b.Name, string(p))
	}
	for _, r := range b.Status.Runs {
		_, node, _ := strings.Cut(r.Name, "@") // EachNode's "<engine>@<node>"
		runLabels := []string{b.Namespace, b.Name, string(r.Engine), medium, dataset, node}
		for _, p := range runPhases {
			add(descRunPhase, boolValue(r.Phase == p), append(append([]string{}, runLabels...), string(p))...)
		}
		if r.StartTime != nil {
			add(descRunStart, float64(r.StartTime.Unix()), runLabels...)
			if r.CompletionTime != nil {
				add(descRunDuration, r.CompletionTime.Sub(r.StartTime.Time).Seconds(), runLabels...)
			}
		}
		// The dataset load is exported like a phase (workload "load"), after the measured ones.
		phases := r.Results
		if r.Load != nil {
			load := *r.Load
			if load.Workload == "" {
				load.Workload = "load"
			}
			phases = append(append([]kvv1.PhaseSummary{}, r.Results...), load)
		}
		// The same workload may appear twice in the spec at one thread count; its label set would
		// collide, so the later phase wins.
		last := map[string]int{}
		for i, p := range phases {
			last[p.Workload+"/"+strconv.Itoa(int(p.Threads))+"/"+strconv.Itoa(int(p.Iteration))] = i
		}
		for i, p := range phases {
			if last[p.Workload+"/"+strconv.Itoa(int(p.Threads))+"/"+strconv.Itoa(int(p.Iteration))] != i {
				continue
			}
			l := []string{b.Namespace, b.Name, string(r.Engine), p.Workload, strconv.Itoa(int(p.Threads)),
				strconv.Itoa(int(p.Iteration)), medium, dataset, node}
			add(descOps, p.OpsPerSec, l...)
			add(descOpLatency, p.MicrosPerOp/1e6, l...)
			add(descDuration, p.Seconds, l...)
			add(descOpsCount, float64(p.Ops), l...)
			if p.MBPerSec != 0 {
				add(descBytes, p.MBPerSec*1024*1024, l...)
			}
			if p.Found != nil {
				add(descFound, float64(*p.Found), l...)
			}
			if p.WriteRate != nil {
				add(descWriteRate, *p.WriteRate, l...)
			}
			if p.Pulse != nil {
				add(descPulseRounds, float64(p.Pulse.Rounds), l...)
				add(descPulseMax, p.Pulse.MaxRoundSeconds, l...)
				add(descPulseMean, p.Pulse.MeanRoundSeconds, l...)
			}
			if lat := p.LatencyMicros; lat != nil {
				for _, q := range []struct {
					q string
					v float64
				}{{"0.5", lat.P50}, {"0.99", lat.P99}, {"0.999", lat.P999}, {"1", lat.Max}} {
					add(descLatency, q.v/1e6, append(append([]string{}, l...), q.q)...)
				}
			}
		}
	}
	return out
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
