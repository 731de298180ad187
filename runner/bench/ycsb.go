package bench

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/runner/engine"
	"github.com/kvbench/kvbench-operator/runner/keygen"
)

// YCSB's request distributions (CoreWorkload's requestdistribution) and the runner's earlier one.
const (
	distZipfian         api.YCSBDistribution = "zipfian"
	distUniform         api.YCSBDistribution = "uniform"
	distLatest          api.YCSBDistribution = "latest"
	distPermutedZipfian api.YCSBDistribution = "permutedZipfian"
)

// mixScale is the resolution of a mix: parts per million, so that Pegasus's 30:1 is 96.7742%
// reads rather than a rounded 97%.
const mixScale = 1_000_000

// mix is a YCSB core workload's operation mix in parts per mixScale, and its other properties.
type mix struct {
	read, update, insert, scan, rmw int
	dist                            api.YCSBDistribution
	maxScan                         int
	readAll, writeAll               bool // readallfields, writeallfields
	overwrite                       bool // updateMode overwrite: put the written fields without a get
}

// pct is a percentage in parts per mixScale.
func pct(p int) int { return p * (mixScale / 100) }

// ycsbMix returns the letter's defaults with the spec's overrides applied.
func ycsbMix(s *api.YCSBSpec) (mix, error) {
	var m mix
	letter := strings.ToUpper(string(s.Workload))
	switch letter {
	case "A":
		m = mix{read: pct(50), update: pct(50), dist: distZipfian}
	case "B":
		m = mix{read: pct(95), update: pct(5), dist: distZipfian}
	case "C":
		m = mix{read: pct(100), dist: distZipfian}
	case "D":
		m = mix{read: pct(95), insert: pct(5), dist: distLatest}
	case "E":
		m = mix{scan: pct(95), insert: pct(5), dist: distZipfian}
	case "F":
		m = mix{read: pct(50), rmw: pct(50), dist: distZipfian}
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
		case distZipfian, distUniform, distLatest, distPermutedZipfian:
			m.dist = *s.RequestDistribution
		default:
			return m, fmt.Errorf("ycsb: unknown request distribution %q (zipfian, uniform, latest, permutedZipfian)", *s.RequestDistribution)
		}
	}
	m.readAll = s.ReadAllFields == nil || *s.ReadAllFields
	m.writeAll = s.WriteAllFields != nil && *s.WriteAllFields
	switch s.UpdateMode {
	case "", api.YCSBUpdateMerge:
	case api.YCSBUpdateOverwrite:
		m.overwrite = true
	default:
		return m, fmt.Errorf("ycsb: unknown updateMode %q (merge, overwrite)", s.UpdateMode)
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

// ycsbOps is CoreWorkload's operation chooser (a DiscreteGenerator): the operations with a
// positive share, in YCSB's order, each taking its share of the sum, picked by one uniform draw.
type ycsbOps struct {
	n    int
	p    [5]float64
	kind [5]opKind
}

func newYCSBOps(m mix) ycsbOps {
	var o ycsbOps
	var w [5]float64
	sum := 0.0
	for _, x := range [...]struct {
		ppm int
		k   opKind
	}{{m.read, opRead}, {m.update, opUpdate}, {m.insert, opInsert}, {m.scan, opScan}, {m.rmw, opRMW}} {
		if x.ppm > 0 {
			w[o.n], o.kind[o.n] = float64(x.ppm)/mixScale, x.k
			sum += w[o.n]
			o.n++
		}
	}
	for i := range o.n {
		o.p[i] = w[i] / sum
	}
	return o
}

// pick is DiscreteGenerator.nextValue for the draw u. (Where rounding leaves u past the last
// share, YCSB throws an AssertionError; this picks the last operation.)
func (o *ycsbOps) pick(u float64) opKind {
	for i := range o.n - 1 {
		if u < o.p[i] {
			return o.kind[i]
		}
		u -= o.p[i]
	}
	return o.kind[o.n-1]
}

// insertShare is the mix's insertproportion.
func (m *mix) insertShare() float64 { return float64(m.insert) / mixScale }

// ackCounter is YCSB's AcknowledgedCounterGenerator: inserts take record numbers in turn from next
// (shared by the phases of a run), and the chooser picks only records up to last: every insert at
// or below it has been acknowledged (written).
type ackCounter struct {
	next   *atomic.Int64
	limit  atomic.Int64
	mu     sync.Mutex
	window []bool
}

// ackWindow is YCSB's limit on inserts in flight (2^20).
const ackWindow = 1 << 20

func newAckCounter(next *atomic.Int64, inserts bool) *ackCounter {
	a := &ackCounter{next: next}
	a.limit.Store(next.Load() - 1)
	if inserts {
		a.window = make([]bool, ackWindow)
	}
	return a
}

func (a *ackCounter) last() int64 { return a.limit.Load() }

func (a *ackCounter) ack(k int64) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.window[k&(ackWindow-1)] {
		return fmt.Errorf("ycsb: more than %d inserts unacknowledged", ackWindow)
	}
	a.window[k&(ackWindow-1)] = true
	l := a.limit.Load()
	for a.window[(l+1)&(ackWindow-1)] {
		a.window[(l+1)&(ackWindow-1)] = false
		l++
	}
	a.limit.Store(l)
	return nil
}

