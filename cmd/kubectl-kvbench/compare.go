package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kvbench/kvbench-operator/report"
	"github.com/kvbench/kvbench-operator/stats"
)

// Exit codes of compare --fail-on-regression (1 is any error, a refused pair included).
const (
	exitRegression = 2 // a point regressed
	exitNoVerdict  = 3 // no regression found, but some points had too few repeats to find one
)

func compareCmd(o *options) *cobra.Command {
	var files, engines []string
	var format, threshold, metrics, oldSrc, newSrc string
	var alpha float64
	var failOnRegression, byPhase bool
	cmd := &cobra.Command{
		Use:   "compare OLD NEW | -f OLD -f NEW | --old OLD --new NEW | BENCHMARK [--engines A,B]",
		Short: "Compare two benchmarks (or the engines of one) point by point over their repeats, optionally as a regression gate",
		Long: `Compare matches the sweep points (run, workload, threads) of A (old) and B (new) and shows, per
metric (ops/s, p50, p99, p99.9 latency), each side's median ± the half-width of its 95% confidence
interval (CoV), the change of the medians, and the Mann-Whitney U test's p-value: "~" when the
difference is not significant (p >= --alpha, 0.05). A significant change worse than --threshold
(throughput down or latency up) is a regression, marked "!"; --metrics limits what is compared
(e.g. ops on a machine whose tail latency is noise).

A and B are taken in the order written, whatever their source: KVBenchmark names in the cluster
and saved files (-f) alike, or set explicitly with --old and --new (a value that is an existing
path or has a "/" is a file, anything else a name). The first line of the output says which is
which. One benchmark alone compares its engines (runs): the first against each other one, or
the two given with --engines.

The U test cannot call any difference significant with fewer than 4 repeats a side (spec.repeat;
5 at --alpha 0.01): such changes are shown with their size and marked "no verdict". Two benchmarks
with different datasets or workload settings are not comparable: compare warns, and
--fail-on-regression refuses them, as spec.baseline does.

Exit codes with --fail-on-regression: 0 no regression; 2 a regression (the points on stderr);
3 no verdict (too few repeats, none regressed); 1 the comparison failed or was refused.`,
		Example: `  kubectl kvbench compare baseline bloom
  kubectl kvbench compare -f saved/nightly-yesterday.yaml nightly-today --threshold 5% --fail-on-regression
  kubectl kvbench compare --new nightly-today --old saved/nightly-yesterday.yaml --fail-on-regression
  kubectl kvbench compare -f saved/baseline.yaml -f saved/bloom.yaml --format markdown
  kubectl kvbench compare demo                              # demo's engines: the first against the others
  kubectl kvbench compare demo --engines leveldb,rocksdb`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := oneOf("format", format, compareFormats); err != nil {
				return err
			}
			pct, err := stats.ParseThreshold(threshold)
			if err != nil {
				return fmt.Errorf("--threshold: %w", err)
			}
			ms, err := stats.ParseMetrics(metrics)
			if err != nil {
				return fmt.Errorf("--metrics: %w", err)
			}
			if !(alpha > 0 && alpha < 1) {
				return fmt.Errorf("--alpha %g: want a significance level between 0 and 1, e.g. 0.05", alpha)
			}
			if byPhase && (format == "json" || failOnRegression) {
				return fmt.Errorf("--by-phase prints the phase table only (text or markdown, no gate)")
			}
			srcs, err := o.sourcesInOrder(cmd)
			if err != nil {
				return err
			}
			switch {
			case oldSrc != "" && newSrc != "" && len(srcs) > 0:
				return fmt.Errorf("--old and --new name both benchmarks; drop the other names and -f files")
			case oldSrc != "":
				srcs = append([]source{sourceOf(oldSrc)}, srcs...)
			}
			if newSrc != "" {
				srcs = append(srcs, sourceOf(newSrc))
			}
			bs, err := o.loadSources(cmd.Context(), srcs)
			if err != nil {
				return err
			}
			pairs, err := comparePairs(bs, engines)
			if err != nil {
				return err
			}
			if byPhase {
				for i, p := range pairs {
					if i > 0 {
						fmt.Fprintln(o.stdout)
					}
					if err := comparePhases(o.stdout, p[0], p[1], format); err != nil {
						return err
					}
				}
				return nil
			}
			opts := stats.Options{ThresholdPercent: pct, Alpha: alpha, Metrics: ms}
			var cs []*report.StatComparison
			for _, p := range pairs {
				c := report.CompareStats(p[0], p[1], opts)
				if c.Matched == 0 {
					return fmt.Errorf("%s and %s have no measured points in common (matched by run, workload and threads; db_bench's phases also without their dbbench: prefix)", p[0].Title(), p[1].Title())
				}
				if diff := stats.Mismatch(&p[0].KVBenchmark, &p[1].KVBenchmark); len(diff) > 0 {
					what := fmt.Sprintf("%s and %s are not comparable (%s)", p[0].Title(), p[1].Title(), strings.Join(diff, "; "))
					if failOnRegression {
						return fmt.Errorf("%s: no gate on a pair spec.baseline would refuse", what)
					}
					fmt.Fprintln(o.stderr, "warning: "+what)
				}
				cs = append(cs, c)
			}
			for i, c := range cs {
				if i > 0 && format != "json" {
					fmt.Fprintln(o.stdout)
				}
				if err := c.Write(o.stdout, format); err != nil {
					return err
				}
			}
			if failOnRegression {
				return gate(cs, pct)
			}
			return nil
		},
	}
	fileFlag(cmd, &files)
	cmd.Flags().StringVar(&oldSrc, "old", "", "A, the old benchmark: a KVBenchmark name or a saved file")
	cmd.Flags().StringVar(&newSrc, "new", "", "B, the new benchmark: a KVBenchmark name or a saved file")
	cmd.Flags().StringSliceVar(&engines, "engines", nil, "with one benchmark: the two runs (engines) to compare, A first, e.g. leveldb,rocksdb")
	cmd.Flags().StringVar(&format, "format", "text", "output format: "+strings.Join(compareFormats, ", "))
	cmd.Flags().StringVar(&threshold, "threshold", "5%", "a significant change must be worse than this to be a regression")
	cmd.Flags().StringVar(&metrics, "metrics", "ops,p50,p99,p999", "metrics to compare and gate on: ops, p50, p99, p999")
	cmd.Flags().Float64Var(&alpha, "alpha", stats.Alpha, "significance level: a change is significant when the U test's p < alpha")
	cmd.Flags().BoolVar(&failOnRegression, "fail-on-regression", false, "exit 2 when a point regressed, 3 when too few repeats allow no verdict")
	cmd.Flags().BoolVar(&byPhase, "by-phase", false, "print every phase (and the load) side by side, one iteration per row, without statistics")
	return cmd
}

