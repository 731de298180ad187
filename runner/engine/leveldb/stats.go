package leveldb

import (
	"bufio"
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/jmhodges/levigo"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/runner/engine"
)

const mb = 1 << 20

// unavailable is what LevelDB 1.23 does not count (its properties are leveldb.stats,
// leveldb.num-files-at-level<N>, leveldb.sstables and leveldb.approximate-memory-usage).
var unavailable = []string{
	"userBytesWritten: LevelDB 1.23 does not count the bytes written to it",
	"stallSeconds, stallCount: LevelDB 1.23 exposes no stall counters (its 1 ms slowdowns and stops are not counted)",
	"blockCacheHits, blockCacheMisses, bloomUseful, bloomChecked: LevelDB 1.23 has no statistics",
	"pendingCompactionBytes, memtableBytes, compactionCPUSeconds, flushCount, compactionCount: not exposed by LevelDB 1.23",
	"flushBytesWritten: LevelDB counts flushes with compactions per level; taken as level 0's writes (flushes it places deeper, as in fillseq, count as compaction); leveldb.stats has 1 MB resolution",
}

// Stats implements engine.StatsReader from leveldb.stats (per-level compaction time, read and
// write MB), leveldb.sstables (per-level files and exact bytes) and GetApproximateSizes over the
// whole key space (LSM bytes).
func (d *DB) Stats() (*engine.StatsSnapshot, error) {
	text := d.db.PropertyValue("leveldb.stats")
	levels, err := parseLevelDBStats(text)
	if err != nil {
		return nil, err
	}
	s := &engine.StatsSnapshot{Dumps: []api.NamedText{{Name: "leveldb.stats", Text: text}}}
	c := &s.Cumulative
	var read, written, secs float64
	for _, l := range levels {
		read += l.readMB
		written += l.writeMB
		secs += l.secs
	}
	c.Levels = mergeLevels(levels, d.db.PropertyValue("leveldb.sstables"))
	flushed := 0.0
	if len(levels) > 0 && levels[0].level == 0 {
		flushed = levels[0].writeMB
	}
	c.FlushBytesWritten = engine.I64(int64(flushed * mb))
	c.CompactionBytesWritten = engine.I64(int64((written - flushed) * mb))
	c.CompactionBytesRead = engine.I64(int64(read * mb))
	c.CompactionSeconds = engine.F64(secs)
	sizes := d.db.GetApproximateSizes([]levigo.Range{{Start: []byte{}, Limit: bytes.Repeat([]byte{0xff}, 256)}})
	if len(sizes) == 1 {
		c.LSMBytes = engine.I64(int64(sizes[0]))
	}
	c.Unavailable = unavailable
	return s, nil
}

// mergeLevels are the levels of leveldb.stats (compaction history, MB resolution) with their exact
// files and bytes from a leveldb.sstables listing: leveldb.stats rounds sizes to whole MB, so a
// small level would read as files without bytes. A level with files is listed even if
// leveldb.stats does not list it.
func mergeLevels(levels []levelDBLevel, sstables string) []api.LevelStats {
	files, bytes := levelSizes(sstables)
	var out []api.LevelStats
	seen := map[int]bool{}
	for _, l := range levels {
		if l.level < 0 || l.level >= numLevels {
			continue
		}
		seen[l.level] = true
		out = append(out, api.LevelStats{Level: int32(l.level), Files: int64(files[l.level]), Bytes: bytes[l.level],
			CompactionBytesRead: engine.I64(int64(l.readMB * mb)), CompactionBytesWritten: engine.I64(int64(l.writeMB * mb))})
	}
	for level := range numLevels {
		if !seen[level] && files[level] > 0 {
			out = append(out, api.LevelStats{Level: int32(level), Files: int64(files[level]), Bytes: bytes[level]})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Level < out[j].Level })
	return out
}

type levelDBLevel struct {
	level, files                  int
	sizeMB, secs, readMB, writeMB float64
}

// parseLevelDBStats reads the table of leveldb.stats (LevelDB 1.23, db_impl.cc):
//
//	                               Compactions
//	Level  Files Size(MB) Time(sec) Read(MB) Write(MB)
//	--------------------------------------------------
//	  0        2        4         0        0         4
//
// Only levels with files or compaction history are listed.
func parseLevelDBStats(text string) ([]levelDBLevel, error) {
	if !strings.Contains(text, "Level  Files Size(MB)") {
		return nil, fmt.Errorf("leveldb.stats: unexpected format: %q", text)
	}
	var out []levelDBLevel
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 6 {
			continue
		}
		var l levelDBLevel
		var err error
		if l.level, err = strconv.Atoi(f[0]); err != nil {
			continue
		}
		l.files, _ = strconv.Atoi(f[1])
		vals := []*float64{&l.sizeMB, &l.secs, &l.readMB, &l.writeMB}
		for i, p := range vals {
			if *p, err = strconv.ParseFloat(f[2+i], 64); err != nil {
				return nil, fmt.Errorf("leveldb.stats: level %d: %v", l.level, err)
			}
		}
		out = append(out, l)
	}
	return out, nil
}

// RenderOptions implements engine.OptionsRenderer: LevelDB writes no OPTIONS file, so the
// provenance keeps the options as Open set them (unset ones are LevelDB 1.23's defaults).
func (d *DB) RenderOptions() *api.NamedText {
	return &api.NamedText{Name: "leveldb-options", Text: d.options}
}

// renderOptions lists leveldb::Options as Open sets them from o, in LevelDB's own names.
func renderOptions(o api.EngineOptions) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# LevelDB 1.23 options as set by kvbench (others at LevelDB's defaults)\n")
	fmt.Fprintf(&b, "block_cache=LRUCache(%d)\n", engine.Bytes(o.CacheSize, 8<<20))
	if bits := engine.Int(o.BloomBits, 0); bits > 0 {
		fmt.Fprintf(&b, "filter_policy=leveldb.BuiltinBloomFilter2(bits_per_key=%d)\n", bits)
	} else {
		fmt.Fprintf(&b, "filter_policy=none\n")
	}
	fmt.Fprintf(&b, "write_buffer_size=%d\n", engine.Bytes(o.WriteBufferSize, 4<<20))
	fmt.Fprintf(&b, "block_size=%d\n", engine.Bytes(o.BlockSize, 4096))
	comp := "kSnappyCompression"
	if o.Compression != nil && *o.Compression != api.CompressionSnappy {
		comp = "kNoCompression"
	}
	fmt.Fprintf(&b, "compression=%s\n", comp)
	open := engine.Int(o.MaxOpenFiles, 1000)
	if open < 0 {
		open = 1 << 20
	}
	fmt.Fprintf(&b, "max_open_files=%d\n", open)
	fmt.Fprintf(&b, "max_file_size=%d\n", engine.Bytes(o.TargetFileSizeBase, 2<<20))
	fmt.Fprintf(&b, "sync=%t\n", engine.Bool(o.Sync))
	return b.String()
}
