package bench

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// usage is what this process (every thread: workers and the engine's background flushes and
// compactions) has consumed so far. Differences over a phase tell a CPU-bound phase from an
// I/O-bound one, which is what explains a thread-scaling curve.
type usage struct {
	at                    time.Time
	cpu, user, sys        time.Duration
	maxRSS                int64 // bytes
	majorFaults           int64
	readBytes, writeBytes int64 // storage I/O (/proc/self/io): page-cache misses, not cached reads
}

func readUsage() usage {
	u := usage{at: time.Now()}
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) == nil {
		u.user, u.sys = time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
		u.cpu = u.user + u.sys
		u.maxRSS = ru.Maxrss * 1024 // kilobytes on Linux
		u.majorFaults = ru.Majflt
	}
	if b, err := os.ReadFile("/proc/self/io"); err == nil {
		s := bufio.NewScanner(bytes.NewReader(b))
		for s.Scan() {
			name, val, _ := bytes.Cut(s.Bytes(), []byte(": "))
			n, _ := strconv.ParseInt(string(val), 10, 64)
			switch string(name) {
			case "read_bytes":
				u.readBytes = n
			case "write_bytes":
				u.writeBytes = n
			}
		}
	}
	return u
}

// since is the usage from start to u.
func (u usage) since(start usage) *api.PhaseUsage {
	wall := u.at.Sub(start.at).Seconds()
	cpu := (u.cpu - start.cpu).Seconds()
	p := &api.PhaseUsage{CPUSeconds: round6(cpu), ReadBytes: u.readBytes - start.readBytes,
		WriteBytes: u.writeBytes - start.writeBytes, MajorFaults: u.majorFaults - start.majorFaults,
		UserCPUSeconds: round6((u.user - start.user).Seconds()), SystemCPUSeconds: round6((u.sys - start.sys).Seconds()),
		MaxRSSBytes: u.maxRSS}
	if wall > 0 {
		p.CPUPercent = round6(100 * cpu / wall)
	}
	return p
}
