// Package hist records operation latencies in per-thread HDR histograms and merges them, so that
// percentiles are computed over all operations, never averaged across threads.
package hist

import (
	"github.com/HdrHistogram/hdrhistogram-go"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// Latencies are recorded in nanoseconds (sub-microsecond reads are common in memory) from 1 ns
// to one hour with 3 significant digits.
const (
	lowest  = 1
	highest = 3600 * 1e9
	sigFigs = 3
)

// Histogram is one thread's latency histogram. It is not safe for concurrent use.
type Histogram struct{ h *hdrhistogram.Histogram }

// New returns an empty histogram.
func New() *Histogram { return &Histogram{h: hdrhistogram.New(lowest, highest, sigFigs)} }

// Record adds one latency in nanoseconds; values beyond the range are clamped, not dropped, so
// that the count stays equal to the operation count.
func (h *Histogram) Record(nanos int64) {
	if nanos < lowest {
		nanos = lowest
	} else if nanos > highest {
		nanos = highest
	}
	_ = h.h.RecordValue(nanos)
}

// Count is the number of recorded values.
func (h *Histogram) Count() int64 { return h.h.TotalCount() }

// Merge adds other's values into h.
func (h *Histogram) Merge(other *Histogram) {
	if other != nil {
		h.h.Merge(other.h)
	}
}

// Reset empties the histogram for reuse.
func (h *Histogram) Reset() { h.h.Reset() }

// Merged returns a new histogram holding all of hs.
func Merged(hs ...*Histogram) *Histogram {
	m := New()
	for _, h := range hs {
		m.Merge(h)
	}
	return m
}

// Quantile returns the value at q percent, in nanoseconds.
func (h *Histogram) Quantile(q float64) int64 { return h.h.ValueAtQuantile(q) }

// Percentiles summarises the histogram in microseconds; nil when it is empty.
func (h *Histogram) Percentiles() *api.Percentiles {
	if h.h.TotalCount() == 0 {
		return nil
	}
	us := func(ns int64) float64 { return float64(ns) / 1e3 }
	return &api.Percentiles{
		Mean:  h.h.Mean() / 1e3,
		P50:   us(h.h.ValueAtQuantile(50)),
		P75:   us(h.h.ValueAtQuantile(75)),
		P99:   us(h.h.ValueAtQuantile(99)),
		P999:  us(h.h.ValueAtQuantile(99.9)),
		P9999: us(h.h.ValueAtQuantile(99.99)),
		Max:   us(h.h.Max()),
	}
}

// StdDevMicros is the standard deviation in microseconds.
func (h *Histogram) StdDevMicros() float64 { return h.h.StdDev() / 1e3 }

// MinMicros is the smallest value in microseconds.
func (h *Histogram) MinMicros() float64 { return float64(h.h.Min()) / 1e3 }