// ycsbChooser is CoreWorkload's keychooser with nextKeynum's redraw: the record of each read,
// update, scan and read-modify-write.
type ycsbChooser struct {
	dist      api.YCSBDistribution
	scrambled *keygen.ScrambledZipfian
	latest    *keygen.SkewedLatest
	records   int64 // records when the phase started: uniform's and permutedZipfian's range
	zipf      *keygen.Zipfian
	perm      *keygen.Permutation
	acked     *ackCounter
}

// next is nextKeynum: draw until the record is one whose insert has been acknowledged (zipfian's
// item count includes the inserts YCSB expects, which may not have happened yet).
func (c *ycsbChooser) next(r *keygen.SplitMix) int64 {
	for {
		var k int64
		switch c.dist {
		case distLatest:
			k = c.latest.Next(r.Float64(), c.acked.last())
		case distUniform:
			k = keygen.UniformLong(r.Int64(), 0, c.records-1)
		case distPermutedZipfian:
			k = int64(c.perm.At(c.zipf.Next(r.Float64())))
		default:
			k = c.scrambled.Next(r.Float64())
		}
		if k <= c.acked.last() {
			return k
		}
	}
}

// ycsbRun is one YCSB phase: CoreWorkload's transaction loop against an embedded engine, with the
// engine calls YCSB's RocksDB binding makes.
type ycsbRun struct {
	db      engine.DB
	m       mix
	ops     ycsbOps
	keys    *ycsbChooser
	recs    *keygen.YCSBRecords
	shape   *ycsbRecords
	limit   int64
	threads int
	// seed is the thread's ThreadLocalRandom seed (the conformance test sets YCSB's).
	seed func(t *thread) uint64
}

// ycsbPhase builds a YCSB core workload over the dataset's records. The phase is a YCSB run whose
// recordcount is the records that exist when it starts (the load's and earlier phases' inserts);
// insertCount is the next record number to insert, shared across phases.
func ycsbPhase(db engine.DB, w api.WorkloadSpec, ds Dataset, threads int, zetas map[uint64]float64, insertCount *atomic.Int64) (*phase, error) {
	y, err := newYCSBRun(db, w, ds, threads, zetas, insertCount)
	if err != nil {
		return nil, err
	}
	return y.phase(w), nil
}

