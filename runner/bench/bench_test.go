package bench_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/runner/bench"
	"github.com/kvbench/kvbench-operator/runner/dbbench"
	"github.com/kvbench/kvbench-operator/runner/engine"
	_ "github.com/kvbench/kvbench-operator/runner/engine/all"
)

const testNum = 3000

func i64(v int64) *int64 { return &v }
func i32(v int32) *int32 { return &v }

// dbDir is a fresh directory on tmpfs when there is one (fast), else in the test's temp dir.
func dbDir(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		d, err := os.MkdirTemp("/dev/shm", "kvbench-test-")
		if err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			base = d
		}
	}
	return filepath.Join(base, "db")
}

func run(t *testing.T, cfg api.RunnerConfig) (*api.Result, string, error) {
	t.Helper()
	var out bytes.Buffer
	res, err := bench.Run(context.Background(), cfg, bench.Options{Stdout: &out, Stderr: &out})
	return res, out.String(), err
}

func phaseByName(t *testing.T, r *api.Result, name string) api.PhaseResult {
	t.Helper()
	for _, p := range r.Phases {
		if p.Workload == name {
			return p
		}
	}
	t.Fatalf("no phase %s in %+v", name, r.Phases)
	return api.PhaseResult{}
}

// Every engine runs the core db_bench workloads on a real database; the found counts and the
// key count seen by readseq check that writes, reads and deletes did what they say.
func TestEnginesCoreWorkloads(t *testing.T) {
	for _, eng := range []api.EngineName{api.EngineRocksDB, api.EngineLevelDB, api.EnginePebble} {
		t.Run(string(eng), func(t *testing.T) {
			names := []api.WorkloadName{"fillseq", "readrandom", "readseq", "readreverse", "readmissing", "seekrandom",
				"overwrite", "fillrandom", "filluniquerandom", "readrandomwriterandom", "updaterandom", "readwhilewriting",
				"fillsync", "deleteseq", "readrandom"}
			var ws []api.WorkloadSpec
			for _, n := range names {
				w := api.WorkloadSpec{Name: n}
				if n == "seekrandom" {
					w.SeekNexts = i32(3)
				}
				if n == "readwhilewriting" {
					w.WritesPerSecond = i64(2000)
				}
				ws = append(ws, w)
			}
			cfg := api.RunnerConfig{Engine: api.EngineSpec{Name: eng}, DBPath: dbDir(t), Threads: []int32{2},
				Dataset: api.DatasetSpec{Num: i64(testNum), LoadMode: api.LoadNone}, Workloads: ws}
			res, out, err := run(t, cfg)
			if err != nil {
				t.Fatalf("run: %v\n%s", err, out)
			}
			if res.EngineVersion == "" || !strings.HasPrefix(res.EngineVersion, string(eng)) {
				t.Errorf("engine version %q", res.EngineVersion)
			}
			if len(res.Phases) != len(names) {
				t.Fatalf("%d phases, want %d", len(res.Phases), len(names))
			}
			for i, p := range res.Phases {
				if p.Workload != string(names[i]) || p.Threads != 2 || p.Ops <= 0 || p.OpsPerSec <= 0 || p.LatencyMicros == nil {
					t.Errorf("phase %d: %+v", i, p.PhaseSummary)
				}
				if !strings.Contains(out, report(p.Workload)) {
					t.Errorf("no db_bench line for %s", p.Workload)
				}
			}
			// Both threads write all keys in fillseq, so every read finds its key.
			rr := res.Phases[1]
			if rr.Ops != 2*testNum || *rr.Found != 2*testNum {
				t.Errorf("readrandom after fillseq: %d of %d found", *rr.Found, rr.Ops)
			}
			if rs := res.Phases[2]; rs.Ops != 2*testNum {
				t.Errorf("readseq saw %d entries, want %d per thread", rs.Ops, testNum)
			}
			if rm := res.Phases[4]; *rm.Found != 0 {
				t.Errorf("readmissing found %d", *rm.Found)
			}
			if sr := res.Phases[5]; *sr.Found != sr.Ops {
				t.Errorf("seekrandom: %d of %d exact hits", *sr.Found, sr.Ops)
			}
			rww := res.Phases[11]
			// The writer may run up to bench.WriterQuantum ahead of its schedule, so over a phase of
			// S seconds it does at most 2000*(S+quantum) writes.
			maxRate := 1.1 * 2000 * (rww.Seconds + bench.WriterQuantum.Seconds()) / rww.Seconds
			if rww.WriteRate == nil || *rww.WriteRate <= 0 || *rww.WriteRate > maxRate {
				t.Errorf("readwhilewriting write rate %v, want (0, %.0f]", ptrVal(rww.WriteRate), maxRate)
			}
			if rs := res.Phases[12]; rs.Ops != 2*(testNum/1000) {
				t.Errorf("fillsync ops %d, want num/1000 per thread", rs.Ops)
			}
			// deleteseq removed every key.
			if last := res.Phases[14]; *last.Found != 0 {
				t.Errorf("readrandom after deleteseq found %d", *last.Found)
			}
		})
	}
}

