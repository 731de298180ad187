package keygen

import "math/bits"

// Rand is a small, fast, per-goroutine generator (wyrand); math/rand's locking or interface
// calls would show up in per-operation costs.
type Rand struct{ s uint64 }

// NewRand seeds a generator; different streams get different seeds.
func NewRand(seed uint64) *Rand { return &Rand{s: seed ^ 0x9E3779B97F4A7C15} }

// Uint64 returns a uniformly distributed 64-bit value.
func (r *Rand) Uint64() uint64 {
	r.s += 0xa0761d6478bd642f
	hi, lo := bits.Mul64(r.s, r.s^0xe7037ed1a0b428db)
	return hi ^ lo
}

// Uint64n returns a uniform value in [0, n) without modulo bias (Lemire's method).
func (r *Rand) Uint64n(n uint64) uint64 {
	hi, lo := bits.Mul64(r.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(r.Uint64(), n)
		}
	}
	return hi
}

// Float64 returns a uniform value in [0, 1).
func (r *Rand) Float64() float64 { return float64(r.Uint64()>>11) / (1 << 53) }

// Permutation is a bijection of [0, n) computed on the fly (a Feistel network with cycle
// walking), so filluniquerandom needs no n-sized array even for billions of keys.
type Permutation struct {
	n      uint64
	half   uint // bits per Feistel half
	mask   uint64
	rounds [4]uint64
}

// NewPermutation returns a seeded permutation of [0, n).
func NewPermutation(n uint64, seed uint64) *Permutation {
	b := uint(bits.Len64(n - 1))
	if b < 2 {
		b = 2
	}
	if b%2 == 1 {
		b++
	}
	p := &Permutation{n: n, half: b / 2, mask: 1<<(b/2) - 1}
	r := NewRand(seed)
	for i := range p.rounds {
		p.rounds[i] = r.Uint64()
	}
	return p
}

// At returns the i-th element, i in [0, n).
func (p *Permutation) At(i uint64) uint64 {
	x := i
	for {
		l, r := x>>p.half, x&p.mask
		for _, k := range p.rounds {
			l, r = r, l^(mix(r^k)&p.mask)
		}
		x = l<<p.half | r
		if x < p.n {
			return x
		}
	}
}

func mix(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}
