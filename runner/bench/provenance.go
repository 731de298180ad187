package bench

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/runner/engine"
)

// SpecHash is "sha256:<hex>" of the runner configuration's JSON (Go's encoding is canonical:
// struct fields in order, map keys sorted), so two runs of the same spec share it.
func SpecHash(cfg *api.RunnerConfig) string {
	b, _ := json.Marshal(cfg)
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// BuildRevision names the runner's sources when the build has no VCS information: the image
// build (-buildvcs=false, for reproducible images) sets it with -ldflags -X to "inputs:<hash>", the
// hash of every source file and Debian package version the runner links (hack/build-images.sh).
var BuildRevision string

// modules whose versions name the engine libraries compiled into the runner.
var libraryModules = map[string]string{
	"github.com/cockroachdb/pebble/v2": "pebble",
	"github.com/linxGnu/grocksdb":      "grocksdb",
	"github.com/jmhodges/levigo":       "levigo",
}

// newProvenance records what ran: the runner build, the engine library, the resolved seed, the
// spec's hash, the engine's effective options file and the node as the pod sees it.
func newProvenance(specHash string, ds Dataset, dbPath, userOptions string, dev dataDevice, db engine.DB) *api.Provenance {
	p := &api.Provenance{GoVersion: runtime.Version(), Seed: int64(ds.Seed), SpecHash: specHash,
		Libraries: map[string]string{}}
	if bi, ok := debug.ReadBuildInfo(); ok {
		p.RunnerVersion = bi.Main.Version
		modified := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				p.RunnerRevision = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if modified && p.RunnerRevision != "" {
			p.RunnerRevision += "+dirty"
		}
		if p.RunnerRevision == "" {
			p.RunnerRevision = BuildRevision
		}
		for _, m := range bi.Deps {
			if name, ok := libraryModules[m.Path]; ok {
				p.Libraries[name] = m.Version
			}
		}
	}
	// "rocksdb": "7.8.3", "leveldb": "1.23": the libraries actually loaded, as they report it.
	for name, ver := range engine.LibraryVersions() {
		p.Libraries[name] = ver
	}
	// How the C++ libraries were compiled (assertions on in Debian's packages): recorded by the build.
	if builds, err := engine.LibraryBuilds(); err == nil {
		p.LibraryBuilds = builds
	}
	p.OptionsFile = newestOptionsFile(dbPath)
	if r, ok := db.(engine.OptionsRenderer); ok && p.OptionsFile == nil {
		p.OptionsFile = r.RenderOptions()
	}
	// The user's OPTIONS file (optionsFrom) against the one the engine wrote: the keys that did not
	// take effect as the user wrote them.
	if r, ok := db.(engine.OptionsFileReplacer); ok && userOptions != "" && p.OptionsFile != nil {
		if user, err := os.ReadFile(userOptions); err == nil {
			p.OptionsOverrides = engine.OptionsOverrides(string(user), p.OptionsFile.Text, r.OptionsFileReplacements())
		}
	}
	p.Node = nodeFingerprint(dev)
	return p
}

// newestOptionsFile is RocksDB's or Pebble's newest OPTIONS-<n> file in the database directory.
func newestOptionsFile(dir string) *api.NamedText {
	files, _ := filepath.Glob(filepath.Join(dir, "OPTIONS-*"))
	best, bestN := "", int64(-1)
	for _, f := range files {
		base := filepath.Base(f)
		if strings.HasSuffix(base, ".dbtmp") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimPrefix(base, "OPTIONS-"), 10, 64)
		if err == nil && n > bestN {
			best, bestN = f, n
		}
	}
	if best == "" {
		return nil
	}
	b, err := os.ReadFile(best)
	if err != nil {
		return nil
	}
	return &api.NamedText{Name: filepath.Base(best), Text: string(b)}
}

// nodeFingerprint is the machine, the pod's cgroup limits and the data directory's storage.
func nodeFingerprint(dev dataDevice) *api.NodeFingerprint {
	n := &api.NodeFingerprint{NodeName: os.Getenv("NODE_NAME")}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), ":")
			if !ok {
				continue
			}
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			switch k {
			case "processor":
				n.CPUs++
			case "model name":
				if n.CPUModel == "" {
					n.CPUModel = v
				}
			case "cpu MHz":
				if n.CPUMHz == 0 {
					n.CPUMHz, _ = strconv.ParseFloat(v, 64)
				}
			}
		}
	}
	var uts unix.Utsname
	if unix.Uname(&uts) == nil {
		n.Kernel = unix.ByteSliceToString(uts.Release[:])
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				n.MemoryBytes = kb * 1024
			}
		}
	}
	n.CgroupMemoryLimitBytes, n.CgroupCPULimit = cgroupLimits("/sys/fs/cgroup")
	n.DataFilesystem, n.DataMountOptions = dev.mount.fsType, dev.mount.options
	n.Device = dev.identity()
	n.DeviceUnavailable = dev.unavailable
	return n
}

// cgroupLimits reads the memory limit (bytes) and CPU quota (cores) of cgroup v2, else v1; nil
// when unlimited or unreadable.
func cgroupLimits(root string) (*int64, *float64) {
	read := func(f string) string {
		b, _ := os.ReadFile(filepath.Join(root, f))
		return strings.TrimSpace(string(b))
	}
	var mem *int64
	var cpu *float64
	if v := read("memory.max"); v != "" { // v2
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			mem = &n
		}
		if f := strings.Fields(read("cpu.max")); len(f) == 2 && f[0] != "max" {
			q, _ := strconv.ParseFloat(f[0], 64)
			p, _ := strconv.ParseFloat(f[1], 64)
			if p > 0 {
				c := q / p
				cpu = &c
			}
		}
		return mem, cpu
	}
	// v1: "unlimited" is a huge number (page-rounded LLONG_MAX).
	if n, err := strconv.ParseInt(read("memory/memory.limit_in_bytes"), 10, 64); err == nil && n < 1<<62 {
		mem = &n
	}
	q, err1 := strconv.ParseFloat(read("cpu/cpu.cfs_quota_us"), 64)
	p, err2 := strconv.ParseFloat(read("cpu/cpu.cfs_period_us"), 64)
	if err1 == nil && err2 == nil && q > 0 && p > 0 {
		c := q / p
		cpu = &c
	}
	return mem, cpu
}
