package bench

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/runner/engine"
	_ "github.com/kvbench/kvbench-operator/runner/engine/all"
	"github.com/kvbench/kvbench-operator/runner/keygen"
)

// draws counts the operations a mix picks over n uniform draws, as the YCSB hot loop draws them.
func draws(m mix, n int) [numOpKinds]int {
	var c [numOpKinds]int
	r := keygen.NewSplitMix(42)
	ops := newYCSBOps(m)
	for i := 0; i < n; i++ {
		c[ops.pick(r.Float64())]++
	}
	return c
}

// Pegasus's RW ratios (seed 004) as readWriteRatio: reads get R/(R+W) of the operations and the
// letter's write operation the rest, at per-million resolution.
func TestYCSBReadWriteRatioMix(t *testing.T) {
	const n = 200_000
	writeOf := map[api.YCSBWorkload][]opKind{"A": {opUpdate}, "B": {opUpdate}, "C": {opUpdate}, "D": {opInsert},
		"E": {opScan, opInsert}, "F": {opRMW}}
	for letter, writes := range writeOf {
		for _, c := range []struct {
			ratio    string
			wantRead float64
		}{{"30:1", 30.0 / 31}, {"0:1", 0}, {"1:0", 1}, {"1:3", 0.25}, {"3:1", 0.75}} {
			m, err := ycsbMix(&api.YCSBSpec{Workload: letter, ReadWriteRatio: c.ratio})
			if err != nil {
				t.Fatalf("%s %s: %v", letter, c.ratio, err)
			}
			if m.read+m.update+m.insert+m.scan+m.rmw != mixScale {
				t.Errorf("%s %s: mix %+v does not sum to %d", letter, c.ratio, m, mixScale)
			}
			// Exact to the per-million rounding.
			if d := float64(m.read)/mixScale - c.wantRead; d > 1e-6 || d < -1e-6 {
				t.Errorf("%s %s: read share %d ppm, want %.6f", letter, c.ratio, m.read, c.wantRead)
			}
			got := draws(m, n)
			var w int
			for _, k := range writes {
				w += got[k]
			}
			if got[opRead]+w != n {
				t.Errorf("%s %s: draws %v: operations other than read and %v", letter, c.ratio, got, writes)
			}
			share := float64(got[opRead]) / n
			switch c.wantRead {
			case 0:
				if got[opRead] != 0 {
					t.Errorf("%s 0:1: %d reads", letter, got[opRead])
				}
			case 1:
				if w != 0 {
					t.Errorf("%s 1:0: %d writes", letter, w)
				}
			default:
				if share < c.wantRead-0.003 || share > c.wantRead+0.003 {
					t.Errorf("%s %s: %.4f reads over %d draws, want %.4f ± 0.003", letter, c.ratio, share, n, c.wantRead)
				}
			}
		}
	}
	// 30:1 is 96.7742% reads, which whole percents could not express.
	m, _ := ycsbMix(&api.YCSBSpec{Workload: "A", ReadWriteRatio: "30:1"})
	if m.read != 967742 || m.update != 32258 {
		t.Errorf("30:1 = %d:%d ppm, want 967742:32258", m.read, m.update)
	}
}

func TestYCSBReadPercentStillApplies(t *testing.T) {
	for _, c := range []struct {
		letter api.YCSBWorkload
		pct    int32
		want   mix
	}{
		{"A", 90, mix{read: 900_000, update: 100_000}},
		{"C", 0, mix{update: mixScale}},
		{"D", 80, mix{read: 800_000, insert: 200_000}},
		{"E", 50, mix{read: 500_000, scan: 475_000, insert: 25_000}},
		{"F", 100, mix{read: mixScale}},
	} {
		m, err := ycsbMix(&api.YCSBSpec{Workload: c.letter, ReadPercent: &c.pct})
		if err != nil {
			t.Fatal(err)
		}
		if !m.readAll || m.writeAll || m.overwrite {
			t.Errorf("%s: %+v, want YCSB's defaults readallfields=true, writeallfields=false, merge", c.letter, m)
		}
		m.dist, m.maxScan, m.readAll = "", 0, false
		if m != c.want {
			t.Errorf("%s readPercent %d: %+v, want %+v", c.letter, c.pct, m, c.want)
		}
	}
	// The letters' own mixes are unchanged by the finer resolution.
	m, _ := ycsbMix(&api.YCSBSpec{Workload: "B"})
	if m.read != 950_000 || m.update != 50_000 {
		t.Errorf("B: %+v", m)
	}
}

