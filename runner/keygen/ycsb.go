package keygen

import (
	"math"
	"strconv"
	"sync"
	"sync/atomic"
)

// YCSB core 0.17.0's key and request generators, written from their algorithms (site.ycsb.Utils,
// generator.ZipfianGenerator, ScrambledZipfianGenerator, SkewedLatestGenerator and
// workloads.CoreWorkload). Every draw takes the uniform double YCSB would take from
// ThreadLocalRandom, so that a runner thread seeded like a YCSB client thread draws the same keys
// (runner/bench's conformance test checks this against YCSB's jar).

// SplitMix draws what java.util.concurrent.ThreadLocalRandom draws on JDK 17 (SplitMix64): each
// draw advances the state by the golden-ratio gamma plus twice the thread's id (1 here, the thread
// that drives YCSB in the conformance test) and mixes it; nextDouble is java.util.Random's, built
// from two 32-bit draws (26 and 27 bits).
type SplitMix struct{ s uint64 }

const splitMixGamma = 0x9e3779b97f4a7c15 + 1<<1

// NewSplitMix returns a generator whose state is seed, as a ThreadLocalRandom whose thread seed is seed.
func NewSplitMix(seed uint64) *SplitMix { return &SplitMix{s: seed} }

func (r *SplitMix) step() uint64 {
	r.s += splitMixGamma
	return r.s
}

// Int64 is nextLong.
func (r *SplitMix) Int64() int64 {
	z := r.step()
	z = (z ^ z>>33) * 0xff51afd7ed558ccd
	z = (z ^ z>>33) * 0xc4ceb9fe1a85ec53
	return int64(z ^ z>>33)
}

// uint32 is nextInt.
func (r *SplitMix) uint32() uint64 {
	z := r.step()
	z = (z ^ z>>33) * 0xff51afd7ed558ccd
	return (z ^ z>>33) * 0xc4ceb9fe1a85ec53 >> 32
}

// Float64 is nextDouble: uniform in [0, 1).
func (r *SplitMix) Float64() float64 {
	hi := r.uint32() >> 6
	return float64(hi<<27+r.uint32()>>5) * 0x1.0p-53
}

// Skip advances past n draws (nextInt or nextLong) whose values are not needed: YCSB's random field bytes.
func (r *SplitMix) Skip(n int) { r.s += uint64(n) * splitMixGamma }

// FNVHash64 is YCSB's Utils.fnvhash64: FNV-1a over the eight bytes of v, low byte first, and the
// result's absolute value as a Java long (math.MinInt64 stays negative, as in Java).
func FNVHash64(v int64) int64 {
	h := uint64(0xcbf29ce484222325)
	for range 8 {
		h ^= uint64(v & 0xff)
		h *= 1099511628211
		v >>= 8
	}
	if int64(h) < 0 {
		return -int64(h)
	}
	return int64(h)
}

// YCSBKeyPrefix starts every YCSB key.
const YCSBKeyPrefix = "user"

// YCSBKey appends CoreWorkload.buildKeyName(keynum) to dst: "user", then zeros up to zeroPadding
// digits, then the decimal of fnvhash64(keynum) (insertorder=hashed) or of keynum (ordered).
func YCSBKey(dst []byte, keynum int64, hashed bool, zeroPadding int) []byte {
	if hashed {
		keynum = FNVHash64(keynum)
	}
	return AppendYCSBNumber(dst, keynum, zeroPadding)
}

// AppendYCSBNumber appends the key for the number a key is built from (a hash, or a keynum).
func AppendYCSBNumber(dst []byte, n int64, zeroPadding int) []byte {
	var digits [20]byte
	d := strconv.AppendInt(digits[:0], n, 10)
	dst = append(dst, YCSBKeyPrefix...)
	for range zeroPadding - len(d) {
		dst = append(dst, '0')
	}
	return append(dst, d...)
}

// YCSBKeyNumber is the number a YCSB key is built from (the hash or the keynum): what YCSBKey wrote
// after the prefix and the zeros. ok is false for keys YCSBKey does not make.
func YCSBKeyNumber(key []byte) (n int64, ok bool) {
	if len(key) <= len(YCSBKeyPrefix) || string(key[:len(YCSBKeyPrefix)]) != YCSBKeyPrefix {
		return 0, false
	}
	n, err := strconv.ParseInt(string(key[len(YCSBKeyPrefix):]), 10, 64)
	return n, err == nil
}

