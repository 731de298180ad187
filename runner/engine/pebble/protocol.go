package pebble

import (
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// CompactionIdle implements engine.Settler: no flush or compaction in progress, and none started
// or finished for engine.QuietPeriod (Pebble starts a due compaction as soon as a slot is free, so
// a due one would show). Metrics().Compact.EstimatedDebt is not the test: Pebble counts every L0
// byte as debt whenever L0 and the base level both hold data, due or not, so it stays above zero
// in a settled LSM with a few L0 files.
func (d *DB) CompactionIdle() (bool, error) {
	m := d.db.Metrics()
	running := m.Compact.NumInProgress > 0 || m.Flush.NumInProgress > 0
	fp := fmt.Sprintf("%d/%d/%d", m.Compact.Count, m.Flush.Count, m.Levels[0].TablesCount)
	quiet := d.quiet.Unchanged(fp, time.Now())
	return quiet && !running, nil
}

// Checkpoint implements engine.Checkpointer: Pebble hard-links the sstables; the WAL is flushed
// first so the checkpoint holds every acknowledged write.
func (d *DB) Checkpoint(dir string) error {
	if err := d.db.Checkpoint(dir, pebble.WithFlushedWAL()); err != nil {
		return fmt.Errorf("pebble checkpoint %s: %w", dir, err)
	}
	return nil
}
