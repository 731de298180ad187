// Package bench runs db_bench-style workloads, pulse and YCSB against an engine and measures them.
// Run executes a whole RunnerConfig; the CLI is a thin layer over it.
package bench

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/runner/keygen"
)

// Defaults are db_bench's where it has one.
const (
	DefaultKeySize   = 16
	DefaultValueSize = 100
	DefaultNum       = 1000000
	defaultSeed      = 301 // db_bench's historical default seed
	// maxKeys guards against absurd sizes (e.g. a typo'd dataset size) before any work is done.
	maxKeys = int64(1) << 40
)

// Dataset is a DatasetSpec with every default applied.
type Dataset struct {
	Num           int64
	KeySize       int
	ValueMin      int
	ValueMax      int
	Ratio         float64
	PrefixSize    int
	KeysPerPrefix int64
	Seed          uint64
	LoadMode      api.LoadMode
	KeyOrder      api.KeyOrder
	// YCSB is the record layout of a dataset of YCSB records (nil: db_bench's keys and values).
	// KeySize is then api.YCSBKeyBytes (the longest key) and ValueMin = ValueMax the record's length.
	YCSB *ycsbRecords
}

// ycsbRecords is CoreWorkload's record layout: fieldcount, fieldlength, insertorder, zeropadding.
type ycsbRecords struct {
	fieldCount, fieldLength int
	ordered                 bool
	zeroPadding             int
}

func resolveYCSBRecords(s api.DatasetSpec) (*ycsbRecords, error) {
	n, l := s.YCSBShape()
	y := &ycsbRecords{fieldCount: int(n), fieldLength: int(l), zeroPadding: 1}
	if z := s.YCSB.ZeroPadding; z != nil {
		y.zeroPadding = int(*z)
	}
	switch s.YCSB.InsertOrder {
	case "", api.YCSBInsertHashed:
	case api.YCSBInsertOrdered:
		y.ordered = true
	default:
		return nil, fmt.Errorf("dataset.ycsb: unknown insertOrder %q (hashed, ordered)", s.YCSB.InsertOrder)
	}
	switch {
	case n < 1 || n > 1000:
		return nil, fmt.Errorf("dataset.ycsb: fieldCount %d out of range [1, 1000]", n)
	case l < 1 || n*l > 1<<20:
		return nil, fmt.Errorf("dataset.ycsb: fieldLength %d must be at least 1, and fieldCount x fieldLength at most 1Mi", l)
	case y.zeroPadding < 1 || y.zeroPadding > 19:
		return nil, fmt.Errorf("dataset.ycsb: zeroPadding %d out of range [1, 19]", y.zeroPadding)
	case s.KeySize != 0 && s.KeySize != DefaultKeySize || s.ValueSize != 0 && s.ValueSize != DefaultValueSize ||
		s.ValueSizeRange != nil || s.PrefixSize != 0 || s.KeysPerPrefix != 0:
		return nil, fmt.Errorf("dataset.ycsb: YCSB records are sized by fieldCount and fieldLength (keys are user + hash); keySize, valueSize, valueSizeRange, prefixSize and keysPerPrefix do not apply")
	}
	return y, nil
}

// Keys is the key formatter of the dataset.
func (d Dataset) Keys() keygen.Keys {
	return keygen.Keys{KeySize: d.KeySize, PrefixSize: d.PrefixSize, KeysPerPrefix: d.KeysPerPrefix, Num: d.Num}
}

// ValueAvg is the mean value size.
func (d Dataset) ValueAvg() float64 { return float64(d.ValueMin+d.ValueMax) / 2 }

// Info is the dataset as reported in results.
func (d Dataset) Info() api.DatasetInfo {
	return api.DatasetInfo{Num: d.Num, KeySize: int32(d.KeySize), ValueSizeAvg: d.ValueAvg(),
		Bytes: int64(float64(d.Num) * (float64(d.KeySize) + d.ValueAvg()))}
}

