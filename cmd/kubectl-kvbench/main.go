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
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line and returns the exit code; errors are one line on stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr, args)
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		var reg *regressionError
		if errors.As(err, &reg) {
			fmt.Fprintln(stderr, "regression: "+err.Error())
			return exitRegression
		}
		var nv *noVerdictError
		if errors.As(err, &nv) {
			fmt.Fprintln(stderr, err.Error())
			return exitNoVerdict
		}
		fmt.Fprintln(stderr, "error: "+err.Error())
		return 1
	}
	return 0
}

// options are the flags every command shares, and the command line as given.
type options struct {
	kubeconfig, context, namespace string
	stdout, stderr                 io.Writer
	args                           []string
}

func newRoot(stdout, stderr io.Writer, args []string) *cobra.Command {
	o := &options{stdout: stdout, stderr: stderr, args: args}
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
	root.AddCommand(reportCmd(o), compareCmd(o), plotCmd(o), saveCmd(o), scaleCmd(o), versionCmd(o))
	root.AddCommand(scheduleCmds(o)...)
	return root
}

// load reads the named KVBenchmarks from the cluster.
func (o *options) load(ctx context.Context, names []string) ([]*report.Benchmark, error) {
	var srcs []source
	for _, n := range names {
		srcs = append(srcs, source{name: n})
	}
	return o.loadSources(ctx, srcs)
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
			bs, err := o.loadInOrder(cmd)
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
			bs, err := o.loadInOrder(cmd)
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
			bs, err := o.load(cmd.Context(), names)
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
