package keygen

// Values hands out value bytes the way db_bench's RandomGenerator does: a 1 MiB buffer made of
// 100-byte pieces that compress to about ratio of their size, read at a moving offset, so that
// producing a value costs no allocation and no per-byte work.
type Values struct {
	data []byte
	pos  int
	min  int
	max  int
	r    *Rand
}

// NewValues returns a generator of values of size in [minSize, maxSize] (equal for a fixed size)
// compressing to about ratio (0 < ratio <= 1).
func NewValues(seed uint64, ratio float64, minSize, maxSize int) *Values {
	if ratio <= 0 || ratio > 1 {
		ratio = 0.5
	}
	r := NewRand(seed)
	size := max(1<<20, maxSize)
	data := make([]byte, 0, size+100)
	for len(data) < size {
		// A piece: ratio*100 random printable bytes repeated to 100 bytes.
		raw := max(1, int(100*ratio))
		piece := make([]byte, raw)
		for i := range piece {
			piece[i] = ' ' + byte(r.Uint64n(95))
		}
		for i := 0; i < 100; i++ {
			data = append(data, piece[i%raw])
		}
	}
	return &Values{data: data, min: minSize, max: maxSize, r: r}
}

// Next returns the next value; it aliases the generator's buffer and is valid until reused.
func (v *Values) Next() []byte {
	n := v.min
	if v.max > v.min {
		n += int(v.r.Uint64n(uint64(v.max - v.min + 1)))
	}
	if v.pos+n > len(v.data) {
		v.pos = 0
	}
	out := v.data[v.pos : v.pos+n]
	v.pos += n
	return out
}

// Avg is the mean value size.
func (v *Values) Avg() float64 { return float64(v.min+v.max) / 2 }
