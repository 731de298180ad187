package rocksdb

import "fmt"

// idleProperties are zero when RocksDB has no flush or compaction running or due, the properties
// db_bench's waitforcompaction waits on.
var idleProperties = []string{
	"rocksdb.estimate-pending-compaction-bytes",
	"rocksdb.num-running-compactions",
	"rocksdb.num-running-flushes",
	"rocksdb.mem-table-flush-pending",
	"rocksdb.compaction-pending",
}

// CompactionIdle implements engine.Settler.
func (d *DB) CompactionIdle() (bool, error) {
	for _, p := range idleProperties {
		v, ok := d.db.GetIntProperty(p)
		if !ok {
			return false, fmt.Errorf("rocksdb property %s unavailable", p)
		}
		if v != 0 {
			return false, nil
		}
	}
	return true, nil
}

// Checkpoint implements engine.Checkpointer: RocksDB's checkpoint hard-links the table files and
// copies the rest; the memtable is flushed first (log_size_for_flush 0), so there is no WAL to replay.
func (d *DB) Checkpoint(dir string) error {
	cp, err := d.db.NewCheckpoint()
	if err != nil {
		return fmt.Errorf("rocksdb checkpoint: %w", err)
	}
	defer cp.Destroy()
	if err := cp.CreateCheckpoint(dir, 0); err != nil {
		return fmt.Errorf("rocksdb checkpoint %s: %w", dir, err)
	}
	return nil
}

// MemoryMapped implements engine.MemoryMapper: mmapRead and PlainTable read tables through mmap.
func (d *DB) MemoryMapped() bool { return d.opts.AllowMmapReads() }
