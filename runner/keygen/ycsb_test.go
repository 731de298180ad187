package keygen

import (
	"bytes"
	"encoding/binary"
	"math"
	"strconv"
	"testing"
)

// Reference values from JDK 17 and YCSB core 0.17.0 (hack/ycsb-ref.sh; mode=rand seed=42, mode=fnv).
// runner/bench's conformance test checks thousands of them against the live JVM; these keep the
// package's own tests meaningful without Java.
func TestSplitMixIsJDK17ThreadLocalRandom(t *testing.T) {
	r := NewSplitMix(42)
	for i, want := range [][2]uint64{{0x3fec1f64c985397e, 0x94f2ffb546c571c8}, {0x3fe6e6b8d51f8525, 0xda373154e1bbaef0},
		{0x3fe9ee58c050df0f, 0x4a7287d93ac3193e}} {
		d, l := r.Float64(), r.Int64()
		if math.Float64bits(d) != want[0] || uint64(l) != want[1] {
			t.Errorf("draw %d: nextDouble %x nextLong %x, JDK 17 %x %x", i, math.Float64bits(d), uint64(l), want[0], want[1])
		}
	}
	// Skip(n) is n draws.
	a, b := NewSplitMix(7), NewSplitMix(7)
	a.Int64()
	a.Int64()
	b.Skip(2)
	if a.Int64() != b.Int64() {
		t.Error("Skip(2) is not two draws")
	}
}

func TestFNVHash64IsYCSBs(t *testing.T) {
	for v, want := range []int64{0x573807cdd7e5c63b, 0x7632ced6e2d5105c, 0x194279bbc20731f9} {
		if got := FNVHash64(int64(v)); got != want {
			t.Errorf("FNVHash64(%d) = %x, YCSB's Utils.fnvhash64 %x", v, got, want)
		}
	}
}

func TestYCSBKeys(t *testing.T) {
	for _, c := range []struct {
		keynum int64
		hashed bool
		pad    int
		want   string
	}{
		{0, true, 1, "user" + strconv.FormatInt(0x573807cdd7e5c63b, 10)},
		{42, false, 1, "user42"},
		{42, false, 5, "user00042"},
		{123456, false, 3, "user123456"},
	} {
		k := YCSBKey(nil, c.keynum, c.hashed, c.pad)
		if string(k) != c.want {
			t.Errorf("YCSBKey(%d, hashed %v, pad %d) = %q, want %q", c.keynum, c.hashed, c.pad, k, c.want)
		}
		n, ok := YCSBKeyNumber(k)
		want := c.keynum
		if c.hashed {
			want = FNVHash64(c.keynum)
		}
		if !ok || n != want {
			t.Errorf("YCSBKeyNumber(%q) = %d, %v", k, n, ok)
		}
	}
	for _, bad := range []string{"", "user", "usr12", "user12x"} {
		if _, ok := YCSBKeyNumber([]byte(bad)); ok {
			t.Errorf("YCSBKeyNumber(%q) ok", bad)
		}
	}
}

// CompareYCSBKeys and YCSBKeyGroup order numbers as their keys sort byte-wise.
func TestYCSBKeyOrder(t *testing.T) {
	r := NewRand(3)
	nums := []int64{0, 1, 9, 10, 12, 99, 100, 120, 123, 1000, 1229, 999999, math.MaxInt64, math.MinInt64}
	for range 2000 {
		nums = append(nums, int64(r.Uint64()>>(1+r.Uint64n(63))))
	}
	sign := func(x int) int { return min(max(x, -1), 1) }
	for _, pad := range []int{1, 3, 12, 19} {
		for i, a := range nums {
			for _, b := range nums[max(0, i-40) : i+1] {
				ka, kb := AppendYCSBNumber(nil, a, pad), AppendYCSBNumber(nil, b, pad)
				want := bytes.Compare(ka, kb)
				if got := CompareYCSBKeys(a, b, pad); sign(got) != want {
					t.Fatalf("pad %d: CompareYCSBKeys(%d, %d) = %d, keys %q %q compare %d", pad, a, b, got, ka, kb, want)
				}
				ga, gb := YCSBKeyGroup(a, pad), YCSBKeyGroup(b, pad)
				if ga < 0 || ga >= YCSBKeyGroups || ga < gb && want > 0 || ga > gb && want < 0 {
					t.Fatalf("pad %d: groups %d (%q) and %d (%q) out of key order", pad, ga, ka, gb, kb)
				}
			}
		}
	}
}

