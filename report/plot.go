package report

import (
	"cmp"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/stats"
)

// PlotKinds are the plots Plot draws.
var PlotKinds = []string{"threads", "latency", "pulse", "timeseries"}

// Plot size: 960x576 pixels as PNG (96 dpi).
const (
	PlotWidth  = 10 * vg.Inch
	PlotHeight = 6 * vg.Inch
)

// PlotOptions narrow what a plot shows.
type PlotOptions struct {
	// Workload keeps only phases of this workload (e.g. "readrandom", "ycsb-a").
	Workload string
}

// series is one line of a plot, with error bars when errs is set.
type series struct {
	name string
	pts  plotter.XYs
	errs plotter.YErrors // below and above each point; nil: no bars
}

// seriesSet keeps lines in the order they were first named.
type seriesSet struct {
	order []string
	byKey map[string]*series
}

func (s *seriesSet) get(name string) *series {
	if s.byKey == nil {
		s.byKey = map[string]*series{}
	}
	l := s.byKey[name]
	if l == nil {
		l = &series{name: name}
		s.byKey[name] = l
		s.order = append(s.order, name)
	}
	return l
}

func (s *seriesSet) add(name string, x, y float64) {
	l := s.get(name)
	l.pts = append(l.pts, plotter.XY{X: x, Y: y})
}

// addBar adds a point with an error bar from lo to hi.
func (s *seriesSet) addBar(name string, x, y, lo, hi float64) {
	l := s.get(name)
	l.pts = append(l.pts, plotter.XY{X: x, Y: y})
	l.errs = append(l.errs, struct{ Low, High float64 }{y - lo, hi - y})
}

// addTo draws each series as a line with points (and its error bars) in a colour of its own.
func (s *seriesSet) addTo(p *plot.Plot) error {
	colours := seriesColors(len(s.order))
	for i, name := range s.order {
		l := s.byKey[name]
		idx := make([]int, len(l.pts))
		for j := range idx {
			idx[j] = j
		}
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(l.pts[a].X, l.pts[b].X) })
		pts := make(plotter.XYs, len(idx))
		for j, k := range idx {
			pts[j] = l.pts[k]
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		line.Color, line.Dashes = colours[i], plotutil.Dashes(i)
		points.Color, points.Shape = colours[i], plotutil.Shape(i)
		p.Add(line, points)
		p.Legend.Add(name, line, points)
		if l.errs != nil {
			errs := make(plotter.YErrors, len(idx))
			for j, k := range idx {
				errs[j] = l.errs[k]
			}
			bars, err := plotter.NewYErrorBars(struct {
				plotter.XYs
				plotter.YErrors
			}{pts, errs})
			if err != nil {
				return err
			}
			bars.Color = colours[i]
			p.Add(bars)
		}
	}
	return nil
}

// seriesColors are n colours that differ: gonum's seven, then as many hues evenly around the
// colour wheel (the seven repeated from the eighth line on).
func seriesColors(n int) []color.Color {
	if n <= len(plotutil.DefaultColors) {
		return plotutil.DefaultColors[:n]
	}
	return palette.Rainbow(n, 0, palette.Hue(float64(n-1)/float64(n)), 0.9, 0.8, 1).Colors()
}

// threadsSeries are the threads plot's lines: per benchmark, run and workload the median ops/s
// over the repeats at each thread count, as report and compare summarise repeats, with an error
// bar: the median's 95% confidence interval, or min..max below the 6 repeats a finite interval
// needs. It says whether any point was repeated.
func threadsSeries(phases []benchPhase) (lines seriesSet, repeated bool) {
	type key struct {
		name    string
		threads int32
	}
	values := map[key][]float64{}
	var keys []key
	for _, ph := range phases {
		k := key{fmt.Sprintf("%s%s %s", ph.bench, ph.Run, ph.Name()), ph.Threads}
		if values[k] == nil {
			keys = append(keys, k)
		}
		values[k] = append(values[k], ph.OpsPerSec)
	}
	sums := make([]api.SampleStats, len(keys))
	for i, k := range keys {
		sums[i] = stats.Summarize(values[k])
		repeated = repeated || sums[i].N > 1
	}
	for i, k := range keys {
		s := sums[i]
		if !repeated {
			lines.add(k.name, float64(k.threads), s.Median)
			continue
		}
		lo, hi := s.Median, s.Median // one run: no spread to show
		switch {
		case s.CIConfidence > 0:
			lo, hi = s.CILow, s.CIHigh
		case s.N > 1:
			lo, hi = s.Min, s.Max
		}
		lines.addBar(k.name, float64(k.threads), s.Median, lo, hi)
	}
	return lines, repeated
}

// benchPhase is a phase with the name of its benchmark, for series names across benchmarks.
type benchPhase struct {
	bench string
	Phase
}

