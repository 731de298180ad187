// Package hist records operation latencies in per-thread HDR histograms and merges them, so that
// percentiles are computed over all operations, never averaged across threads.
package hist

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"

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

// The bucket layout of an hdrhistogram-go histogram of [lowest, highest] at sigFigs (its
// countsIndexFor with unitMagnitude 0, as lowest is 1): 2048 sub-buckets, the upper half of
// each power-of-two bucket beyond the first. Record computes the index inline, Go's hdrhistogram
// does it through two non-inlined calls; TestLayoutMatchesHdrHistogram checks every bucket edge.
const (
	subBucketHalfCountMagnitude = 10
	subBucketHalfCount          = 1 << subBucketHalfCountMagnitude
	subBucketMask               = 2*subBucketHalfCount - 1
)

var countsLen = len(hdrhistogram.New(lowest, highest, sigFigs).Export().Counts)

// Histogram is one thread's latency histogram. It is not safe for concurrent use.
//
// The counts are kept in hdrhistogram-go's layout and handed to an hdrhistogram.Histogram (which
// shares them, no copy) when percentiles are read, so the statistics are exactly that library's.
type Histogram struct {
	counts []int64
	total  int64
	view   *hdrhistogram.Histogram // nil when counts changed since it was made
}

// New returns an empty histogram.
func New() *Histogram { return &Histogram{counts: make([]int64, countsLen)} }

// Record adds one latency in nanoseconds; values beyond the range are clamped, not dropped, so
// that the count stays equal to the operation count.
func (h *Histogram) Record(nanos int64) {
	if nanos < lowest {
		nanos = lowest
	} else if nanos > highest {
		nanos = highest
	}
	h.counts[index(nanos)]++
	h.total++
	h.view = nil
}

// index is hdrhistogram-go's countsIndexFor for this layout.
func index(v int64) int {
	b := 64 - bits.LeadingZeros64(uint64(v)|subBucketMask) - (subBucketHalfCountMagnitude + 1)
	return (b+1)<<subBucketHalfCountMagnitude + int(v>>uint(b)) - subBucketHalfCount
}

// Count is the number of recorded values.
func (h *Histogram) Count() int64 { return h.total }

// Merge adds other's values into h.
func (h *Histogram) Merge(other *Histogram) {
	if other == nil || other.total == 0 {
		return
	}
	for i, c := range other.counts {
		h.counts[i] += c
	}
	h.total += other.total
	h.view = nil
}

// Reset empties the histogram for reuse.
func (h *Histogram) Reset() {
	clear(h.counts)
	h.total = 0
	h.view = nil
}

// Merged returns a new histogram holding all of hs.
func Merged(hs ...*Histogram) *Histogram {
	m := New()
	for _, h := range hs {
		m.Merge(h)
	}
	return m
}

// hdr returns an hdrhistogram view of the counts.
func (h *Histogram) hdr() *hdrhistogram.Histogram {
	if h.view == nil {
		h.view = hdrhistogram.Import(&hdrhistogram.Snapshot{LowestTrackableValue: lowest,
			HighestTrackableValue: highest, SignificantFigures: sigFigs, Counts: h.counts})
	}
	return h.view
}

// Quantile returns the value at q percent, in nanoseconds.
func (h *Histogram) Quantile(q float64) int64 { return h.hdr().ValueAtQuantile(q) }

// Percentiles summarises the histogram in microseconds; nil when it is empty.
func (h *Histogram) Percentiles() *api.Percentiles {
	if h.total == 0 {
		return nil
	}
	v := h.hdr()
	us := func(ns int64) float64 { return float64(ns) / 1e3 }
	return &api.Percentiles{
		Mean:  v.Mean() / 1e3,
		P50:   us(v.ValueAtQuantile(50)),
		P75:   us(v.ValueAtQuantile(75)),
		P99:   us(v.ValueAtQuantile(99)),
		P999:  us(v.ValueAtQuantile(99.9)),
		P9999: us(v.ValueAtQuantile(99.99)),
		Max:   us(v.Max()),
	}
}

// StdDevMicros is the standard deviation in microseconds.
func (h *Histogram) StdDevMicros() float64 { return h.hdr().StdDev() / 1e3 }

