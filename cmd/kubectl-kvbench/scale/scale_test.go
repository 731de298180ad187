package scale

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

func q(s string) *resource.Quantity { v := resource.MustParse(s); return &v }

// seed002 is examples/seed-002's shape: 10Gi on local NVMe with a 2Gi page-cache cap.
func seed002() *kvv1.KVBenchmark {
	return &kvv1.KVBenchmark{
		ObjectMeta: metav1.ObjectMeta{Name: "seed-002"},
		Spec: kvv1.KVBenchmarkSpec{
			Engines: []kvv1.EngineSpec{{Name: kvv1.EngineLevelDB}, {Name: kvv1.EngineRocksDB,
				Options: kvv1.EngineOptions{CacheSize: q("512Mi"), WriteBufferSize: q("4Mi"), OptimizeForPointLookup: q("8Mi")}}},
			Dataset: kvv1.DatasetSpec{Size: q("10Gi"), KeySize: 40, ValueSizeRange: &kvv1.SizeRange{Min: 30, Max: 101}},
			Workloads: []kvv1.WorkloadSpec{
				{Name: kvv1.WorkloadPulse, Pulse: &kvv1.PulseSpec{Reads: 90000, Writes: 210000, Deletes: 30000,
					Interval: metav1.Duration{Duration: 10 * time.Second}, Rounds: 5}},
				{Name: kvv1.WorkloadReadRandom, Num: ptr.To[int64](1_000_000), Duration: &metav1.Duration{Duration: time.Hour}},
				{Name: kvv1.WorkloadDBBench, DBBenchArgs: []string{"--benchmarks=fillseq", "--num=1000000", "--duration=600", "--value_size=100"}},
			},
			Threads:   []int32{1, 8},
			Resources: kvv1.BenchmarkResources{Memory: resource.MustParse("8Gi")},
			Storage:   kvv1.StorageSpec{Medium: kvv1.MediumLocalNVMe, Size: q("40Gi")},
		},
	}
}

func TestBenchmarkKeepsRatios(t *testing.T) {
	b := seed002()
	got, err := Benchmark(b, Target{Size: q("1Gi")}) // a tenth
	if err != nil {
		t.Fatal(err)
	}
	s := got.Spec
	checks := []struct {
		what string
		got  string
		want string
	}{
		{"dataset.size", s.Dataset.Size.String(), "1Gi"},
		{"memory keeps 8:10 (page-cache cap)", s.Resources.Memory.String(), "1Gi"},
		{"storage.size", s.Storage.Size.String(), "4Gi"},
		{"cacheSize", s.Engines[1].Options.CacheSize.String(), "52Mi"},
		{"writeBufferSize floored", s.Engines[1].Options.WriteBufferSize.String(), "1Mi"},
		{"optimizeForPointLookup floored", s.Engines[1].Options.OptimizeForPointLookup.String(), "1Mi"},
		{"leveldb options stay unset", ptrString(s.Engines[0].Options.CacheSize), "<nil>"},
		{"pulse reads", itoa(s.Workloads[0].Pulse.Reads), "9000"},
		{"pulse writes", itoa(s.Workloads[0].Pulse.Writes), "21000"},
		{"pulse deletes", itoa(s.Workloads[0].Pulse.Deletes), "3000"},
		{"pulse interval", s.Workloads[0].Pulse.Interval.Duration.String(), "1s"},
		{"pulse rounds unchanged", itoa(int64(s.Workloads[0].Pulse.Rounds)), "5"},
		{"workload num", itoa(*s.Workloads[1].Num), "100000"},
		{"workload duration", s.Workloads[1].Duration.Duration.String(), "6m0s"},
		{"db_bench args", strings.Join(s.Workloads[2].DBBenchArgs, " "), "--benchmarks=fillseq --num=100000 --duration=60 --value_size=100"},
		{"threads unchanged", itoa(int64(len(s.Threads))), "2"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %s, want %s", c.what, c.got, c.want)
		}
	}
	if b.Spec.Dataset.Size.String() != "10Gi" || b.Spec.Workloads[0].Pulse.Reads != 90000 {
		t.Error("Benchmark modified its input")
	}
}

