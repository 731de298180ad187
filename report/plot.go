package report

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
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

// series is one line of a plot.
type series struct {
	name string
	pts  plotter.XYs
}

// seriesSet keeps lines in the order they were first named.
type seriesSet struct {
	order []string
	byKey map[string]*series
}

func (s *seriesSet) add(name string, x, y float64) {
	if s.byKey == nil {
		s.byKey = map[string]*series{}
	}
	l := s.byKey[name]
	if l == nil {
		l = &series{name: name}
		s.byKey[name] = l
		s.order = append(s.order, name)
	}
	l.pts = append(l.pts, plotter.XY{X: x, Y: y})
}

func (s *seriesSet) addTo(p *plot.Plot) error {
	var args []any
	for _, name := range s.order {
		l := s.byKey[name]
		slices.SortStableFunc(l.pts, func(a, b plotter.XY) int {
			switch {
			case a.X < b.X:
				return -1
			case a.X > b.X:
				return 1
			}
			return 0
		})
		args = append(args, name, l.pts)
	}
	return plotutil.AddLinePoints(p, args...)
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
//   - threads: ops/s vs threads, a line per run and workload (iterations averaged);
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
		type key struct {
			name    string
			threads int32
		}
		sum, n := map[key]float64{}, map[key]int{}
		var keys []key
		for _, ph := range phases {
			k := key{fmt.Sprintf("%s%s %s", ph.bench, ph.Run, ph.Name()), ph.Threads}
			if n[k] == 0 {
				keys = append(keys, k)
			}
			sum[k] += ph.OpsPerSec
			n[k]++
		}
		for _, k := range keys {
			lines.add(k.name, float64(k.threads), sum[k]/float64(n[k]))
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
