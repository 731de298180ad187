// Package history is a KVBenchmarkSchedule's history of results: one point per series (run x
// workload x threads x metric) per finished KVBenchmark, kept in a ConfigMap the schedule owns, so
// it outlives the KVBenchmarks the schedule deletes. The operator adds to it; kubectl kvbench
// history reads it.
package history

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/stats"
)

const (
	// SchemaVersion of the history document.
	SchemaVersion = "kvbench.io/history/v1"
	// Key of the compressed document in the ConfigMap's binaryData.
	Key = "history.json.gz"
	// MaxBytes bounds the compressed document: a ConfigMap holds at most 1 MiB, and etcd's request
	// limit is 1.5 MiB. Over it, the oldest runs are dropped until it fits.
	MaxBytes = 900 << 10
	// MaxSeries bounds the series of one history; a run's points beyond it are counted as dropped.
	MaxSeries = 2000
	// maxDecompressed bounds what a reader inflates (a document at MaxBytes is about 4 MiB).
	maxDecompressed = 32 << 20
	// LabelSchedule is the label on the history ConfigMap and on the schedule's KVBenchmarks.
	LabelSchedule = "kvbench.io/schedule"
)

// History of one schedule, oldest run first.
type History struct {
	SchemaVersion string `json:"schemaVersion"`
	Schedule      string `json:"schedule"`
	// Runs are the recorded KVBenchmarks (failed ones too, without points), at most the
	// schedule's historyLimit.
	Runs   []Run    `json:"runs"`
	Series []Series `json:"series"`
	// Reported are the change points reported (kept here as well as in the schedule's status, which
	// holds only the latest 50), and Acks the acknowledged ones: both are known to the detector.
	Reported []Mark `json:"reported,omitempty"`
	Acks     []Mark `json:"acks,omitempty"`
}

// Run is one recorded KVBenchmark.
type Run struct {
	Name string      `json:"name"`
	Time metav1.Time `json:"time"`
	// Cause: Schedule, RunOnCreate, Trigger or Confirm.
	Cause api.RunCause       `json:"cause,omitempty"`
	Phase api.BenchmarkPhase `json:"phase"`
	// Generation of the schedule (its template) that made the run.
	Generation int64 `json:"generation,omitempty"`
	// Provenance of each of its runs (engine, or engine@node).
	Provenance []Provenance `json:"provenance,omitempty"`
}

// Provenance is what ran: a change of any field starts a new segment of the run's series.
type Provenance struct {
	Run           string `json:"run"`
	ImageDigest   string `json:"imageDigest,omitempty"`
	EngineVersion string `json:"engineVersion,omitempty"`
	// Node is the runner's node fingerprint without the CPU's current clock (which varies).
	Node string `json:"node,omitempty"`
	// Storage is the medium and storage class.
	Storage string `json:"storage,omitempty"`
	// NodeName the run ran on: not part of the fingerprint (identical nodes are one kind of node).
	NodeName string `json:"nodeName,omitempty"`
}

// Fingerprint is a short digest of the provenance, kept with every point.
func (p Provenance) Fingerprint() string {
	h := sha256.Sum256([]byte(strings.Join([]string{p.ImageDigest, p.EngineVersion, p.Node, p.Storage}, "\x00")))
	return hex.EncodeToString(h[:6])
}