// Without the API server (kvbench-runner run --config-json) the runner rejects what the CRD does.
func TestYCSBReadWriteRatioErrors(t *testing.T) {
	pct := int32(50)
	for _, c := range []struct {
		spec api.YCSBSpec
		want string
	}{
		{api.YCSBSpec{Workload: "A", ReadWriteRatio: "30"}, `readWriteRatio "30" must be R:W`},
		{api.YCSBSpec{Workload: "A", ReadWriteRatio: "1:2:3"}, "must be R:W"},
		{api.YCSBSpec{Workload: "A", ReadWriteRatio: "-1:2"}, "must be R:W"},
		{api.YCSBSpec{Workload: "A", ReadWriteRatio: " 1:2"}, "must be R:W"},
		{api.YCSBSpec{Workload: "A", ReadWriteRatio: "1234567:1"}, "at most 6 digits"},
		{api.YCSBSpec{Workload: "A", ReadWriteRatio: "0:0"}, `readWriteRatio "0:0" has no operations`},
		{api.YCSBSpec{Workload: "A", ReadWriteRatio: "000:00"}, "has no operations"},
		{api.YCSBSpec{Workload: "A", ReadWriteRatio: "3:1", ReadPercent: &pct}, "set readPercent or readWriteRatio, not both"},
	} {
		_, err := ycsbMix(&c.spec)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err %v, want %q", c.spec, err, c.want)
		}
	}
	// Run reports the same error before it opens anything.
	cfg := api.RunnerConfig{Engine: api.EngineSpec{Name: api.EnginePebble}, DBPath: filepath.Join(t.TempDir(), "db"),
		Dataset:   api.DatasetSpec{LoadMode: api.LoadNone, YCSB: &api.YCSBRecordSpec{}},
		Workloads: []api.WorkloadSpec{{Name: api.WorkloadYCSB, YCSB: &api.YCSBSpec{Workload: "B", ReadWriteRatio: "0:0"}}}}
	if _, err := Run(context.Background(), cfg, Options{}); err == nil || !strings.Contains(err.Error(), "has no operations") {
		t.Errorf("Run: %v", err)
	}
}

// End to end on a real engine: the phase's operation breakdown follows the ratio.
func TestYCSBReadWriteRatioRun(t *testing.T) {
	num := int64(2000)
	ops := int64(10_000)
	var ws []api.WorkloadSpec
	for _, r := range []string{"30:1", "0:1", "1:0"} {
		ws = append(ws, api.WorkloadSpec{Name: api.WorkloadYCSB, Num: &ops, YCSB: &api.YCSBSpec{Workload: "A", ReadWriteRatio: r}})
	}
	cfg := api.RunnerConfig{Engine: api.EngineSpec{Name: api.EnginePebble}, DBPath: filepath.Join(t.TempDir(), "db"),
		Threads: []int32{2}, Dataset: api.DatasetSpec{Num: &num, LoadMode: api.LoadBulk, YCSB: &api.YCSBRecordSpec{}}, Workloads: ws}
	res, err := Run(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Phases) != 3 {
		t.Fatalf("phases %+v", res.Phases)
	}
	byName := func(p api.PhaseResult) map[string]int64 {
		m := map[string]int64{}
		for _, o := range p.Operations {
			m[o.Name] = o.Ops
		}
		return m
	}
	if o := byName(res.Phases[0]); o["READ"]+o["UPDATE"] != 2*ops || float64(o["READ"])/float64(2*ops) < 0.955 {
		t.Errorf("30:1: %v", o)
	}
	if o := byName(res.Phases[1]); o["READ"] != 0 || o["UPDATE"] != 2*ops {
		t.Errorf("0:1: %v", o)
	}
	if o := byName(res.Phases[2]); o["UPDATE"] != 0 || o["READ"] != 2*ops {
		t.Errorf("1:0: %v", o)
	}
	// The configured ratio is recorded, so a result file read on its own reports it (not 97:3 sampled).
	for i, r := range []string{"30:1", "0:1", "1:0"} {
		if got := res.Phases[i].ReadWriteRatio; got != r {
			t.Errorf("phase %d readWriteRatio %q, want %q", i, got, r)
		}
	}
}