// MinMicros is the smallest value in microseconds.
func (h *Histogram) MinMicros() float64 { return float64(h.hdr().Min()) / 1e3 }

// Encode is the histogram in HdrHistogram's portable encoding (V2 compressed, base64), which
// HdrHistogram's Java and other implementations read: the result's latencyHistogram, so that the
// histograms of two runs (or of the Go and Java runners) can be merged exactly later.
func (h *Histogram) Encode() (string, error) {
	b, err := h.hdr().Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	return string(b), err
}

// maxInflated bounds what a histogram of this layout inflates to: V2's 40-byte header and at most 9
// bytes (a ZigZag LEB128-64b9B count) per bucket. The encoding is bounded by the result limits, but
// zlib multiplies it by up to ~1000, and hdrhistogram-go inflates without a bound.
var maxInflated = 40 + 9*countsLen

// Decode reads Encode's format, from either runner. The histogram must have this package's layout
// (1 ns to one hour, 3 significant digits), so that its buckets are this package's buckets and a
// merge is exact; anything else is an error. The layout is checked, and the inflated size bounded,
// before hdrhistogram-go decodes it: its Decode inflates all there is and allocates the buckets of
// whatever range the header claims.
func Decode(s string) (h *Histogram, err error) {
	// hdrhistogram-go slices its input without checking lengths (a short or truncated encoding
	// panics); results are tenant input, so that is an error here.
	defer func() {
		if r := recover(); r != nil {
			h, err = nil, fmt.Errorf("latency histogram: malformed encoding (%v)", r)
		}
	}()
	if err := checkEncoding(s); err != nil {
		return nil, fmt.Errorf("latency histogram: %v", err)
	}
	d, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("latency histogram: %v", err)
	}
	counts := d.Export().Counts
	if len(counts) != countsLen {
		return nil, fmt.Errorf("latency histogram: %d buckets, want %d", len(counts), countsLen)
	}
	h = &Histogram{counts: counts}
	for _, c := range counts {
		if c < 0 {
			return nil, fmt.Errorf("latency histogram: negative count")
		}
		h.total += c
	}
	return h, nil
}

// checkEncoding reads the V2 compressed encoding's headers as hdrhistogram-go does: the 8-byte
// compressed header, then at most maxInflated bytes of the zlib stream, whose 40-byte header must
// give this package's range and digits (so the bucket count is countsLen).
func checkEncoding(s string) error {
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return err
	}
	if len(raw) < 8 {
		return fmt.Errorf("%d bytes, shorter than the 8-byte header", len(raw))
	}
	if cookie := int32(binary.BigEndian.Uint32(raw[0:4])) &^ 0xf0; cookie != hdrhistogram.V2CompressedEncodingCookieBase {
		return fmt.Errorf("cookie %#x is not the V2 compressed encoding's %#x", cookie, hdrhistogram.V2CompressedEncodingCookieBase)
	}
	n := binary.BigEndian.Uint32(raw[4:8])
	if uint64(n) > uint64(len(raw)-8) {
		return fmt.Errorf("header says %d compressed bytes, %d follow", n, len(raw)-8)
	}
	z, err := zlib.NewReader(bytes.NewReader(raw[8 : 8+n]))
	if err != nil {
		return err
	}
	defer z.Close()
	inflated, err := io.ReadAll(io.LimitReader(z, int64(maxInflated)+1))
	if err != nil {
		return err
	}
	if len(inflated) > maxInflated {
		return fmt.Errorf("inflates to more than %d bytes, the most a histogram of %d buckets takes", maxInflated, countsLen)
	}
	if len(inflated) < 40 {
		return fmt.Errorf("inflates to %d bytes, shorter than the 40-byte header", len(inflated))
	}
	digits := int32(binary.BigEndian.Uint32(inflated[12:16]))
	lo, hi := int64(binary.BigEndian.Uint64(inflated[16:24])), int64(binary.BigEndian.Uint64(inflated[24:32]))
	if lo != lowest || hi != highest || digits != sigFigs {
		return fmt.Errorf("range [%d, %d] at %d digits, want [%d, %d] at %d", lo, hi, digits, int64(lowest), int64(highest), sigFigs)
	}
	return nil
}
