package keygen

import "math"

// Zipfian draws integers in [0, n) with P(i) proportional to 1/(i+1)^theta, using the
// algorithm of Gray et al. ("Quickly generating billion-record synthetic databases") that YCSB's
// ZipfianGenerator uses, over exactly n items. Item 0 is the most popular. It is the YCSB
// distribution permutedZipfian's rank; YCSB's own generators are in ycsb.go.
type Zipfian struct {
	n                        uint64
	theta, alpha, zetan, eta float64
	half                     float64 // 1 + 0.5^theta
}

// YCSBTheta is YCSB's default skew.
const YCSBTheta = 0.99

// Zeta is sum_{i=1..n} 1/i^theta. It is O(n); callers compute it once per phase.
func Zeta(n uint64, theta float64) float64 {
	s := 0.0
	for i := uint64(1); i <= n; i++ {
		s += 1 / math.Pow(float64(i), theta)
	}
	return s
}

// NewZipfian prepares a generator over [0, n).
func NewZipfian(n uint64, theta float64) *Zipfian {
	return NewZipfianZeta(n, theta, Zeta(n, theta))
}

// NewZipfianZeta is NewZipfian with zeta(n) already known (shared across threads).
func NewZipfianZeta(n uint64, theta, zetan float64) *Zipfian {
	zeta2 := 1 + math.Pow(0.5, theta)
	return &Zipfian{
		n: n, theta: theta, zetan: zetan, alpha: 1 / (1 - theta),
		eta:  (1 - math.Pow(2/float64(n), 1-theta)) / (1 - zeta2/zetan),
		half: zeta2,
	}
}

// Next returns the value for the uniform draw u in [0, 1).
func (z *Zipfian) Next(u float64) uint64 {
	uz := u * z.zetan
	if uz < 1 {
		return 0
	}
	if uz < z.half {
		return 1
	}
	v := uint64(float64(z.n) * math.Pow(z.eta*u-z.eta+1, z.alpha))
	if v >= z.n {
		v = z.n - 1
	}
	return v
}
