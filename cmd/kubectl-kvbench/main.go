// Command kubectl-kvbench reports KVBenchmarks: the seed documents' tables, db_bench lines,
// comparisons and plots, from the cluster or from saved files. On the PATH it is the kubectl
// plugin `kubectl kvbench`.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/report"
	"github.com/kvbench/kvbench-operator/stats"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line and returns the exit code; errors are one line on stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		var reg *regressionError
		if errors.As(err, &reg) {
			fmt.Fprintln(stderr, "regression: "+err.Error())
			return 2
		}
		fmt.Fprintln(stderr, "error: "+err.Error())
		return 1
	}
	return 0
}

// options are the flags every command shares.
type options struct {
	kubeconfig, context, namespace string
	stdout, stderr                 io.Writer
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	o := &options{stdout: stdout, stderr: stderr}
	root := &cobra.Command{
		Use:   "kubectl-kvbench",
		Short: "Report KVBenchmark results: tables, db_bench lines, comparisons, plots",
		Long: `Report KVBenchmark results as the seed documents show them: Pegasus-style YCSB tables,
the pulse "thread number | time cost in seconds" table, db_bench result lines, comparisons of two
benchmarks and plots (PNG or SVG). Benchmarks come from the cluster (by name, with the full results
from the runner pods' logs while the pods exist) or from files (-f: KVBenchmark YAML/JSON, lists,
runner result JSON, or a directory written by "save").`,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl kvbench"},
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetOut(stdout)
	root.SetErr(stderr)
	f := root.PersistentFlags()
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "path to the kubeconfig file")
	f.StringVar(&o.context, "context", "", "the kubeconfig context to use")
	f.StringVarP(&o.namespace, "namespace", "n", "", "namespace of the KVBenchmarks (default: the context's)")
	root.AddCommand(reportCmd(o), compareCmd(o), plotCmd(o), saveCmd(o), scaleCmd(o))
	root.AddCommand(scheduleCmds(o)...)
	return root
}

// load reads the named KVBenchmarks from the cluster and the benchmarks in files, in that order.
func (o *options) load(ctx context.Context, names, files []string) ([]*report.Benchmark, error) {
	if len(names) == 0 && len(files) == 0 {
		return nil, fmt.Errorf("name a KVBenchmark or give -f FILE")
	}
	var bs []*report.Benchmark
	if len(names) > 0 {
		c, err := connect(o.kubeconfig, o.context, o.namespace, o.stderr)
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			b, err := c.benchmark(ctx, name)
			if err != nil {
				return nil, err
			}
			bs = append(bs, b)
		}
	}
	if len(files) > 0 {
		fb, err := loadFiles(files)
		if err != nil {
			return nil, err
		}
		bs = append(bs, fb...)
	}
	return bs, nil
}

func oneOf(flag, value string, allowed []string) error {
	if slices.Contains(allowed, value) {
		return nil
	}
	return fmt.Errorf("unknown --%s %q (one of %s)", flag, value, strings.Join(allowed, ", "))
}

func fileFlag(cmd *cobra.Command, files *[]string) {
	cmd.Flags().StringSliceVarP(files, "filename", "f", nil,
		"KVBenchmark YAML/JSON, list, runner result JSON, or a directory of them (repeatable)")
}

func reportCmd(o *options) *cobra.Command {
	var files []string
	var table, format, by string
	var engineStats bool
	var tolerance float64
	cmd := &cobra.Command{
		Use:   "report [NAME...] [-f FILE...]",
		Short: "Print tables (threads, Pegasus ycsb, pulse), db_bench lines, or benchmark.sh's report.tsv",
		Example: `  kubectl kvbench report demo
  kubectl kvbench report -f saved/ --table ycsb --format markdown
  kubectl kvbench report demo --table dbbench
  kubectl kvbench report demo --format tsv
  kubectl kvbench report -f saved/ --engine-stats
  kubectl kvbench report fleet --by node --tolerance 5`,
		RunE: func(cmd *cobra.Command, names []string) error {
			if err := oneOf("table", table, report.TableKinds); err != nil {
				return err
			}
			if err := oneOf("by", by, []string{"run", "node"}); err != nil {
				return err
			}
			if tolerance < 0 || tolerance > 100 {
				return fmt.Errorf("--tolerance %v: want a percentage from 0 to 100", tolerance)
			}
			if err := oneOf("format", format, report.ReportFormats); err != nil {
				return err
			}
			if (format == "tsv" || format == "json") && cmd.Flags().Changed("table") {
				return fmt.Errorf("--format %s prints benchmark.sh's report.tsv columns; --table does not apply", format)
			}
			bs, err := o.load(cmd.Context(), names, files)
			if err != nil {
				return err
			}
			switch {
			case by == "node":
				return report.WriteByNode(o.stdout, bs, format, tolerance/100)
			case engineStats:
				return report.WriteEngineDumps(o.stdout, bs)
			case format == "tsv" || format == "json":
				return report.WriteBenchSh(o.stdout, bs, format)
			}
			return report.Write(o.stdout, bs, table, format)
		},
	}
	fileFlag(cmd, &files)
	cmd.Flags().StringVar(&by, "by", "run", "run: tables per run; node: per-node results and their spread (spread EachNode)")
	cmd.Flags().Float64Var(&tolerance, "tolerance", report.DefaultTolerance*100, "with --by node: percent from the median ops/s beyond which a node is named")
	cmd.Flags().StringVar(&table, "table", "auto", "table: "+strings.Join(report.TableKinds, ", "))
	cmd.Flags().StringVar(&format, "format", "text", "output format: "+strings.Join(report.ReportFormats, ", ")+
		" (tsv and json: one line per phase in RocksDB benchmark.sh's report.tsv columns)")
	cmd.Flags().BoolVar(&engineStats, "engine-stats", false,
		"print the engines' own dumps per phase (rocksdb.stats, Statistics, Pebble metrics, leveldb.stats) from the full results")
	return cmd
}

