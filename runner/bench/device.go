package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// mount is the mountinfo entry of the filesystem holding a path.
type mount struct {
	majMin, point, fsType, options, source string
}

// dataDevice is the block device under a directory, as the pod sees it: its kernel name (a
// partition's parent disk, where /sys/block has the model and scheduler), or why there is none.
type dataDevice struct {
	mount       mount
	name        string // "" when not visible
	partition   string // the partition's own name in /proc/diskstats ("" for a whole disk)
	unavailable string
}

// findDataDevice resolves dir (or its nearest existing ancestor: the database directory may not
// exist yet) to its mount and block device via st_dev, /proc/self/mountinfo and /sys/dev/block.
func findDataDevice(dir string) dataDevice {
	var st unix.Stat_t
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		if unix.Stat(p, &st) == nil {
			break
		}
		if p == filepath.Dir(p) {
			return dataDevice{unavailable: "cannot stat " + dir}
		}
	}
	majMin := fmt.Sprintf("%d:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)))
	d := dataDevice{mount: findMount(majMin, dir)}
	sys, err := filepath.EvalSymlinks("/sys/dev/block/" + majMin)
	if err != nil {
		fs := d.mount.fsType
		if fs == "" {
			fs = "the filesystem"
		}
		d.unavailable = fmt.Sprintf("%s (device %s) has no block device visible in the pod", fs, majMin)
		return d
	}
	d.name = filepath.Base(sys)
	if _, err := os.Stat(filepath.Join(sys, "partition")); err == nil {
		d.partition = d.name
		d.name = filepath.Base(filepath.Dir(sys))
	}
	return d
}

// findMount is the mountinfo line for majMin whose mount point is the longest prefix of dir.
func findMount(majMin, dir string) mount {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return mount{majMin: majMin}
	}
	abs, _ := filepath.Abs(dir)
	best := mount{majMin: majMin}
	for _, line := range strings.Split(string(b), "\n") {
		// id parent maj:min root point options [optional...] - fstype source superoptions
		pre, post, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 6 || len(g) < 2 || f[2] != majMin {
			continue
		}
		point := f[4]
		if (strings.HasPrefix(abs, point) || point == "/") && len(point) >= len(best.point) {
			best = mount{majMin: majMin, point: point, fsType: g[0], source: g[1], options: f[5]}
			if len(g) > 2 {
				best.options += "," + g[2]
			}
		}
	}
	return best
}

// identity is the device's model, rotational flag and active scheduler from /sys/block.
func (d dataDevice) identity() *api.BlockDevice {
	if d.name == "" {
		return nil
	}
	dev := &api.BlockDevice{Name: d.name}
	read := func(f string) string {
		b, _ := os.ReadFile(filepath.Join("/sys/block", d.name, f))
		return strings.TrimSpace(string(b))
	}
	dev.Model = read("device/model")
	if r := read("queue/rotational"); r != "" {
		rot := r == "1"
		dev.Rotational = &rot
	}
	// "mq-deadline [none]": the bracketed one is active.
	if s := read("queue/scheduler"); s != "" {
		if i, j := strings.IndexByte(s, '['), strings.IndexByte(s, ']'); i >= 0 && j > i {
			s = s[i+1 : j]
		}
		dev.Scheduler = s
	}
	return dev
}

// diskSample is one /proc/diskstats line of the data device.
type diskSample struct {
	at                                time.Time
	reads, readSectors, readMillis    int64
	writes, writeSectors, writeMillis int64
	ioTicks                           int64
}

func (d dataDevice) sample() *diskSample {
	if d.name == "" {
		return nil
	}
	name := d.name
	if d.partition != "" {
		name = d.partition // the partition's own counters: the data volume, not the whole disk
	}
	b, err := os.ReadFile("/proc/diskstats")
	if err != nil {
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 13 || f[2] != name {
			continue
		}
		n := func(i int) int64 { v, _ := strconv.ParseInt(f[i], 10, 64); return v }
		return &diskSample{at: time.Now(), reads: n(3), readSectors: n(5), readMillis: n(6),
			writes: n(7), writeSectors: n(9), writeMillis: n(10), ioTicks: n(12)}
	}
	return nil
}

// usageSince is the device's use from s0 to s, as iostat computes util and await.
func (s *diskSample) usageSince(s0 *diskSample, name string) *api.DeviceUsage {
	if s == nil || s0 == nil {
		return nil
	}
	u := &api.DeviceUsage{Device: name, ReadBytes: (s.readSectors - s0.readSectors) * 512,
		WriteBytes: (s.writeSectors - s0.writeSectors) * 512, ReadIOs: s.reads - s0.reads, WriteIOs: s.writes - s0.writes}
	if wall := s.at.Sub(s0.at).Milliseconds(); wall > 0 {
		u.Utilization = round6(min(1, float64(s.ioTicks-s0.ioTicks)/float64(wall)))
	}
	if ios := u.ReadIOs + u.WriteIOs; ios > 0 {
		u.AwaitSeconds = round6(float64(s.readMillis-s0.readMillis+s.writeMillis-s0.writeMillis) / 1e3 / float64(ios))
	}
	return u
}