func plotPhases(bs []*Benchmark, opt PlotOptions) []benchPhase {
	var out []benchPhase
	for _, b := range bs {
		for _, p := range b.Phases(false) {
			if opt.Workload != "" && p.Workload != opt.Workload && p.Name() != opt.Workload {
				continue
			}
			name := ""
			if len(bs) > 1 {
				name = b.Name + ": "
			}
			out = append(out, benchPhase{bench: name, Phase: p})
		}
	}
	return out
}

// titleOf names the benchmarks of a plot for its title: beyond two, the first and a count, so that
// the title fits over the plot (five seed 001 names were clipped; the legend names every line).
func titleOf(bs []*Benchmark) string {
	if len(bs) > 2 {
		return fmt.Sprintf("%s and %d more", bs[0].Name, len(bs)-1)
	}
	var names []string
	for _, b := range bs {
		names = append(names, b.Name)
	}
	return strings.Join(names, ", ")
}

// Plot draws one kind of plot over one or more benchmarks:
//   - threads: ops/s vs threads, a line per run and workload: the median of the repeats with
//     error bars (threadsSeries);
//   - latency: p50 ... max per run, workload and thread count, on a log scale;
//   - pulse: each round's read seconds vs round, a line per run and thread count (full results),
//     else the mean round seconds vs threads from the status summaries;
//   - timeseries: ops/s over each phase's time (full results).
func Plot(kind string, bs []*Benchmark, opt PlotOptions) (*plot.Plot, error) {
	if !slices.Contains(PlotKinds, kind) {
		return nil, fmt.Errorf("unknown plot kind %q (one of %s)", kind, strings.Join(PlotKinds, ", "))
	}
	phases := plotPhases(bs, opt)
	if len(phases) == 0 {
		what := "results"
		if opt.Workload != "" {
			what = opt.Workload + " phases"
		}
		return nil, fmt.Errorf("%s: no %s to plot", titleOf(bs), what)
	}
	p := plot.New()
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.Y.Tick.Marker = siTicks{}
	p.Add(plotter.NewGrid())
	var lines seriesSet
	switch kind {
	case "threads":
		p.Title.Text = "Throughput vs threads: " + titleOf(bs)
		p.X.Label.Text, p.Y.Label.Text = "threads", "ops/s"
		var repeated bool
		lines, repeated = threadsSeries(phases)
		if repeated {
			p.Y.Label.Text = "ops/s: median of the repeats; bars: its 95% CI (min..max below 6 repeats)"
		}
		threadAxis(p, phases)
		p.Y.Min = 0
	case "latency":
		p.Title.Text = "Latency percentiles: " + titleOf(bs)
		p.X.Label.Text, p.Y.Label.Text = "percentile", "latency (us, log scale)"
		labels := []string{"p50", "p99", "p99.9", "p99.99", "max"}
		for _, ph := range phases {
			l := ph.LatencyMicros
			if l == nil {
				continue
			}
			name := fmt.Sprintf("%s%s %s t=%d", ph.bench, ph.Run, ph.Name(), ph.Threads)
			if ph.Iteration > 0 {
				name += fmt.Sprintf(" it=%d", ph.Iteration)
			}
			for i, v := range []float64{l.P50, l.P99, l.P999, l.P9999, l.Max} {
				// Trimmed summaries drop p99.99 (zero); a log scale cannot show zero.
				if v > 0 {
					lines.add(name, float64(i), v)
				}
			}
		}
		if len(lines.order) == 0 {
			return nil, fmt.Errorf("%s: no latency percentiles to plot", titleOf(bs))
		}
		p.NominalX(labels...)
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	case "pulse":
		var pulse []benchPhase
		rounds := true
		for _, ph := range phases {
			if isPulse(&ph.Phase) {
				pulse = append(pulse, ph)
				rounds = rounds && len(ph.PulseRounds) > 0
			}
		}
		if len(pulse) == 0 {
			return nil, fmt.Errorf("%s: no pulse phases", titleOf(bs))
		}
		if rounds {
			p.Title.Text = "Pulse: read time per round: " + titleOf(bs)
			p.X.Label.Text, p.Y.Label.Text = "round", "read seconds"
			p.X.Tick.Marker = roundTicks{}
			for _, ph := range pulse {
				name := fmt.Sprintf("%s%s t=%d", ph.bench, ph.Run, ph.Threads)
				if ph.Iteration > 0 {
					name += fmt.Sprintf(" it=%d", ph.Iteration)
				}
				for _, r := range ph.PulseRounds {
					lines.add(name, float64(r.Round), r.ReadSeconds)
				}
			}
		} else {
			// Without full results only the status summary's mean round time is known.
			p.Title.Text = "Pulse: mean round seconds (status summaries): " + titleOf(bs)
			p.X.Label.Text, p.Y.Label.Text = "threads", "mean round seconds (read+write+delete)"
			for _, ph := range pulse {
				if ph.Pulse != nil {
					lines.add(ph.bench+ph.Run, float64(ph.Threads), ph.Pulse.MeanRoundSeconds)
				}
			}
			threadAxis(p, pulse)
		}
		p.Y.Min = 0
	case "timeseries":
		p.Title.Text = "Throughput over time: " + titleOf(bs)
		p.X.Label.Text, p.Y.Label.Text = "seconds since phase start", "ops/s"
		for _, ph := range phases {
			name := fmt.Sprintf("%s%s %s t=%d", ph.bench, ph.Run, ph.Name(), ph.Threads)
			if ph.Iteration > 0 {
				name += fmt.Sprintf(" it=%d", ph.Iteration)
			}
			for _, s := range ph.Intervals {
				lines.add(name, s.OffsetSeconds, s.OpsPerSec)
			}
		}
		if len(lines.order) == 0 {
			return nil, fmt.Errorf("%s: no time series: timeseries needs the runners' full results (pod logs, or files written by kubectl kvbench save)", titleOf(bs))
		}
		p.Y.Min = 0
	}
	if len(lines.order) == 0 {
		return nil, fmt.Errorf("%s: nothing to plot", titleOf(bs))
	}
	if err := lines.addTo(p); err != nil {
		return nil, err
	}
	return p, nil
}

