package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/runner/dbbench"
	"github.com/kvbench/kvbench-operator/runner/engine"
	"github.com/kvbench/kvbench-operator/runner/report"
)

// Options are how Run reports, not what it measures.
type Options struct {
	// Stdout gets db_bench-style result lines; Stderr gets progress and notes.
	Stdout, Stderr io.Writer
	// ProgressInterval between progress lines on Stderr (0: 10s).
	ProgressInterval time.Duration
	// Histogram prints db_bench's --histogram block after each result line.
	Histogram bool
	Observer  Observer
	// DBBenchBinary is the db_bench the dbbench workload runs (default /usr/bin/db_bench).
	DBBenchBinary string
	// OnPhase is called after each phase with the result so far (to write partial results).
	OnPhase func(r *api.Result)
}

// Run executes cfg: open the engine, prepare the dataset once, then run each workload for each
// thread count, Repeat times. The result holds every phase that completed, also on error.
func Run(ctx context.Context, cfg api.RunnerConfig, o Options) (*api.Result, error) {
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	res := &api.Result{SchemaVersion: api.ResultSchemaVersion, Engine: cfg.Engine.Name, StartTime: metav1.Now()}
	specHash, dev := SpecHash(&cfg), findDataDevice(cfg.DBPath)
	var ds Dataset
	var db engine.DB
	fail := func(err error) (*api.Result, error) {
		res.Provenance = newProvenance(specHash, ds, cfg.DBPath, cfg.OptionsFile, dev, db)
		res.Error = err.Error()
		end := metav1.Now()
		res.EndTime = &end
		return res, err
	}
	if err := Validate(&cfg); err != nil {
		return fail(err)
	}
	ds, _ = ResolveDataset(cfg.Dataset)
	res.Dataset = ds.Info()
	e := &env{out: o.Stdout, progress: o.Stderr, ds: ds, observer: o.Observer,
		reportInterval: time.Second, progressInterval: o.ProgressInterval, cpus: runtime.GOMAXPROCS(0),
		stats: newStatsTicker(cfg.StatsInterval, o.Stderr)}
	// Keep a P idle while every worker and readwhilewriting's writer sit in cgo calls. With none
	// idle, sysmon takes the P of any cgo call that lasts over 20µs (a RocksDB writer waiting for
	// its write group, a read from disk) and then polls every 20µs; on 2 CPUs at 2 threads that was
	// ~2000 sysmon wake-ups a second during fillrandom. Idle Ps cost nothing, and the workers spend
	// their time in C, so this does not let the harness use more CPU.
	if want := maxThreads(&cfg) + 2; e.cpus < want {
		runtime.GOMAXPROCS(want)
		defer runtime.GOMAXPROCS(e.cpus)
	}
	if cfg.ReportInterval != nil && cfg.ReportInterval.Duration > 0 {
		e.reportInterval = cfg.ReportInterval.Duration
	}
	if e.progressInterval == 0 {
		e.progressInterval = 10 * time.Second
	}
	engCfg := engine.Config{Path: cfg.DBPath, Options: cfg.Engine.Options, DirectIO: cfg.CacheMode == api.CacheDirect,
		PrefixSize: ds.PrefixSize, KeySize: ds.KeySize, MustExist: ds.LoadMode == api.LoadExisting,
		OptionsFile: cfg.OptionsFile}
	onlyDBBench := true
	for _, w := range cfg.Workloads {
		onlyDBBench = onlyDBBench && w.Name == api.WorkloadDBBench
	}
	if !onlyDBBench {
		if bad := cfg.Engine.Options.Unsupported(cfg.Engine.Name); len(bad) > 0 {
			return fail(fmt.Errorf("engine %s does not support option(s): %v", cfg.Engine.Name, bad))
		}
	}
	if ds.LoadMode != api.LoadExisting && !onlyDBBench {
		if err := resetDBDir(cfg.DBPath); err != nil {
			return fail(err)
		}
	}
	open := func() error {
		var err error
		db, err = engine.Open(cfg.Engine.Name, engCfg)
		if err == nil {
			res.EngineVersion = db.Version()
		}
		return err
	}
	closeDB := func() {
		if db != nil {
			db.Close()
			db = nil
		}
	}
	defer closeDB()
	reopen := func(between func() error) error {
		closeDB()
		if err := between(); err != nil {
			return err
		}
		return open()
	}
	if !onlyDBBench {
		if err := open(); err != nil {
			return fail(err)
		}
		keys := fmt.Sprintf("%d bytes each", ds.KeySize)
		if y := ds.YCSB; y != nil {
			keys = fmt.Sprintf("YCSB's, user + fnvhash64 (at most %d bytes)", ds.KeySize)
			if y.ordered {
				keys = fmt.Sprintf("YCSB's, user + record number (at most %d bytes)", ds.KeySize)
			}
		}
		fmt.Fprintf(o.Stdout, "Engine:     %s\nKeys:       %s\nValues:     %s\nEntries:    %d\nRawSize:    %.1f MB (estimated)\n",
			res.EngineVersion, keys, valueDesc(ds), ds.Num, float64(res.Dataset.Bytes)/1048576)
		fmt.Fprintln(o.Stdout, "------------------------------------------------")
		b := beginPhase(db, dev)
		load, err := e.load(ctx, db, cfg.DBPath)
		if err != nil {
			return fail(err)
		}
		if load != nil {
			b.end(db, load)
			res.Load = load
			fmt.Fprintln(o.Stdout, report.Line("load", &load.PhaseSummary))
			if o.OnPhase != nil {
				o.OnPhase(res)
			}
		}
		// Everything after the load reads an existing database.
		engCfg.MustExist = true
	}
	repeat := max(int(cfg.Repeat), 1)
	sweep := cfg.Threads
	if len(sweep) == 0 {
		sweep = []int32{1}
	}
	zetas := map[uint64]float64{}
	var inserted atomic.Int64
	pulse := &pulseState{hi: uint64(ds.Num)}
	if ds.LoadMode == api.LoadNone {
		pulse.hi = 0
	}
	pp := &pointPrep{cfg: &cfg, e: e, db: func() engine.DB { return db }, reopen: reopen}
	if (cfg.Reset == api.ResetPerPoint || cfg.Reset == api.ResetPerIteration) && !onlyDBBench {
		cp, err := takeCheckpoint(db, cfg.DBPath, reopen)
		if err != nil {
			return fail(fmt.Errorf("reset: checkpoint after the load: %w", err))
		}
		defer cp.remove()
		loaded := *pulse
		pp.cp, pp.restored = cp, func() { inserted.Store(0); *pulse = loaded }
	}
	salt := uint64(0)
	for it := 0; it < repeat; it++ {
		if it > 0 && cfg.Reset == api.ResetPerIteration && pp.cp != nil {
			if err := pp.reset(); err != nil {
				return fail(err)
			}
		}
		for _, w := range cfg.Workloads {
			threads := sweep
			if len(w.Threads) > 0 {
				threads = w.Threads
			}
			for _, th := range threads {
				salt++
				if err := ctx.Err(); err != nil {
					return fail(interrupted(ctx))
				}
				if isStatsWorkload(w.Name) {
					if err := runPseudo(ctx, o.Stdout, db, w.Name); err != nil {
						return fail(fmt.Errorf("%s: %w", w.Name, err))
					}
					break // a pseudo-benchmark: no threads, no phase
				}
				if w.Name == api.WorkloadDBBench {
					closeDB()
					args := w.DBBenchArgs
					if cfg.OptionsFile != "" {
						// db_bench reads the user's file with RocksDB's loader (its --options_file rule).
						args = append(slices.Clone(args), "--options_file="+cfg.OptionsFile)
					}
					phases, ver, err := dbbench.Run(ctx, o.DBBenchBinary, args, cfg.DBPath, o.Stdout, o.Stderr)
					for i := range phases {
						phases[i].Iteration = int32(it)
						phases[i].Workload = "dbbench:" + phases[i].Workload
						phases[i].Index = int32(len(res.Phases) + i)
					}
					res.Phases = append(res.Phases, phases...)
					if res.EngineVersion == "" {
						res.EngineVersion = ver
					}
					if err != nil {
						return fail(err)
					}
					if !onlyDBBench {
						engCfg.MustExist = true
						if err := open(); err != nil {
							return fail(err)
						}
					}
					if o.OnPhase != nil {
						o.OnPhase(res)
					}
					break // db_bench's own --threads applies; the sweep does not
				}
				prot, err := pp.prepare(ctx, w, func(ww api.WorkloadSpec) (*api.PhaseResult, error) {
					return e.runWorkload(ctx, db, ww, int(th), it, salt+warmupSalt, zetas, &inserted, pulse)
				})
				if err != nil {
					return fail(err)
				}
				b := beginPhase(db, dev)
				e.stats.start(db)
				r, err := e.runWorkload(ctx, db, w, int(th), it, salt, zetas, &inserted, pulse)
				if err != nil {
					return fail(err)
				}
				r.Protocol = withPhase(prot, r.Protocol)
				b.end(db, r)
				r.Index = int32(len(res.Phases)) // survives truncation of the summary
				res.Phases = append(res.Phases, *r)
				fmt.Fprintln(o.Stdout, report.Line(r.Workload, &r.PhaseSummary))
				if o.Histogram && r.LatencyMicros != nil {
					report.Histogram(o.Stdout, histWhat(w.Name), r.Ops, r.LatencyMicros)
				}
				if o.Observer != nil {
					o.Observer.PhaseFinished(r)
				}
				if o.OnPhase != nil {
					o.OnPhase(res)
				}
			}
		}
	}
	printStatistics(o.Stdout, db) // db_bench --statistics
	res.EngineTotals = engine.PhaseStats(nil, engineStats(db))
	res.Provenance = newProvenance(specHash, ds, cfg.DBPath, cfg.OptionsFile, dev, db)
	end := metav1.Now()
	res.EndTime = &end
	return res, nil
}