func report(name string) string { return name + strings.Repeat(" ", max(0, 12-len(name))) + " :" }

// A bulk load (ingest where the engine can, batched puts on LevelDB) leaves exactly the dataset.
func TestLoadModes(t *testing.T) {
	for _, eng := range []api.EngineName{api.EngineRocksDB, api.EnginePebble, api.EngineLevelDB} {
		for _, mode := range []api.LoadMode{api.LoadBulk, api.LoadFillRandom} {
			t.Run(string(eng)+"/"+string(mode), func(t *testing.T) {
				size := resource.MustParse("600Ki")
				cfg := api.RunnerConfig{Engine: api.EngineSpec{Name: eng}, DBPath: dbDir(t),
					Dataset:   api.DatasetSpec{Size: &size, ValueSizeRange: &api.SizeRange{Min: 30, Max: 101}, LoadMode: mode, KeySize: 40},
					CacheMode: api.CacheCold,
					Workloads: []api.WorkloadSpec{{Name: "readseq"}, {Name: "readrandom"}}}
				res, out, err := run(t, cfg)
				if err != nil {
					t.Fatalf("%v\n%s", err, out)
				}
				n := res.Dataset.Num
				if n != 5824 { // round(614400 / (40 + 65.5))
					t.Errorf("num %d from 600Ki", n)
				}
				if res.Load == nil || res.Load.Ops != n {
					t.Fatalf("load: %+v", res.Load)
				}
				if rs := phaseByName(t, res, "readseq"); rs.Ops != n {
					t.Errorf("readseq saw %d keys, want %d", rs.Ops, n)
				}
				if rr := phaseByName(t, res, "readrandom"); *rr.Found != n {
					t.Errorf("readrandom found %d of %d", *rr.Found, n)
				}
			})
		}
	}
}

