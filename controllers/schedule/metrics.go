package schedule

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/history"
)

// seriesLabels name one series of a schedule's history.
var seriesLabels = []string{"namespace", "schedule", "run", "engine", "node", "workload", "threads", "metric"}

var (
	descMedian = prometheus.NewDesc("kvbench_schedule_series_median",
		"The latest point of a schedule's history series: the median over the repeats of the latest recorded run.", seriesLabels, nil)
	descCILow = prometheus.NewDesc("kvbench_schedule_series_ci_lower",
		"Lower end of the 95% interval of the latest point's median (runs with 6 or more repeats).", seriesLabels, nil)
	descCIHigh = prometheus.NewDesc("kvbench_schedule_series_ci_upper",
		"Upper end of the 95% interval of the latest point's median (runs with 6 or more repeats).", seriesLabels, nil)
	descChangePoint = prometheus.NewDesc("kvbench_schedule_change_point",
		"An unacknowledged change point of a schedule's series, present until `kubectl kvbench ack`: the change of the mean in percent (negative: down). child is the first KVBenchmark of the new level.",
		append(append([]string{}, seriesLabels...), "direction", "child"), nil)
	descLastSchedule = prometheus.NewDesc("kvbench_schedule_last_schedule_time_seconds",
		"When the schedule's latest run was due (Unix time).", []string{"namespace", "schedule"}, nil)
	descNextSchedule = prometheus.NewDesc("kvbench_schedule_next_schedule_time_seconds",
		"When the schedule's next run is due (Unix time).", []string{"namespace", "schedule"}, nil)
	descLastRecorded = prometheus.NewDesc("kvbench_schedule_last_recorded_time_seconds",
		"When the newest run in the schedule's history was due (Unix time).", []string{"namespace", "schedule"}, nil)
	descActive = prometheus.NewDesc("kvbench_schedule_active_runs",
		"The schedule's KVBenchmarks still running.", []string{"namespace", "schedule"}, nil)
	descSkipped = prometheus.NewDesc("kvbench_schedule_skipped_runs_total",
		"Due runs the schedule did not start (concurrencyPolicy Forbid, startingDeadlineSeconds, missed while the operator was down).",
		[]string{"namespace", "schedule"}, nil)
	descHistoryRuns = prometheus.NewDesc("kvbench_schedule_history_runs",
		"Runs kept in the schedule's history.", []string{"namespace", "schedule"}, nil)
	descHistoryBytes = prometheus.NewDesc("kvbench_schedule_history_bytes",
		"Compressed size of the schedule's history ConfigMap.", []string{"namespace", "schedule"}, nil)
)

// Collector holds every schedule's series, built when status or the history changes.
type Collector struct {
	mu sync.RWMutex
	// series from the history (kept while a pass does not read it), the rest from status.
	series, state map[types.NamespacedName][]sample
}

type sample struct {
	desc   *prometheus.Desc
	kind   prometheus.ValueType
	value  float64
	labels []string
}

// NewCollector returns an empty collector.
func NewCollector() *Collector {
	return &Collector{series: map[types.NamespacedName][]sample{}, state: map[types.NamespacedName][]sample{}}
}

// Register adds the collector to reg.
func (c *Collector) Register(reg prometheus.Registerer) error { return reg.Register(c) }

// Describe sends the descriptors.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descMedian, descCILow, descCIHigh, descChangePoint, descLastSchedule, descNextSchedule,
		descLastRecorded, descActive, descSkipped, descHistoryRuns, descHistoryBytes} {
		ch <- d
	}
}

// Collect sends the series.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, m := range []map[types.NamespacedName][]sample{c.series, c.state} {
		for _, ss := range m {
			for _, s := range ss {
				ch <- prometheus.MustNewConstMetric(s.desc, s.kind, s.value, s.labels...)
			}
		}
	}
}

// HasSeries says whether the collector holds a schedule's history series.
func (c *Collector) HasSeries(key types.NamespacedName) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, ok := c.series[key]
	return ok
}

// Delete drops a deleted schedule's series.
func (c *Collector) Delete(key types.NamespacedName) {
	c.mu.Lock()
	delete(c.series, key)
	delete(c.state, key)
	c.mu.Unlock()
}

// Set rebuilds a schedule's series from its status and, when h is not nil, from its history.
func (c *Collector) Set(s *api.KVBenchmarkSchedule, h *history.History) {
	key := types.NamespacedName{Namespace: s.Namespace, Name: s.Name}
	state := stateSamples(s)
	var series []sample
	if h != nil {
		series = seriesSamples(s, h)
	}
	c.mu.Lock()
	c.state[key] = state
	if h != nil {
		c.series[key] = series
	}
	c.mu.Unlock()
}