// ResolveDataset applies defaults and checks the spec; sizes of 0 or absurd ones are errors.
func ResolveDataset(s api.DatasetSpec) (Dataset, error) {
	d := Dataset{KeySize: int(s.KeySize), ValueMin: int(s.ValueSize), PrefixSize: int(s.PrefixSize),
		KeysPerPrefix: s.KeysPerPrefix, Seed: uint64(s.Seed), LoadMode: s.LoadMode, KeyOrder: s.KeyOrder}
	if d.KeySize == 0 {
		d.KeySize = DefaultKeySize
	}
	if d.KeySize < 1 || d.KeySize > 1024 {
		return d, fmt.Errorf("key size %d out of range [1, 1024]", d.KeySize)
	}
	if s.YCSB != nil {
		y, err := resolveYCSBRecords(s)
		if err != nil {
			return d, err
		}
		n, l := s.YCSBShape()
		d.YCSB, d.KeySize = y, api.YCSBKeyBytes
		d.ValueMin = int(api.YCSBRecordBytes(n, l))
		d.ValueMax = d.ValueMin
	} else if s.ValueSizeRange != nil {
		d.ValueMin, d.ValueMax = int(s.ValueSizeRange.Min), int(s.ValueSizeRange.Max)
		if d.ValueMin < 0 || d.ValueMax < d.ValueMin || d.ValueMax > 64<<20 {
			return d, fmt.Errorf("value size range [%d, %d] invalid (0 <= min <= max <= 64Mi)", d.ValueMin, d.ValueMax)
		}
	} else {
		if s.ValueSize == 0 {
			d.ValueMin = DefaultValueSize
		}
		if d.ValueMin < 0 || d.ValueMin > 64<<20 {
			return d, fmt.Errorf("value size %d out of range [0, 64Mi]", d.ValueMin)
		}
		d.ValueMax = d.ValueMin
	}
	switch {
	case s.Size != nil && s.Num != nil:
		return d, fmt.Errorf("dataset: set size or num, not both")
	case s.Size != nil:
		b := s.Size.Value()
		if b <= 0 {
			return d, fmt.Errorf("dataset size %s must be positive", s.Size.String())
		}
		d.Num = int64(math.Round(float64(b) / (float64(d.KeySize) + d.ValueAvg())))
		if d.Num < 1 {
			return d, fmt.Errorf("dataset size %s is smaller than one key-value pair", s.Size.String())
		}
	case s.Num != nil:
		d.Num = *s.Num
	default:
		d.Num = DefaultNum
	}
	if d.Num < 1 {
		return d, fmt.Errorf("num %d must be at least 1", d.Num)
	}
	if d.Num > maxKeys {
		return d, fmt.Errorf("num %d is absurd (more than %d keys)", d.Num, maxKeys)
	}
	d.Ratio = 0.5
	if d.YCSB != nil {
		d.Ratio = 0 // YCSB's own field bytes
	}
	if s.CompressionRatioPercent > 0 {
		if s.CompressionRatioPercent > 100 {
			return d, fmt.Errorf("compression ratio %d%% out of range (1..100)", s.CompressionRatioPercent)
		}
		d.Ratio = float64(s.CompressionRatioPercent) / 100
	}
	if d.PrefixSize < 0 || d.PrefixSize > d.KeySize || d.KeysPerPrefix < 0 {
		return d, fmt.Errorf("prefix size %d / keys per prefix %d invalid for key size %d", d.PrefixSize, d.KeysPerPrefix, d.KeySize)
	}
	if d.Seed == 0 {
		d.Seed = defaultSeed
	}
	if d.LoadMode == "" {
		d.LoadMode = api.LoadBulk
	}
	switch d.LoadMode {
	case api.LoadBulk, api.LoadFillSeq, api.LoadFillRandom, api.LoadExisting, api.LoadNone:
	default:
		return d, fmt.Errorf("unknown load mode %q (bulk, fillseq, fillrandom, existing, none)", d.LoadMode)
	}
	return d, nil
}

