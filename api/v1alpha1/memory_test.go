package v1alpha1_test

import (
	"fmt"
	"math/rand/v2"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// randomMemorySpec is a spec valid in every respect but the memory rule, with resources.memory
// within a few bytes or MiB of its MemoryNeed, so both sides of the rule's edge are tried.
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
	if r.IntN(2) == 0 {
		s.Workloads = []kvv1.WorkloadSpec{{Name: kvv1.WorkloadReadRandom}, {Name: kvv1.WorkloadFillRandom, Threads: []int32{int32(1 + r.IntN(1024))}}}
	}
	if r.IntN(4) == 0 {
		s.Dataset.ValueSizeRange, s.Dataset.ValueSize = nil, int32(1<<20+r.IntN(4<<20))
	}
	if r.IntN(2) == 0 {
		s.Reset = kvv1.ResetPerPoint // the checkpoint doubles the data on the volume
	}
	data := kvv1.DatasetBytesF(s.Dataset) * kvv1.DataCopies(s)
	switch r.IntN(3) {
	case 0:
		s.Storage = kvv1.StorageSpec{Medium: kvv1.MediumTmpfs}
	case 1:
		s.Storage = kvv1.StorageSpec{Medium: kvv1.MediumTmpfs, Size: resource.NewQuantity(int64(data)+int64(r.IntN(1<<30)), resource.BinarySI)}
	default:
		s.Storage = kvv1.StorageSpec{Medium: kvv1.MediumLocalNVMe, Size: resource.NewQuantity(int64(data)+1<<30, resource.BinarySI)}
	}
	need := 0.0
	for _, e := range s.Engines {
		need = max(need, kvv1.MemoryNeed(s, e))
	}
	deltas := []int64{-(1 << 20), -1, 0, 1, 1 << 20}
	s.Resources.Memory = *resource.NewQuantity(int64(need)+deltas[i%len(deltas)], resource.BinarySI)
	return b
}

// needText is what the memory rule's messageExpression says: the largest engine's MemoryNeed in
// MiB, rounded up as the CEL does (whole bytes + 1Mi - 1, truncated), and the limit in MiB.
func needText(s *kvv1.KVBenchmarkSpec) string {
	need := 0.0
	for _, e := range s.Engines {
		need = max(need, kvv1.MemoryNeed(s, e))
	}
	return fmt.Sprintf("%dMi, the largest engine need (it is %dMi)", int64((need+1048575)/1048576), int64(s.Resources.Memory.AsApproximateFloat64()/1048576))
}

var _ = Describe("memory rule", func() {
	// kvv1.MemoryNeed is the memory model scale and plan use; the CEL rule mirrors it by hand.
	It("accepts exactly the specs whose memory holds MemoryNeed (Go and CEL agree)", func() {
		r := rand.New(rand.NewPCG(13, 1))
		accepted, rejected := 0, 0
		for i := range 200 {
			b := randomMemorySpec(r, i)
			err := dryRunCreate(b)
			if kvv1.MemoryFits(&b.Spec) {
				Expect(err).NotTo(HaveOccurred(), "spec %d: Go says it fits, the API server rejected it: %+v", i, b.Spec)
				accepted++
				continue
			}
			Expect(err).To(HaveOccurred(), "spec %d: Go says memory is short, the API server accepted it: %+v", i, b.Spec)
			// The message states each engine's need as Go computes it, and the limit.
			Expect(err.Error()).To(ContainSubstring("resources.memory is too small: it must hold "+needText(&b.Spec)), "spec %d", i)
			Expect(err.Error()).NotTo(ContainSubstring("evaluating rule"))
			rejected++
		}
		// Both sides of the edge were exercised.
		Expect(accepted).To(BeNumerically(">", 50))
		Expect(rejected).To(BeNumerically(">", 50))
	})

	It("counts default memtables times their count", func() {
		// rocksdb: 8Mi cache + 6 x 64Mi memtables + 256Mi overhead + 2 x 4 threads x 1Mi value buffers
		// + 64Mi tmpfs data = 720Mi.
		b := base().Memory("719Mi").Engines(kvv1.EngineSpec{Name: kvv1.EngineRocksDB,
			Options: kvv1.EngineOptions{MaxWriteBufferNumber: ptr.To[int32](6)}}).Obj()
		err := dryRunCreate(b)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("resources.memory is too small: it must hold"))
		b.Spec.Resources.Memory = resource.MustParse("720Mi")
		Expect(dryRunCreate(b)).To(Succeed())
	})

	It("counts the checkpoint of reset perPoint: the tmpfs data twice", func() {
		// The 720Mi above, plus the 64Mi dataset once more for the checkpoint next to the database.
		b := base().Memory("783Mi").Engines(kvv1.EngineSpec{Name: kvv1.EngineRocksDB,
			Options: kvv1.EngineOptions{MaxWriteBufferNumber: ptr.To[int32](6)}}).EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.Reset = kvv1.ResetPerPoint }).Obj()
		Expect(kvv1.MemoryNeed(&b.Spec, b.Spec.Engines[0])).To(Equal(784.0 * (1 << 20)))
		err := dryRunCreate(b)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("resources.memory is too small: it must hold 784Mi, the largest engine need (it is 783Mi); that is, for every engine"))
		Expect(err.Error()).To(ContainSubstring("twice with reset perPoint for the checkpoint"))
		b.Spec.Resources.Memory = resource.MustParse("784Mi")
		Expect(dryRunCreate(b)).To(Succeed())
	})
})
