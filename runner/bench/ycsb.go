package bench

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/runner/engine"
	"github.com/kvbench/kvbench-operator/runner/keygen"
)

// mix is a YCSB core workload's operation mix in percent.
type mix struct {
	read, update, insert, scan, rmw int
	dist                            api.YCSBDistribution
	maxScan                         int
}

// ycsbMix returns the letter's defaults with the spec's overrides applied.
func ycsbMix(s *api.YCSBSpec) (mix, error) {
	var m mix
	switch strings.ToUpper(string(s.Workload)) {
	case "A":
		m = mix{read: 50, update: 50, dist: "zipfian"}
	case "B":
		m = mix{read: 95, update: 5, dist: "zipfian"}
	case "C":
		m = mix{read: 100, dist: "zipfian"}
	case "D":
		m = mix{read: 95, insert: 5, dist: "latest"}
	case "E":
		m = mix{scan: 95, insert: 5, dist: "zipfian"}
	case "F":
		m = mix{read: 50, rmw: 50, dist: "zipfian"}
	default:
		return m, fmt.Errorf("unknown YCSB workload %q (A-F)", s.Workload)
	}
	m.maxScan = 100
	if s.MaxScanLength != nil {
		if *s.MaxScanLength < 1 {
			return m, fmt.Errorf("ycsb: maxScanLength must be >= 1")
		}
		m.maxScan = int(*s.MaxScanLength)
	}
	if s.RequestDistribution != nil {
		switch *s.RequestDistribution {
		case "zipfian", "uniform", "latest":
			m.dist = *s.RequestDistribution
		default:
			return m, fmt.Errorf("ycsb: unknown request distribution %q (zipfian, uniform, latest)", *s.RequestDistribution)
		}
	}
	if s.ReadPercent != nil {
		r := int(*s.ReadPercent)
		if r < 0 || r > 100 {
			return m, fmt.Errorf("ycsb: readPercent %d out of range", r)
		}
		// The rest goes to the letter's other operation.
		other := 100 - r
		switch {
		case m.update > 0 || m.read == 100:
			m.read, m.update = r, other
		case m.insert > 0 && m.scan == 0:
			m.read, m.insert = r, other
		case m.rmw > 0:
			m.read, m.rmw = r, other
		case m.scan > 0:
			m.read, m.scan, m.insert = r, 0, 0
			m.scan = other * 95 / 100
			m.insert = other - m.scan
		}
	}
	return m, nil
}

// ycsbPhase builds a YCSB core workload over the dataset's keys. Inserted keys continue the
// integer sequence after the dataset (insertCount is shared across threads).
func ycsbPhase(db engine.DB, w api.WorkloadSpec, ds Dataset, threads int, zetas map[uint64]float64, insertCount *atomic.Int64) (*phase, error) {
	m, err := ycsbMix(w.YCSB)
	if err != nil {
		return nil, err
	}
	keys := ds.Keys()
	num := uint64(ds.Num)
	limit := opsLimit(w, ds)
	p := &phase{name: "ycsb-" + strings.ToLower(string(w.YCSB.Workload)), threads: threads, duration: durationOf(w),
		kinds: []opKind{opRead, opUpdate, opInsert, opScan, opRMW}, countReads: true}
	if limit < 1<<62 {
		p.expected = limit * int64(threads)
	}
	var zipf *keygen.Zipfian
	if m.dist != "uniform" {
		z, ok := zetas[num]
		if !ok {
			z = keygen.Zeta(num, keygen.YCSBTheta)
			zetas[num] = z
		}
		zipf = keygen.NewZipfianZeta(num, keygen.YCSBTheta, z)
	}
	// Scrambling through a permutation keeps the zipfian shape exactly while spreading the hot
	// keys over the key space, like YCSB's ScrambledZipfianGenerator.
	scramble := keygen.NewPermutation(num, ds.Seed^0xC0FFEE)
	if insertCount.Load() < ds.Num {
		insertCount.Store(ds.Num)
	}
	// Reads choose among acknowledged keys only: an insert claims its key before writing it, and
	// reading a claimed but unwritten key would count as a miss (YCSB's acknowledged counter).
	acked := &ackCounter{done: map[int64]bool{}}
	acked.limit.Store(insertCount.Load())
	nextKey := func(t *thread) uint64 {
		switch m.dist {
		case "uniform":
			return t.rand.Uint64n(uint64(acked.limit.Load()))
		case "latest":
			last := uint64(acked.limit.Load()) - 1
			r := zipf.Next(t.rand)
			if r > last {
				r = last
			}
			return last - r
		}
		return scramble.At(zipf.Next(t.rand))
	}
	cut := [5]int{m.read, m.read + m.update, m.read + m.update + m.insert, m.read + m.update + m.insert + m.scan, 100}
	p.work = func(t *thread) error {
		var it engine.Iterator
		if m.scan > 0 {
			it = db.NewIterator()
			defer it.Close()
		}
		for i := int64(0); i < limit && !t.stopped(); i++ {
			x := int(t.rand.Uint64n(100))
			switch {
			case x < cut[0]:
				if err := t.get(db, keys, nextKey(t)); err != nil {
					return err
				}
				t.done(opRead)
			case x < cut[1]:
				val := t.values.Next()
				if err := db.Put(keys.Put(t.key, nextKey(t)), val); err != nil {
					return err
				}
				t.bytes += int64(len(t.key) + len(val))
				t.done(opUpdate)
			case x < cut[2]:
				v := uint64(insertCount.Add(1) - 1)
				val := t.values.Next()
				if err := db.Put(keys.Put(t.key, v), val); err != nil {
					return err
				}
				acked.ack(int64(v))
				t.bytes += int64(len(t.key) + len(val))
				t.done(opInsert)
			case x < cut[3]:
				n := 1 + int(t.rand.Uint64n(uint64(m.maxScan)))
				it.Seek(keys.Put(t.key, nextKey(t)))
				for j := 0; j < n && it.Valid(); j++ {
					t.bytes += int64(len(it.Key()) + it.ValueSize())
					it.Next()
				}
				t.done(opScan)
			default:
				v := nextKey(t)
				if err := t.get(db, keys, v); err != nil {
					return err
				}
				val := t.values.Next()
				if err := db.Put(t.key, val); err != nil {
					return err
				}
				t.bytes += int64(len(t.key) + len(val))
				t.done(opRMW)
			}
		}
		if it != nil {
			return it.Err()
		}
		return nil
	}
	return p, nil
}

// ackCounter tracks the length of the contiguous prefix of written keys.
type ackCounter struct {
	mu    sync.Mutex
	done  map[int64]bool
	limit atomic.Int64
}

func (a *ackCounter) ack(k int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.done[k] = true
	l := a.limit.Load()
	for a.done[l] {
		delete(a.done, l)
		l++
	}
	a.limit.Store(l)
}
