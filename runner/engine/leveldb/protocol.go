package leveldb

import (
	"bufio"
	"strconv"
	"strings"
	"time"
)

// LevelDB 1.23 has no property for pending or running compactions. CompactionIdle approximates
// one from what it does expose: no level is over its compaction trigger (level 0: 4 files,
// kL0_CompactionTrigger; level L >= 1: 10 MiB x 10^(L-1) bytes, MaxBytesForLevel; the last level
// never triggers), computed from the exact file sizes in "leveldb.sstables", and "leveldb.stats"
// (which changes when a flush or compaction finishes) has not changed for engine.QuietPeriod.
// Seek-triggered compactions are not visible; they are rare in benchmarks and short.

const (
	l0Trigger    = 4
	level1Bytes  = 10 << 20
	numLevels    = 7
	noCompaction = numLevels - 1 // the last level is never a compaction's input by size
)

// CompactionIdle implements engine.Settler (see above); the first call never reports idle.
func (d *DB) CompactionIdle() (bool, error) {
	stable := d.quiet.Unchanged(d.db.PropertyValue("leveldb.stats"), time.Now())
	return stable && !overTrigger(d.db.PropertyValue("leveldb.sstables")), nil
}

// overTrigger reports whether any level of a "leveldb.sstables" listing is due a compaction.
func overTrigger(sstables string) bool {
	files, bytes := levelSizes(sstables)
	if files[0] >= l0Trigger {
		return true
	}
	limit := int64(level1Bytes)
	for l := 1; l < noCompaction; l++ {
		if bytes[l] >= limit {
			return true
		}
		limit *= 10
	}
	return false
}

// levelSizes counts the files and bytes of each level in a "leveldb.sstables" listing:
// "--- level N ---" headers, then one " <number>:<size>[<smallest> .. <largest>]" line per file
// (keys escaped, so a line is one file).
func levelSizes(sstables string) (files [numLevels]int, bytes [numLevels]int64) {
	level := -1
	sc := bufio.NewScanner(strings.NewReader(sstables))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if n, ok := strings.CutPrefix(line, "--- level "); ok {
			level, _ = strconv.Atoi(strings.TrimSuffix(n, " ---"))
			continue
		}
		num, rest, ok := strings.Cut(strings.TrimPrefix(line, " "), ":")
		size, _, ok2 := strings.Cut(rest, "[")
		if level < 0 || level >= numLevels || !ok || !ok2 || num == "" {
			continue
		}
		if b, err := strconv.ParseInt(size, 10, 64); err == nil {
			files[level]++
			bytes[level] += b
		}
	}
	return files, bytes
}

// MemoryMapped implements engine.MemoryMapper: LevelDB 1.23 reads up to 1000 table files through
// mmap on 64-bit systems (kDefaultMmapLimit), with no option to turn it off.
func (d *DB) MemoryMapped() bool { return true }
