package hist

import (
	"testing"

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
