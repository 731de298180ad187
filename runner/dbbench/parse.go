// Package dbbench runs Debian's real db_bench and parses its output into the runner's result
// schema, so db_bench's own numbers sit next to the runner's.
package dbbench

import (
	"bufio"
	"regexp"
	"strconv"
	"strings"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// Benchmark is one result line of db_bench, with its --histogram block when there was one.
type Benchmark struct {
	Name        string
	MicrosPerOp float64
	OpsPerSec   float64
	// Seconds and Ops are only in the newer form ("... ops/sec 0.028 seconds 40000 operations;").
	Seconds  float64
	Ops      int64
	MBPerSec float64
	// Found and Reads come from "(N of M found)".
	Found, Reads int64
	HasFound     bool
	Histogram    *Histogram
}

// Histogram is db_bench's histogram summary, in microseconds.
type Histogram struct {
	Op                                string // "read", "write", "seek", "op", ...
	Count                             int64
	Average, StdDev, Min, Median, Max float64
	P50, P75, P99, P999, P9999        float64
	HasPercentiles                    bool
}

var (
	// Both forms: "name : X micros/op Y ops/sec;" and "name : X micros/op Y ops/sec S seconds N operations;"
	resultRe = regexp.MustCompile(`^([A-Za-z0-9_\-\[\]\.]+)\s*:\s*([0-9.eE+\-]+|inf|nan|-nan) micros/op\s+([0-9.eE+\-]+) ops/sec(?:\s+([0-9.eE+\-]+) seconds\s+([0-9]+) operations)?;(.*)$`)
	mbRe     = regexp.MustCompile(`([0-9.eE+\-]+) MB/s`)
	foundRe  = regexp.MustCompile(`\((\d+) of (\d+) found\)`)
	perRe    = regexp.MustCompile(`^Microseconds per (\w+):`)
	countRe  = regexp.MustCompile(`^Count:\s*(\d+)\s+Average:\s*([0-9.eE+\-]+|nan|-nan)\s+StdDev:\s*([0-9.eE+\-]+|nan|-nan)`)
	minRe    = regexp.MustCompile(`^Min:\s*([0-9.eE+\-]+)\s+Median:\s*([0-9.eE+\-]+|nan|-nan)\s+Max:\s*([0-9.eE+\-]+)`)
	pctRe    = regexp.MustCompile(`^Percentiles:\s*P50:\s*([0-9.eE+\-]+|nan)\s+P75:\s*([0-9.eE+\-]+|nan)\s+P99:\s*([0-9.eE+\-]+|nan)\s+P99\.9:\s*([0-9.eE+\-]+|nan)\s+P99\.99:\s*([0-9.eE+\-]+|nan)`)
)

func num(s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0
	}
	return f
}

func integer(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// Parse extracts every result line and histogram block from db_bench's output. Progress output
// ("... finished N ops" joined by carriage returns) and anything unrecognised is skipped. A
// histogram block belongs to the result line before it (db_bench prints it right after).
func Parse(out string) []Benchmark {
	var res []Benchmark
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var h *Histogram
	for sc.Scan() {
		line := sc.Text()
		// Progress lines end in \r; the real line follows the last one.
		if i := strings.LastIndexByte(line, '\r'); i >= 0 {
			line = line[i+1:]
		}
		line = strings.TrimSpace(line)
		if m := resultRe.FindStringSubmatch(line); m != nil {
			b := Benchmark{Name: m[1], MicrosPerOp: num(m[2]), OpsPerSec: num(m[3])}
			if m[4] != "" {
				b.Seconds, b.Ops = num(m[4]), integer(m[5])
			}
			if mm := mbRe.FindStringSubmatch(m[6]); mm != nil {
				b.MBPerSec = num(mm[1])
			}
			if fm := foundRe.FindStringSubmatch(m[6]); fm != nil {
				b.Found, b.Reads, b.HasFound = integer(fm[1]), integer(fm[2]), true
			}
			res = append(res, b)
			h = nil
			continue
		}
		if len(res) == 0 {
			continue
		}
		if m := perRe.FindStringSubmatch(line); m != nil {
			h = &Histogram{Op: m[1]}
			res[len(res)-1].Histogram = h
			continue
		}
		if h == nil {
			continue
		}
		if m := countRe.FindStringSubmatch(line); m != nil {
			h.Count, h.Average, h.StdDev = integer(m[1]), num(m[2]), num(m[3])
		} else if m := minRe.FindStringSubmatch(line); m != nil {
			h.Min, h.Median, h.Max = num(m[1]), num(m[2]), num(m[3])
		} else if m := pctRe.FindStringSubmatch(line); m != nil {
			h.P50, h.P75, h.P99, h.P999, h.P9999 = num(m[1]), num(m[2]), num(m[3]), num(m[4]), num(m[5])
			h.HasPercentiles = true
		}
	}
	return res
}

// PhaseResult converts a parsed line into the runner's schema. db_bench's old form has no
// operation count or elapsed time; they are derived from the rates when possible.
func (b Benchmark) PhaseResult(threads int32) api.PhaseResult {
	var r api.PhaseResult
	r.Workload, r.Threads = b.Name, threads
	r.MicrosPerOp, r.OpsPerSec, r.MBPerSec = b.MicrosPerOp, b.OpsPerSec, b.MBPerSec
	r.Ops, r.Seconds = b.Ops, b.Seconds
	if r.Ops == 0 && b.Histogram != nil {
		r.Ops = b.Histogram.Count
	}
	if r.Seconds == 0 && r.Ops > 0 && r.OpsPerSec > 0 {
		r.Seconds = float64(r.Ops) / r.OpsPerSec
	}
	if b.HasFound {
		f := b.Found
		r.Found = &f
	}
	if h := b.Histogram; h != nil {
		p := &api.Percentiles{Mean: h.Average, P50: h.Median, Max: h.Max}
		if h.HasPercentiles {
			p.P50, p.P75, p.P99, p.P999, p.P9999 = h.P50, h.P75, h.P99, h.P999, h.P9999
		}
		r.LatencyMicros = p
	}
	return r
}
