// Command kvbench-runner runs db_bench-compatible benchmarks against RocksDB, LevelDB and Pebble.
//
//	kvbench-runner bench --engine=rocksdb --db=/tmp/x --benchmarks=fillseq,readrandom --num=1000000
//	kvbench-runner run --config-json='<RunnerConfig>' --json=result.json --summary-file=/dev/termination-log
//
// run ends with one stdout line, api.ResultLogPrefix followed by the full Result as JSON: the pod
// log can still be read after the container exited, the --json file on its volume cannot.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/runner/bench"
	_ "github.com/kvbench/kvbench-operator/runner/engine/all"
	"github.com/kvbench/kvbench-operator/runner/livemetrics"
	"github.com/kvbench/kvbench-operator/runner/report"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// outputs are where a run's results go, shared by both subcommands.
type outputs struct {
	jsonPath    string
	summaryPath string
	metricsAddr string
	histogram   bool
	cpuProfile  string
	// phaseLog, when set (the run subcommand), gets one api.ResultPhaseLogPrefix line per finished
	// phase, and the summary file is rewritten after each phase.
	phaseLog *logWriter
}

func run(args []string, stdout, stderr io.Writer) int {
	// Both streams end up in the pod log, so both are guarded against lines that look like the
	// result line.
	out, errOut := newLogWriter(stdout), newLogWriter(stderr)
	root := &cobra.Command{
		Use:           "kvbench-runner",
		Short:         "db_bench-compatible key-value storage engine benchmarks (rocksdb, leveldb, pebble)",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	rc := runCmd(out)
	root.AddCommand(rc.cmd, benchCmd())
	root.SetArgs(normalizeArgs(args))
	root.SetOut(out)
	root.SetErr(errOut)
	c, err := root.ExecuteC()
	if c == rc.cmd && (rc.started || err != nil) {
		// The result line, also when run failed before or without a Result (bad config, flags
		// of a newer operator): the log then says why.
		res := rc.result
		if res == nil {
			res = &api.Result{SchemaVersion: api.ResultSchemaVersion, Error: err.Error()}
		}
		if werr := out.writeResult(res); werr != nil && err == nil {
			err = fmt.Errorf("writing the result line: %v", werr)
		}
	}
	_ = out.flush()
	_ = errOut.flush()
	if err != nil {
		// One line, whatever failed.
		fmt.Fprintf(errOut, "kvbench-runner: error: %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
		_ = errOut.flush()
		return 1
	}
	return 0
}

// normalizeArgs accepts db_bench's single-dash long flags (-disable_wal) as --disable_wal.
func normalizeArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if len(a) > 2 && a[0] == '-' && a[1] != '-' {
			a = "-" + a
		}
		out[i] = a
	}
	return out
}

func (o *outputs) flags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.jsonPath, "json", "", "write the full JSON result to this file")
	cmd.Flags().StringVar(&o.summaryPath, "summary-file", "", "write the compact summary (at most 4096 bytes) to this file")
	cmd.Flags().StringVar(&o.metricsAddr, "metrics-addr", "", "serve Prometheus progress metrics on this address (e.g. :8080)")
	cmd.Flags().StringVar(&o.cpuProfile, "cpuprofile", "", "write a Go pprof CPU profile of the whole run to this file")
}

// runCommand is the run subcommand and what it produced, for the result line.
type runCommand struct {
	cmd     *cobra.Command
	started bool        // RunE was entered (not --help)
	result  *api.Result // nil when it failed before the benchmark started
}

func runCmd(out *logWriter) *runCommand {
	o := outputs{phaseLog: out}
	var configJSON, configFile string
	rc := &runCommand{}
	rc.cmd = &cobra.Command{
		Use:   "run",
		Short: "Run a RunnerConfig (as the operator does); prints the result line " + strings.TrimSpace(api.ResultLogPrefix) + " <JSON> when it ends",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rc.started = true
			data := []byte(configJSON)
			if configFile != "" {
				var err error
				if data, err = os.ReadFile(configFile); err != nil {
					return err
				}
			}
			if len(data) == 0 {
				return errors.New("no config: pass --config-json or --config")
			}
			var cfg api.RunnerConfig
			dec := json.NewDecoder(strings.NewReader(string(data)))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&cfg); err != nil {
				return fmt.Errorf("config: %v", err)
			}
			var err error
			rc.result, err = execute(cfg, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
			return err
		},
	}
	cmd := rc.cmd
	cmd.Flags().StringVar(&configJSON, "config-json", "", "the RunnerConfig as JSON")
	cmd.Flags().StringVar(&configFile, "config", "", "a file holding the RunnerConfig as JSON")
	cmd.Flags().BoolVar(&o.histogram, "histogram", false, "print latency histograms after each phase")
	o.flags(cmd)
	return rc
}

