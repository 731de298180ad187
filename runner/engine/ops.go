package engine

import (
	"os"
	"runtime"
	"strings"
	"time"
	"unsafe"
)

// MaxOps is the most operations one Ops run holds.
const MaxOps = 32

// Ops is a run of up to MaxOps operations of one kind that a cgo engine does in a single call:
// one cgo crossing for the run instead of one per operation, with each operation still timed on
// its own (the engine reads the monotonic clock after every operation). The caller fills Keys
// (and Vals for puts), the engine fills the results. An Ops is used by one goroutine.
type Ops struct {
	// Keys holds N keys of KeyLen bytes each, back to back.
	Keys   []byte
	KeyLen int
	N      int
	// Vals[i] is the value of key i, for puts.
	Vals [MaxOps][]byte

	// Lat[i] is operation i's latency in nanoseconds: from the end of operation i-1 (the start
	// of the call for i = 0) to its own end.
	Lat [MaxOps]int64
	// Done is the number of operations completed: N, or the index of the one that failed. Each
	// call sets Done, Found and Bytes afresh.
	Done int
	// Found counts the keys found (reads) or exact seek hits (seeks) among the Done operations.
	Found int
	// Bytes: reads, key+value bytes of the keys found; seeks, the key+value bytes passed over.
	Bytes int64

	// voff and vlen are the values as offsets from one base pointer, for the C engines.
	voff, vlen [MaxOps]int64
	vcopy      []byte
}

// NewOps returns an empty run for keys of keyLen bytes.
func NewOps(keyLen int) *Ops { return &Ops{Keys: make([]byte, MaxOps*keyLen), KeyLen: keyLen} }

// Reset starts a run of n (≤ MaxOps) operations and clears the results.
func (o *Ops) Reset(n int) {
	o.N = min(n, MaxOps)
	o.Done, o.Found, o.Bytes = 0, 0, 0
}

// Key returns key i's slot in Keys, to be written in place.
func (o *Ops) Key(i int) []byte { return o.Keys[i*o.KeyLen : (i+1)*o.KeyLen : (i+1)*o.KeyLen] }

// ValueOffsets returns the N values as a base pointer and offsets and lengths from it, which C
// code may use: the values are checked to lie in the backing array of the lowest one (as those of
// keygen.Values do), so that the pointer passed to C covers them all under the cgo pointer rules;
// otherwise they are copied into one buffer. Empty values are offset 0, length 0.
func (o *Ops) ValueOffsets() (base unsafe.Pointer, off, n *[MaxOps]int64) {
	var lo []byte
	for _, v := range o.Vals[:o.N] {
		if len(v) > 0 && (lo == nil || uintptr(unsafe.Pointer(unsafe.SliceData(v))) < uintptr(unsafe.Pointer(unsafe.SliceData(lo)))) {
			lo = v
		}
	}
	if lo == nil { // all empty
		return unsafe.Pointer(&zero), &o.voff, &o.vlen
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(lo)))
	end := start + uintptr(cap(lo))
	ok := true
	for i, v := range o.Vals[:o.N] {
		o.voff[i], o.vlen[i] = 0, int64(len(v))
		if len(v) == 0 {
			continue
		}
		p := uintptr(unsafe.Pointer(unsafe.SliceData(v)))
		if p+uintptr(len(v)) > end { // p ≥ start by the choice of lo
			ok = false
			break
		}
		o.voff[i] = int64(p - start)
	}
	if ok {
		return unsafe.Pointer(unsafe.SliceData(lo)), &o.voff, &o.vlen
	}
	o.vcopy = o.vcopy[:0]
	for i, v := range o.Vals[:o.N] {
		o.voff[i], o.vlen[i] = int64(len(o.vcopy)), int64(len(v))
		o.vcopy = append(o.vcopy, v...)
	}
	return unsafe.Pointer(unsafe.SliceData(o.vcopy)), &o.voff, &o.vlen
}

var zero byte

// OpsReader is implemented by databases that run reads and seeks natively in runs.
type OpsReader interface {
	// GetOps does o.N Gets, counting found keys and their key+value bytes.
	GetOps(o *Ops) error
	// SeekNextsOps does o.N SeekNexts operations (see SeekNexter).
	SeekNextsOps(o *Ops, nexts int) error
}