func (e *env) runWorkload(ctx context.Context, db engine.DB, w api.WorkloadSpec, threads, it int, salt uint64,
	zetas map[uint64]float64, inserted *atomic.Int64, ps *pulseState) (*api.PhaseResult, error) {
	e.seedSalt = salt
	var p *phase
	var err error
	switch w.Name {
	case api.WorkloadPulse:
		return e.runPulse(ctx, db, w, threads, it, ps)
	case api.WorkloadYCSB:
		p, err = ycsbPhase(db, w, e.ds, threads, zetas, inserted)
	default:
		p, err = dbBenchPhase(db, w, e.ds, threads, salt)
	}
	if err != nil {
		return nil, err
	}
	p.iteration = it
	out, err := e.runPhase(ctx, p)
	if err != nil {
		return nil, err
	}
	return &out.res, nil
}

// maxThreads is the largest thread count any workload of cfg runs with.
func maxThreads(cfg *api.RunnerConfig) int {
	n := 1
	for _, t := range cfg.Threads {
		n = max(n, int(t))
	}
	for _, w := range cfg.Workloads {
		for _, t := range w.Threads {
			n = max(n, int(t))
		}
	}
	return n
}

func histWhat(w api.WorkloadName) string {
	switch w {
	case api.WorkloadSeekRandom:
		return "seek"
	case api.WorkloadReadRandom, api.WorkloadReadMissing, api.WorkloadReadWhileWriting, api.WorkloadReadSeq, api.WorkloadReadReverse:
		return "read"
	case api.WorkloadDeleteSeq, api.WorkloadDeleteRandom:
		return "delete"
	case api.WorkloadFillSeq, api.WorkloadFillRandom, api.WorkloadFillUniqueRandom, api.WorkloadOverwrite, api.WorkloadFillSync:
		return "write"
	}
	return "op"
}

