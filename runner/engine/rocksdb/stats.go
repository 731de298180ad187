package rocksdb

/*
#include <stdlib.h>
#include <rocksdb/c.h>
char* kvb_map_property(rocksdb_t* db, const char* name);
char* kvb_tickers(rocksdb_options_t* o);
*/
import "C"

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unsafe"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/runner/engine"
)

const gb = 1 << 30

// Stats implements engine.StatsReader from DB properties (always) and the Statistics tickers
// (only when the options enabled them, as db_bench --statistics).
func (d *DB) Stats() (*engine.StatsSnapshot, error) {
	if !fastPathOK || !optionsLayoutOK {
		return nil, fmt.Errorf("rocksdb statistics need the C handles (grocksdb layout changed)")
	}
	cf, err := d.mapProperty("rocksdb.cfstats")
	if err != nil {
		return nil, err
	}
	s := &engine.StatsSnapshot{}
	c := &s.Cumulative
	// The Compaction Stats table as a map: "compaction.<L0..Ln|Sum>.<column>". Level 0's writes
	// are memtable flushes (and the rare intra-L0 compaction); every other level's are compactions.
	num := func(k string) (float64, bool) {
		v, ok := cf[k]
		if !ok {
			return 0, false
		}
		f, err := strconv.ParseFloat(v, 64)
		return f, err == nil
	}
	if w, ok := num("compaction.Sum.WriteGB"); ok {
		flushed, _ := num("compaction.L0.WriteGB")
		c.FlushBytesWritten = engine.I64(int64(math.Round(flushed * gb)))
		c.CompactionBytesWritten = engine.I64(int64(math.Round((w - flushed) * gb)))
	}
	if r, ok := num("compaction.Sum.ReadGB"); ok {
		c.CompactionBytesRead = engine.I64(int64(math.Round(r * gb)))
	}
	if v, ok := num("compaction.Sum.CompSec"); ok {
		c.CompactionSeconds = engine.F64(v)
	}
	if v, ok := num("compaction.Sum.CompMergeCPU"); ok {
		c.CompactionCPUSeconds = engine.F64(v)
	}
	if v, ok := num("compaction.Sum.CompCount"); ok {
		l0, _ := num("compaction.L0.CompCount")
		c.FlushCount = engine.I64(int64(l0))
		c.CompactionCount = engine.I64(int64(v - l0))
	}
	c.Levels = cfLevels(cf)
	// Stalls: "Cumulative stall" of rocksdb.stats counts stall time; the io_stalls map counts events.
	text := d.db.GetProperty("rocksdb.stats")
	if secs, ok := cumulativeStall(text); ok {
		c.StallSeconds = engine.F64(secs)
	}
	var stalls int64
	stallKeys := 0
	for k, v := range cf {
		if strings.HasPrefix(k, "io_stalls.total_") {
			n, _ := strconv.ParseInt(v, 10, 64)
			stalls += n
			stallKeys++
		}
	}
	if stallKeys > 0 {
		c.StallCount = engine.I64(stalls)
	}
	intProp := func(name string) *int64 {
		if v, ok := d.db.GetIntProperty(name); ok {
			return engine.I64(int64(v))
		}
		return nil
	}
	c.LSMBytes = intProp("rocksdb.live-sst-files-size")
	c.BlobBytes = intProp("rocksdb.live-blob-file-size")
	c.PendingCompactionBytes = intProp("rocksdb.estimate-pending-compaction-bytes")
	c.MemtableBytes = intProp("rocksdb.cur-size-all-mem-tables")
	s.Dumps = append(s.Dumps, api.NamedText{Name: "rocksdb.stats", Text: text},
		api.NamedText{Name: "rocksdb.levelstats", Text: d.db.GetProperty("rocksdb.levelstats")})

	tickers := d.tickers()
	if tickers == nil {
		c.Unavailable = append(c.Unavailable,
			"userBytesWritten, blockCacheHits, blockCacheMisses, bloomUseful, bloomChecked: RocksDB counts these only in its Statistics object (set statistics, db_bench --statistics)")
	} else {
		t := func(name string) *int64 {
			if v, ok := tickers[name]; ok {
				return engine.I64(v)
			}
			return nil
		}
		c.UserBytesWritten = t("rocksdb.bytes.written")
		c.BlockCacheHits = t("rocksdb.block.cache.hit")
		c.BlockCacheMisses = t("rocksdb.block.cache.miss")
		c.BloomUseful = t("rocksdb.bloom.filter.useful")
		if u, p := t("rocksdb.bloom.filter.useful"), t("rocksdb.bloom.filter.full.positive"); u != nil && p != nil {
			c.BloomChecked = engine.I64(*u + *p)
		}
		s.Dumps = append(s.Dumps, api.NamedText{Name: "rocksdb.statistics", Text: d.opts.GetStatisticsString()})
	}
	return s, nil
}