var pow10 = func() (p [20]uint64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

func decimalDigits(v uint64) int {
	n := 1
	for n < len(pow10) && v >= pow10[n] {
		n++
	}
	return n
}

// CompareYCSBKeys orders the numbers a and b (YCSBKeyNumber's) as their keys sort, byte-wise, with
// zeroPadding: for bulk loads, which must add keys in order, without formatting them. A number is
// its decimal digits, left-padded with zeros to zeroPadding; of two digit strings of different
// lengths the shorter sorts first when it is a prefix of the longer.
func CompareYCSBKeys(a, b int64, zeroPadding int) int {
	switch {
	case a < 0 || b < 0: // only fnvhash64's math.MinInt64: "-" sorts before the digits
		if (a < 0) != (b < 0) {
			if a < 0 {
				return -1
			}
			return 1
		}
		return cmpInt(a, b)
	}
	ua, ub := uint64(a), uint64(b)
	la, lb := max(decimalDigits(ua), zeroPadding), max(decimalDigits(ub), zeroPadding)
	switch {
	case la == lb:
		return cmpInt(a, b)
	case la < lb:
		if c := cmpInt(a, int64(ub/pow10[lb-la])); c != 0 {
			return c
		}
		return -1
	default:
		if c := cmpInt(int64(ua/pow10[la-lb]), b); c != 0 {
			return c
		}
		return 1
	}
}

// YCSBKeyGroups is the number of key groups of YCSBKeyGroup.
const YCSBKeyGroups = 1111

// YCSBKeyGroup puts the number n's key into one of YCSBKeyGroups groups by the first three characters
// after "user"; the groups are in key order (every key of a group sorts before every key of a later
// one), so a bulk load can sort a dataset a few groups at a time.
func YCSBKeyGroup(n int64, zeroPadding int) int {
	if n < 0 {
		return 0 // "-": before the digits
	}
	u := uint64(n)
	l := max(decimalDigits(u), zeroPadding)
	// The first min(l, 3) characters, ranked among the strings of up to three digits in
	// byte order (a prefix before its extensions): each character adds digit x (strings below it
	// at that depth) + 1.
	sub := [3]int{111, 11, 1} // strings of up to 2, 1, 0 more digits below a character, itself included
	m := min(l, 3)
	first := u / pow10[l-m]
	rank := 0
	for i := range m {
		c := int(first / pow10[m-1-i] % 10)
		rank += c*sub[i] + 1
	}
	return rank
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// YCSB's zipfian constants (ZipfianGenerator.ZIPFIAN_CONSTANT and ScrambledZipfianGenerator's
// ITEM_COUNT and ZETAN = zeta(ITEM_COUNT + 1, 0.99), precomputed by YCSB).
const (
	ycsbScrambledItems = 10_000_000_000
	ycsbScrambledZetan = 26.46902820178302
)

// zipfState is a ZipfianGenerator's zeta over count items and the eta that goes with it.
type zipfState struct {
	count      int64
	zetan, eta float64
	half       float64 // 1 + 0.5^theta
}

// YCSBZipfian is YCSB's ZipfianGenerator over [0, items): Gray et al.'s algorithm. Asked for a
// larger item count than it has zeta for (SkewedLatest, as inserts arrive), it extends zeta by the
// new terms, as YCSB does, and keeps computing eta from the item count it was built with (a YCSB
// quirk kept for equality). It is safe for concurrent use.
type YCSBZipfian struct {
	items             int64
	theta, zeta2theta float64
	mu                sync.Mutex
	st                atomic.Pointer[zipfState]
}

// NewYCSBZipfian is new ZipfianGenerator(items) with theta 0.99; zetan is zeta(items, 0.99) when the
// caller has it (YCSBZeta), else 0 to compute it here.
func NewYCSBZipfian(items int64, zetan float64) *YCSBZipfian {
	theta := YCSBTheta
	if zetan == 0 {
		zetan = YCSBZeta(0, items, 0)
	}
	z := &YCSBZipfian{items: items, theta: theta, zeta2theta: YCSBZeta(0, 2, 0)}
	z.st.Store(z.state(items, zetan))
	return z
}

func (z *YCSBZipfian) state(count int64, zetan float64) *zipfState {
	return &zipfState{count: count, zetan: zetan,
		eta:  (1 - powCR(2.0/float64(z.items), 1-z.theta)) / (1 - z.zeta2theta/zetan),
		half: 1.0 + powCR(0.5, z.theta)}
}

// YCSBZeta is ZipfianGenerator.zetastatic(st, n, 0.99, initial): initial plus 1/(i+1)^0.99 for i in
// [st, n), summed in YCSB's order (the float sum depends on it). O(n-st); callers cache zeta(n).
func YCSBZeta(st, n int64, initial float64) float64 {
	theta := YCSBTheta
	sum := initial
	for i := st; i < n; i++ {
		sum += 1 / math.Pow(float64(i+1), theta)
	}
	return sum
}

// Next is nextLong(itemcount) for the uniform draw u: a rank in [0, itemcount), 0 the most popular.
func (z *YCSBZipfian) Next(u float64, itemcount int64) int64 {
	s := z.st.Load()
	if itemcount > s.count {
		z.mu.Lock()
		if s = z.st.Load(); itemcount > s.count {
			s = z.state(itemcount, YCSBZeta(s.count, itemcount, s.zetan))
			z.st.Store(s)
		}
		z.mu.Unlock()
	}
	return zipfRank(s, u, itemcount)
}

func zipfRank(s *zipfState, u float64, itemcount int64) int64 {
	uz := u * s.zetan
	if uz < 1.0 {
		return 0
	}
	if uz < s.half {
		return 1
	}
	return int64(float64(itemcount) * powAlpha(s.eta*u-s.eta+1))
}

// ycsbAlphaInt and ycsbAlphaFrac split YCSB's alpha = 1/(1-0.99) = 99.99999999999991 into 100 and
// the rest.
var ycsbAlphaInt, ycsbAlphaFrac = func() (float64, float64) {
	theta := YCSBTheta
	a := 1.0 / (1.0 - theta)
	return math.Round(a), a - math.Round(a)
}()

// powAlpha is x^alpha for x in (0, 1], correctly rounded. The rank is the item count times it,
// truncated, so a last-bit difference moves a rank now and then (Go's math.Pow is a few ulps off
// here, YCSB's JVM's Math.pow is not): x^100 exactly in double-double arithmetic, times
// x^(alpha-100) = exp((alpha-100) ln x) = 1 + (alpha-100) ln x (the exponent is below 3e-12, so the
// next term is 24 orders of magnitude below the result).
func powAlpha(x float64) float64 {
	ph, pl := 1.0, 0.0 // x^k so far
	bh, bl := x, 0.0   // x^(2^i)
	for k := int(ycsbAlphaInt); k > 0; k >>= 1 {
		if k&1 == 1 {
			ph, pl = ddMul(ph, pl, bh, bl)
		}
		if k > 1 {
			bh, bl = ddMul(bh, bl, bh, bl)
		}
	}
	t := ycsbAlphaFrac * math.Log(x)
	return ph + (pl + ph*t)
}

// ScrambledZipfian is YCSB's ScrambledZipfianGenerator over [0, itemcount): a zipfian rank over
// 10^10+1 items with YCSB's precomputed zeta, folded onto the items by fnvhash64(rank) % itemcount.
// The fold is not a bijection: popular ranks stay popular, and the long tail spreads evenly over
// every item. Immutable, so shared by all threads.
type ScrambledZipfian struct {
	itemcount int64
	st        zipfState
}

// NewScrambledZipfian is new ScrambledZipfianGenerator(0, itemcount-1).
func NewScrambledZipfian(itemcount int64) *ScrambledZipfian {
	z := &YCSBZipfian{items: ycsbScrambledItems + 1, theta: YCSBTheta, zeta2theta: YCSBZeta(0, 2, 0)}
	return &ScrambledZipfian{itemcount: itemcount, st: *z.state(ycsbScrambledItems+1, ycsbScrambledZetan)}
}

// Next returns the item for the uniform draw u.
func (z *ScrambledZipfian) Next(u float64) int64 {
	return FNVHash64(zipfRank(&z.st, u, z.st.count)) % z.itemcount
}

// Items is the item count the draws are folded onto.
func (z *ScrambledZipfian) Items() int64 { return z.itemcount }

// SkewedLatest is YCSB's SkewedLatestGenerator: the newest acknowledged item minus a zipfian rank,
// so the newest items are the most popular.
type SkewedLatest struct{ z *YCSBZipfian }

// NewSkewedLatest is new SkewedLatestGenerator(basis) for a basis whose last value is last (YCSB
// builds its zipfian over that many items, so that the first item is never drawn at first).
// zetan is zeta(last, 0.99) if known, else 0.
func NewSkewedLatest(last int64, zetan float64) *SkewedLatest {
	return &SkewedLatest{z: NewYCSBZipfian(max(last, 1), zetan)}
}

// Next is nextValue for the uniform draw u when the newest acknowledged item is last.
func (l *SkewedLatest) Next(u float64, last int64) int64 {
	return last - l.z.Next(u, last)
}

// UniformLong is YCSB's UniformLongGenerator over [lb, ub] for the draw x of nextLong:
// |x| % (ub-lb+1) + lb, with Java's remainder and Math.abs (math.MinInt64 stays negative).
func UniformLong(x, lb, ub int64) int64 {
	if x < 0 {
		x = -x
	}
	return x%(ub-lb+1) + lb
}

// FillYCSBBytes fills dst as YCSB's RandomByteIterator makes a field's bytes: printable characters,
// six from each 32-bit draw, in the ranges it gives each position.
func FillYCSBBytes(dst []byte, r *Rand) {
	for i := 0; i < len(dst); i += 6 {
		b := uint32(r.Uint64())
		six := [6]byte{byte(b&31) + ' ', byte(b>>5&63) + ' ', byte(b>>10&95) + ' ', byte(b>>15&31) + ' ',
			byte(b>>20&63) + ' ', byte(b>>25&95) + ' '}
		copy(dst[i:], six[:])
	}
}

// YCSBRecords is a read-only pool of about 1 MiB (at least two records) of serialized YCSB records with random fields,
// handed out in turn as db_bench hands out values from its buffer, so that writing a record costs
// no copy. A record is laid out as YCSB's RocksDB binding serializes it: per field a 4-byte
// big-endian name length, the name ("field0", ...), a 4-byte big-endian value length and the value.
type YCSBRecords struct {
	data    []byte
	n       int
	recLen  int
	seg     []int // field f's serialized segment is record[seg[f]:seg[f+1]]
	nFields int
}

// NewYCSBRecords builds the pool. Field bytes compress to about ratio of their size as db_bench's
// values do, or with ratio 0 are YCSB's RandomByteIterator characters (which block compressors
// barely shrink).
func NewYCSBRecords(fieldCount, fieldLength int, ratio float64, seed uint64) *YCSBRecords {
	r := &YCSBRecords{nFields: fieldCount, seg: make([]int, fieldCount+1)}
	for f := range fieldCount {
		r.seg[f+1] = r.seg[f] + 8 + len("field"+strconv.Itoa(f)) + fieldLength
	}
	r.recLen = r.seg[fieldCount]
	r.n = max(2, (1<<20)/r.recLen)
	r.data = make([]byte, r.n*r.recLen)
	rnd := NewRand(seed)
	var vals *Values
	if ratio > 0 {
		vals = NewValues(seed, ratio, fieldLength, fieldLength)
	}
	for i := range r.n {
		rec := r.data[i*r.recLen : (i+1)*r.recLen]
		for f := range fieldCount {
			s := rec[r.seg[f]:r.seg[f+1]]
			name := "field" + strconv.Itoa(f)
			putUint32(s, len(name))
			copy(s[4:], name)
			putUint32(s[4+len(name):], fieldLength)
			v := s[8+len(name):]
			if vals != nil {
				copy(v, vals.Next())
			} else {
				FillYCSBBytes(v, rnd)
			}
		}
	}
	return r
}

func putUint32(b []byte, v int) {
	b[0], b[1], b[2], b[3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
}

// Len is the length of a whole record.
func (r *YCSBRecords) Len() int { return r.recLen }

// Record returns the i-th record (i counts on; the pool wraps).
func (r *YCSBRecords) Record(i uint64) []byte {
	j := int(i % uint64(r.n))
	return r.data[j*r.recLen : (j+1)*r.recLen]
}

// Field returns field f of the i-th record as a record of that one field (what a binding that
// writes only the updated fields stores).
func (r *YCSBRecords) Field(i uint64, f int) []byte {
	rec := r.Record(i)
	return rec[r.seg[f]:r.seg[f+1]]
}