// YCSB E's scans open their iterator on the current state, as YCSB's client does, so they see the
// records inserted during the phase. Over a 10-record dataset with scans of up to 1000 records, a
// scan on a snapshot taken when the thread started could pass at most the 10 loaded records.
func TestYCSBEScansSeeInserts(t *testing.T) {
	ds, err := ResolveDataset(api.DatasetSpec{Num: ptr(int64(10)), LoadMode: api.LoadNone, YCSB: &api.YCSBRecordSpec{}})
	if err != nil {
		t.Fatal(err)
	}
	db, err := engine.Open(api.EnginePebble, engine.Config{Path: filepath.Join(t.TempDir(), "db")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rec := make([]byte, ds.ValueMin)
	for v := int64(0); v < ds.Num; v++ {
		if err := db.Put(keygen.YCSBKey(nil, v, true, 1), rec); err != nil {
			t.Fatal(err)
		}
	}
	var inserted atomic.Int64
	w := api.WorkloadSpec{Name: api.WorkloadYCSB, Num: ptr(int64(2000)), YCSB: &api.YCSBSpec{Workload: "E", MaxScanLength: ptr(int32(1000))}}
	p, err := ycsbPhase(db, w, ds, 1, map[uint64]float64{}, &inserted)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{out: io.Discard, reportInterval: time.Second, ds: ds}
	out, err := e.runPhase(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]int64{}
	for _, o := range out.res.Operations {
		ops[o.Name] = o.Ops
	}
	entry := int64(api.YCSBKeyBytes + ds.ValueMin)
	snapshotMax := ops["SCAN"]*ds.Num*entry + ops["INSERT"]*entry
	if ops["INSERT"] == 0 || ops["SCAN"] == 0 {
		t.Fatalf("operations %v", ops)
	}
	if got := out.threads[0].bytes; got <= snapshotMax {
		t.Errorf("scans passed %d bytes, at most %d: they did not see the %d inserted records", got, snapshotMax, ops["INSERT"])
	}
}

func ptr[T any](v T) *T { return &v }

// YCSB records loaded every way: each record 0..n-1 once under its YCSB key, whole. The bulk load
// sorts a few key groups at a time; a budget of 500 numbers makes it take many passes.
func TestYCSBLoad(t *testing.T) {
	defer func(b int64) { ycsbSortBudget = b }(ycsbSortBudget)
	ycsbSortBudget = 500
	const n = 5000
	for _, c := range []struct {
		eng   api.EngineName
		load  api.LoadMode
		shape api.YCSBRecordSpec
	}{
		{api.EngineRocksDB, api.LoadBulk, api.YCSBRecordSpec{}},
		{api.EnginePebble, api.LoadBulk, api.YCSBRecordSpec{InsertOrder: api.YCSBInsertOrdered}},
		{api.EnginePebble, api.LoadBulk, api.YCSBRecordSpec{InsertOrder: api.YCSBInsertOrdered, ZeroPadding: ptr(int32(3)), FieldCount: ptr(int32(2))}},
		{api.EngineLevelDB, api.LoadBulk, api.YCSBRecordSpec{}}, // falls back to puts in YCSB's order
		{api.EngineRocksDB, api.LoadFillSeq, api.YCSBRecordSpec{FieldLength: ptr(int32(10))}},
		{api.EnginePebble, api.LoadFillRandom, api.YCSBRecordSpec{}},
	} {
		name := fmt.Sprintf("%s %s %+v", c.eng, c.load, c.shape)
		path := filepath.Join(t.TempDir(), "db")
		shape := c.shape
		cfg := api.RunnerConfig{Engine: api.EngineSpec{Name: c.eng}, DBPath: path, Threads: []int32{1},
			Dataset:   api.DatasetSpec{Num: ptr(int64(n)), LoadMode: c.load, YCSB: &shape},
			Workloads: []api.WorkloadSpec{{Name: api.WorkloadWaitForCompaction}}}
		res, err := Run(context.Background(), cfg, Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.Load == nil || res.Load.Ops != n {
			t.Fatalf("%s: load %+v", name, res.Load)
		}
		ds, _ := ResolveDataset(cfg.Dataset)
		db, err := engine.Open(c.eng, engine.Config{Path: path, MustExist: true})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]bool{}
		for i := range int64(n) {
			want[string(keygen.YCSBKey(nil, i, !ds.YCSB.ordered, ds.YCSB.zeroPadding))] = true
		}
		it := db.NewIterator()
		got := 0
		for it.SeekToFirst(); it.Valid(); it.Next() {
			if !want[string(it.Key())] || it.ValueSize() != ds.ValueMin {
				t.Fatalf("%s: key %q (%d bytes of value) is not a record's", name, it.Key(), it.ValueSize())
			}
			delete(want, string(it.Key()))
			got++
		}
		it.Close()
		db.Close()
		if got != n || len(want) != 0 {
			t.Errorf("%s: %d records, %d missing", name, got, len(want))
		}
	}
}

// updateMode overwrite puts the written field alone, without a get (the Pegasus binding); merge
// reads the record and puts it whole (YCSB's RocksDB binding).
func TestYCSBUpdateModes(t *testing.T) {
	for _, mode := range []api.YCSBUpdateMode{api.YCSBUpdateMerge, api.YCSBUpdateOverwrite} {
		path := filepath.Join(t.TempDir(), "db")
		cfg := api.RunnerConfig{Engine: api.EngineSpec{Name: api.EnginePebble}, DBPath: path, Threads: []int32{2},
			Dataset: api.DatasetSpec{Num: ptr(int64(1000)), LoadMode: api.LoadBulk, YCSB: &api.YCSBRecordSpec{}},
			Workloads: []api.WorkloadSpec{{Name: api.WorkloadYCSB, Num: ptr(int64(2000)),
				YCSB: &api.YCSBSpec{Workload: "A", UpdateMode: mode}}}}
		res, err := Run(context.Background(), cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		ops := map[string]int64{}
		for _, o := range res.Phases[0].Operations {
			ops[o.Name] = o.Ops
		}
		e := res.Phases[0].EngineOps
		wantGets := ops["READ"] + ops["UPDATE"]
		if mode == api.YCSBUpdateOverwrite {
			wantGets = ops["READ"]
		}
		if e == nil || e.Gets != wantGets || e.Puts != ops["UPDATE"] || ops["UPDATE"] == 0 {
			t.Fatalf("%s: engine calls %+v for %v", mode, e, ops)
		}
		db, err := engine.Open(api.EnginePebble, engine.Config{Path: path, MustExist: true})
		if err != nil {
			t.Fatal(err)
		}
		sizes := map[int]int{}
		it := db.NewIterator()
		for it.SeekToFirst(); it.Valid(); it.Next() {
			sizes[it.ValueSize()]++
		}
		it.Close()
		db.Close()
		oneField := 4 + len("field0") + 4 + 100
		if mode == api.YCSBUpdateMerge && (len(sizes) != 1 || sizes[1140] != 1000) ||
			mode == api.YCSBUpdateOverwrite && (sizes[oneField] == 0 || sizes[oneField]+sizes[1140] != 1000) {
			t.Errorf("%s: record sizes %v", mode, sizes)
		}
	}
}
