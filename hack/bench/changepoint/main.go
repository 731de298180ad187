// Command changepoint measures the schedule's change-point detector (stats.Watch) beside a
// single-run threshold and a lookback z-score on synthetic histories: normal noise at given CoVs,
// and the residuals of this project's own repeated runs (a kvbench result with repeats), each
// with throughput shifts of 2%, 5% and 10%. It prints a markdown table (docs/operator.md, "Change
// points").
//
//	go run ./hack/bench/changepoint -repeats docs/reproductions/repeats/repeats-pebble.result.json
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/stats"
	"github.com/kvbench/kvbench-operator/stats/quality"
)

func main() {
	series := flag.Int("series", 500, "series per scenario with a shift")
	nullRuns := flag.Int("null-runs", 100000, "runs without a shift, for false alarms")
	covs := flag.String("cov", "0.02,0.05", "CoVs of normal noise, comma separated")
	shifts := flag.String("shifts", "0.02,0.05,0.10", "throughput shifts, comma separated")
	history := flag.Int("history", 100, "points the schedule keeps per series (its history limit)")
	var o stats.DetectOptions
	flag.Float64Var(&o.MinChange, "min-change", 0.02, "the detector's minimum size of change")
	flag.Float64Var(&o.MaxP, "max-p", stats.DefaultMaxP, "the detector's p-value limit")
	flag.IntVar(&o.MinSegment, "min-segment", stats.DefaultMinSegment, "the detector's points on each side of a change")
	flag.IntVar(&o.Window, "window", stats.DefaultWindow, "the detector's window")
	var repeats multi
	flag.Var(&repeats, "repeats", "a kvbench result file with repeats (spec.repeat > 1) whose residuals are a noise model; repeatable")
	flag.Parse()
	if err := run(*series, *nullRuns, *covs, *shifts, *history, o, repeats); err != nil {
		fmt.Fprintln(os.Stderr, "changepoint:", err)
		os.Exit(1)
	}
}

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func floats(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func run(series, nullRuns int, covs, shifts string, history int, o stats.DetectOptions, repeats []string) error {
	cs, err := floats(covs)
	if err != nil {
		return fmt.Errorf("-cov: %w", err)
	}
	ss, err := floats(shifts)
	if err != nil {
		return fmt.Errorf("-shifts: %w", err)
	}
	var noises []quality.Noise
	for _, c := range cs {
		noises = append(noises, quality.Noise{Name: fmt.Sprintf("normal, CoV %g%%", 100*c), CoV: c})
	}
	for _, f := range repeats {
		n, err := measured(f, cs[0])
		if err != nil {
			return err
		}
		noises = append(noises, n...)
	}
	methods := []quality.Method{
		quality.EDivisive(history, stats.DetectOptions{HigherIsBetter: true, MinChange: o.MinChange, MaxP: o.MaxP, MinSegment: o.MinSegment, Window: o.Window}, false),
		quality.EDivisive(history, stats.DetectOptions{HigherIsBetter: true, MinChange: o.MinChange, MaxP: o.MaxP, MinSegment: o.MinSegment, Window: o.Window}, true),
		quality.Threshold(0.05),
		quality.ZScore(5, 30),
		quality.ZScore(3, 30),
	}
	start := time.Now()
	fmt.Printf("%d series per shift (30 runs, then 20 shifted; found = a regression alarm within 10 runs, placed within 2 runs of the shift), false alarms over %d runs without a shift; history %d points\n\n",
		series, nullRuns, history)
	fmt.Println("| noise | method | false alarms / 1,000 runs | " + header(ss) + " |")
	fmt.Println("|---|---|---|" + strings.Repeat("---|", len(ss)))
	for _, n := range noises {
		for _, m := range methods {
			null := quality.Run(m, quality.Scenario{Noise: n, Before: 1000, Series: max(1, nullRuns/1000), Seed: 7})
			row := fmt.Sprintf("| %s | %s | %.2f |", n.Name, m.Name, null.FalsePer1000)
			for _, s := range ss {
				f := quality.Run(m, quality.Scenario{Noise: n, Shift: s, Before: 30, After: 20, Series: series, Seed: 11, Within: 10, Slack: 2})
				row += fmt.Sprintf(" %.1f%% (%.0f / %.0f, %.0f%% exact) |", 100*f.Found, f.RunsToDetect, f.RunsToDetect95, 100*f.Exact)
			}
			fmt.Println(row)
		}
	}
	fmt.Printf("\nshift columns: share of series with a regression alarm within 10 runs of the shift, placed within 2 runs of it (median / 95th percentile of runs until the alarm, counting the first slower run as 1; share placed exactly at the first slower run); %s\n", time.Since(start).Round(time.Second))
	return nil
}

func header(ss []float64) string {
	var h []string
	for _, s := range ss {
		h = append(h, fmt.Sprintf("%g%% slower: found (runs to alarm)", 100*s))
	}
	return strings.Join(h, " | ")
}

// measured is the noise of a result file's repeats (every point's ops/s over its iterations): at
// its own CoV, and its shape scaled to CoV cov.
func measured(file string, cov float64) ([]quality.Noise, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var res api.Result
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	r, own := quality.Residuals(quality.Repeats(&res))
	if len(r) == 0 || own == 0 {
		return nil, fmt.Errorf("%s: no point has 3 or more repeats", file)
	}
	scaled := make([]float64, len(r))
	for i, x := range r {
		scaled[i] = x * cov / own
	}
	name := fmt.Sprintf("%s repeats (%d runs)", res.Engine, len(r))
	return []quality.Noise{
		{Name: fmt.Sprintf("%s, their CoV %.0f%%", name, 100*own), Residuals: r},
		{Name: fmt.Sprintf("%s, their shape at CoV %g%%", name, 100*cov), Residuals: scaled},
	}, nil
}