func newYCSBRun(db engine.DB, w api.WorkloadSpec, ds Dataset, threads int, zetas map[uint64]float64, insertCount *atomic.Int64) (*ycsbRun, error) {
	m, err := ycsbMix(w.YCSB)
	if err != nil {
		return nil, err
	}
	if ds.YCSB == nil {
		return nil, fmt.Errorf("ycsb: the dataset holds db_bench keys; ycsb workloads need YCSB records (dataset.ycsb)")
	}
	y := &ycsbRun{db: db, m: m, ops: newYCSBOps(m), shape: ds.YCSB, limit: opsLimit(w, ds), threads: threads,
		recs: keygen.NewYCSBRecords(ds.YCSB.fieldCount, ds.YCSB.fieldLength, ds.Ratio, ds.Seed^0x7c5b),
		seed: func(t *thread) uint64 { return t.rand.Uint64() }}
	if insertCount.Load() < ds.Num {
		insertCount.Store(ds.Num)
	}
	records := insertCount.Load()
	zeta := func(n int64) float64 {
		z, ok := zetas[uint64(n)]
		if !ok {
			z = keygen.YCSBZeta(0, n, 0)
			zetas[uint64(n)] = z
		}
		return z
	}
	c := &ycsbChooser{dist: m.dist, records: records, acked: newAckCounter(insertCount, m.insert > 0)}
	switch m.dist {
	case distLatest:
		c.latest = keygen.NewSkewedLatest(records-1, zeta(max(records-1, 1)))
	case distPermutedZipfian:
		c.zipf = keygen.NewZipfianZeta(uint64(records), keygen.YCSBTheta, zeta(records))
		c.perm = keygen.NewPermutation(uint64(records), ds.Seed^0xC0FFEE)
	case distZipfian:
		// YCSB sizes the zipfian for the records plus twice the inserts it expects from
		// operationcount (its "fudge factor"), so that the hot records do not move as inserts
		// arrive; a phase bounded by time alone expects none, as YCSB with operationcount 0.
		var opcount int64
		if y.limit < 1<<62 {
			opcount = min(y.limit*int64(threads), math.MaxInt32)
		}
		expected := min(int64(float64(opcount)*m.insertShare()*2.0), math.MaxInt32)
		c.scrambled = keygen.NewScrambledZipfian(records + expected + 1)
	}
	y.keys = c
	return y, nil
}

func (y *ycsbRun) phase(w api.WorkloadSpec) *phase {
	p := &phase{name: "ycsb-" + strings.ToLower(string(w.YCSB.Workload)), threads: y.threads, duration: durationOf(w),
		kinds: []opKind{opRead, opUpdate, opInsert, opScan, opRMW}, inner: []opKind{opReadInRMW, opUpdateInRMW},
		countReads: true, engineOps: true,
		ops: []reportedOp{{"READ", []opKind{opRead, opReadInRMW}}, {"UPDATE", []opKind{opUpdate, opUpdateInRMW}},
			{"INSERT", []opKind{opInsert}}, {"SCAN", []opKind{opScan}}, {"READ-MODIFY-WRITE", []opKind{opRMW}}}}
	if y.limit < 1<<62 {
		p.expected = y.limit * int64(y.threads)
	}
	p.readWriteRatio, _ = w.YCSB.RWRatio()
	p.work = y.work
	return p
}