// Pulse rounds: each reads existing keys (all found), then grows by writes-deletes.
func TestPulseRoundAccounting(t *testing.T) {
	const rounds, reads, writes, deletes = 4, 500, 300, 100
	cfg := api.RunnerConfig{Engine: api.EngineSpec{Name: api.EngineRocksDB}, DBPath: dbDir(t), Threads: []int32{2},
		Dataset: api.DatasetSpec{Num: i64(2000), LoadMode: api.LoadBulk},
		Workloads: []api.WorkloadSpec{
			{Name: "pulse", Pulse: &api.PulseSpec{Reads: reads, Writes: writes, Deletes: deletes, Rounds: rounds,
				Interval: metav1.Duration{Duration: 20 * time.Millisecond}}},
			{Name: "readseq", Num: i64(1 << 30)}, // readseq stops at the last key
		}}
	res, out, err := run(t, cfg)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	p := res.Phases[0]
	if len(p.PulseRounds) != rounds || p.Pulse == nil || p.Pulse.Rounds != rounds {
		t.Fatalf("rounds: %+v", p.PulseRounds)
	}
	for _, r := range p.PulseRounds {
		if r.Found != reads {
			t.Errorf("round %d found %d of %d", r.Round, r.Found, reads)
		}
		if sum := r.ReadSeconds + r.WriteSeconds + r.DeleteSeconds; sum > r.TotalSeconds+1e-5 {
			t.Errorf("round %d: parts %.6f exceed total %.6f", r.Round, sum, r.TotalSeconds)
		}
	}
	if p.Ops != rounds*(reads+writes+deletes) || *p.Found != rounds*reads {
		t.Errorf("ops %d found %d", p.Ops, *p.Found)
	}
	for _, r := range p.PulseRounds {
		if u := r.ReadUsage; u == nil || u.CPUSeconds <= 0 || u.CPUPercent <= 0 || u.ReadBytes < 0 {
			t.Errorf("round %d: read usage %+v, want the CPU the reads took", r.Round, u)
		}
	}
	// The load and every phase carry what the process consumed (storage bytes depend on the test's
	// filesystem: none on tmpfs).
	if u := res.Load.Usage; u == nil || u.CPUSeconds <= 0 || u.WriteBytes < 0 {
		t.Errorf("load usage %+v, want the CPU it took", u)
	}
	for _, ph := range res.Phases {
		if ph.Usage == nil || ph.Usage.CPUSeconds <= 0 || ph.Usage.CPUPercent <= 0 {
			t.Errorf("%s: usage %+v", ph.Workload, ph.Usage)
		}
	}
	if p.Seconds < 3*0.02 {
		t.Errorf("rounds did not wait for the interval: %.3fs", p.Seconds)
	}
	// Each of the 2 readseq threads sees the whole grown database.
	if rs := res.Phases[1]; rs.Ops != 2*(2000+rounds*(writes-deletes)) {
		t.Errorf("readseq saw %d, want %d", rs.Ops, 2*(2000+rounds*(writes-deletes)))
	}
	if !strings.Contains(out, "pulse round 3: read:500 found:500") {
		t.Errorf("no round line in output:\n%s", out)
	}
}

// YCSB's letters on real engines: YCSB's operation names, its counts (a read-modify-write is also
// a READ and an UPDATE), and the engine calls YCSB's RocksDB binding makes for them.
func TestYCSBWorkloads(t *testing.T) {
	var ws []api.WorkloadSpec
	for _, l := range []api.YCSBWorkload{"A", "B", "C", "D", "E", "F"} {
		ws = append(ws, api.WorkloadSpec{Name: "ycsb", Num: i64(1000), YCSB: &api.YCSBSpec{Workload: l}})
	}
	for _, eng := range []api.EngineName{api.EnginePebble, api.EngineRocksDB} {
		cfg := api.RunnerConfig{Engine: api.EngineSpec{Name: eng}, DBPath: dbDir(t), Threads: []int32{2},
			Dataset: api.DatasetSpec{Num: i64(2000), LoadMode: api.LoadBulk, YCSB: &api.YCSBRecordSpec{}}, Workloads: ws}
		res, out, err := run(t, cfg)
		if err != nil {
			t.Fatalf("%s: %v\n%s", eng, err, out)
		}
		if res.Dataset.KeySize != api.YCSBKeyBytes || res.Dataset.ValueSizeAvg != 1140 {
			t.Errorf("%s: dataset %+v, want YCSB's records (23-byte keys counted, 10 x 100 bytes as 1140)", eng, res.Dataset)
		}
		want := map[string][]string{"ycsb-a": {"READ", "UPDATE"}, "ycsb-b": {"READ", "UPDATE"}, "ycsb-c": {"READ"},
			"ycsb-d": {"READ", "INSERT"}, "ycsb-e": {"INSERT", "SCAN"}, "ycsb-f": {"READ", "UPDATE", "READ-MODIFY-WRITE"}}
		for _, p := range res.Phases {
			var got []string
			o := map[string]int64{}
			for _, op := range p.Operations {
				got = append(got, op.Name)
				o[op.Name] = op.Ops
			}
			if strings.Join(got, ",") != strings.Join(want[p.Workload], ",") {
				t.Errorf("%s %s: operations %v, want %v", eng, p.Workload, got, want[p.Workload])
			}
			rmw := o["READ-MODIFY-WRITE"]
			if txn := o["READ"] - rmw + o["UPDATE"] - rmw + o["INSERT"] + o["SCAN"] + rmw; txn != 2000 || p.Ops != 2000 {
				t.Errorf("%s %s: %d transactions (%v), phase ops %d, want 2000", eng, p.Workload, txn, o, p.Ops)
			}
			// merge updates: a get and a put each; every record read exists.
			e := p.EngineOps
			if e == nil || e.Gets != o["READ"]+o["UPDATE"] || e.Puts != o["UPDATE"]+o["INSERT"] || e.Seeks != o["SCAN"] ||
				(o["SCAN"] > 0) != (e.Nexts > 0) {
				t.Errorf("%s %s: engine calls %+v for %v", eng, p.Workload, e, o)
			} else if *p.Found != e.Gets {
				t.Errorf("%s %s: found %d of %d gets", eng, p.Workload, *p.Found, e.Gets)
			}
		}
	}
}