func valueDesc(ds Dataset) string {
	if y := ds.YCSB; y != nil {
		return fmt.Sprintf("%d bytes each (YCSB records: %d fields of %d bytes)", ds.ValueMin, y.fieldCount, y.fieldLength)
	}
	if ds.ValueMin == ds.ValueMax {
		return fmt.Sprintf("%d bytes each", ds.ValueMin)
	}
	return fmt.Sprintf("%d..%d bytes each", ds.ValueMin, ds.ValueMax)
}

// resetDBDir empties the database directory before a fresh load, as db_bench destroys the DB
// unless --use_existing_db. It refuses to delete a non-empty directory that is not a database.
func resetDBDir(path string) error {
	entries, err := os.ReadDir(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return nil
	}
	isDB := false
	for _, f := range []string{"CURRENT", "LOCK"} {
		if _, err := os.Stat(filepath.Join(path, f)); err == nil {
			isDB = true
		}
	}
	if !isDB {
		return fmt.Errorf("%s is not empty and holds no database; refusing to delete it", path)
	}
	return os.RemoveAll(path)
}

// interrupted explains why ctx ended: the cause its canceller gave (the CLI names the signal),
// else plainly "interrupted".
func interrupted(ctx context.Context) error {
	if c := context.Cause(ctx); c != nil && c != ctx.Err() {
		return c
	}
	return errors.New("interrupted")
}