// Label values come from the history ConfigMap and status, which tenants can write (and the
// runner's output before them): only values of these shapes become labels; a series with
// another is left out.
var (
	runLabel      = regexp.MustCompile(`^(` + engineAlternatives() + `)(@[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)?$`)
	workloadLabel = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9:#._-]{0,63}$`)
	metricLabel   = map[api.HistoryMetric]bool{api.MetricOpsPerSec: true, api.MetricP50Micros: true, api.MetricP99Micros: true,
		api.MetricP999Micros: true, api.MetricWriteAmplification: true, api.MetricStallPercent: true}
)

// engineAlternatives is "rocksdb|leveldb|...": every engine (a rocksjava schedule's series were
// left out when the list was written here by hand).
func engineAlternatives() string {
	names := make([]string, len(api.Engines))
	for i, e := range api.Engines {
		names[i] = regexp.QuoteMeta(string(e))
	}
	return strings.Join(names, "|")
}

// seriesLabelValues are a series' label values, or false when one is not acceptable.
func seriesLabelValues(s *api.KVBenchmarkSchedule, run string, engine api.EngineName, node, workload string, threads int32, m api.HistoryMetric) ([]string, bool) {
	e, n, _ := strings.Cut(run, "@")
	if !runLabel.MatchString(run) || !workloadLabel.MatchString(workload) || !metricLabel[m] || threads < 1 || threads > 1024 ||
		string(engine) != e || node != n {
		return nil, false
	}
	return []string{s.Namespace, s.Name, run, string(engine), node, workload, strconv.Itoa(int(threads)), string(m)}, true
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// firstOf says whether label values l are new to seen (and remembers them): two series with the
// same labels, which a history or status edited by hand can hold, would make the scrape fail.
func firstOf(seen map[string]bool, l []string) bool {
	k := strings.Join(l, "\x00")
	if seen[k] {
		return false
	}
	seen[k] = true
	return true
}

func seriesSamples(s *api.KVBenchmarkSchedule, h *history.History) []sample {
	var out []sample
	seen := map[string]bool{}
	for i := range h.Series {
		se := &h.Series[i]
		if len(se.Points) == 0 {
			continue
		}
		l, ok := seriesLabelValues(s, se.Run, se.Engine, se.Node, se.Workload, se.Threads, se.Metric)
		p := se.Points[len(se.Points)-1]
		if !ok || !finite(p.Median) || !firstOf(seen, l) {
			continue
		}
		out = append(out, sample{descMedian, prometheus.GaugeValue, p.Median, l})
		if p.CILow != 0 || p.CIHigh != 0 {
			if finite(p.CILow) && finite(p.CIHigh) {
				out = append(out, sample{descCILow, prometheus.GaugeValue, p.CILow, l}, sample{descCIHigh, prometheus.GaugeValue, p.CIHigh, l})
			}
		}
	}
	return out
}

func stateSamples(s *api.KVBenchmarkSchedule) []sample {
	l := []string{s.Namespace, s.Name}
	out := []sample{
		{descActive, prometheus.GaugeValue, float64(len(s.Status.Active)), l},
		{descSkipped, prometheus.CounterValue, float64(s.Status.SkippedRuns), l},
		{descHistoryRuns, prometheus.GaugeValue, float64(s.Status.History.Runs), l},
		{descHistoryBytes, prometheus.GaugeValue, float64(s.Status.History.Bytes), l},
	}
	if t := s.Status.LastScheduleTime; t != nil {
		out = append(out, sample{descLastSchedule, prometheus.GaugeValue, float64(t.Unix()), l})
	}
	if t := s.Status.NextScheduleTime; t != nil {
		out = append(out, sample{descNextSchedule, prometheus.GaugeValue, float64(t.Unix()), l})
	}
	if t := s.Status.History.LastRecordedTime; t != nil {
		out = append(out, sample{descLastRecorded, prometheus.GaugeValue, float64(t.Unix()), l})
	}
	seen := map[string]bool{}
	for _, c := range s.Status.ChangePoints {
		if c.AcknowledgedAt != nil || !finite(c.ChangePercent) || len(validation.IsDNS1123Subdomain(c.Child)) > 0 {
			continue
		}
		cl, ok := seriesLabelValues(s, c.Run, c.Engine, c.Node, c.Workload, c.Threads, c.Metric)
		if !ok || (c.Direction != api.Regressed && c.Direction != api.Improved) {
			continue
		}
		if !firstOf(seen, append(slices.Clip(cl), c.Child)) {
			continue // one series per change point (series and child), whatever direction a twin says
		}
		cl = append(cl, string(c.Direction), c.Child)
		out = append(out, sample{descChangePoint, prometheus.GaugeValue, c.ChangePercent, cl})
	}
	return out
}
