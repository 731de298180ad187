// Package keygen makes db_bench's keys and values and the random choices workloads need.
package keygen

// Keys formats integers as db_bench 7.8.3's GenerateKeyFromInt does, so that the runner and
// db_bench read each other's databases:
//
//   - keys_per_prefix == 0: the low min(key_size, 8) bytes of v, big-endian, then '0' padding.
//   - keys_per_prefix > 0:  prefix = v % (num / keys_per_prefix) as min(prefix_size, 8) big-endian
//     bytes, '0'-padded to prefix_size, followed by v as above in the remaining bytes.
type Keys struct {
	KeySize       int
	PrefixSize    int
	KeysPerPrefix int64
	// Num is the key space size; it fixes the number of prefixes.
	Num int64
}

// Make allocates a key buffer of the right size.
func (k Keys) Make() []byte { return make([]byte, k.KeySize) }

// Put writes the key for v into dst, which must be KeySize long, and returns it.
func (k Keys) Put(dst []byte, v uint64) []byte {
	pos := 0
	if k.KeysPerPrefix > 0 {
		numPrefix := k.Num / k.KeysPerPrefix
		if numPrefix < 1 {
			numPrefix = 1
		}
		prefix := v % uint64(numPrefix)
		n := min(k.PrefixSize, 8, len(dst))
		for i := 0; i < n; i++ {
			dst[i] = byte(prefix >> ((n - i - 1) * 8))
		}
		end := min(k.PrefixSize, len(dst))
		for i := n; i < end; i++ {
			dst[i] = '0'
		}
		pos = end
	}
	n := min(len(dst)-pos, 8)
	for i := 0; i < n; i++ {
		dst[pos+i] = byte(v >> ((n - i - 1) * 8))
	}
	for i := pos + n; i < len(dst); i++ {
		dst[i] = '0'
	}
	return dst
}

// Sorted reports whether ascending integers give ascending keys, so that a bulk load can write
// them straight into sorted files.
func (k Keys) Sorted() bool {
	return k.KeysPerPrefix == 0 && (k.KeySize >= 8 || k.Num <= 1<<(8*k.KeySize))
}

// SortedOrder returns the i-th integer in key order, for bulk loads with prefix groups: prefix
// p holds p, p+P, p+2P, ... and prefixes ascend.
func (k Keys) SortedOrder() func(i int64) uint64 {
	if k.KeysPerPrefix == 0 {
		return func(i int64) uint64 { return uint64(i) }
	}
	p := k.Num / k.KeysPerPrefix
	if p < 1 {
		p = 1
	}
	// Prefix q holds the integers q, q+p, ...; below num there are ceil((num-q)/p) of them.
	return func(i int64) uint64 {
		full := k.Num / p  // every prefix has at least this many
		extra := k.Num % p // the first extra prefixes have one more
		bigBlock := extra * (full + 1)
		var q, j int64
		if i < bigBlock {
			q, j = i/(full+1), i%(full+1)
		} else {
			q, j = extra+(i-bigBlock)/full, (i-bigBlock)%full
		}
		return uint64(q + j*p)
	}
}
