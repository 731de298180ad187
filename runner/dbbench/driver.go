package dbbench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"strings"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// DefaultBinary is Debian's rocksdb-tools db_bench (7.8.3).
const DefaultBinary = "/usr/bin/db_bench"

// removedFlags are flags the seeds use that db_bench 7.8.3 no longer knows; they did nothing
// measurable in later versions, so the driver drops them (with a note) instead of failing.
var removedFlags = map[string]bool{
	"disable_data_sync": true, "hard_rate_limit": true, "max_grandparent_overlap_factor": true,
	"cache_remove_scan_count_limit": true, "max_background_flushes_deprecated": true,
	"disable_auto_compactions_deprecated": true, "delete_obsolete_files_period_micros": true,
}

// Rewrite adapts a seed command line to db_bench 7.8.3: --db is forced to dbPath, removed flags
// are dropped, and the old --writes_per_second becomes --benchmark_write_rate_limit in bytes/s
// (key_size + value_size per write). It returns the new arguments and notes on what changed.
func Rewrite(args []string, dbPath string) ([]string, []string) {
	var out, notes []string
	keySize, valueSize := int64(16), int64(100)
	var wps int64 = -1
	for _, a := range args {
		name, val, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch name {
		case "key_size":
			keySize, _ = strconv.ParseInt(val, 10, 64)
		case "value_size":
			valueSize, _ = strconv.ParseInt(val, 10, 64)
		}
	}
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			out = append(out, a)
			continue
		}
		name, val, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case name == "db":
			continue
		case removedFlags[name]:
			notes = append(notes, fmt.Sprintf("dropped --%s (not in db_bench 7.8.3)", name))
			continue
		case name == "writes_per_second":
			wps, _ = strconv.ParseInt(val, 10, 64)
			continue
		}
		out = append(out, "--"+name+optionalValue(a))
	}
	if wps >= 0 {
		rate := wps * (keySize + valueSize)
		out = append(out, fmt.Sprintf("--benchmark_write_rate_limit=%d", rate))
		notes = append(notes, fmt.Sprintf("--writes_per_second=%d became --benchmark_write_rate_limit=%d", wps, rate))
	}
	out = append([]string{"--db=" + dbPath}, out...)
	return out, notes
}

func optionalValue(a string) string {
	if _, v, ok := strings.Cut(a, "="); ok {
		return "=" + v
	}
	return ""
}

var threadsRe = regexp.MustCompile(`^--?threads=(\d+)$`)

// Run runs db_bench with args (rewritten for dbPath), copies its output to stdout as it comes,
// and returns the parsed phases and db_bench's version line.
func Run(ctx context.Context, binary string, args []string, dbPath string, stdout, stderr io.Writer) ([]api.PhaseResult, string, error) {
	if binary == "" {
		binary = DefaultBinary
	}
	args, notes := Rewrite(args, dbPath)
	for _, n := range notes {
		fmt.Fprintln(stderr, "note: db_bench driver:", n)
	}
	var threads int32 = 1
	for _, a := range args {
		if m := threadsRe.FindStringSubmatch(a); m != nil {
			n, _ := strconv.Atoi(m[1])
			threads = int32(n)
		}
	}
	var buf, errBuf bytes.Buffer
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Stdout = io.MultiWriter(&buf, stdout)
	cmd.Stderr = &errBuf // progress noise ("... finished N ops\r"); kept for error messages
	err := cmd.Run()
	var phases []api.PhaseResult
	for _, b := range Parse(buf.String()) {
		phases = append(phases, b.PhaseResult(threads))
	}
	version := ""
	// db_bench 7.x prints its header ("RocksDB:    version 7.8.3") on stderr, older ones on stdout.
	if m := regexp.MustCompile(`(?m)^RocksDB:\s+version\s+(\S+)`).FindStringSubmatch(errBuf.String() + buf.String()); m != nil {
		version = "db_bench " + m[1]
	}
	if err != nil {
		msg := lastLine(errBuf.String())
		if msg == "" {
			msg = lastLine(buf.String())
		}
		return phases, version, fmt.Errorf("db_bench failed (%v): %s", err, msg)
	}
	return phases, version, nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if j := strings.LastIndexByte(l, '\r'); j >= 0 {
			l = strings.TrimSpace(l[j+1:])
		}
		if l != "" && !strings.HasPrefix(l, "...") {
			return l
		}
	}
	return ""
}