// Diff names the fields that differ: "image digest sha256:ab.. -> sha256:cd..".
func (p Provenance) Diff(q Provenance) []string {
	var out []string
	for _, f := range []struct{ name, a, b string }{
		{"image digest", p.ImageDigest, q.ImageDigest},
		{"engine version", p.EngineVersion, q.EngineVersion},
		{"node", p.Node, q.Node},
		{"storage", p.Storage, q.Storage},
	} {
		if f.a != f.b {
			out = append(out, fmt.Sprintf("%s %s -> %s", f.name, orNone(f.a), orNone(f.b)))
		}
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

// Series is one metric of one sweep point of one run, over the recorded KVBenchmarks.
type Series struct {
	Run    string         `json:"run"`
	Engine api.EngineName `json:"engine"`
	// Node is set for a schedule spread EachNode (the run is engine@node).
	Node     string            `json:"node,omitempty"`
	Workload string            `json:"workload"`
	Threads  int32             `json:"threads"`
	Metric   api.HistoryMetric `json:"metric"`
	Points   []Point           `json:"points"`
}

// Name is "<run> <workload> threads=<n> <metric>", the series' name in status and tables.
func (s *Series) Name() string { return SeriesName(s.Run, s.Workload, s.Threads, s.Metric) }

// SeriesName names a series.
func SeriesName(run, workload string, threads int32, m api.HistoryMetric) string {
	return fmt.Sprintf("%s %s threads=%d %s", run, workload, threads, m)
}

// Point is one KVBenchmark's value of a series: the median over its repeats, with the 95%
// interval of the median when it had 6 or more (else CILow = CIHigh = 0).
type Point struct {
	Child       string  `json:"c"`
	Median      float64 `json:"v"`
	CILow       float64 `json:"lo,omitempty"`
	CIHigh      float64 `json:"hi,omitempty"`
	N           int32   `json:"n"`
	Fingerprint string  `json:"f,omitempty"`
}

// Mark is a change point of a series at Child: reported, or acknowledged as expected.
type Mark struct {
	Child  string      `json:"child"`
	Series string      `json:"series"`
	Time   metav1.Time `json:"time"`
}

// New is an empty history of a schedule.
func New(schedule string) *History {
	return &History{SchemaVersion: SchemaVersion, Schedule: schedule}
}

// Has says whether the KVBenchmark is recorded.
func (h *History) Has(child string) bool {
	return slices.ContainsFunc(h.Runs, func(r Run) bool { return r.Name == child })
}

// Find returns the series with that name, or nil.
func (h *History) Find(name string) *Series {
	for i := range h.Series {
		if h.Series[i].Name() == name {
			return &h.Series[i]
		}
	}
	return nil
}

// RunOf returns the recorded run of a KVBenchmark, or nil.
func (h *History) RunOf(child string) *Run {
	for i := range h.Runs {
		if h.Runs[i].Name == child {
			return &h.Runs[i]
		}
	}
	return nil
}

// ProvenanceOf is a run's provenance in a recorded KVBenchmark.
func (r *Run) ProvenanceOf(run string) (Provenance, bool) {
	for _, p := range r.Provenance {
		if p.Run == run {
			return p, true
		}
	}
	return Provenance{}, false
}

// Values are the series' medians, oldest first.
func (s *Series) Values() []float64 {
	out := make([]float64, len(s.Points))
	for i, p := range s.Points {
		out[i] = p.Median
	}
	return out
}

// Boundaries are the indexes of points whose provenance differs from the point before.
func (s *Series) Boundaries() []int {
	var out []int
	for i := 1; i < len(s.Points); i++ {
		if s.Points[i].Fingerprint != s.Points[i-1].Fingerprint {
			out = append(out, i)
		}
	}
	return out
}

// Index is the position of the child's point, or -1.
func (s *Series) Index(child string) int {
	return slices.IndexFunc(s.Points, func(p Point) bool { return p.Child == child })
}

// workloadName is what a series' workload may look like: runner output is tenant input, and the
// names end up in Prometheus labels and tables.
var workloadName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9:#._-]{0,63}$`)

// mhz is the CPU's current clock in a node fingerprint ("AMD EPYC x 2 @ 2596 MHz, ..."), which
// changes from run to run and so is no provenance.
var mhz = regexp.MustCompile(` @ [0-9.]+ MHz`)

// Record adds a finished KVBenchmark: a run entry and, for each run with results, a point per
// series (the full results by run name, from the archives, give the engine counters; without one
// a run's points come from status and have no writeAmplification or stallPercent). It then keeps
// the newest limit runs. It returns how many points were dropped because of MaxSeries or a
// workload name that is not one.
func (h *History) Record(b *api.KVBenchmark, full map[string]*api.Result, r Run, limit int) (dropped int) {
	if h.Has(b.Name) {
		return 0
	}
	r.Name, r.Phase = b.Name, b.Status.Phase
	index := h.index()
	storage := string(b.Spec.Storage.Medium)
	if b.Spec.Storage.StorageClassName != nil {
		storage += "/" + *b.Spec.Storage.StorageClassName
	}
	for _, run := range b.Status.Runs {
		if run.Phase != api.RunSucceeded && run.Phase != api.RunFailed {
			continue
		}
		p := Provenance{Run: run.Name, EngineVersion: run.EngineVersion, Storage: storage, NodeName: run.NodeName}
		if run.Provenance != nil {
			p.ImageDigest = run.Provenance.ImageDigest
			p.Node = mhz.ReplaceAllString(run.Provenance.Node, "")
		}
		r.Provenance = append(r.Provenance, p)
		if b.Status.Phase != api.PhaseSucceeded {
			continue // a failed benchmark's numbers are not a level of the series
		}
		for _, pt := range points(run, full[run.Name], p.Fingerprint()) {
			pt.Child = b.Name
			if !workloadName.MatchString(pt.Workload) || !h.add(pt, index) {
				dropped++
			}
		}
	}
	h.Runs = append(h.Runs, r)
	h.Trim(limit)
	return dropped
}

// newPoint is a point with its series' identity.
type newPoint struct {
	Series
	Point
}

// index maps series names to their position in h.Series.
func (h *History) index() map[string]int {
	m := make(map[string]int, len(h.Series))
	for i := range h.Series {
		m[h.Series[i].Name()] = i
	}
	return m
}

func (h *History) add(p newPoint, index map[string]int) bool {
	name := p.Name()
	if i, ok := index[name]; ok {
		h.Series[i].Points = append(h.Series[i].Points, p.Point)
		return true
	}
	if len(h.Series) >= MaxSeries {
		return false
	}
	s := p.Series
	s.Points = []Point{p.Point}
	index[name] = len(h.Series)
	h.Series = append(h.Series, s)
	return true
}

// points are a run's points: per sweep point (workload x threads), each metric's median over the
// repeats. The full result, when there is one, has every phase and the engine counters.
func points(run api.RunStatus, full *api.Result, fingerprint string) []newPoint {
	phases := run.Results
	if full != nil && len(full.Phases) > 0 {
		phases = make([]api.PhaseSummary, len(full.Phases))
		for i := range full.Phases {
			phases[i] = full.Phases[i].PhaseSummary
			phases[i].Index = int32(i) // to find the phase's counters below
		}
	} else {
		full = nil
	}
	engine, node, _ := strings.Cut(run.Name, "@")
	var out []newPoint
	for _, g := range stats.Group(run.Name, run.Engine, phases) {
		series := Series{Run: run.Name, Engine: api.EngineName(engine), Node: node, Workload: g.Workload, Threads: g.Threads}
		add := func(m api.HistoryMetric, values []float64) {
			values = slices.DeleteFunc(values, func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) })
			if len(values) == 0 {
				return
			}
			s := stats.Summarize(values)
			series.Metric = m
			out = append(out, newPoint{Series: series, Point: Point{Median: round(s.Median), CILow: round(s.CILow), CIHigh: round(s.CIHigh),
				N: s.N, Fingerprint: fingerprint}})
		}
		add(api.MetricOpsPerSec, g.Values(stats.OpsPerSec))
		add(api.MetricP50Micros, g.Values(stats.P50Micros))
		add(api.MetricP99Micros, g.Values(stats.P99Micros))
		add(api.MetricP999Micros, g.Values(stats.P999Micros))
		if full == nil {
			continue
		}
		var wamp, stall []float64
		for _, ph := range g.Phases {
			e := full.Phases[ph.Index].EngineStats
			if e == nil {
				continue
			}
			if e.WriteAmplification != nil {
				wamp = append(wamp, *e.WriteAmplification)
			}
			if e.StallSeconds != nil && ph.Seconds > 0 {
				stall = append(stall, 100**e.StallSeconds/ph.Seconds)
			}
		}
		add(api.MetricWriteAmplification, wamp)
		add(api.MetricStallPercent, stall)
	}
	return out
}

