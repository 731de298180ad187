package bench

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/runner/engine"
	"github.com/kvbench/kvbench-operator/runner/hist"
)

// The measurement protocol: what the runner does around a measured phase (warm-up, settle,
// reset, cold-cache check) and what it says about rate-limited phases, recorded in
// PhaseResult.Protocol so a reviewer can tell a flattering number from a fair one.

// targetMissedShare is how far a rate-limited phase may fall short of its target before the
// result says the target was missed.
const targetMissedShare = 0.05

// rateProtocol adds a rate-limited writer's target, whether it was missed, and its service time
// (from each write's actual start) to r's protocol, and the same in brief to its summary, which is
// what status keeps; unlimited writers (target 0) add nothing.
func rateProtocol(r *api.PhaseResult, target, reached float64, service *hist.Histogram) {
	if target <= 0 {
		return
	}
	if r.Protocol == nil {
		r.Protocol = &api.MeasurementProtocol{}
	}
	pr := r.Protocol
	pr.TargetOpsPerSec = &target
	pr.TargetMissed = reached < (1-targetMissedShare)*target
	if service != nil && service.Count() > 0 {
		pr.ServiceLatencyMicros = service.Percentiles()
	}
	r.TargetOpsPerSec, r.TargetMissed = ptrTo(target), pr.TargetMissed
	if pr.ServiceLatencyMicros != nil {
		r.ServiceP99Micros = ptrTo(pr.ServiceLatencyMicros.P99)
	}
}

func ptrTo[T any](v T) *T { return &v }

// settlePoll is how often settle asks the engine whether it is idle.
const settlePoll = 100 * time.Millisecond

// settle waits until db's flushes and compactions are idle, for at most timeout, and says how long
// it waited and whether it gave up.
func settle(ctx context.Context, db engine.DB, timeout time.Duration) (float64, bool, error) {
	s, ok := db.(engine.Settler)
	if !ok {
		return 0, false, fmt.Errorf("settle: engine %s cannot report its compaction state", db.Version())
	}
	start := time.Now()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		idle, err := s.CompactionIdle()
		if err != nil {
			return 0, false, fmt.Errorf("settle: %w", err)
		}
		waited := time.Since(start)
		if idle || waited >= timeout {
			return round3(waited.Seconds()), !idle, nil
		}
		// The last look is at the bound, not a poll after it.
		timer.Reset(min(settlePoll, timeout-waited))
		select {
		case <-ctx.Done():
			return 0, false, interrupted(ctx)
		case <-timer.C:
		}
	}
}

// checkpoint is the database as the load left it, for reset: perPoint.
type checkpoint struct{ dir, dbPath string }

// takeCheckpoint saves the open database next to dbPath (same filesystem, so table files can be
// hard links): online for engines that can (RocksDB, Pebble), else with the database closed
// (LevelDB), via reopen (which closes, runs the given copy, and opens again).
func takeCheckpoint(db engine.DB, dbPath string, reopen func(between func() error) error) (*checkpoint, error) {
	cp := &checkpoint{dir: filepath.Clean(dbPath) + ".checkpoint", dbPath: dbPath}
	if err := os.RemoveAll(cp.dir); err != nil {
		return nil, err
	}
	if c, ok := db.(engine.Checkpointer); ok {
		return cp, c.Checkpoint(cp.dir)
	}
	return cp, reopen(func() error { return cloneDir(dbPath, cp.dir) })
}

// restore replaces the database with the checkpoint (closed around it by reopen).
func (cp *checkpoint) restore(reopen func(between func() error) error) error {
	return reopen(func() error {
		if err := os.RemoveAll(cp.dbPath); err != nil {
			return err
		}
		return cloneDir(cp.dir, cp.dbPath)
	})
}

func (cp *checkpoint) remove() { _ = os.RemoveAll(cp.dir) }

// cloneDir makes dst a copy of the database directory src: immutable table files (.sst, .ldb) are
// hard links, everything else (MANIFEST, CURRENT, WAL, OPTIONS, which an engine may append to or
// recycle) is copied, so the copy never changes the original.
func cloneDir(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, e := range entries {
		from, to := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())
		switch {
		case e.IsDir():
			err = cloneDir(from, to)
		case !e.Type().IsRegular() || e.Name() == "LOCK":
			continue
		case strings.HasSuffix(e.Name(), ".sst") || strings.HasSuffix(e.Name(), ".ldb"):
			if err = os.Link(from, to); err != nil {
				err = copyFile(from, to) // another filesystem
			}
		default:
			err = copyFile(from, to)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// residentFraction is the share of the pages of the files under dir that are in the page cache
// (mincore over a read-only mapping of each file; mapping does not fault pages in).
func residentFraction(dir string) (float64, error) {
	var total, resident int64
	page := int64(os.Getpagesize())
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		in, r, err := fileResidency(path, page)
		total += in
		resident += r
		return err
	})
	if err != nil || total == 0 {
		return 0, err
	}
	return float64(resident) / float64(total), nil
}

