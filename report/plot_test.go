package report

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
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
