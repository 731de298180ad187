package keygen

import "math"

// Correctly rounded pow for YCSB's generator constants. Go's math.Pow can be an ulp off where the
// JVM's Math.pow is not (math.Pow(2e-10, 0.01), in ScrambledZipfianGenerator's eta, is one), and
// an ulp in eta moves a rank now and then, so these are computed in double-double arithmetic
// (about 32 significant digits) and rounded once. Construction-time only: a few hundred flops.

// ln 2 as a double-double.
const (
	ln2Hi = 6.93147180559945286227e-01
	ln2Lo = 2.31904681384629955842e-17
)

// twoSum and ddMul are error-free transformations on double-doubles (hi + lo).
func twoSum(a, b float64) (float64, float64) {
	s := a + b
	v := s - a
	return s, (a - (s - v)) + (b - v)
}

func ddAdd(ah, al, bh, bl float64) (float64, float64) {
	s, e := twoSum(ah, bh)
	e += al + bl
	return twoSum(s, e)
}

// ddMul multiplies double-double numbers.
func ddMul(ah, al, bh, bl float64) (float64, float64) {
	p := ah * bh
	e := math.FMA(ah, bh, -p) + (ah*bl + al*bh)
	return twoSum(p, e)
}

// ddExp is e^(h+l): h+l = k ln2 + r, e^r by its Taylor series at r/1024 squared ten times.
func ddExp(h, l float64) (float64, float64) {
	k := math.Round(h / math.Ln2)
	rh, rl := ddAdd(h, l, -k*ln2Hi, math.FMA(-k, ln2Hi, k*ln2Hi)-k*ln2Lo)
	rh, rl = rh/1024, rl/1024
	sh, sl := 1.0, 0.0 // sum
	th, tl := 1.0, 0.0 // term
	for i := 1; i <= 14; i++ {
		th, tl = ddMul(th, tl, rh, rl)
		th, tl = th/float64(i), tl/float64(i)
		sh, sl = ddAdd(sh, sl, th, tl)
	}
	for range 10 {
		sh, sl = ddMul(sh, sl, sh, sl)
	}
	return math.Ldexp(sh, int(k)), math.Ldexp(sl, int(k))
}

// ddLog is ln x (x > 0) as a double-double: math.Log and one Newton step, y + x e^-y - 1.
func ddLog(x float64) (float64, float64) {
	y := math.Log(x)
	eh, el := ddExp(-y, 0)
	th, tl := ddMul(eh, el, x, 0)
	th, tl = ddAdd(th, tl, -1, 0)
	return ddAdd(y, 0, th, tl)
}

// powCR is x^y for x > 0, correctly rounded (but for results within 10^-30 of halfway).
func powCR(x, y float64) float64 {
	lh, ll := ddLog(x)
	ph, pl := ddMul(lh, ll, y, 0)
	h, l := ddExp(ph, pl)
	return h + l
}