func TestYCSBRecords(t *testing.T) {
	for _, c := range []struct {
		fields, length int
		ratio          float64
	}{{10, 100, 0}, {1, 320, 0}, {12, 7, 0.5}, {1, 1 << 20, 0}} {
		recs := NewYCSBRecords(c.fields, c.length, c.ratio, 9)
		for i := range uint64(3) {
			rec := recs.Record(i)
			if len(rec) != recs.Len() {
				t.Fatalf("%+v: record %d is %d bytes, Len %d", c, i, len(rec), recs.Len())
			}
			off := 0
			for f := range c.fields {
				name := "field" + strconv.Itoa(f)
				start := off
				if n := int(binary.BigEndian.Uint32(rec[off:])); n != len(name) || string(rec[off+4:off+4+n]) != name {
					t.Fatalf("%+v: field %d name %q", c, f, rec[off+4:off+4+n])
				}
				off += 4 + len(name)
				if n := int(binary.BigEndian.Uint32(rec[off:])); n != c.length {
					t.Fatalf("%+v: field %d length %d", c, f, n)
				}
				off += 4
				for _, b := range rec[off : off+c.length] {
					if c.ratio == 0 && (b < ' ' || b > ' '+95) {
						t.Fatalf("%+v: byte %d is not one of RandomByteIterator's", c, b)
					}
				}
				off += c.length
				if !bytes.Equal(recs.Field(i, f), rec[start:off]) {
					t.Fatalf("%+v: Field(%d, %d) is not the field's segment", c, i, f)
				}
			}
			if off != len(rec) {
				t.Fatalf("%+v: %d bytes left over", c, len(rec)-off)
			}
		}
		if c.fields == 10 && c.length == 100 && recs.Len() != 1140 {
			t.Errorf("YCSB's default record is %d bytes, want 1140", recs.Len())
		}
		if bytes.Equal(recs.Record(0), recs.Record(1)) {
			t.Errorf("%+v: records 0 and 1 are equal", c)
		}
	}
}

// The JVM's Math.pow is correctly rounded where math.Pow is not (values from JDK 17's Math.pow,
// which agree with a 50-digit computation).
func TestPowCorrectlyRounded(t *testing.T) {
	theta := YCSBTheta
	for _, c := range []struct {
		x, y float64
		want uint64
	}{
		{2.0 / 10000000001, 1 - theta, 0x3fe99865ca1d730d}, // math.Pow: ...30c
		{7, theta, 0x401b75dd91caa8cd},                     // math.Pow: ...8ce
		{11, theta, 0x40257a8e8d719959},                    // math.Pow: ...95a
		{0.5, theta, 0x3fe01c7d6c404f0c},
	} {
		if got := powCR(c.x, c.y); math.Float64bits(got) != c.want {
			t.Errorf("powCR(%v, %v) = %x, want %x", c.x, c.y, math.Float64bits(got), c.want)
		}
	}
	// powAlpha is powCR for the exponent 1/(1-0.99), over the bases the zipfians use.
	r := NewSplitMix(5)
	alpha := 1 / (1 - theta)
	for i := range 20000 {
		x := 1 - 0.25*r.Float64()
		if a, b := powAlpha(x), powCR(x, alpha); a != b {
			t.Fatalf("draw %d: powAlpha(%v) = %x, powCR %x", i, x, math.Float64bits(a), math.Float64bits(b))
		}
	}
}

func TestScrambledZipfianRange(t *testing.T) {
	for _, n := range []int64{1, 2, 1000, 1_000_001} {
		z := NewScrambledZipfian(n)
		r := NewSplitMix(uint64(n))
		for range 10000 {
			if k := z.Next(r.Float64()); k < 0 || k >= n {
				t.Fatalf("items %d: drew %d", n, k)
			}
		}
	}
	// Rank 0 is item fnvhash64(0) % n and draws 1/zeta(10^10+1) of the requests, 3.78%.
	const n, draws = 1_000_001, 200_000
	z := NewScrambledZipfian(n)
	r := NewSplitMix(11)
	hits := 0
	for range draws {
		if z.Next(r.Float64()) == FNVHash64(0)%n {
			hits++
		}
	}
	p := 1 / ycsbScrambledZetan
	if sd := math.Sqrt(p * (1 - p) / draws); math.Abs(float64(hits)/draws-p) > 5*sd {
		t.Errorf("rank 0's item drew %.4f of requests, want %.4f", float64(hits)/draws, p)
	}
}

// The key chooser is on every YCSB operation's path: YCSB's scrambled zipfian (a draw, the
// correctly rounded pow, fnvhash64 and the fold) and its key against the runner's earlier chooser
// (a zipfian over the records through a Feistel permutation, big-endian keys), side by side:
//
//	go test ./runner/keygen -run '^$' -bench Chooser -count 5
func BenchmarkChooser(b *testing.B) {
	const n = 1_000_000
	b.Run("scrambled zipfian, YCSB key", func(b *testing.B) {
		z, r := NewScrambledZipfian(n+1), NewSplitMix(1)
		key := make([]byte, 0, 24)
		b.ResetTimer()
		for range b.N {
			key = YCSBKey(key[:0], z.Next(r.Float64()), true, 1)
		}
	})
	b.Run("permuted zipfian, db_bench key", func(b *testing.B) {
		z, p, r := NewZipfian(n, YCSBTheta), NewPermutation(n, 7), NewRand(1)
		k := Keys{KeySize: 16, Num: n}
		key := k.Make()
		b.ResetTimer()
		for range b.N {
			k.Put(key, p.At(z.Next(r.Float64())))
		}
	})
}
