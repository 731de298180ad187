package bench

import (
	"context"
	"fmt"
	"time"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/runner/engine"
	"github.com/kvbench/kvbench-operator/runner/hist"
	"github.com/kvbench/kvbench-operator/runner/keygen"
)

// opsLimit is the per-thread operation count: the workload's num, else the dataset's key count;
// with a duration and no explicit num the phase runs for the duration only (as db_bench does).
func opsLimit(w api.WorkloadSpec, ds Dataset) int64 {
	if w.Num != nil {
		return *w.Num
	}
	if durationOf(w) > 0 {
		return 1 << 62
	}
	return ds.Num
}

// dbBenchPhase builds the phase for a db_bench workload name on db.
func dbBenchPhase(db engine.DB, w api.WorkloadSpec, ds Dataset, threads int, seedSalt uint64) (*phase, error) {
	keys := ds.Keys()
	num := uint64(ds.Num)
	limit := opsLimit(w, ds)
	p := &phase{name: string(w.Name), threads: threads, duration: durationOf(w), kinds: []opKind{opWrite}}
	if limit < 1<<62 {
		p.expected = limit * int64(threads)
	}
	// put is db.Put (readrandomwriterandom's writes, as db_bench's DB::Put); fills use fill, a
	// per-thread engine.Writer committing a batch of one per write (db_bench's DoWrite), in runs
	// of operations (engine.Ops: one engine call per run, each write still timed on its own).
	put := func(t *thread, v uint64) error {
		val := t.values.Next()
		if err := db.Put(keys.Put(t.key, v), val); err != nil {
			return err
		}
		t.bytes += int64(len(t.key) + len(val))
		t.done(opWrite)
		return nil
	}
	fill := func(t *thread, next func(i int64) uint64) error {
		w := engine.NewWriter(db)
		defer w.Close()
		for i := int64(0); i < limit && !t.stopped(); {
			o := t.nextRun(keys, limit-i)
			for j := range o.N {
				t.putKey(j, next(i+int64(j)))
				o.Vals[j] = t.values.Next()
			}
			err := engine.PutOps(w, o)
			for _, v := range o.Vals[:o.Done] {
				t.bytes += int64(keys.KeySize + len(v))
			}
			t.doneOps(opWrite, o)
			if err != nil {
				return err
			}
			i += int64(o.N)
		}
		return nil
	}
	switch w.Name {
	case api.WorkloadFillSeq:
		p.work = func(t *thread) error {
			return fill(t, func(i int64) uint64 { return uint64(i) })
		}
	case api.WorkloadFillRandom, api.WorkloadOverwrite:
		p.work = func(t *thread) error {
			return fill(t, func(int64) uint64 { return t.rand.Uint64n(num) })
		}
	case api.WorkloadFillUniqueRandom:
		p.work = func(t *thread) error {
			perm := keygen.NewPermutation(num, ds.Seed+seedSalt+uint64(t.id))
			return fill(t, func(i int64) uint64 { return perm.At(uint64(i) % num) })
		}
	case api.WorkloadFillSync:
		// db_bench runs fillsync with num/1000 operations.
		n := max(limit/1000, 1)
		if w.Num != nil {
			n = limit
		}
		if p.expected > 0 {
			p.expected = n * int64(threads)
		}
		p.work = func(t *thread) error {
			for i := int64(0); i < n && !t.stopped(); i++ {
				val := t.values.Next()
				if err := db.PutSync(keys.Put(t.key, t.rand.Uint64n(num)), val); err != nil {
					return err
				}
				t.bytes += int64(len(t.key) + len(val))
				t.done(opWrite)
			}
			return nil
		}
	case api.WorkloadReadSeq, api.WorkloadReadReverse:
		p.kinds = []opKind{opRead}
		reverse := w.Name == api.WorkloadReadReverse
		p.work = func(t *thread) error {
			it := db.NewIterator()
			defer it.Close()
			if reverse {
				it.SeekToLast()
			} else {
				it.SeekToFirst()
			}
			for i := int64(0); i < limit && !t.stopped(); {
				o := t.nextRun(keys, limit-i)
				err := engine.StepOps(it, o, reverse)
				t.bytes += o.Bytes
				t.doneOps(opRead, o)
				if err != nil {
					return err
				}
				if o.Done < o.N { // the end of the database
					break
				}
				i += int64(o.N)
			}
			return it.Err()
		}
	case api.WorkloadReadRandom, api.WorkloadReadMissing:
		p.kinds = []opKind{opRead}
		p.countReads = true
		rk := keys
		if w.Name == api.WorkloadReadMissing {
			// db_bench's readmissing reads with key_size+1: a '0' appended, never found.
			rk.KeySize++
		}
		p.work = readRandomWork(db, rk, num, limit)
	case api.WorkloadReadWhileWriting:
		p.kinds = []opKind{opRead}
		p.countReads = true
		p.work = readRandomWork(db, keys, num, limit)
		rate := int64(0)
		if w.WritesPerSecond != nil {
			rate = *w.WritesPerSecond
		}
		p.background = func(ctx context.Context, base time.Time) (*thread, error) {
			return backgroundWriter(ctx, db, ds, base, rate, seedSalt)
		}
		p.targetRate = float64(rate)
	case api.WorkloadReadRandomWriteRandom:
		p.kinds = []opKind{opRead, opWrite}
		p.countReads = true
		pct := uint64(90)
		if w.ReadWritePercent != nil {
			pct = uint64(*w.ReadWritePercent)
		}
		p.work = func(t *thread) error {
			for i := int64(0); i < limit && !t.stopped(); i++ {
				v := t.rand.Uint64n(num)
				if t.rand.Uint64n(100) < pct {
					if err := t.get(db, keys, v); err != nil {
						return err
					}
					t.done(opRead)
				} else if err := put(t, v); err != nil {
					return err
				}
			}
			return nil
		}
	case api.WorkloadSeekRandom:
		p.kinds = []opKind{opSeek}
		p.countReads = true
		nexts := 0
		if w.SeekNexts != nil {
			nexts = int(*w.SeekNexts)
		}
		// Each seek uses a fresh iterator, as db_bench's SeekRandom does (engine.SeekNexter).
		p.work = func(t *thread) error {
			for i := int64(0); i < limit && !t.stopped(); {
				o := t.nextRun(keys, limit-i)
				for j := range o.N {
					t.putKey(j, t.rand.Uint64n(num))
				}
				err := engine.SeekNextsOps(db, o, nexts)
				t.reads += int64(o.Done)
				t.found += int64(o.Found)
				t.bytes += o.Bytes
				t.doneOps(opSeek, o)
				if err != nil {
					return err
				}
				i += int64(o.N)
			}
			return nil
		}
	case api.WorkloadDeleteSeq, api.WorkloadDeleteRandom:
		p.kinds = []opKind{opDelete}
		seq := w.Name == api.WorkloadDeleteSeq
		p.work = func(t *thread) error {
			w := engine.NewWriter(db) // db_bench's DoDelete: a batch of one per delete
			defer w.Close()
			for i := int64(0); i < limit && !t.stopped(); {
				o := t.nextRun(keys, limit-i)
				for j := range o.N {
					v := uint64(i + int64(j))
					if !seq {
						v = t.rand.Uint64n(num)
					}
					t.putKey(j, v)
				}
				err := engine.DeleteOps(w, o)
				t.doneOps(opDelete, o)
				if err != nil {
					return err
				}
				i += int64(o.N)
			}
			return nil
		}
	case api.WorkloadUpdateRandom:
		p.kinds = []opKind{opUpdate}
		p.countReads = true
		p.work = func(t *thread) error {
			for i := int64(0); i < limit && !t.stopped(); i++ {
				key := keys.Put(t.key, t.rand.Uint64n(num))
				found, n, err := db.Get(key)
				if err != nil {
					return err
				}
				t.reads++
				if found {
					t.found++
					t.bytes += int64(len(key) + n)
				}
				val := t.values.Next()
				if err := db.Put(key, val); err != nil {
					return err
				}
				t.bytes += int64(len(key) + len(val))
				t.done(opUpdate)
			}
			return nil
		}
	default:
		return nil, fmt.Errorf("workload %q is not a db_bench workload", w.Name)
	}
	return p, nil
}

