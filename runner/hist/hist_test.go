package hist

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"runtime"
	"strings"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/runner/keygen"
)

// Merging per-thread histograms must equal recording everything in one histogram: percentiles
// of the union, not an average of per-thread percentiles.
func TestMergeEqualsSingleHistogram(t *testing.T) {
	r := keygen.NewRand(1)
	all := New()
	parts := []*Histogram{New(), New(), New()}
	for i := 0; i < 300000; i++ {
		// Thread 2 is much slower, as a stalled thread would be.
		p := i % 3
		v := int64(500 + r.Uint64n(1000))
		if p == 2 {
			v = int64(100000 + r.Uint64n(100000))
		}
		parts[p].Record(v)
		all.Record(v)
	}
	m := Merged(parts...)
	if m.Count() != all.Count() {
		t.Fatalf("count %d, want %d", m.Count(), all.Count())
	}
	for _, q := range []float64{50, 75, 99, 99.9, 100} {
		if a, b := m.Quantile(q), all.Quantile(q); a != b {
			t.Errorf("p%v: merged %d, single %d", q, a, b)
		}
	}
	// Averaging per-thread medians would give ~ (1000+1000+150000)/3; the true median is ~1300.
	if p50 := m.Percentiles().P50; p50 > 2 {
		t.Errorf("merged p50 = %.3fus, want about 1.3us", p50)
	}
	if m.Percentiles().P99 < 100 {
		t.Errorf("merged p99 = %.3fus, want the slow thread's >= 100us", m.Percentiles().P99)
	}
}

func TestRecordClampsInsteadOfDropping(t *testing.T) {
	h := New()
	h.Record(0)
	h.Record(-5)
	h.Record(highest * 10)
	if h.Count() != 3 {
		t.Fatalf("count %d, want 3", h.Count())
	}
}

