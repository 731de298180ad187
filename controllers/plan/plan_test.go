package plan

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

func TestPlan(t *testing.T) {
	rocks := kvv1.EngineSpec{Name: kvv1.EngineRocksDB, Options: kvv1.EngineOptions{CacheSize: ptr.To(resource.MustParse("1Gi"))}}
	readrandom := kvv1.WorkloadSpec{Name: kvv1.WorkloadReadRandom}
	fill := kvv1.WorkloadSpec{Name: kvv1.WorkloadFillSeq, Threads: []int32{1}}
	warm := kvv1.WorkloadSpec{Name: kvv1.WorkloadReadRandom, Warmup: &kvv1.WarmupSpec{Ops: ptr.To[int64](1000)}}
	base := w.MakeKVBenchmark("b", "ns")

	cfg := func(e kvv1.EngineSpec, ws ...kvv1.WorkloadSpec) kvv1.RunnerConfig {
		return kvv1.RunnerConfig{
			Engine: e, Dataset: base.Obj().Spec.Dataset, Workloads: ws, Threads: []int32{1, 4},
			CacheMode: kvv1.CacheWarm, Repeat: 1, DBPath: "/data/db",
		}
	}
	cases := map[string]struct {
		in   *kvv1.KVBenchmark
		want []Run
	}{
		"one engine, one run with the whole sweep inside": {
			in: base.Obj(),
			want: []Run{{Name: "rocksdb", JobName: "b-rocksdb", Engine: kvv1.EngineSpec{Name: kvv1.EngineRocksDB},
				Config: cfg(kvv1.EngineSpec{Name: kvv1.EngineRocksDB}, readrandom), DatasetBytes: 64 << 20}},
		},
		"three engines in spec order, workloads in order, options kept": {
			in: w.MakeKVBenchmark("b", "ns").Engines(rocks, kvv1.EngineSpec{Name: kvv1.EnginePebble}, kvv1.EngineSpec{Name: kvv1.EngineLevelDB}).
				Workloads(fill, readrandom).Obj(),
			want: []Run{
				{Name: "rocksdb", JobName: "b-rocksdb", Engine: rocks, Config: cfg(rocks, fill, readrandom), DatasetBytes: 64 << 20},
				{Name: "pebble", JobName: "b-pebble", Engine: kvv1.EngineSpec{Name: kvv1.EnginePebble},
					Config: cfg(kvv1.EngineSpec{Name: kvv1.EnginePebble}, fill, readrandom), DatasetBytes: 64 << 20},
				{Name: "leveldb", JobName: "b-leveldb", Engine: kvv1.EngineSpec{Name: kvv1.EngineLevelDB},
					Config: cfg(kvv1.EngineSpec{Name: kvv1.EngineLevelDB}, fill, readrandom), DatasetBytes: 64 << 20},
			},
		},
		"repeat, cache mode and report interval reach the runner": {
			in: w.MakeKVBenchmark("b", "ns").EditSpec(func(s *kvv1.KVBenchmarkSpec) {
				s.Repeat = 3
				s.CacheMode = kvv1.CacheCold
				s.ReportInterval = &metav1.Duration{Duration: 5e9}
			}).Obj(),
			want: []Run{{Name: "rocksdb", JobName: "b-rocksdb", Engine: kvv1.EngineSpec{Name: kvv1.EngineRocksDB},
				Config: func() kvv1.RunnerConfig {
					c := cfg(kvv1.EngineSpec{Name: kvv1.EngineRocksDB}, readrandom)
					c.Repeat, c.CacheMode, c.ReportInterval = 3, kvv1.CacheCold, &metav1.Duration{Duration: 5e9}
					return c
				}(), DatasetBytes: 64 << 20}},
		},
		"settle, reset and warm-ups reach the runner": {
			in: w.MakeKVBenchmark("b", "ns").Workloads(warm).EditSpec(func(s *kvv1.KVBenchmarkSpec) {
				s.Settle = &kvv1.SettleSpec{Timeout: metav1.Duration{Duration: 600e9}}
				s.Reset = kvv1.ResetPerPoint
			}).Obj(),
			want: []Run{{Name: "rocksdb", JobName: "b-rocksdb", Engine: kvv1.EngineSpec{Name: kvv1.EngineRocksDB},
				Config: func() kvv1.RunnerConfig {
					c := cfg(kvv1.EngineSpec{Name: kvv1.EngineRocksDB}, warm)
					c.Settle, c.Reset = &kvv1.SettleSpec{Timeout: metav1.Duration{Duration: 600e9}}, kvv1.ResetPerPoint
					return c
				}(), DatasetBytes: 64 << 20}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Plan(tc.in)); diff != "" {
				t.Errorf("Plan() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlanIsDeterministicAndDoesNotAlias(t *testing.T) {
	b := w.MakeKVBenchmark("b", "ns").Obj()
	first := Plan(b)
	first[0].Config.Threads[0] = 99
	first[0].Config.Workloads[0].Name = "x"
	if diff := cmp.Diff(Plan(w.MakeKVBenchmark("b", "ns").Obj()), Plan(b)); diff != "" {
		t.Errorf("plan aliased the spec (-want +got):\n%s", diff)
	}
}

func TestJobName(t *testing.T) {
	cases := map[string]struct{ bench, run, want string }{
		"short":  {"bench", "rocksdb", "bench-rocksdb"},
		"max 50": {strings.Repeat("a", 50), "leveldb", strings.Repeat("a", 50) + "-leveldb"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := JobName(tc.bench, tc.run); got != tc.want {
				t.Errorf("JobName = %q, want %q", got, tc.want)
			}
		})
	}
	long := JobName(strings.Repeat("b", 70), "rocksdb")
	if len(long) != 63 || long != JobName(strings.Repeat("b", 70), "rocksdb") || long == JobName(strings.Repeat("b", 70), "pebble") {
		t.Errorf("long JobName %q: want 63 chars, stable, distinct per run", long)
	}
}

func TestDatasetBytes(t *testing.T) {
	cases := map[string]struct {
		in   kvv1.DatasetSpec
		want int64
	}{
		"size":             {kvv1.DatasetSpec{Size: ptr.To(resource.MustParse("10Gi"))}, 10 << 30},
		"num x fixed size": {kvv1.DatasetSpec{Num: ptr.To[int64](1000), KeySize: 16, ValueSize: 100}, 116000},
		"num x range avg":  {kvv1.DatasetSpec{Num: ptr.To[int64](1000), KeySize: 16, ValueSize: 100, ValueSizeRange: &kvv1.SizeRange{Min: 30, Max: 101}}, 81000},
		"neither":          {kvv1.DatasetSpec{}, 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := DatasetBytes(tc.in); got != tc.want {
				t.Errorf("DatasetBytes = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestTmpfsBytes(t *testing.T) {
	cases := map[string]struct {
		in   *kvv1.KVBenchmark
		e    kvv1.EngineSpec
		want string
	}{
		"storage.size wins": {w.MakeKVBenchmark("b", "ns").Storage(kvv1.MediumTmpfs, "700Mi", "").Obj(), kvv1.EngineSpec{}, "700Mi"},
		// rocksdb defaults: 8Mi block cache, 2 x 64Mi memtables; threads [1, 4]: 2 x 4 x 1Mi value buffers.
		"memory minus default cache, memtables and overhead": {w.MakeKVBenchmark("b", "ns").Memory("1Gi").Obj(),
			kvv1.EngineSpec{Name: kvv1.EngineRocksDB}, "624Mi"},
		"memory minus cache, point-lookup cache, memtables and overhead": {w.MakeKVBenchmark("b", "ns").Memory("2Gi").Obj(),
			kvv1.EngineSpec{Name: kvv1.EngineRocksDB, Options: kvv1.EngineOptions{CacheSize: ptr.To(resource.MustParse("512Mi")),
				OptimizeForPointLookup: ptr.To(resource.MustParse("100Mi")), WriteBufferSize: ptr.To(resource.MustParse("16Mi")),
				MaxWriteBufferNumber: ptr.To[int32](4)}}, "1108Mi"},
		// leveldb and pebble: 4Mi x 2 memtables by default.
		"pebble defaults": {w.MakeKVBenchmark("b", "ns").Memory("1Gi").Obj(), kvv1.EngineSpec{Name: kvv1.EnginePebble}, "744Mi"},
		// reset perPoint: the least memory the rule admits for the default 64Mi dataset leaves the
		// tmpfs twice the dataset's tables, room for the post-load checkpoint, and the WALs (pebble:
		// 8Mi + 8Mi + 256Mi + 8Mi + 2 x 1.1 x 64Mi + 4 x 1.1 x 4Mi + 8Mi = 446.4Mi).
		"reset perPoint at the rule's minimum": {w.MakeKVBenchmark("b", "ns").Memory("447Mi").EngineNames(kvv1.EnginePebble).
			EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.Reset = kvv1.ResetPerPoint }).Obj(), kvv1.EngineSpec{Name: kvv1.EnginePebble}, "167Mi"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := TmpfsBytes(tc.in, tc.e)
			if want := resource.MustParse(tc.want); got.Cmp(want) != 0 {
				t.Errorf("TmpfsBytes = %s, want %s", got, tc.want)
			}
		})
	}
}

// At the least memory the rule admits, the tmpfs TmpfsBytes sizes holds the engine's whole
// VolumeNeed: tables (twice with a checkpoint, twice more when the sweep writes), WALs and
// metadata; one MiB less is refused. Issue 21: 428Mi gave a 32Mi dataset a 32Mi tmpfs, where
// RocksDB's first preallocated WAL did not fit.
func TestTmpfsAtTheMinimumHoldsTheVolume(t *testing.T) {
	for _, engine := range []kvv1.EngineName{kvv1.EngineRocksDB, kvv1.EngineLevelDB, kvv1.EnginePebble} {
		for name, edit := range map[string]func(*kvv1.KVBenchmarkSpec){
			"read-only":      func(*kvv1.KVBenchmarkSpec) {},
			"fillrandom":     func(s *kvv1.KVBenchmarkSpec) { s.Workloads = []kvv1.WorkloadSpec{{Name: kvv1.WorkloadFillRandom}} },
			"reset perPoint": func(s *kvv1.KVBenchmarkSpec) { s.Reset = kvv1.ResetPerPoint },
			"readrandom+fillrandom x3": func(s *kvv1.KVBenchmarkSpec) {
				s.Workloads, s.Repeat = []kvv1.WorkloadSpec{{Name: kvv1.WorkloadReadRandom}, {Name: kvv1.WorkloadFillRandom}}, 3
			},
		} {
			b := w.MakeKVBenchmark("b", "ns").EngineNames(engine).DatasetSize("32Mi").EditSpec(edit).Obj()
			e := b.Spec.Engines[0]
			need := kvv1.MemoryNeed(&b.Spec, e)
			b.Spec.Resources.Memory = *resource.NewQuantity(int64(math.Ceil(need/(1<<20)))<<20, resource.BinarySI)
			if !kvv1.MemoryFits(&b.Spec) {
				t.Errorf("%s %s: %s does not fit", engine, name, b.Spec.Resources.Memory.String())
			}
			if got, volume := TmpfsBytes(b, e).Value(), kvv1.VolumeNeed(&b.Spec, e); float64(got) < math.Floor(volume) {
				t.Errorf("%s %s: at %s the tmpfs is %d bytes, below the volume need %.0f", engine, name, b.Spec.Resources.Memory.String(), got, volume)
			}
			b.Spec.Resources.Memory = *resource.NewQuantity(b.Spec.Resources.Memory.Value()-1<<20, resource.BinarySI)
			if kvv1.MemoryFits(&b.Spec) {
				t.Errorf("%s %s: %s fits, below the model", engine, name, b.Spec.Resources.Memory.String())
			}
		}
	}
}

// The CRD's CEL rules spell the overhead as 256Mi / 268435456; keep them equal to the constant
// render and TmpfsBytes use.
func TestMemoryOverheadMatchesTheCRD(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	crd, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "config", "crd", "bases", "kvbench.io_kvbenchmarks.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if MemoryOverheadBytes != 256<<20 {
		t.Fatalf("MemoryOverheadBytes = %d; update the CEL memory rule in kvbenchmark_types.go (268435456.0) too", MemoryOverheadBytes)
	}
	for _, s := range []string{"268435456.0", "8388608.0", "67108864.0", "4194304.0"} {
		if !strings.Contains(string(crd), s) {
			t.Errorf("CRD no longer contains %q: the CEL overhead and MemoryOverheadBytes disagree", s)
		}
	}
}