// round keeps 6 significant digits: more is noise in a benchmark, and shorter numbers keep the
// history small.
func round(v float64) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	return f
}

// Trim keeps the newest limit runs and the points of those runs.
func (h *History) Trim(limit int) {
	if limit < 1 || len(h.Runs) <= limit {
		return
	}
	h.dropOldest(len(h.Runs) - limit)
}

func (h *History) dropOldest(n int) {
	gone := map[string]bool{}
	for _, r := range h.Runs[:n] {
		gone[r.Name] = true
	}
	h.Runs = slices.Clone(h.Runs[n:])
	series := h.Series[:0]
	for _, s := range h.Series {
		s.Points = slices.DeleteFunc(s.Points, func(p Point) bool { return gone[p.Child] })
		if len(s.Points) > 0 {
			series = append(series, s)
		}
	}
	h.Series = series
	h.Acks = slices.DeleteFunc(h.Acks, func(a Mark) bool { return gone[a.Child] })
	h.Reported = slices.DeleteFunc(h.Reported, func(a Mark) bool { return gone[a.Child] })
}

// Encode is the gzip-compressed JSON document, the oldest runs dropped until it is at most
// MaxBytes; it returns how many runs were dropped for size.
func (h *History) Encode() ([]byte, int, error) {
	dropped := 0
	for {
		b, err := json.Marshal(h)
		if err != nil {
			return nil, dropped, err
		}
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		if _, err := zw.Write(b); err != nil {
			return nil, dropped, err
		}
		if err := zw.Close(); err != nil {
			return nil, dropped, err
		}
		if buf.Len() <= MaxBytes || len(h.Runs) <= 1 {
			return buf.Bytes(), dropped, nil
		}
		// Drop the share of runs the excess suggests, and a run more: compressing is the slow part.
		n := min(len(h.Runs)-1, 1+len(h.Runs)*(buf.Len()-MaxBytes)/buf.Len())
		h.dropOldest(n)
		dropped += n
	}
}

