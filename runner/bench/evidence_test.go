package bench_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/runner/bench"
	runnerreport "github.com/kvbench/kvbench-operator/runner/report"
)

// Every engine's run records its provenance and, per phase, the engine's own statistics, the
// process's CPU split and peak RSS, and the data device (or why there is none).
func TestRunRecordsEvidence(t *testing.T) {
	want := map[api.EngineName]string{api.EngineRocksDB: "[DBOptions]", api.EngineLevelDB: "write_buffer_size=",
		api.EnginePebble: "[Options]"}
	for eng, optionsMark := range want {
		t.Run(string(eng), func(t *testing.T) {
			dir := dbDir(t) // tmpfs when there is one: no block device
			cfg := api.RunnerConfig{Engine: api.EngineSpec{Name: eng}, DBPath: dir, Threads: []int32{1},
				Dataset:   api.DatasetSpec{Num: i64(20000), LoadMode: api.LoadNone},
				Workloads: []api.WorkloadSpec{{Name: "fillrandom"}, {Name: "readrandom"}}}
			res, out, err := run(t, cfg)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			p := res.Provenance
			if p == nil {
				t.Fatal("no provenance")
			}
			if p.Seed != 301 || !strings.HasPrefix(p.SpecHash, "sha256:") || p.GoVersion == "" {
				t.Errorf("provenance seed %d (want the default 301 written down), spec hash %q, go %q", p.Seed, p.SpecHash, p.GoVersion)
			}
			if p.OptionsFile == nil || !strings.Contains(p.OptionsFile.Text, optionsMark) {
				t.Errorf("options file %+v: want one containing %q", p.OptionsFile, optionsMark)
			}
			if n := p.Node; n == nil || n.CPUs < 1 || n.Kernel == "" || n.MemoryBytes <= 0 || n.DataFilesystem == "" {
				t.Errorf("node fingerprint %+v", n)
			} else if (n.Device == nil) == (n.DeviceUnavailable == "") {
				t.Errorf("node: want exactly one of device %+v and deviceUnavailable %q", n.Device, n.DeviceUnavailable)
			} else if n.DataFilesystem == "tmpfs" && !strings.Contains(n.DeviceUnavailable, "tmpfs") {
				t.Errorf("tmpfs data dir: deviceUnavailable %q should say tmpfs", n.DeviceUnavailable)
			}
			// (Module versions, pebble's and grocksdb's, come from the build info, which a test binary lacks.)
			if p.Libraries["rocksdb"] != "7.8.3" || p.Libraries["leveldb"] != "1.23" {
				t.Errorf("libraries %v: want the loaded rocksdb 7.8.3 and leveldb 1.23", p.Libraries)
			}
			fill := phaseByName(t, res, "fillrandom")
			if fill.EngineStats == nil || fill.EngineStats.FlushBytesWritten == nil || fill.EngineStats.LSMBytes == nil {
				t.Errorf("fillrandom engine stats %+v", fill.EngineStats)
			}
			if len(fill.EngineDumps) == 0 {
				t.Errorf("no engine dumps")
			}
			u := fill.Usage
			if u == nil || u.UserCPUSeconds <= 0 || u.MaxRSSBytes <= 0 || u.UserCPUSeconds+u.SystemCPUSeconds > u.CPUSeconds+1e-5 {
				t.Errorf("usage %+v", u)
			}
			if (fill.Device == nil) != (p.Node.Device == nil) {
				t.Errorf("phase device %+v vs node device %+v", fill.Device, p.Node.Device)
			}
			s := runnerreport.Summarize(res)
			if s.Provenance == nil || s.Provenance.Seed != 301 || s.Provenance.Node == "" {
				t.Errorf("summary provenance %+v", s.Provenance)
			}
		})
	}
}