// readRandomWork is readrandom's (and readwhilewriting's readers') loop: uniformly random keys
// of [0, num), looked up in runs (engine.Ops), counted as db_bench does: every lookup is a read,
// found keys add key+value bytes.
func readRandomWork(db engine.DB, keys keygen.Keys, num uint64, limit int64) func(t *thread) error {
	return func(t *thread) error {
		for i := int64(0); i < limit && !t.stopped(); {
			o := t.nextRun(keys, limit-i)
			for j := range o.N {
				t.putKey(j, t.rand.Uint64n(num))
			}
			err := engine.GetOps(db, o)
			t.reads += int64(o.Done)
			t.found += int64(o.Found)
			t.bytes += o.Bytes
			t.doneOps(opRead, o)
			if err != nil {
				return err
			}
			i += int64(o.N)
		}
		return nil
	}
}

// writerQuantum is how far ahead of its schedule the rate-limited writer may run before it
// sleeps. Sleeping before every write (every 55µs at db_bench's 2 MB/s of 116-byte writes) costs a
// timer, a park and a futex wake-up per write, CPU the readers then lack; db_bench's writer, a
// RocksDB GenericRateLimiter with a 100ms refill period, sleeps about ten times a second. With a
// 10ms quantum the rate holds over any window longer than 10ms and the writer sleeps at most
// 100 times a second.
const writerQuantum = 10 * time.Millisecond

