package pebble

import (
	"context"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/runner/engine"
)

// stallCounter counts Pebble's write stalls (memtable or L0 limits) from its event listener.
type stallCounter struct {
	mu    sync.Mutex
	count int64
	total time.Duration
	since time.Time // start of the stall in progress; zero when none
}

func (s *stallCounter) listener() *pebble.EventListener {
	return &pebble.EventListener{
		WriteStallBegin: func(pebble.WriteStallBeginInfo) {
			s.mu.Lock()
			s.count++
			s.since = time.Now()
			s.mu.Unlock()
		},
		WriteStallEnd: func() {
			s.mu.Lock()
			if !s.since.IsZero() {
				s.total += time.Since(s.since)
				s.since = time.Time{}
			}
			s.mu.Unlock()
		},
	}
}

// read returns the stall count and time so far, a stall in progress counted up to now.
func (s *stallCounter) read() (int64, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.total
	if !s.since.IsZero() {
		t += time.Since(s.since)
	}
	return s.count, t
}

// Stats implements engine.StatsReader from DB.Metrics() and the stall listener.
func (d *DB) Stats() (*engine.StatsSnapshot, error) {
	m := d.db.Metrics()
	s := &engine.StatsSnapshot{Dumps: []api.NamedText{{Name: "pebble.metrics", Text: m.String()}}}
	c := &s.Cumulative
	var flushed, compacted, read, lsm int64
	for i := range m.Levels {
		l := &m.Levels[i]
		flushed += int64(l.TableBytesFlushed + l.BlobBytesFlushed)
		compacted += int64(l.TableBytesCompacted + l.BlobBytesCompacted)
		read += int64(l.TableBytesRead)
		lsm += l.TablesSize
		c.Levels = append(c.Levels, api.LevelStats{Level: int32(i), Files: l.TablesCount, Bytes: l.TablesSize,
			CompactionBytesRead:    engine.I64(int64(l.TableBytesRead)),
			CompactionBytesWritten: engine.I64(int64(l.TableBytesFlushed + l.TableBytesCompacted + l.BlobBytesFlushed + l.BlobBytesCompacted))})
	}
	c.UserBytesWritten = engine.I64(int64(m.WAL.BytesIn))
	c.FlushBytesWritten = engine.I64(flushed)
	c.CompactionBytesWritten = engine.I64(compacted)
	c.CompactionBytesRead = engine.I64(read)
	c.CompactionSeconds = engine.F64(m.Compact.Duration.Seconds())
	c.FlushCount = engine.I64(m.Flush.Count)
	c.CompactionCount = engine.I64(m.Compact.Count)
	n, t := d.stalls.read()
	c.StallCount = engine.I64(n)
	c.StallSeconds = engine.F64(t.Seconds())
	c.LSMBytes = engine.I64(lsm)
	c.BlobBytes = engine.I64(int64(m.BlobFiles.LiveSize))
	c.PendingCompactionBytes = engine.I64(int64(m.Compact.EstimatedDebt))
	c.MemtableBytes = engine.I64(int64(m.MemTable.Size))
	c.BlockCacheHits = engine.I64(m.BlockCache.Hits)
	c.BlockCacheMisses = engine.I64(m.BlockCache.Misses)
	c.BloomUseful = engine.I64(m.Filter.Hits)
	c.BloomChecked = engine.I64(m.Filter.Hits + m.Filter.Misses)
	c.ReadAmplification = engine.F64(float64(m.ReadAmp()))
	c.Unavailable = []string{"compactionCPUSeconds: Pebble does not measure compaction CPU"}
	return s, nil
}

// WaitForCompaction implements engine.CompactionWaiter: until no flush or compaction has been
// running for half a second. Pebble picks its next compaction as soon as one ends, so a pause
// that long means it has nothing it wants to do; its compaction debt is not a test, since it can
// stay above zero with nothing scheduled.
func (d *DB) WaitForCompaction(ctx context.Context) error {
	for idle := 0; idle < 5; {
		m := d.db.Metrics()
		if m.Compact.NumInProgress == 0 && m.Flush.NumInProgress == 0 {
			idle++
		} else {
			idle = 0
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}