// threadAxis puts ticks at the thread counts, on a log scale when they span a range (1, 2, 4 ... 64).
func threadAxis(p *plot.Plot, phases []benchPhase) {
	var ts []int32
	for _, ph := range phases {
		if !slices.Contains(ts, ph.Threads) {
			ts = append(ts, ph.Threads)
		}
	}
	slices.Sort(ts)
	var ticks plot.ConstantTicks
	for _, t := range ts {
		ticks = append(ticks, plot.Tick{Value: float64(t), Label: strconv.Itoa(int(t))})
	}
	p.X.Tick.Marker = ticks
	if len(ts) > 1 && ts[len(ts)-1] >= 4*ts[0] {
		p.X.Scale = plot.LogScale{}
	}
}

// siTicks labels ticks as 250k or 1.5M rather than 250000.00.
type siTicks struct{}

func (siTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	for i, t := range ticks {
		if t.Label == "" {
			continue
		}
		switch v := math.Abs(t.Value); {
		case v >= 1e6:
			ticks[i].Label = strconv.FormatFloat(t.Value/1e6, 'g', 4, 64) + "M"
		case v >= 1e3:
			ticks[i].Label = strconv.FormatFloat(t.Value/1e3, 'g', 4, 64) + "k"
		default:
			ticks[i].Label = strconv.FormatFloat(t.Value, 'g', 4, 64)
		}
	}
	return ticks
}

// roundTicks labels whole numbers only, at most about ten of them (pulse rounds).
type roundTicks struct{}

func (roundTicks) Ticks(min, max float64) []plot.Tick {
	step := 1.0
	for mag := 1.0; (max-min)/step > 10; mag *= 10 { // 1, 2, 5, 10, 20, 50 ...
		for _, m := range []float64{1, 2, 5} {
			if step = m * mag; (max-min)/step <= 10 {
				break
			}
		}
	}
	var ticks []plot.Tick
	for v := math.Ceil(min/step) * step; v <= max; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', 0, 64)})
	}
	return ticks
}

// PlotFormat is the image format for a file name: png or svg.
func PlotFormat(path string) (string, error) {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	if ext != "png" && ext != "svg" {
		return "", fmt.Errorf("unknown plot file extension %q in %s: use .png or .svg", filepath.Ext(path), path)
	}
	return ext, nil
}

// WritePlot renders the plot as png or svg.
func WritePlot(w io.Writer, p *plot.Plot, format string) (err error) {
	if format != "png" && format != "svg" {
		return fmt.Errorf("unknown plot format %q: png or svg", format)
	}
	// gonum/plot reports some bad input (e.g. non-positive values on a log axis) by panicking.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("drawing the plot: %v", r)
		}
	}()
	c, err := draw.NewFormattedCanvas(PlotWidth, PlotHeight, format)
	if err != nil {
		return err
	}
	dc := draw.New(c)
	// The legend goes right of the plot: inside, it would hide lines.
	legend := p.Legend
	p.Legend = plot.NewLegend()
	defer func() { p.Legend = legend }()
	legend.Top, legend.Left = true, false
	width := legend.Rectangle(dc).Size().X + vg.Millimeter*3
	title := p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding
	p.Draw(draw.Crop(dc, 0, -width, 0, 0))
	legend.Draw(draw.Crop(dc, PlotWidth-width, -vg.Millimeter, 0, -title))
	_, err = c.WriteTo(w)
	return err
}
