package v1alpha1_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// randomMemorySpec is a spec valid in every respect but the memory and storage rules, with
// resources.memory (and storage.size, when set) within a few bytes or MiB of what the model needs,
// so both sides of each rule's edge are tried. Workloads, repeats, resets and load modes vary, so
// the reset default (perIteration when a repeated sweep writes) and the writes' copies are tried.
func randomMemorySpec(r *rand.Rand, i int) *kvv1.KVBenchmark {
	b := base().Obj()
	b.Name = "mem"
	s := &b.Spec
	mib := func(max int) *resource.Quantity {
		return resource.NewQuantity(int64(1+r.IntN(max))<<20+int64(r.IntN(3))*4096, resource.BinarySI)
	}
	s.Engines = nil
	for _, name := range []kvv1.EngineName{kvv1.EngineRocksDB, kvv1.EngineLevelDB, kvv1.EnginePebble} {
		if r.IntN(2) == 0 && !(name == kvv1.EnginePebble && len(s.Engines) == 0) {
			continue
		}
		if name == kvv1.EngineRocksDB && r.IntN(4) == 0 {
			name = kvv1.EngineRocksJava // the same memory model as rocksdb (64 MiB memtables)
		}
		e := kvv1.EngineSpec{Name: name}
		if r.IntN(2) == 0 {
			e.Options.CacheSize = mib(2048)
		}
		if r.IntN(2) == 0 {
			e.Options.WriteBufferSize = mib(256)
		}
		if name != kvv1.EngineLevelDB && r.IntN(2) == 0 {
			e.Options.MaxWriteBufferNumber = ptr.To(int32(1 + r.IntN(8)))
		}
		if name == kvv1.EngineRocksDB && r.IntN(3) == 0 {
			e.Options.OptimizeForPointLookup = mib(512)
		}
		s.Engines = append(s.Engines, e)
	}
	s.Dataset.Size, s.Dataset.Num = nil, nil
	if r.IntN(2) == 0 {
		s.Dataset.Size = mib(4096)
	} else {
		s.Dataset.Num = ptr.To(int64(1 + r.IntN(20_000_000)))
		s.Dataset.KeySize = int32(8 + r.IntN(100))
		if r.IntN(2) == 0 {
			min := int32(r.IntN(500))
			s.Dataset.ValueSizeRange = &kvv1.SizeRange{Min: min, Max: min + 1 + int32(r.IntN(500))}
		} else {
			s.Dataset.ValueSize = int32(1 + r.IntN(2000))
		}
	}
	s.Threads = []int32{int32(1 + r.IntN(4)), int32(5 + r.IntN(200))}
	// Read-only sweeps, and sweeps that write (or do not, by a hair: readrandomwriterandom at 100%
	// reads, YCSB C), so the CEL's write classification is tried against Writes.
	switch r.IntN(5) {
	case 0:
		s.Workloads = []kvv1.WorkloadSpec{{Name: kvv1.WorkloadReadRandom}, {Name: kvv1.WorkloadFillRandom, Threads: []int32{int32(1 + r.IntN(1024))}}}
	case 1:
		s.Workloads = []kvv1.WorkloadSpec{{Name: kvv1.WorkloadReadRandomWriteRandom, ReadWritePercent: ptr.To(int32(90 + 5*r.IntN(3)))}}
	case 2:
		ratio := []string{"1:0", "30:1", "0:1"}[r.IntN(3)]
		s.Workloads = []kvv1.WorkloadSpec{{Name: kvv1.WorkloadYCSB, YCSB: &kvv1.YCSBSpec{Workload: kvv1.YCSBWorkload("ABCDEF"[r.IntN(6):][:1]), ReadWriteRatio: ratio}}}
	case 3:
		s.Workloads = []kvv1.WorkloadSpec{{Name: kvv1.WorkloadYCSB, YCSB: &kvv1.YCSBSpec{Workload: "C"}}}
	}
	if r.IntN(4) == 0 {
		s.Dataset.ValueSizeRange, s.Dataset.ValueSize = nil, int32(1<<20+r.IntN(4<<20))
	}
	if s.Workloads[0].Name == kvv1.WorkloadYCSB {
		// YCSB records (dataset.ycsb) with db_bench's default key and value fields, as the CRD wants.
		s.Dataset.KeySize, s.Dataset.ValueSize, s.Dataset.ValueSizeRange = 16, 100, nil
		s.Dataset.YCSB = &kvv1.YCSBRecordSpec{FieldCount: ptr.To(int32(1 + r.IntN(20))), FieldLength: ptr.To(int32(1 + r.IntN(2000)))}
	}
	if slices.ContainsFunc(s.Engines, func(e kvv1.EngineSpec) bool { return e.Name == kvv1.EngineRocksJava }) {
		// What the Java runner runs: db_bench's workloads on fixed-size values.
		s.Workloads = []kvv1.WorkloadSpec{{Name: kvv1.WorkloadReadRandom}, {Name: kvv1.WorkloadFillRandom, Threads: []int32{int32(1 + r.IntN(1024))}}}
		s.Dataset.YCSB, s.Dataset.ValueSizeRange = nil, nil
		if s.Dataset.ValueSize == 0 {
			s.Dataset.ValueSize = 100
		}
	}
	s.Reset = []kvv1.ResetMode{"", kvv1.ResetNone, kvv1.ResetPerPoint, kvv1.ResetPerIteration}[r.IntN(4)]
	s.Repeat = int32(1 + r.IntN(3))
	s.Dataset.LoadMode = []kvv1.LoadMode{kvv1.LoadBulk, kvv1.LoadFillRandom, kvv1.LoadNone}[r.IntN(3)]
	floor := 0.0
	for _, e := range s.Engines {
		floor = max(floor, kvv1.StorageFloor(s, e))
	}
	deltas := []int64{-(1 << 20), -1, 0, 1, 1 << 20}
	near := func(v float64) *resource.Quantity {
		return resource.NewQuantity(int64(math.Ceil(v))+deltas[r.IntN(len(deltas))], resource.BinarySI)
	}
	switch r.IntN(4) {
	case 0, 1:
		s.Storage = kvv1.StorageSpec{Medium: kvv1.MediumTmpfs}
	case 2:
		s.Storage = kvv1.StorageSpec{Medium: kvv1.MediumTmpfs, Size: near(floor + float64(r.IntN(2)*r.IntN(1<<30)))}
	default:
		s.Storage = kvv1.StorageSpec{Medium: kvv1.MediumLocalNVMe, Size: near(floor)}
	}
	need := 0.0
	for _, e := range s.Engines {
		need = max(need, kvv1.MemoryNeed(s, e))
	}
	s.Resources.Memory = *resource.NewQuantity(int64(need)+deltas[i%len(deltas)], resource.BinarySI)
	return b
}