// Decode reads a document written by Encode.
func Decode(data []byte) (*History, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	var buf bytes.Buffer
	n, err := buf.ReadFrom(io.LimitReader(zr, maxDecompressed+1))
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	if n > maxDecompressed {
		return nil, fmt.Errorf("history: more than %d bytes decompressed", maxDecompressed)
	}
	var h History
	if err := json.Unmarshal(buf.Bytes(), &h); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	if h.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("history: schema %q, want %q", h.SchemaVersion, SchemaVersion)
	}
	return &h, nil
}

// ConfigMapName is the history's ConfigMap for a schedule.
func ConfigMapName(schedule string) string { return schedule + "-history" }

// ErrNotOurs is returned for a ConfigMap under the history's name that the schedule does not own.
var ErrNotOurs = errors.New("the ConfigMap is not controlled by the schedule")

// FromConfigMap reads the history of schedule s from cm, which must be controlled by s.
func FromConfigMap(cm *corev1.ConfigMap, s *api.KVBenchmarkSchedule) (*History, error) {
	if ref := metav1.GetControllerOf(cm); ref == nil || ref.UID != s.UID {
		return nil, fmt.Errorf("%s: %w", cm.Name, ErrNotOurs)
	}
	data, ok := cm.BinaryData[Key]
	if !ok {
		return nil, fmt.Errorf("%s: no %s", cm.Name, Key)
	}
	return Decode(data)
}
