package keygen

import (
	"bytes"
	"math"
	"testing"
)

// Expected bytes follow db_bench 7.8.3's GenerateKeyFromInt.
func TestKeysMatchDBBench(t *testing.T) {
	cases := []struct {
		k    Keys
		v    uint64
		want []byte
	}{
		{Keys{KeySize: 16, Num: 100}, 1, []byte("\x00\x00\x00\x00\x00\x00\x00\x0100000000")},
		{Keys{KeySize: 16, Num: 100}, 0x0102030405060708, []byte("\x01\x02\x03\x04\x05\x06\x07\x0800000000")},
		{Keys{KeySize: 8, Num: 100}, 258, []byte("\x00\x00\x00\x00\x00\x00\x01\x02")},
		// key_size < 8 keeps the low bytes.
		{Keys{KeySize: 4, Num: 100}, 0x0102030405, []byte("\x02\x03\x04\x05")},
		// Prefix groups: num 100 / 10 keys per prefix = 10 prefixes; prefix = 23 % 10 = 3.
		{Keys{KeySize: 20, PrefixSize: 12, KeysPerPrefix: 10, Num: 100}, 23,
			[]byte("\x00\x00\x00\x00\x00\x00\x00\x030000\x00\x00\x00\x00\x00\x00\x00\x17")},
		{Keys{KeySize: 10, PrefixSize: 4, KeysPerPrefix: 10, Num: 100}, 23,
			[]byte("\x00\x00\x00\x03\x00\x00\x00\x00\x00\x17")},
	}
	for _, c := range cases {
		got := c.k.Put(c.k.Make(), c.v)
		if !bytes.Equal(got, c.want) {
			t.Errorf("%+v key(%d) = %q, want %q", c.k, c.v, got, c.want)
		}
	}
}

func TestSortedOrderWithPrefixes(t *testing.T) {
	k := Keys{KeySize: 20, PrefixSize: 12, KeysPerPrefix: 7, Num: 100}
	order := k.SortedOrder()
	seen := map[uint64]bool{}
	var prev []byte
	for i := int64(0); i < k.Num; i++ {
		v := order(i)
		if v >= uint64(k.Num) || seen[v] {
			t.Fatalf("order(%d) = %d: out of range or repeated", i, v)
		}
		seen[v] = true
		key := k.Put(k.Make(), v)
		if prev != nil && bytes.Compare(prev, key) >= 0 {
			t.Fatalf("keys not ascending at %d", i)
		}
		prev = key
	}
}

func TestPermutationIsBijection(t *testing.T) {
	for _, n := range []uint64{1, 2, 3, 17, 1000, 4097} {
		p := NewPermutation(n, 42)
		seen := make([]bool, n)
		for i := uint64(0); i < n; i++ {
			v := p.At(i)
			if v >= n || seen[v] {
				t.Fatalf("n=%d: At(%d)=%d repeated or out of range", n, i, v)
			}
			seen[v] = true
		}
	}
}

func TestValuesSizes(t *testing.T) {
	v := NewValues(1, 0.5, 30, 101)
	lo, hi := 1000, 0
	for i := 0; i < 10000; i++ {
		n := len(v.Next())
		lo, hi = min(lo, n), max(hi, n)
	}
	if lo != 30 || hi != 101 {
		t.Fatalf("value sizes span [%d, %d], want [30, 101]", lo, hi)
	}
}

// The zipfian's rank frequencies must follow 1/rank^theta: check the head ranks against the
// exact probabilities within sampling error.
func TestZipfianShape(t *testing.T) {
	const n, draws = 1000, 2_000_000
	z := NewZipfian(n, YCSBTheta)
	r := NewRand(7)
	counts := make([]int, n)
	for i := 0; i < draws; i++ {
		counts[z.Next(r.Float64())]++
	}
	zeta := Zeta(n, YCSBTheta)
	for rank := 0; rank < 10; rank++ {
		p := 1 / math.Pow(float64(rank+1), YCSBTheta) / zeta
		want := p * draws
		sd := math.Sqrt(want * (1 - p))
		// Ranks 0 and 1 are exact in Gray's algorithm; later ranks come from its continuous
		// approximation (the same one YCSB uses), which is off by up to ~20% per rank.
		tol := 5*sd + 0.2*want
		if rank < 2 {
			tol = 5 * sd
		}
		if math.Abs(float64(counts[rank])-want) > tol {
			t.Errorf("rank %d: %d draws, want %.0f ± %.0f", rank, counts[rank], want, tol)
		}
	}
	// Decades of ranks carry the mass the exact distribution gives them (the approximation's
	// per-rank errors cancel out over a decade).
	for _, d := range [][2]int{{0, 10}, {10, 100}, {100, 1000}} {
		got, want := 0, 0.0
		for i := d[0]; i < d[1]; i++ {
			got += counts[i]
			want += 1 / math.Pow(float64(i+1), YCSBTheta) / zeta
		}
		if share := float64(got) / draws; math.Abs(share-want) > 0.03 {
			t.Errorf("ranks [%d,%d): share %.3f, want %.3f", d[0], d[1], share, want)
		}
	}
	if counts[n-1] == 0 && counts[n-2] == 0 {
		t.Errorf("tail never drawn")
	}
}