func compareCmd(o *options) *cobra.Command {
	var files []string
	var format, threshold, metrics string
	var alpha float64
	var failOnRegression, byPhase bool
	cmd := &cobra.Command{
		Use:   "compare A B | -f A -f B",
		Short: "Compare two benchmarks point by point over their repeats (benchstat-style), optionally as a regression gate",
		Long: `Compare matches the sweep points (run, workload, threads) of A (old) and B (new) and shows, per
metric (ops/s, p50, p99, p99.9 latency), each side's median ± the half-width of its 95% confidence
interval (CoV), the change of the medians, and the Mann-Whitney U test's p-value: "~" when the
difference is not significant (p >= --alpha, 0.05). A significant change worse than --threshold
(throughput down or latency up) is a regression, marked "!"; --metrics limits what is compared
(e.g. ops on a machine whose tail latency is noise). With --fail-on-regression the command exits 2
when there is one and names the points, so a nightly CI job can run it as is. The U test needs at
least 4 repeats a side (spec.repeat) to call any difference significant.

A and B are KVBenchmarks in the cluster, saved files (-f), or one of each (names come first).`,
		Example: `  kubectl kvbench compare baseline bloom
  kubectl kvbench compare -f saved/nightly-yesterday.yaml nightly-today --threshold 5% --fail-on-regression
  kubectl kvbench compare -f saved/baseline.yaml -f saved/bloom.yaml --format markdown`,
		RunE: func(cmd *cobra.Command, names []string) error {
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
			bs, err := o.load(cmd.Context(), names, files)
			if err != nil {
				return err
			}
			if len(bs) != 2 {
				return fmt.Errorf("compare needs exactly two benchmarks, got %d", len(bs))
			}
			for _, b := range bs {
				if len(b.Phases(true)) == 0 {
					return fmt.Errorf("%s has no results", b.Title())
				}
			}
			if byPhase {
				return comparePhases(o.stdout, bs[0], bs[1], format)
			}
			c := report.CompareStats(bs[0], bs[1], stats.Options{ThresholdPercent: pct, Alpha: alpha, Metrics: ms})
			if c.Matched == 0 {
				return fmt.Errorf("%s and %s have no measured points in common (matched by run, workload and threads; db_bench's phases also without their dbbench: prefix)", bs[0].Title(), bs[1].Title())
			}
			if err := c.Write(o.stdout, format); err != nil {
				return err
			}
			if failOnRegression && c.Regressed() {
				var points []string
				for _, r := range c.Regressions() {
					points = append(points, r.Label())
				}
				return &regressionError{fmt.Sprintf("%s regressed against %s beyond %g%%: %s", bs[1].Title(), bs[0].Title(), pct, strings.Join(points, "; "))}
			}
			return nil
		},
	}
	fileFlag(cmd, &files)
	cmd.Flags().StringVar(&format, "format", "text", "output format: "+strings.Join(compareFormats, ", "))
	cmd.Flags().StringVar(&threshold, "threshold", "5%", "a significant change must be worse than this to be a regression")
	cmd.Flags().StringVar(&metrics, "metrics", "ops,p50,p99,p999", "metrics to compare and gate on: ops, p50, p99, p999")
	cmd.Flags().Float64Var(&alpha, "alpha", stats.Alpha, "significance level: a change is significant when the U test's p < alpha")
	cmd.Flags().BoolVar(&failOnRegression, "fail-on-regression", false, "exit 2 when a point regressed (significant and beyond --threshold)")
	cmd.Flags().BoolVar(&byPhase, "by-phase", false, "print every phase (and the load) side by side, one iteration per row, without statistics")
	return cmd
}