var compareFormats = []string{"text", "markdown", "json"}

// comparePairs are the (A, B) pairs to compare: two benchmarks as given, or the runs of one
// benchmark (--engines, else the first run against each other run).
func comparePairs(bs []*report.Benchmark, engines []string) ([][2]*report.Benchmark, error) {
	for _, b := range bs {
		if len(b.Phases(true)) == 0 {
			return nil, fmt.Errorf("%s has no results", b.Title())
		}
	}
	switch {
	case len(bs) == 2 && len(engines) > 0:
		return nil, fmt.Errorf("--engines compares the runs of one benchmark, not of two")
	case len(bs) == 2:
		return [][2]*report.Benchmark{{bs[0], bs[1]}}, nil
	case len(bs) != 1:
		return nil, fmt.Errorf("compare needs two benchmarks (old, then new), or one to compare its engines; got %d", len(bs))
	}
	b := bs[0]
	runs := b.RunNames()
	if len(engines) > 0 {
		if len(engines) != 2 {
			return nil, fmt.Errorf("--engines wants two runs, A then B, e.g. --engines %s", strings.Join(runs, ","))
		}
		for _, e := range engines {
			if !slices.Contains(runs, e) {
				return nil, fmt.Errorf("--engines: %s has no run %q (its runs: %s)", b.Title(), e, strings.Join(runs, ", "))
			}
		}
		runs = engines
	}
	if len(runs) < 2 {
		return nil, fmt.Errorf("%s has one run (%s): compare needs two benchmarks, or one with two engines or more", b.Title(), strings.Join(runs, ""))
	}
	var out [][2]*report.Benchmark
	for _, r := range runs[1:] {
		out = append(out, [2]*report.Benchmark{b.OnlyRun(runs[0]), b.OnlyRun(r)})
	}
	return out, nil
}

// gate turns the comparisons' outcome into the exit: a regression (2), no verdict (3), or none.
func gate(cs []*report.StatComparison, pct float64) error {
	var regressed, undecided []string
	for _, c := range cs {
		if c.Regressed() {
			var points []string
			for _, r := range c.Regressions() {
				points = append(points, r.Label())
			}
			regressed = append(regressed, fmt.Sprintf("%s regressed against %s beyond %g%%: %s", c.B.Title(), c.A.Title(), pct, strings.Join(points, "; ")))
		} else if c.Outcome() == stats.OutcomeNoVerdict {
			undecided = append(undecided, fmt.Sprintf("%s against %s: %s", c.B.Title(), c.A.Title(), c.Verdict()))
		}
	}
	switch {
	case len(regressed) > 0:
		return &regressionError{strings.Join(regressed, "\n")}
	case len(undecided) > 0:
		return &noVerdictError{strings.Join(undecided, "\n")}
	}
	return nil
}

// regressionError is a gate's verdict, not a failure of the command: it exits 2.
type regressionError struct{ msg string }

func (e *regressionError) Error() string { return e.msg }

// noVerdictError is a gate that could not decide (too few repeats): it exits 3.
type noVerdictError struct{ msg string }

func (e *noVerdictError) Error() string { return e.msg }

// comparePhases prints the phase-by-phase table (every iteration and the load, no statistics).
func comparePhases(w io.Writer, a, b *report.Benchmark, format string) error {
	c := report.Compare(a, b)
	if len(c.Rows) == 0 {
		return fmt.Errorf("%s and %s have no phases in common (matched by run, workload, threads and iteration; db_bench's phases also without their dbbench: prefix)", a.Title(), b.Title())
	}
	if format == "markdown" {
		c.Table().Markdown(w)
	} else {
		c.Table().Text(w)
	}
	return nil
}