func TestBenchmarkFloors(t *testing.T) {
	b := seed002()
	b.Spec.Workloads[1].Num = ptr.To[int64](100_000)                       // x 1/640 = 156: below the floor
	b.Spec.Workloads[1].Duration = &metav1.Duration{Duration: time.Minute} // x 1/640 < 1s
	got, err := Benchmark(b, Target{Size: q("16Mi")})
	if err != nil {
		t.Fatal(err)
	}
	s := got.Spec
	// 8Gi x 16Mi/10Gi = 13Mi is below what the pod needs: cache 1Mi + memtables 2 x 1Mi + 256Mi overhead.
	if m := s.Resources.Memory.Value(); m != 512<<20 {
		t.Errorf("memory %s, want 512Mi (floor rounded up to 256Mi steps)", s.Resources.Memory.String())
	}
	if s.Storage.Size.Value() != 1<<30 {
		t.Errorf("storage %s, want the 1Gi floor", s.Storage.Size.String())
	}
	if s.Workloads[1].Num == nil || *s.Workloads[1].Num != 1000 {
		t.Errorf("num %v, want the 1000 floor", *s.Workloads[1].Num)
	}
	if d := s.Workloads[1].Duration.Duration; d != 5*time.Second {
		t.Errorf("duration %s, want the 5s floor", d)
	}
	if p := s.Workloads[0].Pulse; p.Interval.Duration != time.Second {
		t.Errorf("pulse interval %s, want the 1s floor", p.Interval.Duration)
	}
	if p := s.Workloads[0].Pulse; p.Reads < 1 || p.Writes < 1 || p.Deletes < 1 {
		t.Errorf("pulse counts must stay positive: %+v", p)
	}
}

func TestBenchmarkTmpfsMemoryHoldsTheDataset(t *testing.T) {
	b := seed002()
	b.Spec.Storage = kvv1.StorageSpec{Medium: kvv1.MediumTmpfs}
	b.Spec.Resources.Memory = resource.MustParse("12Gi")
	got, err := Benchmark(b, Target{Size: q("1Gi")})
	if err != nil {
		t.Fatal(err)
	}
	// 12Gi/10 = 1.2Gi < 1Gi dataset + 52Mi cache + 8Mi memtables + 256Mi: the floor wins.
	need := int64(1<<30 + 52<<20 + 2*4<<20/4*1 + 256<<20)
	if m := got.Spec.Resources.Memory.Value(); m < need {
		t.Errorf("tmpfs memory %d below dataset+cache+memtables+overhead %d", m, need)
	}
}

func TestBenchmarkByKeyCount(t *testing.T) {
	b := seed002()
	b.Spec.Dataset.Size, b.Spec.Dataset.Num = nil, ptr.To[int64](100_000_000)
	got, err := Benchmark(b, Target{Num: ptr.To[int64](1_000_000)})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.Dataset.Num == nil || *got.Spec.Dataset.Num != 1_000_000 || got.Spec.Dataset.Size != nil {
		t.Errorf("dataset %+v, want num 1000000", got.Spec.Dataset)
	}
	if got.Spec.Workloads[0].Pulse.Reads != 900 {
		t.Errorf("pulse reads %d, want 900 (1/100)", got.Spec.Workloads[0].Pulse.Reads)
	}
	// A size target on a num dataset converts through the entry size (40 + 65.5 bytes).
	got, err = Benchmark(b, Target{Size: q("1055Mi")})
	if err != nil {
		t.Fatal(err)
	}
	if n := *got.Spec.Dataset.Num; n < 10_400_000 || n > 10_500_000 {
		t.Errorf("num %d, want about 1055Mi/105.5B = 10.49M", n)
	}
}

func TestBenchmarkErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		b   *kvv1.KVBenchmark
		t   Target
		err string
	}{
		"no target":   {seed002(), Target{}, "give a dataset size, a key count, a medium or a thread scale"},
		"two targets": {seed002(), Target{Size: q("1Gi"), Num: ptr.To[int64](5)}, "at most one of a dataset size and a key count"},
		"too small":   {seed002(), Target{Size: q("10")}, "at least one key"},
		"no dataset": {func() *kvv1.KVBenchmark { b := seed002(); b.Spec.Dataset.Size = nil; return b }(),
			Target{Size: q("1Gi")}, "neither a size nor a key count"},
	} {
		_, err := Benchmark(tc.b, tc.t)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error %v, want one containing %q", name, err, tc.err)
		}
	}
}