var compareFormats = []string{"text", "markdown", "json"}

// regressionError is a gate's verdict, not a failure of the command: it exits 2.
type regressionError struct{ msg string }

func (e *regressionError) Error() string { return e.msg }

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

func plotCmd(o *options) *cobra.Command {
	var files []string
	var kind, out string
	var opt report.PlotOptions
	cmd := &cobra.Command{
		Use:   "plot NAME... | -f FILE... --kind KIND -o OUT.png|OUT.svg",
		Short: "Plot throughput vs threads, latency percentiles, pulse round times or throughput over time",
		Example: `  kubectl kvbench plot demo --kind threads -o threads.png
  kubectl kvbench plot -f saved/ --kind timeseries --workload readrandom -o ts.svg`,
		RunE: func(cmd *cobra.Command, names []string) error {
			if err := oneOf("kind", kind, report.PlotKinds); err != nil {
				return err
			}
			if out == "" {
				return fmt.Errorf("plot needs -o FILE.png or -o FILE.svg")
			}
			format, err := report.PlotFormat(out)
			if err != nil {
				return err
			}
			bs, err := o.load(cmd.Context(), names, files)
			if err != nil {
				return err
			}
			p, err := report.Plot(kind, bs, opt)
			if err != nil {
				return err
			}
			// Render first, so that a failure leaves no half-written file.
			var buf bytes.Buffer
			if err := report.WritePlot(&buf, p, format); err != nil {
				return err
			}
			if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
				return err
			}
			fmt.Fprintln(o.stdout, "wrote "+out)
			return nil
		},
	}
	fileFlag(cmd, &files)
	cmd.Flags().StringVar(&kind, "kind", "threads", "plot: "+strings.Join(report.PlotKinds, ", "))
	cmd.Flags().StringVarP(&out, "output", "o", "", "output file; .png or .svg chooses the format")
	cmd.Flags().StringVar(&opt.Workload, "workload", "", "plot only this workload (e.g. readrandom, ycsb-a)")
	return cmd
}

func saveCmd(o *options) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "save NAME... -d DIR",
		Short: "Save KVBenchmarks (YAML) and their runs' full results (JSON) from the cluster",
		Long: `Save writes DIR/NAME.yaml (the KVBenchmark, spec and status) and DIR/NAME-RUN.result.json
(each run's full runner result, read from the runner pod's log) for later reports with -f DIR.
Save before the runner Jobs are cleaned up (cleanup.ttlSecondsAfterFinished, 600s by default).`,
		Example: `  kubectl kvbench save demo -d results/`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, names []string) error {
			if dir == "" {
				return fmt.Errorf("save needs -d DIR")
			}
			bs, err := o.load(cmd.Context(), names, nil)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			for _, b := range bs {
				if err := save(o.stdout, dir, b); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&dir, "dir", "d", "", "directory to write to (created if missing)")
	return cmd
}

// pinSeed writes the seed the runs resolved into a spec that left it to the default, so that
// applying the saved file reruns the same keys and operations.
func pinSeed(obj *api.KVBenchmark, b *report.Benchmark) {
	if obj.Spec.Dataset.Seed != 0 {
		return
	}
	for _, r := range b.Status.Runs {
		if r.Provenance != nil && r.Provenance.Seed != 0 {
			obj.Spec.Dataset.Seed = r.Provenance.Seed
			return
		}
	}
	for _, r := range b.Results {
		if r.Provenance != nil && r.Provenance.Seed != 0 {
			obj.Spec.Dataset.Seed = r.Provenance.Seed
			return
		}
	}
}

// save writes the layout loadFiles reads back: NAME.yaml and NAME-RUN.result.json.
func save(stdout io.Writer, dir string, b *report.Benchmark) error {
	obj := b.KVBenchmark.DeepCopy()
	obj.ManagedFields = nil
	obj.APIVersion, obj.Kind = api.GroupVersion.String(), "KVBenchmark"
	pinSeed(obj, b)
	data, err := yaml.Marshal(obj)
	if err != nil {
		return err
	}
	files := map[string][]byte{b.Name + ".yaml": data}
	for run, res := range b.Results {
		data, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		files[b.Name+"-"+run+resultSuffix] = append(data, '\n')
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, files[name], 0o644); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "wrote "+path)
	}
	return nil
}
