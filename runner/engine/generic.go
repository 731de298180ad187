package engine

import "bytes"

// SeekNexter is implemented by iterators that run db_bench's seekrandom step natively.
type SeekNexter interface {
	// SeekNexts seeks to key, reports whether it landed exactly on it, then calls Next up to
	// nexts times, returning the key+value bytes it passed.
	SeekNexts(key []byte, nexts int) (found bool, bytes int)
}

// GenericSeekNexts is SeekNexts over the plain Iterator methods.
func GenericSeekNexts(it Iterator, key []byte, nexts int) (bool, int) {
	it.Seek(key)
	found := it.Valid() && bytes.Equal(it.Key(), key)
	n := 0
	for j := 0; j < nexts && it.Valid(); j++ {
		n += len(it.Key()) + it.ValueSize()
		it.Next()
	}
	return found, n
}