// validWorkloads are the names Run accepts.
var validWorkloads = map[api.WorkloadName]bool{
	api.WorkloadFillSeq: true, api.WorkloadFillRandom: true, api.WorkloadFillUniqueRandom: true,
	api.WorkloadOverwrite: true, api.WorkloadFillSync: true, api.WorkloadReadSeq: true,
	api.WorkloadReadReverse: true, api.WorkloadReadRandom: true, api.WorkloadReadMissing: true,
	api.WorkloadReadWhileWriting: true, api.WorkloadReadRandomWriteRandom: true,
	api.WorkloadSeekRandom: true, api.WorkloadDeleteSeq: true, api.WorkloadDeleteRandom: true,
	api.WorkloadUpdateRandom: true, api.WorkloadPulse: true, api.WorkloadYCSB: true, api.WorkloadDBBench: true,
	api.WorkloadStats: true, api.WorkloadLevelStats: true, api.WorkloadWaitForCompaction: true,
}

// Validate checks a whole RunnerConfig before anything is opened, so bad input fails fast with
// one clear message.
func Validate(cfg *api.RunnerConfig) error {
	if _, err := ResolveDataset(cfg.Dataset); err != nil {
		return err
	}
	if cfg.DBPath == "" {
		return fmt.Errorf("no database path (dbPath / --db)")
	}
	switch cfg.CacheMode {
	case "", api.CacheWarm, api.CacheCold, api.CacheDirect:
	default:
		return fmt.Errorf("unknown cache mode %q (warm, cold, direct)", cfg.CacheMode)
	}
	if cfg.Repeat < 0 || cfg.Repeat > 1000 {
		return fmt.Errorf("repeat %d out of range [0, 1000]", cfg.Repeat)
	}
	for i, t := range cfg.Threads {
		if t < 1 || t > 1024 {
			return fmt.Errorf("thread count %d out of range [1, 1024]", t)
		}
		if slices.Contains(cfg.Threads[:i], t) {
			return fmt.Errorf("thread count %d is listed twice (each point would run twice)", t)
		}
	}
	if cfg.Settle != nil && cfg.Settle.Timeout.Duration <= 0 {
		return fmt.Errorf("settle timeout %s must be positive", cfg.Settle.Timeout.Duration)
	}
	switch cfg.Reset {
	case "", api.ResetNone, api.ResetPerPoint, api.ResetPerIteration:
	default:
		return fmt.Errorf("unknown reset mode %q (none, perPoint, perIteration)", cfg.Reset)
	}
	if len(cfg.Workloads) == 0 {
		return fmt.Errorf("no workloads (--benchmarks)")
	}
	for i, w := range cfg.Workloads {
		if !validWorkloads[w.Name] {
			return fmt.Errorf("unknown workload %q", w.Name)
		}
		for j, t := range w.Threads {
			if t < 1 || t > 1024 {
				return fmt.Errorf("workload %s: thread count %d out of range [1, 1024]", w.Name, t)
			}
			if slices.Contains(w.Threads[:j], t) {
				return fmt.Errorf("workload %s: thread count %d is listed twice (the phase would run twice)", w.Name, t)
			}
		}
		if w.Num != nil && (*w.Num < 1 || *w.Num > maxKeys) {
			return fmt.Errorf("workload %s: num %d out of range [1, %d]", w.Name, *w.Num, maxKeys)
		}
		if w.Duration != nil && w.Duration.Duration < 0 {
			return fmt.Errorf("workload %s: negative duration", w.Name)
		}
		if w.ReadWritePercent != nil && (*w.ReadWritePercent < 0 || *w.ReadWritePercent > 100) {
			return fmt.Errorf("workload %s: readwritepercent %d out of range [0, 100]", w.Name, *w.ReadWritePercent)
		}
		if w.SeekNexts != nil && *w.SeekNexts < 0 {
			return fmt.Errorf("workload %s: negative seek_nexts", w.Name)
		}
		if w.WritesPerSecond != nil && *w.WritesPerSecond < 0 {
			return fmt.Errorf("workload %s: negative write rate", w.Name)
		}
		if err := validateWarmup(w); err != nil {
			return err
		}
		switch w.Name {
		case api.WorkloadPulse:
			if w.Pulse == nil {
				return fmt.Errorf("workload %d (pulse) needs a pulse spec", i)
			}
			p := w.Pulse
			if p.Rounds < 1 || p.Reads < 0 || p.Writes < 0 || p.Deletes < 0 || p.Interval.Duration < 0 {
				return fmt.Errorf("pulse: rounds must be >= 1 and reads/writes/deletes/interval >= 0")
			}
		case api.WorkloadYCSB:
			if w.YCSB == nil {
				return fmt.Errorf("workload %d (ycsb) needs a ycsb spec", i)
			}
			if _, err := ycsbMix(w.YCSB); err != nil {
				return err
			}
		case api.WorkloadDBBench:
			if len(w.DBBenchArgs) == 0 {
				return fmt.Errorf("workload dbbench needs dbBenchArgs")
			}
			for _, a := range w.DBBenchArgs {
				if !strings.HasPrefix(a, "-") {
					return fmt.Errorf("dbBenchArgs: %q is not a --flag (db_bench ignores it); in YAML flow lists quote values with commas: [\"--benchmarks=fillseq,readrandom\"]", a)
				}
			}
		}
	}
	return checkYCSBDataset(cfg)
}

