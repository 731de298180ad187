package main

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"sigs.k8s.io/yaml"
)

// clkTck is USER_HZ, the unit of /proc/<pid>/stat times (100 on Linux).
const clkTck = 100

// cpuSeconds is the process's user + system CPU time so far.
func cpuSeconds(pid int) (float64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command name (which may hold spaces) start at state, field 3.
	rest := string(raw[strings.LastIndexByte(string(raw), ')')+2:])
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	utime, err1 := strconv.ParseFloat(f[11], 64)
	stime, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("parse /proc/%d/stat: %v %v", pid, err1, err2)
	}
	return (utime + stime) / clkTck, nil
}

// procStatusMiB is a memory figure of /proc/<pid>/status in MiB: VmHWM (the peak resident set),
// RssAnon (memory the process allocated), RssFile (mapped files: mostly the binary).
func procStatusMiB(pid int, field string) (float64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				return 0, err
			}
			return kb / 1024, nil
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

func waitHTTP(ctx context.Context, url string, p *proc) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if err := p.exited(); err != nil {
			return err
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(300 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready in 2m (see %s.log)", url, p.name)
}

func scrape(url string) (map[string]*dto.MetricFamily, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("%s: %s: %s", url, resp.Status, b)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(resp.Body)
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// fromMetrics reads the controller's reconcile figures and the operator's API requests.
func (f *figures) fromMetrics(m map[string]*dto.MetricFamily, benchmarks int) {
	if mf := m["controller_runtime_reconcile_time_seconds"]; mf != nil {
		for _, x := range mf.GetMetric() {
			if label(x, "controller") == "kvbenchmark" {
				f.ReconcileP50Seconds = quantile(0.5, x.GetHistogram())
				f.ReconcileP99Seconds = quantile(0.99, x.GetHistogram())
			}
		}
	}
	if mf := m["controller_runtime_reconcile_total"]; mf != nil {
		for _, x := range mf.GetMetric() {
			if label(x, "controller") == "kvbenchmark" {
				f.Reconciles += x.GetCounter().GetValue()
			}
		}
	}
	if mf := m["controller_runtime_reconcile_errors_total"]; mf != nil {
		for _, x := range mf.GetMetric() {
			if label(x, "controller") == "kvbenchmark" {
				f.ReconcileErrors += x.GetCounter().GetValue()
			}
		}
	}
	// The work queue: how long a benchmark waited to be reconciled, and a reconcile took, on average.
	mean := func(name string) float64 {
		for _, x := range m[name].GetMetric() {
			if label(x, "name") == "kvbenchmark" && x.GetHistogram().GetSampleCount() > 0 {
				return x.GetHistogram().GetSampleSum() / float64(x.GetHistogram().GetSampleCount())
			}
		}
		return math.NaN()
	}
	f.QueueWaitMeanSeconds, f.ReconcileMeanSeconds = mean("workqueue_queue_duration_seconds"), mean("workqueue_work_duration_seconds")
	if mf := m["rest_client_requests_total"]; mf != nil {
		for _, x := range mf.GetMetric() {
			f.APIRequests += x.GetCounter().GetValue()
		}
	}
	f.APIRequestsPerBenchmark = f.APIRequests / float64(benchmarks)
}

// quantile interpolates within the bucket holding the q-quantile, as PromQL's histogram_quantile.
func quantile(q float64, h *dto.Histogram) float64 {
	total := float64(h.GetSampleCount())
	if total == 0 {
		return math.NaN()
	}
	bs := h.GetBucket()
	sort.Slice(bs, func(i, j int) bool { return bs[i].GetUpperBound() < bs[j].GetUpperBound() })
	rank := q * total
	prevBound, prevCount := 0.0, 0.0
	for _, b := range bs {
		c := float64(b.GetCumulativeCount())
		if c >= rank {
			if math.IsInf(b.GetUpperBound(), 1) {
				return prevBound
			}
			if c == prevCount {
				return b.GetUpperBound()
			}
			return prevBound + (b.GetUpperBound()-prevBound)*(rank-prevCount)/(c-prevCount)
		}
		prevBound, prevCount = b.GetUpperBound(), c
	}
	return prevBound
}

// ranges are the limits the figures must stay within; an absent limit is not checked.
type ranges struct {
	MaxApplySeconds            *float64 `json:"maxApplySeconds,omitempty"`
	MaxSecondsToAllPhases      *float64 `json:"maxSecondsToAllPhases,omitempty"`
	MaxSecondsToAllFirstJobs   *float64 `json:"maxSecondsToAllFirstJobs,omitempty"`
	MaxSecondsToAllSucceeded   *float64 `json:"maxSecondsToAllSucceeded,omitempty"`
	MaxReconcileP99Seconds     *float64 `json:"maxReconcileP99Seconds,omitempty"`
	MaxReconcileErrors         *float64 `json:"maxReconcileErrors,omitempty"`
	MaxOperatorCPUSeconds      *float64 `json:"maxOperatorCPUSeconds,omitempty"`
	MaxOperatorRSSMiB          *float64 `json:"maxOperatorRSSMiB,omitempty"`
	MaxAPIRequestsPerBenchmark *float64 `json:"maxAPIRequestsPerBenchmark,omitempty"`
	MaxBenchmarksFailed        *int     `json:"maxBenchmarksFailed,omitempty"`
	MaxBenchmarksLostPhase     *int     `json:"maxBenchmarksLostPhase,omitempty"`
	MaxRunsArchivePending      *int     `json:"maxRunsArchivePending,omitempty"`
	MaxRunsArchiveError        *int     `json:"maxRunsArchiveError,omitempty"`
	MaxSequentialGapSeconds    *float64 `json:"maxSequentialGapSeconds,omitempty"`
	MaxExclusiveOverlaps       *int     `json:"maxExclusiveOverlaps,omitempty"`
	MaxActiveJobsOverSlots     *int     `json:"maxActiveJobsOverSlots,omitempty"`
	MaxHostileNotOverLimits    *int     `json:"maxHostileNotOverLimits,omitempty"`
	// Prometheus-like scrapes of /metrics and /metrics/results during the run.
	MaxScrapesFailed *int `json:"maxScrapesFailed,omitempty"`
	// The hostile tenant is served in the first rounds although its benchmarks come last.
	MaxHostileSecondsToAllFirstJobs *float64 `json:"maxHostileSecondsToAllFirstJobs,omitempty"`
}

func loadRanges(path string) (*ranges, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r ranges
	if err := yaml.UnmarshalStrict(raw, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// check returns one line per figure outside its range. A time that was never reached (-1) is out
// of any range.
func (r *ranges) check(f *figures) []string {
	var out []string
	maxF := func(name string, limit *float64, v float64, reached bool) {
		if limit == nil {
			return
		}
		if !reached {
			out = append(out, fmt.Sprintf("%s: never reached (limit %g)", name, *limit))
		} else if v > *limit || math.IsNaN(v) {
			out = append(out, fmt.Sprintf("%s = %.3g, limit %g", name, v, *limit))
		}
	}
	maxI := func(name string, limit *int, v int) {
		if limit != nil && v > *limit {
			out = append(out, fmt.Sprintf("%s = %d, limit %d", name, v, *limit))
		}
	}
	maxF("applySeconds", r.MaxApplySeconds, f.ApplySeconds, true)
	maxF("secondsToAllPhases", r.MaxSecondsToAllPhases, f.SecondsToAllPhases, f.SecondsToAllPhases >= 0)
	maxF("secondsToAllFirstJobs", r.MaxSecondsToAllFirstJobs, f.SecondsToAllFirstJobs, f.SecondsToAllFirstJobs >= 0)
	maxF("secondsToAllSucceeded", r.MaxSecondsToAllSucceeded, f.SecondsToAllSucceeded, f.SecondsToAllSucceeded >= 0)
	maxF("reconcileP99Seconds", r.MaxReconcileP99Seconds, f.ReconcileP99Seconds, true)
	maxF("reconcileErrors", r.MaxReconcileErrors, f.ReconcileErrors, true)
	maxF("operatorCPUSeconds", r.MaxOperatorCPUSeconds, f.CPUSeconds, true)
	maxF("operatorRSSMiB", r.MaxOperatorRSSMiB, f.MaxRSSMiB, true)
	maxF("apiRequestsPerBenchmark", r.MaxAPIRequestsPerBenchmark, f.APIRequestsPerBenchmark, true)
	maxI("benchmarksFailed", r.MaxBenchmarksFailed, f.BenchmarksFailed)
	maxI("benchmarksLostPhase", r.MaxBenchmarksLostPhase, f.BenchmarksLostPhase)
	maxI("runsArchivePending", r.MaxRunsArchivePending, f.RunsArchivePending)
	maxI("runsArchiveError", r.MaxRunsArchiveError, f.RunsArchiveError)
	maxF("sequentialGapMaxSeconds", r.MaxSequentialGapSeconds, f.SequentialGapMaxSeconds, f.SequentialGapMaxSeconds >= 0)
	maxI("exclusiveOverlaps", r.MaxExclusiveOverlaps, f.ExclusiveOverlaps)
	maxI("activeJobsOverSlots", r.MaxActiveJobsOverSlots, f.ActiveJobsOverSlots)
	maxI("hostileNotOverLimits", r.MaxHostileNotOverLimits, f.HostileNotOverLimits)
	maxI("scrapesFailed", r.MaxScrapesFailed, f.ScrapesFailed)
	maxF("hostileSecondsToAllFirstJobs", r.MaxHostileSecondsToAllFirstJobs, f.HostileSecondsToAllFirstJobs, f.HostileSecondsToAllFirstJobs >= 0)
	return out
}

// scrapes GETs the operator's /metrics and /metrics/results every interval while a run lasts, as
// Prometheus does (the chart's ServiceMonitor), so the operator's memory and CPU include what
// scraping costs; it notes the largest results body, the slowest scrape and the failed ones.
type scrapes struct {
	stop          chan struct{}
	done          chan struct{}
	count, failed int
	maxBytes      int64
	maxSeconds    float64
	firstError    string
}

func scrapeEvery(interval time.Duration, base string) *scrapes {
	s := &scrapes{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
			for _, path := range []string{"/metrics", "/metrics/results"} {
				start := time.Now()
				n, err := get(base + path)
				s.count++
				if err != nil {
					s.failed++
					if s.firstError == "" {
						s.firstError = err.Error()
					}
					continue
				}
				s.maxSeconds = max(s.maxSeconds, time.Since(start).Seconds())
				if path == "/metrics/results" {
					s.maxBytes = max(s.maxBytes, n)
				}
			}
		}
	}()
	return s
}

// end stops the scrapes and waits for the one under way.
func (s *scrapes) end() {
	close(s.stop)
	<-s.done
}

// get reads url's body (gzipped, as Prometheus asks) and returns its size unzipped.
func get(url string) (int64, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s: %s", url, resp.Status)
	}
	var body io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			return 0, err
		}
		body = zr
	}
	return io.Copy(io.Discard, body)
}