// Bad input: a clear error, and phases that completed are kept.
func TestErrors(t *testing.T) {
	base := func() api.RunnerConfig {
		return api.RunnerConfig{Engine: api.EngineSpec{Name: api.EngineRocksDB}, DBPath: dbDir(t),
			Dataset: api.DatasetSpec{Num: i64(100), LoadMode: api.LoadNone}, Workloads: []api.WorkloadSpec{{Name: "fillseq"}}}
	}
	bloom := int32(10)
	cases := []struct {
		name string
		mod  func(c *api.RunnerConfig)
		want string
	}{
		{"unknown engine", func(c *api.RunnerConfig) { c.Engine.Name = "wiredtiger" }, `unknown engine "wiredtiger"`},
		{"unknown workload", func(c *api.RunnerConfig) { c.Workloads[0].Name = "fillfast" }, `unknown workload "fillfast"`},
		{"zero num", func(c *api.RunnerConfig) { c.Dataset.Num = i64(0) }, "num 0 must be at least 1"},
		{"absurd num", func(c *api.RunnerConfig) { c.Dataset.Num = i64(1 << 50) }, "absurd"},
		{"missing db", func(c *api.RunnerConfig) { c.Dataset.LoadMode = api.LoadExisting }, "no database at"},
		{"unsupported option", func(c *api.RunnerConfig) {
			c.Engine.Name = api.EngineLevelDB
			c.Engine.Options.DisableWAL = new(bool)
			c.Engine.Options.BloomBits = &bloom
		}, "engine leveldb does not support option(s): [disableWAL]"},
		{"direct on pebble", func(c *api.RunnerConfig) { c.Engine.Name = api.EnginePebble; c.CacheMode = api.CacheDirect }, "direct I/O"},
		{"db_bench argument that is not a flag", func(c *api.RunnerConfig) {
			c.Workloads = []api.WorkloadSpec{{Name: api.WorkloadDBBench, DBBenchArgs: []string{"--benchmarks=fillseq", "readrandom"}}}
		}, `"readrandom" is not a --flag`},
		{"ycsb on db_bench keys", func(c *api.RunnerConfig) {
			c.Workloads = []api.WorkloadSpec{{Name: api.WorkloadYCSB, YCSB: &api.YCSBSpec{Workload: "A"}}}
		}, "ycsb workloads need YCSB's records: dataset.ycsb"},
		{"db_bench workload on YCSB records", func(c *api.RunnerConfig) {
			c.Dataset.YCSB = &api.YCSBRecordSpec{}
			c.Workloads = append(c.Workloads, api.WorkloadSpec{Name: api.WorkloadYCSB, YCSB: &api.YCSBSpec{Workload: "A"}})
		}, "workload fillseq needs db_bench's keys"},
		{"key size on YCSB records", func(c *api.RunnerConfig) {
			c.Dataset.YCSB, c.Dataset.KeySize = &api.YCSBRecordSpec{}, 24
			c.Workloads = []api.WorkloadSpec{{Name: api.WorkloadYCSB, YCSB: &api.YCSBSpec{Workload: "A"}}}
		}, "keySize, valueSize, valueSizeRange, prefixSize and keysPerPrefix do not apply"},
		{"too many fields", func(c *api.RunnerConfig) {
			n := int32(2000)
			c.Dataset.YCSB = &api.YCSBRecordSpec{FieldCount: &n}
			c.Workloads = []api.WorkloadSpec{{Name: api.WorkloadYCSB, YCSB: &api.YCSBSpec{Workload: "A"}}}
		}, "fieldCount 2000 out of range [1, 1000]"},
		{"record over 1Mi", func(c *api.RunnerConfig) {
			l := int32(200_000)
			c.Dataset.YCSB = &api.YCSBRecordSpec{FieldLength: &l}
			c.Workloads = []api.WorkloadSpec{{Name: api.WorkloadYCSB, YCSB: &api.YCSBSpec{Workload: "A"}}}
		}, "fieldCount x fieldLength at most 1Mi"},
		{"unknown insert order", func(c *api.RunnerConfig) {
			c.Dataset.YCSB = &api.YCSBRecordSpec{InsertOrder: "random"}
			c.Workloads = []api.WorkloadSpec{{Name: api.WorkloadYCSB, YCSB: &api.YCSBSpec{Workload: "A"}}}
		}, `unknown insertOrder "random"`},
		{"unknown update mode", func(c *api.RunnerConfig) {
			c.Dataset.YCSB = &api.YCSBRecordSpec{}
			c.Workloads = []api.WorkloadSpec{{Name: api.WorkloadYCSB, YCSB: &api.YCSBSpec{Workload: "A", UpdateMode: "blind"}}}
		}, `unknown updateMode "blind"`},
		{"plain table on YCSB keys", func(c *api.RunnerConfig) {
			c.Dataset.YCSB, c.Engine.Options.PlainTable = &api.YCSBRecordSpec{}, new(bool)
			*c.Engine.Options.PlainTable = true
			c.Workloads = []api.WorkloadSpec{{Name: api.WorkloadYCSB, YCSB: &api.YCSBSpec{Workload: "A"}}}
		}, "plainTable needs fixed-length keys"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := base()
			c.mod(&cfg)
			res, _, err := run(t, cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
			if res == nil || res.Error != err.Error() || strings.Contains(res.Error, "\n") {
				t.Errorf("result error %q", res.Error)
			}
		})
	}
	// A failure after a completed phase keeps that phase.
	cfg := base()
	cfg.Workloads = append(cfg.Workloads, api.WorkloadSpec{Name: "dbbench", DBBenchArgs: []string{"--benchmarks=nosuchbench"}})
	res, _, err := run(t, cfg)
	if err == nil || len(res.Phases) != 1 || res.Phases[0].Workload != "fillseq" {
		t.Fatalf("err %v, phases %+v", err, res.Phases)
	}
}

