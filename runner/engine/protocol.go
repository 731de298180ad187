package engine

import "time"

// Optional interfaces for the measurement protocol (settle, reset, cold-cache check). The runner
// asks for them at phase boundaries only, never in a timed loop.

// Settler is implemented by engines that can say whether their flushes and compactions are idle,
// so that a phase can wait for them to settle first (db_bench's waitforcompaction).
type Settler interface {
	CompactionIdle() (bool, error)
}

// Checkpointer is implemented by engines that take an online checkpoint of the open database into
// dir (which must not exist yet), hard-linking the immutable table files.
type Checkpointer interface {
	Checkpoint(dir string) error
}

// MemoryMapper is implemented by engines that may read table files through mmap: mapped pages stay
// in the page cache whatever posix_fadvise says, so cold-cache eviction must close the database.
type MemoryMapper interface {
	MemoryMapped() bool
}

// QuietPeriod is how long a sign of background work must stay unchanged before an engine that
// cannot report running work directly (LevelDB) or whose debt estimate never reaches zero
// (Pebble) is called idle.
const QuietPeriod = 100 * time.Millisecond

// Quiet watches a fingerprint of an engine's background work (flush and compaction counters, the
// LSM's files) and tells when it has stayed the same for QuietPeriod. The zero value is ready.
type Quiet struct {
	last  string
	since time.Time
}

// Unchanged records fp seen at now and reports whether it has been the same for QuietPeriod.
func (q *Quiet) Unchanged(fp string, now time.Time) bool {
	if q.since.IsZero() || fp != q.last {
		q.last, q.since = fp, now
		return false
	}
	return now.Sub(q.since) >= QuietPeriod
}
