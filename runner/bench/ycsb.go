package bench

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/runner/engine"
	"github.com/kvbench/kvbench-operator/runner/keygen"
)

// mixScale is the resolution of a mix: parts per million, so that Pegasus's 30:1 is 96.7742%
// reads rather than a rounded 97%.
const mixScale = 1_000_000

// mix is a YCSB core workload's operation mix in parts per mixScale.
type mix struct {
	read, update, insert, scan, rmw int
	dist                            api.YCSBDistribution
	maxScan                         int
}

// pct is a percentage in parts per mixScale.
func pct(p int) int { return p * (mixScale / 100) }

// ycsbMix returns the letter's defaults with the spec's overrides applied.
func ycsbMix(s *api.YCSBSpec) (mix, error) {
	var m mix
	letter := strings.ToUpper(string(s.Workload))
	switch letter {
	case "A":
		m = mix{read: pct(50), update: pct(50), dist: "zipfian"}
	case "B":
		m = mix{read: pct(95), update: pct(5), dist: "zipfian"}
	case "C":
		m = mix{read: pct(100), dist: "zipfian"}
	case "D":
		m = mix{read: pct(95), insert: pct(5), dist: "latest"}
	case "E":
		m = mix{scan: pct(95), insert: pct(5), dist: "zipfian"}
	case "F":
		m = mix{read: pct(50), rmw: pct(50), dist: "zipfian"}
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
	read := -1
	switch {
	case s.ReadPercent != nil && s.ReadWriteRatio != "":
		return m, fmt.Errorf("ycsb: set readPercent or readWriteRatio, not both")
	case s.ReadPercent != nil:
		r := int(*s.ReadPercent)
		if r < 0 || r > 100 {
			return m, fmt.Errorf("ycsb: readPercent %d out of range [0, 100]", r)
		}
		read = pct(r)
	case s.ReadWriteRatio != "":
		r, err := parseReadWriteRatio(s.ReadWriteRatio)
		if err != nil {
			return m, err
		}
		read = r
	}
	if read >= 0 {
		// The rest goes to the letter's write operation.
		other := mixScale - read
		switch letter {
		case "A", "B", "C":
			m.read, m.update = read, other
		case "D":
			m.read, m.insert = read, other
		case "F":
			m.read, m.rmw = read, other
		case "E":
			// E has no point reads of its own: its scan/insert mix shares the rest.
			m.read = read
			m.scan = other * 95 / 100
			m.insert = other - m.scan
		}
	}
	return m, nil
}

// parseReadWriteRatio turns "R:W" (the Pegasus tables' RW Ratio) into the read share in parts per
// mixScale, rounded to nearest. The API server checks the same format; the runner also runs
// without it (--config-json), so it checks again.
func parseReadWriteRatio(s string) (int, error) {
	bad := func(why string) (int, error) {
		return 0, fmt.Errorf("ycsb: readWriteRatio %q %s", s, why)
	}
	rs, ws, ok := strings.Cut(s, ":")
	if !ok || !isDigits(rs) || !isDigits(ws) {
		return bad("must be R:W with integers of at most 6 digits, e.g. 30:1, 0:1 or 1:0")
	}
	r, _ := strconv.Atoi(rs)
	w, _ := strconv.Atoi(ws)
	if r+w == 0 {
		return bad("has no operations; one side must be positive")
	}
	// r, w < 1e6, so r*mixScale fits easily in an int.
	return (r*mixScale + (r+w)/2) / (r + w), nil
}

// isDigits reports whether s is 1 to 6 ASCII digits (^[0-9]{1,6}$, as the CRD's rule).
func isDigits(s string) bool {
	if len(s) < 1 || len(s) > 6 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// op picks the operation for a uniform draw x in [0, mixScale).
func (m *mix) op(x int) opKind {
	switch {
	case x < m.read:
		return opRead
	case x < m.read+m.update:
		return opUpdate
	case x < m.read+m.update+m.insert:
		return opInsert
	case x < m.read+m.update+m.insert+m.scan:
		return opScan
	}
	return opRMW
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
	p.work = func(t *thread) error {
		for i := int64(0); i < limit && !t.stopped(); i++ {
			switch m.op(int(t.rand.Uint64n(mixScale))) {
			case opRead:
				if err := t.get(db, keys, nextKey(t)); err != nil {
					return err
				}
				t.done(opRead)
			case opUpdate:
				val := t.values.Next()
				if err := db.Put(keys.Put(t.key, nextKey(t)), val); err != nil {
					return err
				}
				t.bytes += int64(len(t.key) + len(val))
				t.done(opUpdate)
			case opInsert:
				v := uint64(insertCount.Add(1) - 1)
				val := t.values.Next()
				if err := db.Put(keys.Put(t.key, v), val); err != nil {
					return err
				}
				acked.ack(int64(v))
				t.bytes += int64(len(t.key) + len(val))
				t.done(opInsert)
			case opScan:
				// Each scan opens its iterator on the current state, as YCSB's client does, so it
				// sees the inserts made during the phase (an iterator is a snapshot).
				n := 1 + int(t.rand.Uint64n(uint64(m.maxScan)))
				it := db.NewIterator()
				it.Seek(keys.Put(t.key, nextKey(t)))
				for j := 0; j < n && it.Valid(); j++ {
					t.bytes += int64(len(it.Key()) + it.ValueSize())
					it.Next()
				}
				err := it.Err()
				it.Close()
				if err != nil {
					return err
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
