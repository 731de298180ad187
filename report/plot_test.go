package report

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// checkPNG decodes a PNG and checks its size and that something was drawn on it.
func checkPNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if b := img.Bounds(); b.Dx() != 960 || b.Dy() != 576 {
		t.Errorf("%s: %dx%d, want 960x576", path, b.Dx(), b.Dy())
	}
	colours := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, a := img.At(x, y).RGBA()
			colours[[4]uint32{r, g, bl, a}] = true
		}
	}
	// Lines in several colours plus axes and text: far more than a blank or one-colour image.
	if len(colours) < 5 {
		t.Errorf("%s: only %d colours", path, len(colours))
	}
}

var svgStart = regexp.MustCompile(`^(<\?xml[^>]*\?>\s*)?(<!--.*?-->\s*)*<svg[\s>]`)

func checkSVG(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !svgStart.Match(data) {
		t.Errorf("%s does not start with an svg element: %.120q", path, data)
	}
	if !bytes.HasSuffix(bytes.TrimSpace(data), []byte("</svg>")) {
		t.Errorf("%s does not end with </svg>", path)
	}
	return string(data)
}

func writePlot(t *testing.T, kind string, bs []*Benchmark, opt PlotOptions, file string) string {
	t.Helper()
	p, err := Plot(kind, bs, opt)
	if err != nil {
		t.Fatalf("%s: %v", kind, err)
	}
	format, err := PlotFormat(file)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), file)
	var buf bytes.Buffer
	if err := WritePlot(&buf, p, format); err != nil {
		t.Fatalf("%s: %v", kind, err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestPlots(t *testing.T) {
	for _, kind := range PlotKinds {
		t.Run(kind, func(t *testing.T) {
			b := fixture(t)
			if kind == "pulse" { // only rocksdb has its rounds; with leveldb the plot falls back to means
				b.Status.Runs = b.Status.Runs[:1]
			}
			bs := []*Benchmark{b}
			checkPNG(t, writePlot(t, kind, bs, PlotOptions{}, kind+".png"))
			svg := checkSVG(t, writePlot(t, kind, bs, PlotOptions{}, kind+".SVG"))
			// The legend names the series.
			want := map[string]string{"threads": "rocksdb readrandom", "latency": "leveldb ycsb-c t=4",
				"pulse": "rocksdb t=4", "timeseries": "rocksdb readrandom t=4"}[kind]
			if !strings.Contains(svg, want) {
				t.Errorf("no series %q in the svg", want)
			}
		})
	}
}

// Without full results, pulse falls back to mean round seconds and timeseries has nothing to draw.
func TestPlotsFromStatusOnly(t *testing.T) {
	b := fixture(t)
	b.Results = nil
	p, err := Plot("pulse", []*Benchmark{b}, PlotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Title.Text, "mean round seconds") {
		t.Errorf("pulse title %q", p.Title.Text)
	}
	checkPNG(t, writePlot(t, "pulse", []*Benchmark{b}, PlotOptions{}, "pulse.png"))
	// Trimmed summaries have no p99.99 (zero): the log axis must not see it.
	for i := range b.Status.Runs {
		for j := range b.Status.Runs[i].Results {
			b.Status.Runs[i].Results[j].LatencyMicros.P9999 = 0
		}
	}
	checkPNG(t, writePlot(t, "latency", []*Benchmark{b}, PlotOptions{}, "latency.png"))
	if _, err := Plot("timeseries", []*Benchmark{b}, PlotOptions{}); err == nil || !strings.Contains(err.Error(), "timeseries needs the runners' full results") {
		t.Errorf("timeseries without full results: %v", err)
	}
}

func TestPlotTwoBenchmarksAndFilter(t *testing.T) {
	a, b := fixture(t), fixture(t)
	b.Name = "other"
	svg := checkSVG(t, writePlot(t, "threads", []*Benchmark{a, b}, PlotOptions{Workload: "ycsb-a"}, "t.svg"))
	for _, s := range []string{"demo: rocksdb ycsb-a", "other: leveldb ycsb-a"} {
		if !strings.Contains(svg, s) {
			t.Errorf("no series %q", s)
		}
	}
	if strings.Contains(svg, "readrandom") {
		t.Errorf("the workload filter kept readrandom")
	}
}

func TestPlotErrors(t *testing.T) {
	noPulse := fixture(t)
	noPulse.Results = nil
	for i := range noPulse.Status.Runs {
		noPulse.Status.Runs[i].Results = noPulse.Status.Runs[i].Results[:1]
	}
	noLatency := fixture(t)
	noLatency.Results = nil
	for i := range noLatency.Status.Runs {
		for j := range noLatency.Status.Runs[i].Results {
			noLatency.Status.Runs[i].Results[j].LatencyMicros = nil
		}
	}
	empty := &Benchmark{}
	empty.Name = "new"
	for _, c := range []struct {
		kind string
		b    *Benchmark
		opt  PlotOptions
		want string
	}{
		{"histogram", fixture(t), PlotOptions{}, `unknown plot kind "histogram" (one of threads, latency, pulse, timeseries)`},
		{"threads", empty, PlotOptions{}, "new: no results to plot"},
		{"threads", fixture(t), PlotOptions{Workload: "fillseq"}, "demo: no fillseq phases to plot"},
		{"pulse", noPulse, PlotOptions{}, "demo: no pulse phases"},
		{"latency", noLatency, PlotOptions{}, "demo: no latency percentiles to plot"},
	} {
		_, err := Plot(c.kind, []*Benchmark{c.b}, c.opt)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: got %v, want %q", c.kind, err, c.want)
		}
	}
	if _, err := PlotFormat("out.pdf"); err == nil || err.Error() != `unknown plot file extension ".pdf" in out.pdf: use .png or .svg` {
		t.Errorf("pdf: %v", err)
	}
	p, err := Plot("threads", []*Benchmark{fixture(t)}, PlotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := WritePlot(&bytes.Buffer{}, p, "jpg"); err == nil {
		t.Errorf("jpg accepted")
	}
}

// Pulse rounds get whole-number ticks, at most about ten labelled.
func TestRoundTicks(t *testing.T) {
	for _, c := range []struct {
		max   float64
		first []float64
	}{{5, []float64{0, 1, 2}}, {30, []float64{0, 5, 10}}, {599, []float64{0, 100, 200}}} {
		ticks := roundTicks{}.Ticks(0, c.max)
		if len(ticks) > 11 || len(ticks) < 3 {
			t.Errorf("max %v: %d ticks", c.max, len(ticks))
			continue
		}
		for i, v := range c.first {
			if ticks[i].Value != v {
				t.Errorf("max %v: tick %d is %v, want %v", c.max, i, ticks[i].Value, v)
			}
		}
	}
}

func TestPlotTitleFitsManyBenchmarks(t *testing.T) {
	var bs []*Benchmark
	for _, n := range []string{"seed-001-dbbench", "seed-001-fillrandom", "seed-001-fillseq"} {
		b := fixture(t)
		b.Name = n
		bs = append(bs, b)
	}
	if got := titleOf(bs[:2]); got != "seed-001-dbbench, seed-001-fillrandom" {
		t.Errorf("two benchmarks: %q", got)
	}
	if got := titleOf(bs); got != "seed-001-dbbench and 2 more" {
		t.Errorf("three benchmarks: %q", got)
	}
}

// The threads plot shows the median of the repeats with an error bar, as report and compare
// summarise them (it averaged them: one slow repeat of three moved the point by a third).
func TestThreadsPlotMediansWithBars(t *testing.T) {
	b := fixture(t)
	b.Results = nil
	b.Status.Runs = b.Status.Runs[1:] // leveldb, from status
	var rs []api.PhaseSummary
	for i, ops := range []float64{100, 100, 1000, 90, 110, 105, 95} { // median 100, mean 228.6
		p := phase("readrandom", 1, ops, 10).PhaseSummary
		p.Iteration = int32(i)
		rs = append(rs, p)
		if i < 3 {
			q := phase("readrandom", 4, 4*ops, 10).PhaseSummary
			q.Iteration = int32(i)
			rs = append(rs, q)
		}
	}
	b.Status.Runs[0].Results = rs
	lines, repeated := threadsSeries(plotPhases([]*Benchmark{b}, PlotOptions{}))
	l := lines.byKey["leveldb readrandom"]
	if !repeated || l == nil || len(l.pts) != 2 || len(l.errs) != 2 {
		t.Fatalf("repeated %v, series %+v", repeated, l)
	}
	// 7 repeats: the 95% interval of the median is [x(1), x(7)] of the sorted values (coverage
	// 1 - 2/128 = 0.984; [x(2), x(6)] covers 1 - 2*8/128 = 0.875), i.e. 90..1000.
	if l.pts[0].Y != 100 || l.errs[0].Low != 10 || l.errs[0].High != 900 {
		t.Errorf("threads=1: median %v, bar -%v +%v; want 100, -10 +900", l.pts[0].Y, l.errs[0].Low, l.errs[0].High)
	}
	// 3 repeats have no finite interval: the bar spans min..max.
	if l.pts[1].Y != 400 || l.errs[1].Low != 0 || l.errs[1].High != 3600 {
		t.Errorf("threads=4: median %v, bar -%v +%v; want 400, -0 +3600", l.pts[1].Y, l.errs[1].Low, l.errs[1].High)
	}
	p, err := Plot("threads", []*Benchmark{b}, PlotOptions{})
	if err != nil || !strings.Contains(p.Y.Label.Text, "median of the repeats") {
		t.Fatalf("%v, y label %q", err, p.Y.Label.Text)
	}
	checkPNG(t, writePlot(t, "threads", []*Benchmark{b}, PlotOptions{}, "threads.png"))
	// Without repeats: the single values, no bars.
	if lines, repeated := threadsSeries(plotPhases([]*Benchmark{fixture(t)}, PlotOptions{})); repeated || lines.byKey["rocksdb readrandom"].errs != nil {
		t.Errorf("single runs got bars")
	}
}

// Every line of a plot has a colour of its own, beyond gonum's seven (timeseries repeated them).
func TestSeriesColorsDiffer(t *testing.T) {
	for _, n := range []int{1, 7, 8, 24} {
		seen := map[[4]uint32]bool{}
		for _, c := range seriesColors(n) {
			r, g, b, a := c.RGBA()
			seen[[4]uint32{r, g, b, a}] = true
		}
		if len(seen) != n {
			t.Errorf("%d series: %d colours", n, len(seen))
		}
	}
	b := fixture(t)
	full := b.Results["rocksdb"]
	for i := range full.Phases {
		full.Phases[i].Intervals = []api.IntervalSample{{OffsetSeconds: 1, OpsPerSec: 10}, {OffsetSeconds: 2, OpsPerSec: 20}}
	}
	svg := checkSVG(t, writePlot(t, "timeseries", []*Benchmark{b}, PlotOptions{}, "ts.svg"))
	strokes := map[string]bool{}
	for _, m := range regexp.MustCompile(`stroke:#([0-9A-F]{2})([0-9A-F]{2})([0-9A-F]{2})`).FindAllStringSubmatch(svg, -1) {
		if m[1] != m[2] || m[2] != m[3] { // not the black axes or the gray grid
			strokes[m[0]] = true
		}
	}
	if len(full.Phases) <= 7 || len(strokes) < len(full.Phases) {
		t.Errorf("%d timeseries lines in %d stroke colours", len(full.Phases), len(strokes))
	}
}