// Record's inline bucket index is hdrhistogram-go's: the same values land in the same counts,
// and the statistics read back are the library's own.
func TestLayoutMatchesHdrHistogram(t *testing.T) {
	ref := hdrhistogram.New(lowest, highest, sigFigs)
	h := New()
	record := func(v int64) {
		h.Record(v)
		if err := ref.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	for v := int64(1); v <= 5000; v++ {
		record(v)
	}
	for s := 1; s < 42; s++ { // every power-of-two bucket edge up to the highest value
		for _, v := range []int64{1<<s - 1, 1 << s, 1<<s + 1} {
			if v <= highest {
				record(v)
			}
		}
	}
	record(highest)
	r := keygen.NewRand(2)
	for range 100000 {
		record(1 + int64(r.Uint64n(uint64(1)<<(1+r.Uint64n(40)))))
	}
	got, want := h.hdr().Export().Counts, ref.Export().Counts
	if len(got) != len(want) {
		t.Fatalf("%d counts, hdrhistogram has %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("count %d: %d, hdrhistogram %d", i, got[i], want[i])
		}
	}
	if h.Count() != ref.TotalCount() || h.Percentiles().Mean != ref.Mean()/1e3 || h.Quantile(99.9) != ref.ValueAtQuantile(99.9) ||
		h.StdDevMicros() != ref.StdDev()/1e3 || h.MinMicros() != float64(ref.Min())/1e3 {
		t.Errorf("statistics differ from hdrhistogram's")
	}
	// Reading does not freeze the histogram: later records and merges are seen.
	h.Record(7)
	h.Merge(Merged(h))
	if h.Count() != 2*(ref.TotalCount()+1) || h.Quantile(100) != ref.Max() {
		t.Errorf("after more records: count %d, max %d", h.Count(), h.Quantile(100))
	}
	h.Reset()
	if h.Count() != 0 || h.Percentiles() != nil {
		t.Errorf("Reset left %d values", h.Count())
	}
}

func BenchmarkRecord(b *testing.B) {
	h := New()
	r := keygen.NewRand(3)
	vs := make([]int64, 1024)
	for i := range vs {
		vs[i] = 1000 + int64(r.Uint64n(20000))
	}
	for i := 0; b.Loop(); i++ {
		h.Record(vs[i&1023])
	}
}

// Encode and Decode round-trip every bucket, and Decode refuses a histogram of another layout,
// which could not merge exactly.
func TestEncodeDecode(t *testing.T) {
	h := New()
	for _, v := range []int64{1, 999, 1000, 1001, 123456, 7e9, 3600e9} {
		for range v%7 + 1 {
			h.Record(v)
		}
	}
	enc, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	d, err := Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	if d.Count() != h.Count() || *d.Percentiles() != *h.Percentiles() {
		t.Fatalf("decoded %d values %+v, want %d %+v", d.Count(), d.Percentiles(), h.Count(), h.Percentiles())
	}
	for i := range h.counts {
		if d.counts[i] != h.counts[i] {
			t.Fatalf("bucket %d: %d, want %d", i, d.counts[i], h.counts[i])
		}
	}
	other, err := hdrhistogram.New(1, 1e6, 2).Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Decode(string(other)); err == nil || !strings.Contains(err.Error(), "want [1, 3600000000000] at 3") {
		t.Errorf("another layout: %v", err)
	}
	// Garbage, and encodings too short for their header (hdrhistogram-go alone panics on these).
	for _, bad := range []string{"not base64!", "AAAA", enc[:16]} {
		if _, err := Decode(bad); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
}

// A small encoding that inflates to a lot (a zlib bomb: 64 MiB of zeros in ~90 KB of base64, inside the
// result limits' 256 KiB) and one whose header claims a range of millions of buckets are refused with
// a clear error before the bytes or the buckets are allocated (hdrhistogram-go alone inflates all of it
// and allocates whatever range the header says).
func TestDecodeRefusesBombs(t *testing.T) {
	encode := func(lo, hi int64, digits int32, payload int) string {
		var inflated bytes.Buffer
		hdr := make([]byte, 40)
		binary.BigEndian.PutUint32(hdr[0:], uint32(hdrhistogram.V2EncodingCookieBase|0x10))
		binary.BigEndian.PutUint32(hdr[4:], uint32(payload))
		binary.BigEndian.PutUint32(hdr[12:], uint32(digits))
		binary.BigEndian.PutUint64(hdr[16:], uint64(lo))
		binary.BigEndian.PutUint64(hdr[24:], uint64(hi))
		inflated.Write(hdr)
		inflated.Write(make([]byte, payload)) // zigzag 0: a count of 0 per byte
		var z bytes.Buffer
		w, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
		w.Write(inflated.Bytes())
		w.Close()
		raw := binary.BigEndian.AppendUint32(nil, uint32(hdrhistogram.V2CompressedEncodingCookieBase|0x10))
		raw = binary.BigEndian.AppendUint32(raw, uint32(z.Len()))
		return base64.StdEncoding.EncodeToString(append(raw, z.Bytes()...))
	}
	for _, c := range []struct {
		name, enc, want string
	}{
		{"zlib bomb", encode(lowest, highest, sigFigs, 64<<20), "latency histogram: inflates to more than"},
		{"a range of millions of buckets", encode(1, 1<<62, 5, 16), "latency histogram: range [1, 4611686018427387904] at 5 digits, want [1, 3600000000000] at 3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if len(c.enc) > api.DefaultResultLimits.Histogram {
				t.Fatalf("the encoding is %d bytes, over the result limit %d", len(c.enc), api.DefaultResultLimits.Histogram)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Decode(c.enc)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("err %v, want %q", err, c.want)
			}
			// The inflated bytes read are bounded by maxInflated (~0.3 MB); the bomb's 64 MiB or the claimed
			// range's 47 MB of buckets would be far over this.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
				t.Errorf("decoding allocated %d MB", alloc>>20)
			}
		})
	}
}