func TestSpecHash(t *testing.T) {
	a := api.RunnerConfig{Engine: api.EngineSpec{Name: "rocksdb"}, Dataset: api.DatasetSpec{Num: i64(10)}}
	b := a
	if bench.SpecHash(&a) != bench.SpecHash(&b) {
		t.Error("same spec, different hashes")
	}
	b.Dataset.Seed = 7
	if bench.SpecHash(&a) == bench.SpecHash(&b) {
		t.Error("different seeds, same hash")
	}
}

// On a disk-backed directory the device is found and its counters are read (skipped only where
// the test's temp dir itself is on a filesystem without a block device).
func TestPhaseDeviceUsageOnDisk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	if _, err := os.Stat("/sys/dev/block"); err != nil {
		t.Skip("no /sys/dev/block")
	}
	cfg := api.RunnerConfig{Engine: api.EngineSpec{Name: api.EngineRocksDB}, DBPath: dir, Threads: []int32{1},
		Dataset: api.DatasetSpec{Num: i64(5000), LoadMode: api.LoadNone}, Workloads: []api.WorkloadSpec{{Name: "fillsync"}}}
	res, out, err := run(t, cfg)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	n := res.Provenance.Node
	if n.Device == nil {
		t.Skipf("temp dir on %s: %s", n.DataFilesystem, n.DeviceUnavailable)
	}
	d := res.Phases[0].Device
	if d == nil || d.WriteIOs <= 0 || d.WriteBytes <= 0 {
		t.Errorf("fillsync on %s: device usage %+v, want writes", n.Device.Name, d)
	}
}

// waitforcompaction (db_bench's pseudo-benchmark) leaves no background work: the next phase sees
// no pending compaction, and its LSM bytes are the table files left on disk.
func TestWaitForCompaction(t *testing.T) {
	for _, eng := range []api.EngineName{api.EngineRocksDB, api.EngineLevelDB, api.EnginePebble} {
		t.Run(string(eng), func(t *testing.T) {
			dir := dbDir(t)
			mib := resource.MustParse("1Mi")
			cfg := api.RunnerConfig{Engine: api.EngineSpec{Name: eng, Options: api.EngineOptions{WriteBufferSize: &mib}},
				DBPath: dir, Threads: []int32{1}, Dataset: api.DatasetSpec{Num: i64(60000), LoadMode: api.LoadNone},
				Workloads: []api.WorkloadSpec{{Name: "fillrandom"}, {Name: "waitforcompaction"}, {Name: "readseq", Num: i64(10)}}}
			res, out, err := run(t, cfg)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if len(res.Phases) != 2 {
				t.Fatalf("%d phases, want fillrandom and readseq", len(res.Phases))
			}
			s := res.Phases[1].EngineStats
			if eng == api.EngineRocksDB && (s.PendingCompactionBytes == nil || *s.PendingCompactionBytes != 0) {
				t.Errorf("pending compaction bytes %v after waitforcompaction", s.PendingCompactionBytes)
			}
			var disk int64
			files, _ := filepath.Glob(filepath.Join(dir, "*"))
			for _, f := range files {
				if ext := filepath.Ext(f); ext == ".sst" || ext == ".ldb" {
					st, _ := os.Stat(f)
					disk += st.Size()
				}
			}
			if s.LSMBytes == nil || float64(*s.LSMBytes) < 0.9*float64(disk) || float64(*s.LSMBytes) > 1.1*float64(disk) {
				t.Errorf("lsm bytes %v, table files on disk %d", s.LSMBytes, disk)
			}
			// The run's totals are the counters since open: at least the fill's, settled.
			tot, fill := res.EngineTotals, res.Phases[0].EngineStats
			if tot == nil || tot.FlushBytesWritten == nil || *tot.FlushBytesWritten < *fill.FlushBytesWritten ||
				*tot.CompactionBytesWritten < *fill.CompactionBytesWritten || *tot.LSMBytes != *s.LSMBytes {
				t.Errorf("engine totals %+v, fill phase %+v", tot, fill)
			}
		})
	}
}