func mibUp(v float64) int64 { return int64((v + 1048575) / 1048576) }

// memoryText is what the memory rule's messageExpression says first: the largest engine's
// MemoryNeed in MiB and the limit in MiB, rounded up as the CEL does (whole bytes + 1Mi - 1, truncated).
func memoryText(s *kvv1.KVBenchmarkSpec) string {
	need := 0.0
	for _, e := range s.Engines {
		need = max(need, kvv1.MemoryNeed(s, e))
	}
	return fmt.Sprintf("resources.memory: need %dMi or more, have %dMi", mibUp(need), int64(s.Resources.Memory.AsApproximateFloat64()/1048576))
}

// storageText is the storage rule's message for the largest engine's StorageFloor.
func storageText(s *kvv1.KVBenchmarkSpec) string {
	floor := 0.0
	for _, e := range s.Engines {
		floor = max(floor, kvv1.StorageFloor(s, e))
	}
	return fmt.Sprintf("storage.size: %dMi is too small; the database volume of the largest engine needs storage.size: %dMi or more",
		int64(s.Storage.Size.AsApproximateFloat64()/1048576), mibUp(floor))
}

var _ = Describe("memory rule", func() {
	// kvv1.MemoryNeed and StorageFloor are the model scale and plan use; the CEL rules mirror them by
	// hand.
	It("accepts exactly the specs whose memory holds MemoryNeed and storage.size StorageFloor (Go and CEL agree)", func() {
		r := rand.New(rand.NewPCG(13, 1))
		accepted, memShort, storageShort, writes, resets := 0, 0, 0, 0, 0
		for i := range 300 {
			b := randomMemorySpec(r, i)
			s := &b.Spec
			if kvv1.VolumeWrites(s) {
				writes++
			}
			if kvv1.EffectiveReset(s) != kvv1.ResetNone {
				resets++
			}
			err := dryRunCreate(b)
			memFits, storageFits := kvv1.MemoryFits(s), kvv1.StorageFits(s)
			if memFits && storageFits {
				Expect(err).NotTo(HaveOccurred(), "spec %d: Go says it fits, the API server rejected it: %+v", i, b.Spec)
				accepted++
				continue
			}
			Expect(err).To(HaveOccurred(), "spec %d: Go says it does not fit (memory %v, storage %v), the API server accepted it: %+v", i, memFits, storageFits, b.Spec)
			Expect(err.Error()).NotTo(ContainSubstring("evaluating rule"))
			// The messages state the needs as Go computes them, and the limit or size.
			if !memFits {
				Expect(err.Error()).To(ContainSubstring(memoryText(s)), "spec %d", i)
				memShort++
			} else {
				Expect(err.Error()).NotTo(ContainSubstring("resources.memory:"), "spec %d", i)
			}
			if !storageFits {
				Expect(err.Error()).To(ContainSubstring(storageText(s)), "spec %d", i)
				storageShort++
			} else {
				Expect(err.Error()).NotTo(ContainSubstring("storage.size:"), "spec %d", i)
			}
		}
		// Every side of both edges was exercised, with and without writes and resets.
		Expect(accepted).To(BeNumerically(">", 50))
		Expect(memShort).To(BeNumerically(">", 50))
		Expect(storageShort).To(BeNumerically(">", 20))
		Expect(writes).To(And(BeNumerically(">", 50), BeNumerically("<", 250)))
		Expect(resets).To(And(BeNumerically(">", 50), BeNumerically("<", 250)))
	})

	It("counts default memtables times their count, and on tmpfs a preallocated WAL per memtable", func() {
		// rocksdb, 64Mi read-only on tmpfs: 8Mi cache + 6 x 64Mi memtables + 256Mi overhead + 2 x 4
		// threads x 1Mi value buffers + 64Mi x 1.1 of tables + 6 x 1.1 x 64Mi WALs + 8Mi metadata.
		b := base().Memory("1156Mi").Engines(kvv1.EngineSpec{Name: kvv1.EngineRocksDB,
			Options: kvv1.EngineOptions{MaxWriteBufferNumber: ptr.To[int32](6)}}).Obj()
		Expect(mibUp(kvv1.MemoryNeed(&b.Spec, b.Spec.Engines[0]))).To(Equal(int64(1157)))
		err := dryRunCreate(b)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("resources.memory: need 1157Mi or more, have 1156Mi"))
		b.Spec.Resources.Memory = resource.MustParse("1157Mi")
		Expect(dryRunCreate(b)).To(Succeed())
	})

	It("counts the checkpoint of reset perPoint and perIteration (the default of a repeated sweep that writes), and the writes' copies", func() {
		// pebble, 64Mi: 8Mi cache + 2 x 4Mi memtables + 256Mi overhead + 8Mi buffers, and tmpfs.
		base := func() *kvv1.KVBenchmark {
			return base().Memory("4Gi").EngineNames(kvv1.EnginePebble).Obj()
		}
		for _, tc := range []struct {
			name  string
			edit  func(*kvv1.KVBenchmarkSpec)
			tmpfs float64 // MiB: 64Mi x 1.1 x copies + 1.1 x 4Mi x WAL files + 8Mi
		}{
			{"read-only", func(*kvv1.KVBenchmarkSpec) {}, 64*1.1 + 1.1*4*4 + 8},
			{"reset perPoint", func(s *kvv1.KVBenchmarkSpec) { s.Reset = kvv1.ResetPerPoint }, 64*1.1*2 + 1.1*4*4 + 8},
			{"fillrandom", func(s *kvv1.KVBenchmarkSpec) {
				s.Workloads = []kvv1.WorkloadSpec{{Name: kvv1.WorkloadFillRandom}}
			}, 64*1.1*3 + 1.1*4*6 + 8},
			{"fillrandom repeated (perIteration by default)", func(s *kvv1.KVBenchmarkSpec) {
				s.Workloads, s.Repeat = []kvv1.WorkloadSpec{{Name: kvv1.WorkloadFillRandom}}, 3
			}, 64*1.1*4 + 1.1*4*6 + 8},
			{"fillrandom repeated, reset none", func(s *kvv1.KVBenchmarkSpec) {
				s.Workloads, s.Repeat, s.Reset = []kvv1.WorkloadSpec{{Name: kvv1.WorkloadFillRandom}}, 3, kvv1.ResetNone
			}, 64*1.1*3 + 1.1*4*6 + 8},
		} {
			b := base()
			tc.edit(&b.Spec)
			need := kvv1.MemoryNeed(&b.Spec, b.Spec.Engines[0])
			Expect(need/(1<<20)).To(BeNumerically("~", 8+8+256+8+tc.tmpfs, 1e-6), tc.name)
			b.Spec.Resources.Memory = *resource.NewQuantity(int64(math.Ceil(need)), resource.BinarySI)
			Expect(dryRunCreate(b)).To(Succeed(), tc.name)
			b.Spec.Resources.Memory = *resource.NewQuantity(int64(math.Ceil(need))-1<<20, resource.BinarySI)
			err := dryRunCreate(b)
			Expect(err).To(HaveOccurred(), tc.name)
			Expect(err.Error()).To(ContainSubstring(memoryText(&b.Spec)), tc.name)
		}
	})
})