// fileResidency returns a file's page count and how many of them are resident.
func fileResidency(path string, page int64) (int64, int64, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return 0, 0, nil // compaction removed it meanwhile
	}
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return 0, 0, err
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return 0, 0, fmt.Errorf("mmap %s: %w", path, err)
	}
	defer unix.Munmap(m)
	vec := make([]byte, (st.Size()+page-1)/page)
	// x/sys/unix has no Mincore wrapper on Linux; the system call is mincore(addr, length, vec).
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)),
		uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		return 0, 0, fmt.Errorf("mincore %s: %w", path, errno)
	}
	var n int64
	for _, v := range vec {
		n += int64(v & 1)
	}
	return int64(len(vec)), n, nil
}

// pointPrep is what Run does before each measured sweep point, in this order: restore the
// post-load checkpoint (reset: perPoint; perIteration restores at an iteration's start), warm up (run the workload and discard it), settle (wait
// for idle flushes and compactions), evict the page cache (cacheMode cold) and check residency.
// Each step ends where the next begins, so none undoes an earlier one's purpose.
type pointPrep struct {
	cfg *api.RunnerConfig
	e   *env
	db  func() engine.DB
	// reopen closes the database, runs between (if not nil) and opens it again.
	reopen func(between func() error) error
	cp     *checkpoint
	// restored puts the harness's own state (YCSB inserts, pulse window) back to the post-load one.
	restored func()
	// resetSeconds is the time of a restore not yet recorded in a phase's protocol (perIteration
	// restores at the start of an iteration, before its first measured phase).
	resetSeconds *float64
}

// reset restores the post-load checkpoint and the harness state; the next prepared phase records
// how long it took.
func (pp *pointPrep) reset() error {
	start := time.Now()
	if err := pp.cp.restore(pp.reopen); err != nil {
		return fmt.Errorf("reset: restoring the post-load checkpoint: %w", err)
	}
	pp.restored()
	s := round3(time.Since(start).Seconds())
	pp.resetSeconds = &s
	return nil
}

func (pp *pointPrep) prepare(ctx context.Context, w api.WorkloadSpec, warm func(api.WorkloadSpec) (*api.PhaseResult, error)) (*api.MeasurementProtocol, error) {
	pr := &api.MeasurementProtocol{}
	if pp.cp != nil && pp.cfg.Reset == api.ResetPerPoint {
		if err := pp.reset(); err != nil {
			return nil, err
		}
	}
	pr.ResetSeconds, pp.resetSeconds = pp.resetSeconds, nil
	if wu := w.Warmup; wu != nil {
		ww := w
		ww.Warmup, ww.Num, ww.Duration = nil, wu.Ops, wu.Duration
		obs := pp.e.observer
		pp.e.observer = nil // the warm-up is no phase of the run
		r, err := warm(ww)
		pp.e.observer = obs
		if err != nil {
			return nil, fmt.Errorf("warmup: %w", err)
		}
		pr.WarmupOps, pr.WarmupSeconds = r.Ops, r.Seconds
	}
	if s := pp.cfg.Settle; s != nil {
		secs, timedOut, err := settle(ctx, pp.db(), s.Timeout.Duration)
		if err != nil {
			return nil, err
		}
		pr.SettleSeconds, pr.SettleTimedOut = &secs, timedOut
		if timedOut {
			fmt.Fprintf(pp.e.progress, "settle: flushes/compactions still busy after %s; measuring anyway\n", s.Timeout.Duration)
		}
	}
	if pp.cfg.CacheMode == api.CacheCold {
		frac, err := pp.evict()
		if err != nil {
			return nil, err
		}
		pr.CacheResidentFraction = &frac
	}
	return pr, nil
}

// evict drops the database's pages from the page cache and says what share is still resident.
// A database that maps its tables is closed around the eviction: mapped pages cannot be dropped.
func (pp *pointPrep) evict() (float64, error) {
	dir := pp.cfg.DBPath
	evict := func() error { return evictPageCache(dir) }
	var err error
	if m, ok := pp.db().(engine.MemoryMapper); ok && m.MemoryMapped() {
		// Again after the reopen: LevelDB's recovery writes the log into a new table.
		if err = pp.reopen(evict); err == nil {
			err = evict()
		}
	} else {
		err = evict()
	}
	if err != nil {
		return 0, fmt.Errorf("evicting page cache: %w", err)
	}
	frac, err := residentFraction(dir)
	if err != nil {
		return 0, fmt.Errorf("checking page cache residency: %w", err)
	}
	frac = round3(frac)
	if frac > coldResidentWarn {
		fmt.Fprintf(pp.e.progress, "cacheMode cold: %.0f%% of the database's pages are still in the page cache after eviction (tmpfs cannot evict)\n", 100*frac)
	}
	return frac, nil
}

// coldResidentWarn is the resident share above which a cold-cache phase is called out as not cold.
const coldResidentWarn = 0.1

// warmupSalt keeps a warm-up's keys apart from its phase's: a warm-up replaying the measured
// phase's key sequence would leave exactly the keys it reads in the caches.
const warmupSalt = 1 << 40

// withPhase adds what the phase recorded itself (a rate-limited writer's target) to what was done
// before it; nil when there is nothing to say.
func withPhase(steps, phase *api.MeasurementProtocol) *api.MeasurementProtocol {
	if phase != nil {
		steps.TargetOpsPerSec, steps.TargetMissed, steps.ServiceLatencyMicros = phase.TargetOpsPerSec, phase.TargetMissed, phase.ServiceLatencyMicros
	}
	if *steps == (api.MeasurementProtocol{}) {
		return nil
	}
	return steps
}
