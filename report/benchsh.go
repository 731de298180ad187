package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// ReportFormats are the report command's formats: the tables' plus benchmark.sh's report.tsv
// columns as TSV or JSON.
var ReportFormats = append(append([]string{}, Formats...), "tsv", "json")

// benchRow is what one report.tsv line is computed from.
type benchRow struct {
	b   *Benchmark
	p   *Phase
	run run
}

func (r benchRow) stats() *api.EngineStats { return r.p.EngineStats }

func (r benchRow) provenanceRevision() string {
	if r.run.full != nil && r.run.full.Provenance != nil {
		return r.run.full.Provenance.RunnerRevision
	}
	if r.run.status != nil && r.run.status.Provenance != nil {
		return r.run.status.Provenance.RunnerRevision
	}
	return ""
}

const (
	gib = 1 << 30
	mib = 1 << 20
)

// benchShColumns are RocksDB tools/benchmark.sh's report.tsv columns, in its order, each with
// how it is computed here: the same names and units (sizes with RocksDB's unit suffix, GB for
// c_wgb/b_rgb/b_wgb, MB/s, seconds, microseconds, u_cpu and s_cpu in thousands of seconds, rss in
// GB). benchmark.sh reads them from db_bench's output of a fresh process per test, so its
// cumulative figures (Compaction Stats, Cumulative stall, uptime) are per test; ours are the
// phase's deltas. An empty cell is a value the engine or the summary cannot give.
var benchShColumns = []struct {
	name  string
	value func(r benchRow) string
}{
	{"ops_sec", func(r benchRow) string { return fmt.Sprintf("%.0f", r.p.OpsPerSec) }},
	{"mb_sec", func(r benchRow) string { return fmt.Sprintf("%.1f", r.p.MBPerSec) }},
	{"lsm_sz", func(r benchRow) string {
		return withStats(r, func(s *api.EngineStats) *float64 { return bytesF(s.LSMBytes) }, humanBytes)
	}},
	{"blob_sz", func(r benchRow) string {
		return withStats(r, func(s *api.EngineStats) *float64 { return bytesF(s.BlobBytes) }, humanBytes)
	}},
	// Compaction Stats' Sum Write(GB): flushes and compactions.
	{"c_wgb", func(r benchRow) string { return withStats(r, writtenBytes, gb1) }},
	{"w_amp", func(r benchRow) string {
		return withStats(r, func(s *api.EngineStats) *float64 { return s.WriteAmplification }, f1)
	}},
	{"c_mbps", func(r benchRow) string {
		return withStats(r, func(s *api.EngineStats) *float64 {
			w := writtenBytes(s)
			if w == nil || r.p.Seconds <= 0 {
				return nil
			}
			v := *w / mib / r.p.Seconds
			return &v
		}, f1)
	}},
	{"c_wsecs", func(r benchRow) string {
		return withStats(r, func(s *api.EngineStats) *float64 { return s.CompactionSeconds }, f0)
	}},
	{"c_csecs", func(r benchRow) string {
		return withStats(r, func(s *api.EngineStats) *float64 { return s.CompactionCPUSeconds }, f0)
	}},
	// Blob files are never enabled by the runner: their compaction bytes are zero when the engine
	// reports blob sizes at all.
	{"b_rgb", func(r benchRow) string { return withStats(r, zeroIfBlobs, f0) }},
	{"b_wgb", func(r benchRow) string { return withStats(r, zeroIfBlobs, f0) }},
	{"usec_op", func(r benchRow) string { return fmt.Sprintf("%.1f", r.p.MicrosPerOp) }},
	{"p50", func(r benchRow) string { return latency(r, func(l *api.Percentiles) float64 { return l.P50 }, "%.1f") }},
	{"p99", func(r benchRow) string { return latency(r, func(l *api.Percentiles) float64 { return l.P99 }, "%.0f") }},
	{"p99.9", func(r benchRow) string { return latency(r, func(l *api.Percentiles) float64 { return l.P999 }, "%.0f") }},
	{"p99.99", func(r benchRow) string {
		return latency(r, func(l *api.Percentiles) float64 { return l.P9999 }, "%.0f")
	}},
	{"pmax", func(r benchRow) string { return latency(r, func(l *api.Percentiles) float64 { return l.Max }, "%.0f") }},
	// uptime: db_bench's process lives for one test; here, the phase.
	{"uptime", func(r benchRow) string { return fmt.Sprintf("%.0f", r.p.Seconds) }},
	{"stall%", func(r benchRow) string {
		return withStats(r, func(s *api.EngineStats) *float64 {
			if s.StallSeconds == nil || r.p.Seconds <= 0 {
				return nil
			}
			v := 100 * *s.StallSeconds / r.p.Seconds
			return &v
		}, f1)
	}},
	{"Nstall", func(r benchRow) string {
		return withStats(r, func(s *api.EngineStats) *float64 { return bytesF(s.StallCount) }, f0)
	}},
	// /usr/bin/time's seconds / 1000, as benchmark.sh divides them; three decimals, not one, so
	// that short phases do not print 0.0.
	{"u_cpu", func(r benchRow) string {
		return usage(r, func(u *api.PhaseUsage) string { return fmt.Sprintf("%.3f", u.UserCPUSeconds/1000) })
	}},
	{"s_cpu", func(r benchRow) string {
		return usage(r, func(u *api.PhaseUsage) string { return fmt.Sprintf("%.3f", u.SystemCPUSeconds/1000) })
	}},
	{"rss", func(r benchRow) string {
		return usage(r, func(u *api.PhaseUsage) string { return fmt.Sprintf("%.1f", float64(u.MaxRSSBytes)/gib) })
	}},
	{"test", func(r benchRow) string {
		t := fmt.Sprintf("%s.t%d", r.p.Name(), r.p.Threads)
		if r.p.Iteration > 0 {
			t += fmt.Sprintf(".i%d", r.p.Iteration)
		}
		return t
	}},
	{"date", func(r benchRow) string { return runDate(r.run) }},
	{"version", func(r benchRow) string { return version(r.run) }},
	// benchmark.sh's user-provided job ID: the benchmark and run that measured the phase.
	{"job_id", func(r benchRow) string { return r.b.Name + "/" + r.p.Run }},
	{"githash", func(r benchRow) string { return r.provenanceRevision() }},
}