// The key format is db_bench's: a database written by Debian's db_bench is read by the runner
// with the same found count, and the reverse.
func TestDBBenchKeyCompatibility(t *testing.T) {
	if _, err := os.Stat(dbbench.DefaultBinary); err != nil {
		t.Fatal("db_bench not installed: run hack/install-deps.sh (Debian rocksdb-tools); the key-compatibility test needs the real db_bench")
	}
	const n = 5000
	args := []string{"--num=5000", "--key_size=20", "--value_size=50", "--threads=1", "--compression_type=none"}
	t.Run("dbbench writes, runner reads", func(t *testing.T) {
		dir := dbDir(t)
		var out bytes.Buffer
		_, version, err := dbbench.Run(context.Background(), "", append(args, "--benchmarks=fillrandom"), dir, &out, &out)
		if version != "db_bench 7.8.3" {
			t.Errorf("db_bench version %q, want the Debian package's %q", version, "db_bench 7.8.3")
		}
		if err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		// db_bench's readseq count is the number of distinct keys its fillrandom made.
		phases, _, err := dbbench.Run(context.Background(), "", append(args, "--benchmarks=readseq", "--use_existing_db=1"), dir, &out, &out)
		if err != nil {
			t.Fatal(err)
		}
		distinct := phases[0].Ops
		cfg := api.RunnerConfig{Engine: api.EngineSpec{Name: api.EngineRocksDB}, DBPath: dir,
			Dataset:   api.DatasetSpec{Num: i64(n), KeySize: 20, ValueSize: 50, LoadMode: api.LoadExisting},
			Workloads: []api.WorkloadSpec{{Name: "readseq"}, {Name: "readrandom", Num: i64(20000)}}}
		res, txt, err := run(t, cfg)
		if err != nil {
			t.Fatalf("%v\n%s", err, txt)
		}
		if res.Phases[0].Ops != distinct {
			t.Errorf("runner readseq %d keys, db_bench readseq %d", res.Phases[0].Ops, distinct)
		}
		// Every key the runner generates for 0..n-1 is one db_bench could have written; the found
		// ratio of random reads must match the fraction of distinct keys.
		got := float64(*res.Phases[1].Found) / 20000
		want := float64(distinct) / n
		if got < want-0.03 || got > want+0.03 {
			t.Errorf("runner found %.3f of reads, db_bench wrote %.3f of the key space", got, want)
		}
	})
	t.Run("runner writes, dbbench reads", func(t *testing.T) {
		dir := dbDir(t)
		cfg := api.RunnerConfig{Engine: api.EngineSpec{Name: api.EngineRocksDB}, DBPath: dir,
			Dataset:   api.DatasetSpec{Num: i64(n), KeySize: 20, ValueSize: 50, LoadMode: api.LoadBulk},
			Workloads: []api.WorkloadSpec{{Name: "readrandom"}}}
		res, txt, err := run(t, cfg)
		if err != nil {
			t.Fatalf("%v\n%s", err, txt)
		}
		var out bytes.Buffer
		phases, _, err := dbbench.Run(context.Background(), "", append(args, "--benchmarks=readrandom", "--use_existing_db=1"), dir, &out, &out)
		if err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		if phases[0].Found == nil || *phases[0].Found != n || *res.Phases[0].Found != n {
			t.Errorf("db_bench found %v of %d, runner %d", phases[0].Found, n, *res.Phases[0].Found)
		}
	})
}