func ptrString(q *resource.Quantity) string {
	if q == nil {
		return "<nil>"
	}
	return q.String()
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// A memtable count kept at full size with the engine's default write buffer (rocksdb: 64Mi) is
// memory the scaled pod must still hold: 8Mi cache + 6 x 64Mi + 256Mi = 648Mi, rounded up to 768Mi.
func TestBenchmarkMemoryHoldsDefaultMemtablesTimesTheirCount(t *testing.T) {
	b := seed002()
	b.Spec.Engines = []kvv1.EngineSpec{{Name: kvv1.EngineRocksDB, Options: kvv1.EngineOptions{MaxWriteBufferNumber: ptr.To[int32](6)}}}
	got, err := Benchmark(b, Target{Size: q("32Mi")})
	if err != nil {
		t.Fatal(err)
	}
	if m := got.Spec.Resources.Memory.String(); m != "768Mi" {
		t.Errorf("memory %s, want 768Mi (8Mi cache + 6 x 64Mi memtables + 256Mi overhead, in 256Mi steps)", m)
	}
	if !kvv1.MemoryFits(&got.Spec) {
		t.Errorf("scaled spec does not hold its MemoryNeed %.0f", kvv1.MemoryNeed(&got.Spec, got.Spec.Engines[0]))
	}
}

// Every scaled spec holds what the CRD's memory rule counts, for every medium and engine mix.
func TestBenchmarkAlwaysFitsTheMemoryRule(t *testing.T) {
	for _, medium := range []kvv1.StorageMedium{kvv1.MediumTmpfs, kvv1.MediumLocalNVMe} {
		for _, target := range []string{"1Mi", "16Mi", "256Mi", "3Gi", "100Gi"} {
			b := seed002()
			b.Spec.Engines = append(b.Spec.Engines, kvv1.EngineSpec{Name: kvv1.EnginePebble,
				Options: kvv1.EngineOptions{MaxWriteBufferNumber: ptr.To[int32](8)}})
			b.Spec.Storage.Medium = medium
			if medium == kvv1.MediumTmpfs {
				b.Spec.Storage.Size = nil
			}
			got, err := Benchmark(b, Target{Size: q(target)})
			if err != nil {
				t.Fatal(err)
			}
			if !kvv1.MemoryFits(&got.Spec) {
				t.Errorf("%s %s: memory %s below the rule", medium, target, got.Spec.Resources.Memory.String())
			}
		}
	}
}

// On tmpfs the limit leaves the database room to grow past the logical dataset (the phases' writes,
// compaction's rewrites): the tmpfs gets at least twice the dataset.
func TestBenchmarkTmpfsLeavesRoomToGrow(t *testing.T) {
	b := seed002()
	b.Spec.Storage = kvv1.StorageSpec{Medium: kvv1.MediumTmpfs}
	b.Spec.Resources.Memory = resource.MustParse("12Gi")
	got, err := Benchmark(b, Target{Size: q("128Mi")})
	if err != nil {
		t.Fatal(err)
	}
	s := &got.Spec
	for _, e := range s.Engines {
		tmpfs := s.Resources.Memory.AsApproximateFloat64() - (kvv1.MemoryNeed(s, e) - kvv1.TmpfsDataBytes(s, e))
		if data := kvv1.DatasetBytesF(s.Dataset); tmpfs < 2*data {
			t.Errorf("%s: memory %s leaves %.0f bytes of tmpfs for a %.0f-byte dataset, want at least twice it",
				e.Name, s.Resources.Memory.String(), tmpfs, data)
		}
	}
}

// reset perPoint keeps a checkpoint next to the database: a scaled spec's volume holds the dataset
// twice (the CRD's storage.size rule) and its memory the tmpfs data twice (the memory rule).
func TestBenchmarkResetPerPointRoomForTheCheckpoint(t *testing.T) {
	for _, medium := range []kvv1.StorageMedium{kvv1.MediumTmpfs, kvv1.MediumLocalNVMe} {
		for _, sized := range []bool{false, true} {
			for _, target := range []string{"1Mi", "256Mi", "3Gi", "100Gi"} {
				b := seed002()
				b.Spec.Reset = kvv1.ResetPerPoint
				b.Spec.Storage = kvv1.StorageSpec{Medium: medium, Size: q("20Gi")} // exactly twice the 10Gi dataset
				if medium == kvv1.MediumTmpfs && !sized {
					b.Spec.Storage.Size = nil
				}
				got, err := Benchmark(b, Target{Size: q(target)})
				if err != nil {
					t.Fatal(err)
				}
				s := &got.Spec
				data := kvv1.DatasetBytesF(s.Dataset)
				if s.Storage.Size != nil && s.Storage.Size.AsApproximateFloat64() < 2*data {
					t.Errorf("%s %s: storage.size %s below twice the %.0f-byte dataset", medium, target, s.Storage.Size, data)
				}
				if !kvv1.MemoryFits(s) {
					t.Errorf("%s %s: memory %s below the rule", medium, target, s.Resources.Memory.String())
				}
			}
		}
	}
}

// --medium moves the database: onto tmpfs the memory limit gains the data it now holds (and the
// volume's size and class go), off tmpfs it loses it and a volume gets room for the data twice.
func TestBenchmarkMedium(t *testing.T) {
	b := seed002() // 10Gi on localNVMe 40Gi, 8Gi memory
	got, err := Benchmark(b, Target{Size: q("1Gi"), Medium: kvv1.MediumTmpfs})
	if err != nil {
		t.Fatal(err)
	}
	s := got.Spec
	if s.Storage.Medium != kvv1.MediumTmpfs || s.Storage.Size != nil || s.Storage.StorageClassName != nil {
		t.Errorf("storage %+v", s.Storage)
	}
	// The page-cache cap scaled (8Gi/10) plus the data tmpfs now holds, at least the memory rule's
	// floor (kvv1.MemoryNeed), rounded up to 256Mi steps.
	want := float64(8<<30)/10 + tmpfsData(&s)
	for _, e := range s.Engines {
		want = max(want, kvv1.MemoryNeed(&s, e))
	}
	if m := s.Resources.Memory.Value(); float64(m) < want || float64(m) >= want+256<<20 || !kvv1.MemoryFits(&s) {
		t.Errorf("memory %s, want %.0f rounded up to 256Mi", s.Resources.Memory.String(), want)
	}
	onTmpfs := s.Resources.Memory.Value()

	back, err := Benchmark(got, Target{Medium: kvv1.MediumLocalNVMe})
	if err != nil {
		t.Fatal(err)
	}
	s = back.Spec
	if s.Storage.Medium != kvv1.MediumLocalNVMe || s.Dataset.Size.String() != "1Gi" {
		t.Errorf("back to localNVMe: storage %+v, dataset %s", s.Storage, s.Dataset.Size.String())
	}
	if !kvv1.StorageFits(&s) {
		t.Errorf("back to localNVMe: storage %s below the storage floor", s.Storage.Size.String())
	}
	// Off tmpfs the limit loses the data it held: a page-cache cap again.
	if m := s.Resources.Memory.Value(); m >= onTmpfs-1<<30 || !kvv1.MemoryFits(&s) {
		t.Errorf("memory %s, want below %d - the 1Gi of data, and fitting", s.Resources.Memory.String(), onTmpfs)
	}
	if *s.Workloads[1].Num != 100000 {
		t.Errorf("a medium alone changed the workloads: num %d", *s.Workloads[1].Num)
	}

	if _, err := Benchmark(b, Target{Medium: kvv1.MediumPersistentVolume}); err == nil || !strings.Contains(err.Error(), "needs a storage class") {
		t.Errorf("persistentVolume without a class: %v", err)
	}
	pv, err := Benchmark(b, Target{Medium: kvv1.MediumPersistentVolume, StorageClassName: "fast-ssd"})
	if err != nil || *pv.Spec.Storage.StorageClassName != "fast-ssd" || pv.Spec.Storage.Size.String() != "40Gi" {
		t.Errorf("persistentVolume: %v, %+v", err, pv.Spec.Storage)
	}
	direct := seed002()
	direct.Spec.CacheMode = kvv1.CacheDirect
	if _, err := Benchmark(direct, Target{Medium: kvv1.MediumTmpfs}); err == nil || !strings.Contains(err.Error(), "cacheMode direct") {
		t.Errorf("direct I/O onto tmpfs: %v", err)
	}
	if _, err := Benchmark(b, Target{}); err == nil {
		t.Error("an empty target was accepted")
	}
}