// BenchShColumns are the column names, in order.
func BenchShColumns() []string {
	out := make([]string, len(benchShColumns))
	for i, c := range benchShColumns {
		out[i] = c.name
	}
	return out
}

// BenchShRows are one row per measured phase (the load included, as test "load"), in
// benchmark.sh's columns.
func BenchShRows(b *Benchmark) [][]string {
	runs := map[string]run{}
	for _, r := range b.runs() {
		runs[r.name] = r
	}
	var out [][]string
	phases := b.Phases(true)
	for i := range phases {
		row := benchRow{b: b, p: &phases[i], run: runs[phases[i].Run]}
		cells := make([]string, len(benchShColumns))
		for j, c := range benchShColumns {
			cells[j] = c.value(row)
		}
		out = append(out, cells)
	}
	return out
}

// WriteBenchSh writes benchmark.sh's report: TSV with its header line, or JSON objects keyed by
// the same column names (values as the TSV strings, empty ones left out).
func WriteBenchSh(w io.Writer, bs []*Benchmark, format string) error {
	cols := BenchShColumns()
	var rows [][]string
	for _, b := range bs {
		if len(b.Phases(true)) == 0 {
			return fmt.Errorf("%s has no results (phase %s)", b.Title(), orPending(b.Status.Phase))
		}
		rows = append(rows, BenchShRows(b)...)
	}
	if format == "json" {
		objs := make([]map[string]string, 0, len(rows))
		for _, r := range rows {
			m := map[string]string{}
			for i, v := range r {
				if v != "" {
					m[cols[i]] = v
				}
			}
			objs = append(objs, m)
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(objs)
	}
	var sb strings.Builder
	sb.WriteString(strings.Join(cols, "\t") + "\n")
	for _, r := range rows {
		sb.WriteString(strings.Join(r, "\t") + "\n")
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// WriteEngineDumps prints each phase's engine dumps (rocksdb.stats, the Statistics string,
// Pebble's metrics, leveldb.stats) under a header naming the phase.
func WriteEngineDumps(w io.Writer, bs []*Benchmark) error {
	var sb strings.Builder
	n := 0
	for _, b := range bs {
		for _, p := range b.Phases(true) {
			for _, d := range p.EngineDumps {
				fmt.Fprintf(&sb, "==> %s run %s (%s) phase %s threads=%d: %s <==\n%s\n", b.Title(), p.Run, p.Engine,
					p.Name(), p.Threads, d.Name, strings.TrimRight(d.Text, "\n"))
				n++
			}
		}
	}
	if n == 0 {
		return fmt.Errorf("no engine dumps: they are in the runners' full results (kubectl kvbench save keeps them)")
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

func withStats(r benchRow, get func(*api.EngineStats) *float64, format func(float64) string) string {
	s := r.stats()
	if s == nil {
		return ""
	}
	v := get(s)
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
		return ""
	}
	return format(*v)
}

func writtenBytes(s *api.EngineStats) *float64 {
	if s.FlushBytesWritten == nil || s.CompactionBytesWritten == nil {
		return nil
	}
	v := float64(*s.FlushBytesWritten + *s.CompactionBytesWritten)
	return &v
}

func zeroIfBlobs(s *api.EngineStats) *float64 {
	if s.BlobBytes == nil {
		return nil
	}
	v := 0.0
	return &v
}

func bytesF(v *int64) *float64 {
	if v == nil {
		return nil
	}
	f := float64(*v)
	return &f
}

func latency(r benchRow, get func(*api.Percentiles) float64, format string) string {
	if r.p.LatencyMicros == nil {
		return ""
	}
	return fmt.Sprintf(format, get(r.p.LatencyMicros))
}

func usage(r benchRow, f func(*api.PhaseUsage) string) string {
	if r.p.Usage == nil {
		return ""
	}
	return f(r.p.Usage)
}

func f0(v float64) string  { return fmt.Sprintf("%.0f", v) }
func f1(v float64) string  { return fmt.Sprintf("%.1f", v) }
func gb1(v float64) string { return fmt.Sprintf("%.1f", v/gib) }

// humanBytes is RocksDB's Compaction Stats size as benchmark.sh prints it: "%.0f" and the unit
// (KB, MB, GB, TB; B below a KB).
func humanBytes(v float64) string {
	units := []string{"B", "KB", "MB", "GB", "TB"}
	i := 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	return fmt.Sprintf("%.0f%s", v, units[i])
}

// runDate is benchmark.sh's date column (db_bench's Date: line as 2006-01-02T15:04:05): the
// run's start.
func runDate(r run) string {
	switch {
	case r.full != nil:
		return r.full.StartTime.UTC().Format("2006-01-02T15:04:05")
	case r.status != nil && r.status.StartTime != nil:
		return r.status.StartTime.UTC().Format("2006-01-02T15:04:05")
	}
	return ""
}

// version is RocksDB's version as benchmark.sh prints it ("7.8.3"); other engines keep their
// name ("leveldb-1.23", "pebble-v2.1.7").
func version(r run) string {
	v := ""
	switch {
	case r.full != nil:
		v = r.full.EngineVersion
	case r.status != nil:
		v = r.status.EngineVersion
	}
	if name, ver, ok := strings.Cut(v, " "); ok {
		if name == "rocksdb" {
			return ver
		}
		return name + "-" + ver
	}
	return v
}