// backgroundWriter is readwhilewriting's writer: random overwrites with DB::Put (as db_bench's
// BGWriter) until ctx ends, at rate writes/s if rate > 0. Write i is scheduled at start+i/rate.
// Latency counts from the earlier of the scheduled and the actual start (coordinated omission:
// if a write stalls, the writes queued behind it are charged the wait; a write the quantum let
// start early is charged only its own time). Under a rate limit each write's service time (from its
// actual start) is recorded too, so a backlog is not read as the engine's write latency.
func backgroundWriter(ctx context.Context, db engine.DB, ds Dataset, base time.Time, rate int64, salt uint64) (*thread, error) {
	keys := ds.Keys()
	seed := ds.Seed*31 + salt + 0xbadc0ffee
	t := &thread{rand: keygen.NewRand(seed), key: keys.Make(),
		values: keygen.NewValues(seed, ds.Ratio, ds.ValueMin, ds.ValueMax), base: base}
	t.hists[opWrite] = hist.New()
	t.start = t.now()
	t.last = t.start
	num := uint64(ds.Num)
	var interval time.Duration
	if rate > 0 {
		interval = time.Second / time.Duration(rate)
		if interval <= 0 {
			interval = 1
		}
		t.service = hist.New()
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	// The first write happens even if the readers are already done, so that a very short phase
	// still reports a write rate; after that the writer stops as soon as ctx ends.
	for i := int64(0); i == 0 || ctx.Err() == nil; i++ {
		origin, started := t.last, t.last
		if interval > 0 {
			intended := t.start + time.Duration(i)*interval
			now := t.now()
			if ahead := intended - now; ahead >= writerQuantum {
				timer.Reset(ahead)
				select {
				case <-ctx.Done():
				case <-timer.C:
				}
				if ctx.Err() != nil && i > 0 {
					break
				}
				now = t.now()
			}
			origin, started = min(intended, now), now
		}
		val := t.values.Next()
		if err := db.Put(keys.Put(t.key, t.rand.Uint64n(num)), val); err != nil {
			return t, err
		}
		end := t.doneAt(opWrite, origin)
		if t.service != nil {
			t.service.Record(int64(end - started))
		}
	}
	t.end = t.now()
	return t, nil
}
