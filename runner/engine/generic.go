package engine

import "bytes"

// SeekNexter is implemented by databases that run db_bench's seekrandom step natively.
type SeekNexter interface {
	// SeekNexts is one seekrandom operation as db_bench 7.8.3 does it: a fresh iterator (db_bench
	// creates one per seek unless --use_tailing_iterator), Seek to key, an exact-match check, then
	// up to nexts Next calls, copying each value out; it returns the key+value bytes passed.
	SeekNexts(key []byte, nexts int) (found bool, bytes int, err error)
}

// SeekNexts runs one seekrandom operation on db, natively if db is a SeekNexter.
func SeekNexts(db DB, key []byte, nexts int) (bool, int, error) {
	if sn, ok := db.(SeekNexter); ok {
		return sn.SeekNexts(key, nexts)
	}
	it := db.NewIterator()
	found, n := GenericSeekNexts(it, key, nexts)
	err := it.Err()
	it.Close()
	return found, n, err
}

// GenericSeekNexts is the seek-and-next part of SeekNexts over the plain Iterator methods.
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

// Writer is one goroutine's db_bench-style writer: every Put or Delete is a write batch of one
// entry committed on its own, which is what db_bench's DoWrite/DoDelete do with batch_size=1.
// A Writer is not safe for concurrent use.
type Writer interface {
	Put(key, value []byte) error
	Delete(key []byte) error
	Close()
}

// WriterMaker is implemented by engines with a cheaper single-entry commit than the Batch
// interface's Put+Commit (e.g. one cgo crossing instead of three).
type WriterMaker interface {
	NewWriter() Writer
}

// NewWriter returns a Writer for db: the engine's own, or one over a reused Batch.
func NewWriter(db DB) Writer {
	if m, ok := db.(WriterMaker); ok {
		return m.NewWriter()
	}
	return &batchWriter{b: db.NewBatch()}
}

type batchWriter struct{ b Batch }

func (w *batchWriter) Put(key, value []byte) error {
	w.b.Put(key, value)
	return w.b.Commit()
}

func (w *batchWriter) Delete(key []byte) error {
	w.b.Delete(key)
	return w.b.Commit()
}

func (w *batchWriter) Close() { w.b.Close() }