// OpsWriter is implemented by Writers that run puts and deletes natively in runs, each still a
// write batch of one entry committed on its own.
type OpsWriter interface {
	PutOps(o *Ops) error
	DeleteOps(o *Ops) error
}

// GetOps runs o as Gets on db: natively if db is an OpsReader, else GetEach.
func GetOps(db DB, o *Ops) error {
	if r, ok := db.(OpsReader); ok {
		return r.GetOps(o)
	}
	return GetEach(db, o)
}

// GetEach runs o as one Get call per operation.
func GetEach(db DB, o *Ops) error {
	return o.each(func(i int, k []byte) error {
		found, n, err := db.Get(k)
		if found {
			o.Found++
			o.Bytes += int64(len(k) + n)
		}
		return err
	})
}

// SeekNextsOps runs o as seekrandom operations on db: natively if db is an OpsReader, else
// SeekNextsEach.
func SeekNextsOps(db DB, o *Ops, nexts int) error {
	if r, ok := db.(OpsReader); ok {
		return r.SeekNextsOps(o, nexts)
	}
	return SeekNextsEach(db, o, nexts)
}

// SeekNextsEach runs o as one SeekNexts call per operation.
func SeekNextsEach(db DB, o *Ops, nexts int) error {
	return o.each(func(i int, k []byte) error {
		found, n, err := SeekNexts(db, k, nexts)
		if found {
			o.Found++
		}
		o.Bytes += int64(n)
		return err
	})
}

// PutOps runs o as single-entry batch puts through w: natively if w is an OpsWriter.
func PutOps(w Writer, o *Ops) error {
	if ow, ok := w.(OpsWriter); ok {
		return ow.PutOps(o)
	}
	return o.each(func(i int, k []byte) error { return w.Put(k, o.Vals[i]) })
}

// DeleteOps runs o as single-entry batch deletes through w: natively if w is an OpsWriter.
func DeleteOps(w Writer, o *Ops) error {
	if ow, ok := w.(OpsWriter); ok {
		return ow.DeleteOps(o)
	}
	return o.each(func(i int, k []byte) error { return w.Delete(k) })
}

// OpsStepper is implemented by iterators that step through the database natively in runs.
type OpsStepper interface {
	// StepOps does up to o.N readseq steps from the current position (see StepOps).
	StepOps(o *Ops, reverse bool) error
}

// StepOps runs o as db_bench ReadSequential (ReadReverse) steps on it: while it is valid, take
// the key and value sizes, then Next (Prev); each step is one operation. Done is fewer than N
// when the iterator ran out; Bytes sums the key+value sizes. Natively if it is an OpsStepper.
func StepOps(it Iterator, o *Ops, reverse bool) error {
	if s, ok := it.(OpsStepper); ok {
		return s.StepOps(o, reverse)
	}
	return StepEach(it, o, reverse)
}

// StepEach runs o as one call per iterator method and step.
func StepEach(it Iterator, o *Ops, reverse bool) error {
	o.Done, o.Found, o.Bytes = 0, 0, 0
	start := time.Now()
	prev := time.Duration(0)
	for i := 0; i < o.N && it.Valid(); i++ {
		o.Bytes += int64(len(it.Key()) + it.ValueSize())
		if reverse {
			it.Prev()
		} else {
			it.Next()
		}
		now := time.Since(start)
		o.Lat[i] = int64(now - prev)
		prev = now
		o.Done++
	}
	return it.Err()
}

// each is the generic run: one call per operation, timed with the monotonic clock.
func (o *Ops) each(op func(i int, key []byte) error) error {
	o.Done, o.Found, o.Bytes = 0, 0, 0
	start := time.Now()
	prev := time.Duration(0)
	for i := 0; i < o.N; i++ {
		err := op(i, o.Key(i))
		if err != nil {
			return err
		}
		now := time.Since(start)
		o.Lat[i] = int64(now - prev)
		prev = now
		o.Done++
	}
	return nil
}

// TSCClock reports whether the C engines may time operations with the CPU's time-stamp counter:
// on amd64, when the kernel itself keeps time with it (current clocksource "tsc", which Linux
// selects only for an invariant TSC synchronised across CPUs). See runclock.h in the engines.
var TSCClock = func() bool {
	if runtime.GOARCH != "amd64" {
		return false
	}
	b, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	return err == nil && strings.TrimSpace(string(b)) == "tsc"
}()