// levelKey is a level's row of the Compaction Stats map, e.g. "compaction.L6.NumFiles".
var levelKey = regexp.MustCompile(`^compaction\.L(\d+)\.NumFiles$`)

// cfLevels are the Compaction Stats rows of rocksdb.cfstats as levels, in level order. RocksDB
// lists only the levels that have files or compaction history, so the rows can skip levels: a
// bulk-loaded tree has only L6 (ingestion puts files in the bottom level). Walk the rows that
// exist rather than counting up from L0 until one is missing.
func cfLevels(cf map[string]string) []api.LevelStats {
	num := func(k string) float64 {
		f, _ := strconv.ParseFloat(cf[k], 64)
		return f
	}
	var out []api.LevelStats
	for k := range cf {
		m := levelKey.FindStringSubmatch(k)
		if m == nil {
			continue
		}
		l, err := strconv.Atoi(m[1])
		if err != nil {
			continue
		}
		row := func(col string) float64 { return num(fmt.Sprintf("compaction.L%d.%s", l, col)) }
		out = append(out, api.LevelStats{Level: int32(l), Files: int64(row("NumFiles")), Bytes: int64(row("SizeBytes")),
			CompactionBytesRead:    engine.I64(int64(math.Round(row("ReadGB") * gb))),
			CompactionBytesWritten: engine.I64(int64(math.Round(row("WriteGB") * gb)))})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Level < out[j].Level })
	return out
}

func (d *DB) mapProperty(name string) (map[string]string, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	v := C.kvb_map_property(d.r.db, cname)
	if v == nil {
		return nil, fmt.Errorf("rocksdb: no map property %s", name)
	}
	defer C.free(unsafe.Pointer(v))
	return parseLines(C.GoString(v)), nil
}

// tickers reads every Statistics ticker; nil when statistics are off.
func (d *DB) tickers() map[string]int64 {
	v := C.kvb_tickers((*C.rocksdb_options_t)(rawPtr(d.opts)))
	if v == nil {
		return nil
	}
	defer C.free(unsafe.Pointer(v))
	out := map[string]int64{}
	for k, s := range parseLines(C.GoString(v)) {
		n, err := strconv.ParseInt(s, 10, 64)
		if err == nil {
			out[k] = n
		}
	}
	return out
}

func parseLines(s string) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			out[k] = v
		}
	}
	return out
}

// "Cumulative stall: 00:00:1.234 H:M:S, 12.3 percent" (rocksdb.stats, DB Stats section).
var stallRE = regexp.MustCompile(`Cumulative stall: (\d+):(\d+):([\d.]+) H:M:S`)

func cumulativeStall(stats string) (float64, bool) {
	m := stallRE.FindStringSubmatch(stats)
	if m == nil {
		return 0, false
	}
	h, _ := strconv.ParseFloat(m[1], 64)
	mi, _ := strconv.ParseFloat(m[2], 64)
	s, _ := strconv.ParseFloat(m[3], 64)
	return h*3600 + mi*60 + s, true
}

// WaitForCompaction implements engine.CompactionWaiter as db_bench's waitforcompaction does:
// poll until no compaction is pending and none is running (flushes included).
func (d *DB) WaitForCompaction(ctx context.Context) error {
	for {
		idle := true
		for _, p := range []string{"rocksdb.compaction-pending", "rocksdb.num-running-compactions", "rocksdb.num-running-flushes"} {
			if v, ok := d.db.GetIntProperty(p); !ok || v != 0 {
				idle = false
			}
		}
		if idle {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