// work is one client thread: CoreWorkload.doTransaction, drawing from the thread's generator
// exactly what YCSB draws (the field chooser and the random field bytes included), so that one
// thread seeded like a YCSB client picks the same operations and records.
func (y *ycsbRun) work(t *thread) error {
	r := keygen.NewSplitMix(y.seed(t))
	rec := uint64(t.id) * 7919 // this thread's place in the record pool
	m, fieldCount := &y.m, y.shape.fieldCount
	// fields draws what buildValues or buildSingleValue draw: the field (-1: all of them).
	fields := func() int {
		if m.writeAll {
			r.Skip(fieldCount) // each field's RandomByteIterator draws once
			return -1
		}
		f := int(keygen.UniformLong(r.Int64(), 0, int64(fieldCount)-1))
		r.Skip(1)
		return f
	}
	for i := int64(0); i < y.limit && !t.stopped(); i++ {
		switch y.ops.pick(r.Float64()) {
		case opRead:
			k := y.keys.next(r)
			if !m.readAll {
				r.Skip(1) // the field to read; the engine reads the record either way
			}
			if _, err := y.get(t, k); err != nil {
				return err
			}
			t.done(opRead)
		case opUpdate:
			k := y.keys.next(r)
			if err := y.update(t, k, fields(), &rec); err != nil {
				return err
			}
			t.done(opUpdate)
		case opInsert:
			k := y.keys.acked.next.Add(1) - 1
			r.Skip(fieldCount)
			err := y.put(t, k, y.recs.Record(rec))
			rec++
			if err == nil {
				err = y.keys.acked.ack(k)
			}
			if err != nil {
				return err
			}
			t.done(opInsert)
		case opScan:
			k := y.keys.next(r)
			n := int(keygen.UniformLong(r.Int64(), 1, int64(m.maxScan)))
			if !m.readAll {
				r.Skip(1)
			}
			if err := y.scan(t, k, n); err != nil {
				return err
			}
			t.done(opScan)
		default:
			k := y.keys.next(r)
			if !m.readAll {
				r.Skip(1)
			}
			f := fields()
			// YCSB times the read and the update on their own (READ, UPDATE) and together.
			start := t.last
			if _, err := y.get(t, k); err != nil {
				return err
			}
			mid := t.now()
			t.record(opReadInRMW, mid, int64(mid-start))
			if err := y.update(t, k, f, &rec); err != nil {
				return err
			}
			end := t.now()
			t.record(opUpdateInRMW, end, int64(end-mid))
			t.done(opRMW)
		}
	}
	return nil
}

func (y *ycsbRun) key(t *thread, k int64) []byte {
	t.key = keygen.YCSBKey(t.key[:0], k, !y.shape.ordered, y.shape.zeroPadding)
	return t.key
}

// get is the binding's read: one engine get of the whole record.
func (y *ycsbRun) get(t *thread, k int64) (bool, error) {
	key := y.key(t, k)
	found, n, err := y.db.Get(key)
	if err != nil {
		return false, err
	}
	t.reads++
	t.eng.gets++
	if found {
		t.found++
		t.bytes += int64(len(key) + n)
	}
	return found, nil
}

func (y *ycsbRun) put(t *thread, k int64, val []byte) error {
	key := y.key(t, k)
	if err := y.db.Put(key, val); err != nil {
		return err
	}
	t.eng.puts++
	t.bytes += int64(len(key) + len(val))
	return nil
}

// update writes field f (-1: every field). merge is the RocksDB binding's: get the record, replace
// the fields, put the whole record back (nothing when the record does not exist: NOT_FOUND); the
// written record is a fresh one from the pool, as random as the replaced fields would make it.
// overwrite puts a record of the written fields alone.
func (y *ycsbRun) update(t *thread, k int64, f int, rec *uint64) error {
	val := y.recs.Record(*rec)
	switch {
	case !y.m.overwrite:
		found, err := y.get(t, k)
		if err != nil || !found {
			return err
		}
	case f >= 0:
		val = y.recs.Field(*rec, f)
	}
	*rec++
	return y.put(t, k, val)
}

// scan is the binding's: seek to the record and read up to n records from there. Each scan opens
// its iterator on the current state, as YCSB's client does, so it sees the phase's inserts (an
// iterator is a snapshot).
func (y *ycsbRun) scan(t *thread, k int64, n int) error {
	it := y.db.NewIterator()
	it.Seek(y.key(t, k))
	t.eng.seeks++
	for j := 0; j < n && it.Valid(); j++ {
		t.bytes += int64(len(it.Key()) + it.ValueSize())
		it.Next()
		t.eng.nexts++
	}
	err := it.Err()
	it.Close()
	return err
}