// signalContext ends on SIGINT or SIGTERM with the signal as its cause, so the run's error says
// what stopped it. After the first signal the default action returns (a second one kills).
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			signal.Stop(sigs)
			why := "interrupted by " + signalName(s)
			if s == syscall.SIGTERM {
				why += " (in Kubernetes: the runner pod was deleted, evicted or preempted)"
			}
			cancel(errors.New(why))
		case <-done:
		}
	}()
	return ctx, func() { signal.Stop(sigs); close(done); cancel(nil) }
}

func signalName(s os.Signal) string {
	if s == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT"
}

// execute runs cfg and writes every output; results of completed phases are written also when
// the run fails. The Result is nil only when the benchmark did not start.
func execute(cfg api.RunnerConfig, o outputs, stdout, stderr io.Writer) (*api.Result, error) {
	ctx, stop := signalContext()
	defer stop()
	opts := bench.Options{Stdout: stdout, Stderr: stderr, Histogram: o.histogram}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return nil, fmt.Errorf("cpuprofile: %v", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, fmt.Errorf("cpuprofile: %v", err)
		}
		defer pprof.StopCPUProfile()
	}
	if o.metricsAddr != "" {
		m := livemetrics.New(livemetrics.RunLabels(cfg.Engine.Name))
		closeFn, err := m.Serve(o.metricsAddr)
		if err != nil {
			return nil, fmt.Errorf("metrics: %v", err)
		}
		defer closeFn()
		opts.Observer = m
	}
	opts.OnPhase = o.streamer(stdout)
	res, runErr := bench.Run(ctx, cfg, opts)
	var werr error
	if o.jsonPath != "" {
		werr = writeJSON(o.jsonPath, res, true, stdout)
	}
	if o.summaryPath != "" {
		if err := writeJSON(o.summaryPath, report.Summarize(res), false, stdout); err != nil && werr == nil {
			werr = err
		}
	}
	if runErr != nil {
		return res, runErr
	}
	if werr != nil {
		return res, fmt.Errorf("writing results: %v", werr)
	}
	return res, nil
}

// streamer returns what runs after each finished phase: so that a run killed later (deadline, OOM,
// deleted pod) keeps every phase that finished, each new phase goes to the log as its own line,
// the bounded summary (the termination message) is rewritten, and the --json file is kept current
// (not stdout: that would repeat the whole result after every phase). Nil when there is nothing
// to do.
func (o outputs) streamer(stdout io.Writer) func(*api.Result) {
	if o.phaseLog == nil && o.summaryPath == "" && (o.jsonPath == "" || o.jsonPath == "-") {
		return nil
	}
	loadSent, sent := false, 0
	return func(r *api.Result) {
		if o.summaryPath != "" && o.summaryPath != "-" {
			_ = writeJSON(o.summaryPath, report.Summarize(r), false, stdout)
		}
		if o.jsonPath != "" && o.jsonPath != "-" {
			_ = writeJSON(o.jsonPath, r, true, stdout)
		}
		if o.phaseLog != nil {
			if r.Load != nil && !loadSent {
				_ = o.phaseLog.writePhase(r.Load)
				loadSent = true
			}
			for ; sent < len(r.Phases); sent++ {
				_ = o.phaseLog.writePhase(&r.Phases[sent])
			}
		}
	}
}

// writeJSON writes v to path, or to stdout for "-".
func writeJSON(path string, v any, indent bool, stdout io.Writer) error {
	var b []byte
	var err error
	if indent {
		b, err = json.MarshalIndent(v, "", "  ")
	} else {
		b, err = json.Marshal(v)
	}
	if err != nil {
		return err
	}
	if path == "-" {
		_, err = stdout.Write(append(b, '\n'))
		return err
	}
	if dir := filepath.Dir(path); dir != "" {
		_ = os.MkdirAll(dir, 0o755)
	}
	// Not via a temp file: /dev/termination-log is a file we may write but not replace.
	return os.WriteFile(path, b, 0o644)
}