var _ = engine.Names

func ptrVal(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// Seed 000's in-memory setup (PlainTable, prefix-hash memtable) with a small write buffer, as
// kubectl kvbench scale makes it: the hash buckets must fit in the buffer, and readwhilewriting
// must find every key while the writer forces flushes.
func TestPlainTableSmallWriteBuffer(t *testing.T) {
	for _, prefix := range []struct{ size, perPrefix int64 }{{20, 0}, {12, 10}} {
		cfg := api.RunnerConfig{
			Engine: api.EngineSpec{Name: api.EngineRocksDB, Options: api.EngineOptions{PlainTable: ptr.To(true),
				MmapRead: ptr.To(true), WriteBufferSize: ptr.To(resource.MustParse("1Mi")), MaxWriteBufferNumber: ptr.To[int32](2)}},
			DBPath: dbDir(t), Threads: []int32{2},
			Dataset: api.DatasetSpec{Num: i64(20000), KeySize: 20, ValueSize: 100, PrefixSize: int32(prefix.size),
				KeysPerPrefix: prefix.perPrefix, LoadMode: api.LoadBulk},
			Workloads: []api.WorkloadSpec{{Name: api.WorkloadReadWhileWriting, Num: i64(20000), WritesPerSecond: i64(20000)}},
		}
		res, out, err := run(t, cfg)
		if err != nil {
			t.Fatalf("prefix %d: %v\n%s", prefix.size, err, out)
		}
		p := res.Phases[0]
		if p.Found == nil || *p.Found != p.Ops || p.WriteRate == nil || *p.WriteRate <= 0 {
			t.Errorf("prefix %d: found %v of %d, write rate %v", prefix.size, p.Found, p.Ops, p.WriteRate)
		}
	}
}