// checkYCSBDataset: ycsb workloads need YCSB records, which nothing but them can use.
func checkYCSBDataset(cfg *api.RunnerConfig) error {
	for _, w := range cfg.Workloads {
		switch {
		case w.Name == api.WorkloadYCSB && cfg.Dataset.YCSB == nil:
			return fmt.Errorf("ycsb workloads need YCSB's records: dataset.ycsb (user + hash keys, fieldCount x fieldLength fields; {} for YCSB's defaults)")
		case w.Name != api.WorkloadYCSB && !isStatsWorkload(w.Name) && cfg.Dataset.YCSB != nil:
			return fmt.Errorf("workload %s needs db_bench's keys; the dataset holds YCSB records (dataset.ycsb), which only ycsb workloads use (the dataset's loadMode, --load, loads them)", w.Name)
		}
	}
	if o := cfg.Engine.Options; cfg.Dataset.YCSB != nil && o.PlainTable != nil && *o.PlainTable {
		return fmt.Errorf("plainTable needs fixed-length keys; YCSB's keys vary in length")
	}
	return nil
}

func durationOf(w api.WorkloadSpec) time.Duration {
	if w.Duration == nil {
		return 0
	}
	return w.Duration.Duration
}

// validateWarmup checks a workload's warm-up: exactly one bound, and a workload it can warm.
func validateWarmup(w api.WorkloadSpec) error {
	wu := w.Warmup
	switch {
	case wu == nil:
		return nil
	case w.Name == api.WorkloadPulse || w.Name == api.WorkloadDBBench:
		return fmt.Errorf("workload %s: warmup does not apply (pulse rounds are the measurement; db_bench runs its own benchmarks)", w.Name)
	case (wu.Ops == nil) == (wu.Duration == nil):
		return fmt.Errorf("workload %s: warmup needs exactly one of ops and duration", w.Name)
	case wu.Ops != nil && (*wu.Ops < 1 || *wu.Ops > maxKeys):
		return fmt.Errorf("workload %s: warmup ops %d out of range [1, %d]", w.Name, *wu.Ops, maxKeys)
	case wu.Duration != nil && wu.Duration.Duration <= 0:
		return fmt.Errorf("workload %s: warmup duration must be positive", w.Name)
	}
	return nil
}
