package v1alpha1

import (
	"fmt"
	"regexp"
	"strings"
)

// What a sweep does to its database, for the reset default and the memory model. The CRD's CEL
// rules spell the same classification (writesRule in kvbenchmark_types.go's markers); sweep_test.go
// checks the two agree for every workload.

// readOnlyRatio is a YCSB readWriteRatio with reads only ("R:0", R > 0).
var readOnlyRatio = regexp.MustCompile(`^0*[1-9][0-9]*:0+$`)

// Writes reports whether the workload changes the database: every db_bench write and delete,
// readwhilewriting's writer, readrandomwriterandom unless readWritePercent is 100, pulse rounds
// with writes or deletes, and YCSB mixes with updates, inserts or read-modify-writes (all but
// read-only C, readPercent 100 or a readWriteRatio "R:0"; E always inserts). dbbench is not
// counted: db_bench destroys and refills the database at each start, so its iterations do not
// inherit each other's state. Pseudo-benchmarks (stats, levelstats, waitforcompaction) and reads
// do not write.
func (w WorkloadSpec) Writes() bool {
	switch w.Name {
	case WorkloadFillSeq, WorkloadFillRandom, WorkloadFillUniqueRandom, WorkloadOverwrite, WorkloadFillSync,
		WorkloadReadWhileWriting, WorkloadDeleteSeq, WorkloadDeleteRandom, WorkloadUpdateRandom:
		return true
	case WorkloadReadRandomWriteRandom:
		return w.ReadWritePercent == nil || *w.ReadWritePercent < 100
	case WorkloadPulse:
		return w.Pulse == nil || w.Pulse.Writes+w.Pulse.Deletes > 0
	case WorkloadYCSB:
		return w.YCSB == nil || !w.YCSB.readOnly()
	}
	return false
}

// RWRatio is the configured reads:writes as the Pegasus tables write it: readWriteRatio as given,
// readPercent or the letter's default share reduced (50 -> "1:1", 95 -> "19:1", 100 -> "1:0").
// False for E with an override (the rest is split between scans and inserts) or an unknown letter.
func (y *YCSBSpec) RWRatio() (string, bool) {
	letter := strings.ToUpper(string(y.Workload))
	if letter == "E" && (y.ReadPercent != nil || y.ReadWriteRatio != "") {
		return "", false
	}
	switch {
	case y.ReadWriteRatio != "":
		return y.ReadWriteRatio, true
	case y.ReadPercent != nil:
		return RatioOfPercent(int(*y.ReadPercent)), true
	}
	share, ok := map[string]int{"A": 50, "B": 95, "C": 100, "D": 95, "E": 95, "F": 50}[letter]
	return RatioOfPercent(share), ok
}

// RatioOfPercent writes a read share in percent as R:W in lowest terms: 25 -> "1:3".
func RatioOfPercent(readPercent int) string {
	r, w := readPercent, 100-readPercent
	a, b := r, w
	for b != 0 {
		a, b = b, a%b
	}
	return fmt.Sprintf("%d:%d", r/a, w/a)
}

func (y *YCSBSpec) readOnly() bool {
	switch {
	case y.Workload == "E":
		return false
	case y.ReadPercent != nil:
		return *y.ReadPercent == 100
	case y.ReadWriteRatio != "":
		return readOnlyRatio.MatchString(y.ReadWriteRatio)
	}
	return y.Workload == "C"
}

// SweepWrites reports whether any workload of the spec writes.
func SweepWrites(s *KVBenchmarkSpec) bool {
	for _, w := range s.Workloads {
		if w.Writes() {
			return true
		}
	}
	return false
}

// EffectiveReset is the reset a run uses: spec.reset when set; unset, perIteration when the sweep
// repeats (repeat > 1) and writes, so that every iteration measures the database the load left
// and not the one the previous iteration's writes made; none otherwise.
func EffectiveReset(s *KVBenchmarkSpec) ResetMode {
	switch {
	case s.Reset != "":
		return s.Reset
	case s.Repeat > 1 && SweepWrites(s):
		return ResetPerIteration
	}
	return ResetNone
}

// SharesState reports whether iterations of the sweep inherit each other's writes (reset none on a
// repeated sweep that writes): their variation then includes the drifting database, not only noise.
func SharesState(s *KVBenchmarkSpec) bool {
	return s.Repeat > 1 && SweepWrites(s) && EffectiveReset(s) == ResetNone
}
