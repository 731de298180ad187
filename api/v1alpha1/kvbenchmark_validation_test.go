package v1alpha1_test

import (
	"context"
	"fmt"
	corev1 "k8s.io/api/core/v1"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/test/envtest"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

const ns = "default"

func base() *w.KVBenchmarkWrapper { return w.MakeKVBenchmark("bench", ns) }

func dryRunCreate(obj client.Object) error {
	return k8s.Create(context.Background(), obj, client.DryRunAll)
}

func wl(name kvv1.WorkloadName, f ...func(*kvv1.WorkloadSpec)) kvv1.WorkloadSpec {
	s := kvv1.WorkloadSpec{Name: name}
	for _, fn := range f {
		fn(&s)
	}
	return s
}

func qty(s string) *resource.Quantity { return ptr.To(resource.MustParse(s)) }

// ycsbOn puts ycsb workloads on YCSB's records (dataset.ycsb, YCSB's defaults unless f changes them).
func ycsbOn(b *w.KVBenchmarkWrapper, f func(*kvv1.YCSBRecordSpec), ws ...kvv1.WorkloadSpec) *w.KVBenchmarkWrapper {
	return b.Dataset(func(d *kvv1.DatasetSpec) {
		d.YCSB = &kvv1.YCSBRecordSpec{}
		if f != nil {
			f(d.YCSB)
		}
	}).Workloads(ws...)
}

func ycsbWL(spec kvv1.YCSBSpec) kvv1.WorkloadSpec {
	return wl(kvv1.WorkloadYCSB, func(s *kvv1.WorkloadSpec) { s.YCSB = &spec })
}

var _ = Describe("KVBenchmark validation", func() {
	DescribeTable("rejects invalid specs with a specific message",
		func(b *w.KVBenchmarkWrapper, wantMsg string) {
			err := dryRunCreate(b.Obj())
			Expect(err).To(HaveOccurred(), "the API server accepted an invalid spec")
			Expect(err.Error()).To(ContainSubstring(wantMsg))
			// A rule that errors while evaluating also rejects, but for the wrong reason.
			Expect(err.Error()).NotTo(ContainSubstring("evaluating rule"))
		},
		Entry("dataset size 0", base().DatasetSize("0"), "dataset.size must be greater than 0"),
		Entry("dataset size negative", base().DatasetSize("-1Gi"), "dataset.size must be greater than 0"),
		Entry("dataset size and num both set", base().Dataset(func(d *kvv1.DatasetSpec) { d.Num = ptr.To[int64](10) }), "set exactly one of size and num"),
		Entry("dataset size and num both unset", base().Dataset(func(d *kvv1.DatasetSpec) { d.Size = nil }), "set exactly one of size and num"),
		Entry("dataset num 0", base().DatasetNum(0), "spec.dataset.num"),
		Entry("thread count 0", base().Threads(1, 0), "threads must be between 1 and 1024"),
		Entry("thread count 1025", base().Threads(1025), "threads must be between 1 and 1024"),
		Entry("duplicate thread counts", base().Threads(4, 4), "Duplicate value"),
		Entry("duplicate thread counts in a workload (issue 30: ran the phase twice)",
			base().Workloads(kvv1.WorkloadSpec{Name: kvv1.WorkloadReadRandom, Threads: []int32{2, 2}}), "Duplicate value"),
		Entry("no thread counts", base().Threads(), "spec.threads"),
		Entry("spread EachNode without maxNodes", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.Placement.Spread = kvv1.SpreadEachNode }), "spread EachNode needs maxNodes"),
		Entry("maxNodes without spread EachNode", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.Placement.MaxNodes = ptr.To[int32](3) }), "maxNodes applies to spread EachNode only"),
		Entry("maxNodes 101", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) {
			s.Placement.Spread, s.Placement.MaxNodes = kvv1.SpreadEachNode, ptr.To[int32](101)
		}), "spec.placement.maxNodes"),
		Entry("maxNodes 0", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) {
			s.Placement.Spread, s.Placement.MaxNodes = kvv1.SpreadEachNode, ptr.To[int32](0)
		}), "spec.placement.maxNodes"),
		Entry("unknown engine placement", base().EnginePlacement("Shuffled"), "spec.placement.engines"),
		Entry("duplicate engines", base().EngineNames(kvv1.EngineRocksDB, kvv1.EngineRocksDB), "Duplicate value"),
		Entry("no engines", base().EngineNames(), "spec.engines"),
		Entry("unknown engine", base().EngineNames("lmdb"), `engines[].name "lmdb" is not supported: use rocksdb, leveldb, pebble or rocksjava`),
		// What the Java runner (engine rocksjava) does not do is refused at apply time.
		Entry("rocksjava with a workload the Java runner lacks", base().EngineNames(kvv1.EngineRocksDB, kvv1.EngineRocksJava).Workloads(wl(kvv1.WorkloadReadRandom), wl(kvv1.WorkloadDeleteRandom)),
			"engine rocksjava runs the workloads fillseq, fillrandom, overwrite, readrandom, readseq, readwhilewriting, seekrandom, ycsb, stats and waitforcompaction only"),
		Entry("rocksjava with YCSB's permutedZipfian", ycsbOn(base().EngineNames(kvv1.EngineRocksDB, kvv1.EngineRocksJava), nil,
			ycsbWL(kvv1.YCSBSpec{Workload: "C", RequestDistribution: ptr.To(kvv1.YCSBDistribution("permutedZipfian"))})),
			"engine rocksjava draws with YCSB core's own generators, which have no permutedZipfian"),
		Entry("rocksjava with a value size range", base().EngineNames(kvv1.EngineRocksJava).Dataset(func(d *kvv1.DatasetSpec) { d.ValueSizeRange = &kvv1.SizeRange{Min: 10, Max: 100} }),
			"engine rocksjava needs db_bench's plain keys and fixed-size values"),
		Entry("rocksjava with prefixes", base().EngineNames(kvv1.EngineRocksJava).Dataset(func(d *kvv1.DatasetSpec) { d.PrefixSize = 4 }), "engine rocksjava needs db_bench's plain keys"),
		Entry("rocksjava with cacheMode cold", base().EngineNames(kvv1.EngineRocksJava).EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.CacheMode = kvv1.CacheCold }),
			"cacheMode cold and direct are not supported by engine rocksjava"),
		Entry("rocksjava with reportInterval", base().EngineNames(kvv1.EngineRocksJava).EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.ReportInterval = &metav1.Duration{Duration: 1e9} }),
			"reportInterval: engine rocksjava records no time series yet"),
		Entry("rocksjava with spec.runnerImage", base().EngineNames(kvv1.EngineRocksDB, kvv1.EngineRocksJava).EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.RunnerImage = "reg/kvbench-runner:v1" }),
			"runnerImage replaces the Go runner's image, which does not run rocksjava"),
		Entry("a version on rocksdb", base().Engines(kvv1.EngineSpec{Name: kvv1.EngineRocksDB, Version: "9.10.0"}),
			"engines[].version selects a rocksdbjni release and applies to engine rocksjava only"),
		Entry("a version that is no release number", base().Engines(kvv1.EngineSpec{Name: kvv1.EngineRocksJava, Version: "latest"}),
			`engines[].version "latest" is not a release number such as 9.10.0`),
		Entry("rocksjava with optionsFrom and a table option", base().Engines(kvv1.EngineSpec{Name: kvv1.EngineRocksJava, Options: kvv1.EngineOptions{BlockSize: qty("16Ki")},
			OptionsFrom: &kvv1.OptionsFromSource{ConfigMapKeyRef: kvv1.ConfigMapKeyRef{Name: "opts", Key: "OPTIONS"}}}),
			"engine rocksjava with optionsFrom: the options cacheSize, cacheNumShardBits, bloomBits and blockSize are BlockBasedTable options"),
		Entry("rocksjava beside a dbbench workload", base().EngineNames(kvv1.EngineRocksJava).Workloads(wl(kvv1.WorkloadDBBench, func(s *kvv1.WorkloadSpec) { s.DBBenchArgs = []string{"--benchmarks=fillseq"}; s.Threads = []int32{1} })),
			"a dbbench workload runs RocksDB's db_bench, so every engine must be rocksdb"),
		Entry("leveldb option it lacks (mmapRead)", base().Engines(kvv1.EngineSpec{Name: kvv1.EngineLevelDB, Options: kvv1.EngineOptions{MmapRead: ptr.To(true)}}), "leveldb does not support the options"),
		Entry("pebble option it lacks (plainTable)", base().Dataset(func(d *kvv1.DatasetSpec) { d.PrefixSize = 8 }).Engines(kvv1.EngineSpec{Name: kvv1.EnginePebble, Options: kvv1.EngineOptions{PlainTable: ptr.To(true)}}), "pebble does not support the options"),
		Entry("leveldb compression zstd", base().Engines(kvv1.EngineSpec{Name: kvv1.EngineLevelDB, Options: kvv1.EngineOptions{Compression: ptr.To(kvv1.CompressionZstd)}}), "leveldb does not support compression"),
		Entry("pebble compression lz4", base().Engines(kvv1.EngineSpec{Name: kvv1.EnginePebble, Options: kvv1.EngineOptions{Compression: ptr.To(kvv1.CompressionLZ4)}}), "pebble does not support compression"),
		Entry("tmpfs memory below dataset + overhead", base().DatasetSize("1Gi").Memory("1Gi"), "resources.memory: need "),
		Entry("tmpfs memory below dataset + cache + overhead", base().DatasetSize("512Mi").Memory("1Gi").Engines(kvv1.EngineSpec{Name: kvv1.EngineRocksDB, Options: kvv1.EngineOptions{CacheSize: qty("300Mi")}}), "resources.memory: need "),
		Entry("tmpfs memory below a num-based dataset", base().DatasetNum(10_000_000).Memory("1Gi"), "resources.memory: need "),
		Entry("tmpfs memory below storage.size", base().Storage(kvv1.MediumTmpfs, "2Gi", "").Memory("2Gi"), "resources.memory: need "),
		Entry("readwhilewriting without a writer rate", base().Workloads(wl(kvv1.WorkloadReadWhileWriting)), "readwhilewriting needs writesPerSecond"),
		Entry("YCSB letter outside A-F", base().Workloads(wl(kvv1.WorkloadYCSB, func(s *kvv1.WorkloadSpec) { s.YCSB = &kvv1.YCSBSpec{Workload: "G"} })), `ycsb.workload "G" is not supported: use A, B, C, D, E or F`),
		Entry("ycsb workload without its block", base().Workloads(wl(kvv1.WorkloadYCSB)), "a ycsb workload needs the ycsb block"),
		Entry("ycsb readWriteRatio not R:W", base().Workloads(wl(kvv1.WorkloadYCSB, func(s *kvv1.WorkloadSpec) {
			s.YCSB = &kvv1.YCSBSpec{Workload: "B", ReadWriteRatio: "30"}
		})), "ycsb.readWriteRatio must be R:W"),
		Entry("ycsb readWriteRatio with 7 digits", base().Workloads(wl(kvv1.WorkloadYCSB, func(s *kvv1.WorkloadSpec) {
			s.YCSB = &kvv1.YCSBSpec{Workload: "B", ReadWriteRatio: "1000000:1"}
		})), "ycsb.readWriteRatio must be R:W"),
		Entry("ycsb readWriteRatio 0:0", base().Workloads(wl(kvv1.WorkloadYCSB, func(s *kvv1.WorkloadSpec) {
			s.YCSB = &kvv1.YCSBSpec{Workload: "A", ReadWriteRatio: "0:0"}
		})), "ycsb.readWriteRatio 0:0 has no operations"),
		Entry("ycsb readPercent and readWriteRatio both", base().Workloads(wl(kvv1.WorkloadYCSB, func(s *kvv1.WorkloadSpec) {
			s.YCSB = &kvv1.YCSBSpec{Workload: "A", ReadPercent: ptr.To[int32](90), ReadWriteRatio: "30:1"}
		})), "ycsb: set readPercent or readWriteRatio, not both"),
		Entry("ycsb on db_bench's keys", base().Workloads(ycsbWL(kvv1.YCSBSpec{Workload: "A"})), "ycsb workloads need dataset.ycsb"),
		Entry("a db_bench workload on YCSB's records", ycsbOn(base(), nil, ycsbWL(kvv1.YCSBSpec{Workload: "A"}), wl(kvv1.WorkloadReadRandom)),
			"dataset.ycsb holds YCSB records, which only ycsb workloads"),
		Entry("keySize on YCSB's records", ycsbOn(base(), nil, ycsbWL(kvv1.YCSBSpec{Workload: "A"})).Dataset(func(d *kvv1.DatasetSpec) { d.KeySize = 24 }),
			"YCSB records are sized by ycsb.fieldCount and ycsb.fieldLength"),
		Entry("valueSizeRange on YCSB's records", ycsbOn(base(), nil, ycsbWL(kvv1.YCSBSpec{Workload: "A"})).Dataset(func(d *kvv1.DatasetSpec) {
			d.ValueSizeRange = &kvv1.SizeRange{Min: 1, Max: 10}
		}), "YCSB records are sized by ycsb.fieldCount and ycsb.fieldLength"),
		Entry("1001 fields", ycsbOn(base(), func(y *kvv1.YCSBRecordSpec) { y.FieldCount = ptr.To[int32](1001) }, ycsbWL(kvv1.YCSBSpec{Workload: "A"})),
			"spec.dataset.ycsb.fieldCount"),
		Entry("a record over 1Mi", ycsbOn(base(), func(y *kvv1.YCSBRecordSpec) { y.FieldLength = ptr.To[int32](200_000) }, ycsbWL(kvv1.YCSBSpec{Workload: "A"})),
			"fieldCount x fieldLength must be at most 1Mi"),
		Entry("insertOrder random", ycsbOn(base(), func(y *kvv1.YCSBRecordSpec) { y.InsertOrder = "random" }, ycsbWL(kvv1.YCSBSpec{Workload: "A"})),
			"Unsupported value: \"random\""),
		Entry("zeroPadding 20", ycsbOn(base(), func(y *kvv1.YCSBRecordSpec) { y.ZeroPadding = ptr.To[int32](20) }, ycsbWL(kvv1.YCSBSpec{Workload: "A"})),
			"spec.dataset.ycsb.zeroPadding"),
		Entry("updateMode blind", ycsbOn(base(), nil, ycsbWL(kvv1.YCSBSpec{Workload: "A", UpdateMode: "blind"})), "Unsupported value: \"blind\""),
		Entry("requestDistribution hotspot", ycsbOn(base(), nil, ycsbWL(kvv1.YCSBSpec{Workload: "A", RequestDistribution: ptr.To[kvv1.YCSBDistribution]("hotspot")})),
			"ycsb.requestDistribution \"hotspot\" is not supported"),
		// 1M YCSB records are 1.16 GB (23 + 1140 bytes each), not 1M x (16 + 100).
		Entry("storage that holds 1M db_bench entries but not 1M YCSB records", ycsbOn(base().DatasetNum(1_000_000).Storage(kvv1.MediumLocalNVMe, "1Gi", ""),
			nil, ycsbWL(kvv1.YCSBSpec{Workload: "A"})), "storage.size: 1024Mi is too small"),
		Entry("pulse block on readrandom", base().Workloads(wl(kvv1.WorkloadReadRandom, func(s *kvv1.WorkloadSpec) {
			s.Pulse = &kvv1.PulseSpec{Reads: 1, Interval: metav1.Duration{Duration: 1e9}, Rounds: 1}
		})), "a pulse workload needs the pulse block"),
		Entry("pulse with zero interval", base().Workloads(wl(kvv1.WorkloadPulse, func(s *kvv1.WorkloadSpec) {
			s.Pulse = &kvv1.PulseSpec{Reads: 1, Rounds: 1}
		})), "pulse.interval must be positive"),
		Entry("dbbench without args", base().Workloads(wl(kvv1.WorkloadDBBench)), "a dbbench workload needs dbBenchArgs"),
		Entry("dbbench args split at a comma by a YAML flow list", base().Workloads(wl(kvv1.WorkloadDBBench, func(s *kvv1.WorkloadSpec) {
			s.DBBenchArgs = []string{"--benchmarks=fillseq", "readrandom", "--num=1000"}
		})), "dbBenchArgs must all be --flags"),
		Entry("workload thread override 0", base().Workloads(wl(kvv1.WorkloadFillSeq, func(s *kvv1.WorkloadSpec) { s.Threads = []int32{0} })), "workload threads must be between 1 and 1024"),
		Entry("workload duration 0", base().Workloads(wl(kvv1.WorkloadReadRandom, func(s *kvv1.WorkloadSpec) { s.Duration = &metav1.Duration{} })), "workloads[].duration must be positive"),
		Entry("readWritePercent on readrandom", base().Workloads(wl(kvv1.WorkloadReadRandom, func(s *kvv1.WorkloadSpec) { s.ReadWritePercent = ptr.To[int32](90) })), "readWritePercent applies to readrandomwriterandom only"),
		Entry("no workloads", base().Workloads(), "spec.workloads"),
		Entry("localNVMe without size", base().Storage(kvv1.MediumLocalNVMe, "", ""), "storage.size is required for localNVMe and persistentVolume"),
		Entry("persistentVolume without storage class", base().Storage(kvv1.MediumPersistentVolume, "10Gi", ""), "storage.storageClassName is required for persistentVolume"),
		Entry("tmpfs with a storage class", base().Storage(kvv1.MediumTmpfs, "", "fast"), "storage.storageClassName does not apply to tmpfs"),
		Entry("storage smaller than the dataset", base().DatasetSize("10Gi").Storage(kvv1.MediumLocalNVMe, "5Gi", ""), "storage.size: 5120Mi is too small; the database volume of the largest engine needs storage.size: 11413Mi or more"),
		Entry("hostPath medium (not offered)", base().Storage("hostPath", "10Gi", ""), `storage.medium "hostPath" is not supported: use tmpfs, localNVMe or persistentVolume`),
		Entry("cacheMode direct with pebble", base().EngineNames(kvv1.EnginePebble).EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.CacheMode = kvv1.CacheDirect }), "cacheMode direct (O_DIRECT) is supported by rocksdb only"),
		Entry("plainTable without a prefix size", base().Engines(kvv1.EngineSpec{Name: kvv1.EngineRocksDB, Options: kvv1.EngineOptions{PlainTable: ptr.To(true)}}), "plainTable needs dataset.prefixSize > 0"),
		Entry("value size range min > max", base().Dataset(func(d *kvv1.DatasetSpec) { d.ValueSizeRange = &kvv1.SizeRange{Min: 101, Max: 30} }), "dataset.valueSizeRange.min must not exceed max"),
		Entry("prefix larger than the key", base().Dataset(func(d *kvv1.DatasetSpec) { d.PrefixSize = 32 }), "dataset.prefixSize must not exceed keySize"),
		Entry("keysPerPrefix without a prefix", base().Dataset(func(d *kvv1.DatasetSpec) { d.KeysPerPrefix = 10 }), "dataset.keysPerPrefix needs prefixSize > 0"),
		Entry("loadMode existing", base().Dataset(func(d *kvv1.DatasetSpec) { d.LoadMode = kvv1.LoadExisting }), "dataset.loadMode existing is not supported by the operator"),
		Entry("toleration Exists with a value", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) {
			s.Placement.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Value: "v"}}
		}), "placement.tolerations: operator Exists takes no value"),
		Entry("toleration seconds without NoExecute", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) {
			s.Placement.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule, TolerationSeconds: ptr.To[int64](5)}}
		}), "placement.tolerations tolerationSeconds applies to effect NoExecute only"),
		Entry("runner image :latest", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.RunnerImage = "localhost/kvbench-runner:latest" }), "runnerImage needs a version tag"),
		Entry("runner image without a tag", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.RunnerImage = "localhost:5000/kvbench-runner" }), "runnerImage needs a version tag"),
		Entry("deadline below 1m", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.Deadline = &metav1.Duration{Duration: 10e9} }), "deadline must be at least 1m"),
		Entry("repeat 0", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.Repeat = -1 }), "spec.repeat"),
		Entry("memory below 256Mi", base().DatasetSize("1Mi").Memory("100Mi"), "resources.memory must be at least 256Mi"),
		Entry("memtables x their count beyond the memory limit (non-tmpfs)", base().Storage(kvv1.MediumLocalNVMe, "10Gi", "").Memory("1Gi").
			Engines(kvv1.EngineSpec{Name: kvv1.EngineRocksDB, Options: kvv1.EngineOptions{WriteBufferSize: qty("128Mi"), MaxWriteBufferNumber: ptr.To[int32](6)}}),
			"resources.memory: need "),
		Entry("optimizeForPointLookup's cache beyond the memory limit", base().Storage(kvv1.MediumLocalNVMe, "10Gi", "").Memory("1Gi").
			Engines(kvv1.EngineSpec{Name: kvv1.EngineRocksDB, Options: kvv1.EngineOptions{OptimizeForPointLookup: qty("700Mi")}}),
			"resources.memory: need "),
		Entry("block cache not below the memory limit", base().Storage(kvv1.MediumLocalNVMe, "10Gi", "").Memory("1Gi").Engines(kvv1.EngineSpec{Name: kvv1.EngineRocksDB, Options: kvv1.EngineOptions{CacheSize: qty("1Gi")}}), "resources.memory: need "),
		Entry("cpu 0", base().CPU("0"), "resources.cpu must be greater than 0"),
		Entry("negative TTL", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.Cleanup.TTLSecondsAfterFinished = ptr.To[int32](-1) }), "spec.cleanup.ttlSecondsAfterFinished"),
		Entry("name too long for Job names", w.MakeKVBenchmark(strings.Repeat("a", 51), ns), "metadata.name must be at most 50 characters"),
		Entry("warmup with both duration and ops", base().Workloads(wl(kvv1.WorkloadReadRandom, func(s *kvv1.WorkloadSpec) {
			s.Warmup = &kvv1.WarmupSpec{Ops: ptr.To[int64](10), Duration: &metav1.Duration{Duration: 10e9}}
		})), "warmup: set exactly one of duration and ops"),
		Entry("warmup with neither", base().Workloads(wl(kvv1.WorkloadReadRandom, func(s *kvv1.WorkloadSpec) { s.Warmup = &kvv1.WarmupSpec{} })), "warmup: set exactly one of duration and ops"),
		Entry("warmup duration 0", base().Workloads(wl(kvv1.WorkloadReadRandom, func(s *kvv1.WorkloadSpec) {
			s.Warmup = &kvv1.WarmupSpec{Duration: &metav1.Duration{}}
		})), "warmup.duration must be positive"),
		Entry("warmup ops 0", base().Workloads(wl(kvv1.WorkloadReadRandom, func(s *kvv1.WorkloadSpec) { s.Warmup = &kvv1.WarmupSpec{Ops: ptr.To[int64](0)} })), "warmup.ops"),
		Entry("warmup on pulse", base().Workloads(wl(kvv1.WorkloadPulse, func(s *kvv1.WorkloadSpec) {
			s.Pulse = &kvv1.PulseSpec{Rounds: 1, Interval: metav1.Duration{Duration: 1e9}}
			s.Warmup = &kvv1.WarmupSpec{Ops: ptr.To[int64](10)}
		})), "warmup does not apply to pulse"),
		Entry("settle timeout 0", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.Settle = &kvv1.SettleSpec{} }), "settle.timeout must be positive"),
		Entry("settle timeout over 24h", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) {
			s.Settle = &kvv1.SettleSpec{Timeout: metav1.Duration{Duration: 25 * 3600e9}}
		}), "settle.timeout must be positive and at most 24h"),
		// 64Mi x 1.1 x 2 (the checkpoint) + 2 x 1.1 x 64Mi RocksDB WALs + 8Mi = 289.6Mi.
		Entry("reset perPoint on a volume without room for the checkpoint", base().Storage(kvv1.MediumLocalNVMe, "289Mi", "").
			EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.Reset = kvv1.ResetPerPoint }), "storage.size: 289Mi is too small; the database volume of the largest engine needs storage.size: 290Mi or more"),
		Entry("reset perPoint on a tmpfs sized for the dataset once", base().Storage(kvv1.MediumTmpfs, "150Mi", "").
			EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.Reset = kvv1.ResetPerPoint }), "storage.size: 150Mi is too small; the database volume of the largest engine needs storage.size: 290Mi or more"),
		Entry("reset perPoint on a num dataset's volume without room for the checkpoint", base().Dataset(func(d *kvv1.DatasetSpec) {
			d.Size, d.Num = nil, ptr.To[int64](1<<20) // 1Mi x (16 + 100) bytes = 116Mi
		}).Storage(kvv1.MediumLocalNVMe, "403Mi", "").EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.Reset = kvv1.ResetPerPoint }), "storage.size: 403Mi is too small; the database volume of the largest engine needs storage.size: 404Mi or more"),
		Entry("unknown reset mode", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.Reset = "always" }), `reset "always" is not supported: use none, perPoint or perIteration`),
		Entry("baseline with neither name nor configMap", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.Baseline = &kvv1.BaselineRef{} }), "baseline: set exactly one of name (a KVBenchmark) and configMap (a saved result)"),
		Entry("baseline with both name and configMap", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.Baseline = &kvv1.BaselineRef{Name: "a", ConfigMap: "b"} }), "baseline: set exactly one of name"),
		Entry("baseline naming itself", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.Baseline = &kvv1.BaselineRef{Name: "bench"} }), "spec.baseline.name must name another KVBenchmark, not this one"),
		Entry("baseline threshold above 100%", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) {
			s.Baseline = &kvv1.BaselineRef{Name: "a", ThresholdPercent: ptr.To[int32](101)}
		}), "spec.baseline.thresholdPercent"),
		Entry("baseline alpha 0", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) {
			s.Baseline = &kvv1.BaselineRef{Name: "a", Alpha: ptr.To(0.0)}
		}), "spec.baseline.alpha: Invalid value: 0: spec.baseline.alpha in body should be greater than 0"),
		Entry("baseline alpha above 0.5", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) {
			s.Baseline = &kvv1.BaselineRef{Name: "a", Alpha: ptr.To(0.6)}
		}), "spec.baseline.alpha in body should be less than or equal to 0.5"),
		Entry("baseline metric the compare CLI does not know", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) {
			s.Baseline = &kvv1.BaselineRef{Name: "a", Metrics: []kvv1.BaselineMetric{"ops", "p95"}}
		}), `spec.baseline.metrics: Invalid value: "array": baseline.metrics "p95" is not a metric: use ops, p50, p99 or p999`),
		Entry("baseline metric twice", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) {
			s.Baseline = &kvv1.BaselineRef{Name: "a", Metrics: []kvv1.BaselineMetric{"p99", "p99"}}
		}), `spec.baseline.metrics[1]: Duplicate value: "p99"`),

		// Signs and ranges of size and count fields.
		Entry("negative cacheSize (would cancel the memory rule)", base().Engines(kvv1.EngineSpec{Name: kvv1.EngineRocksDB, Options: kvv1.EngineOptions{CacheSize: qty("-10Gi")}}), "cacheSize must not be negative"),
		Entry("writeBufferSize 0", base().Engines(kvv1.EngineSpec{Name: kvv1.EngineRocksDB, Options: kvv1.EngineOptions{WriteBufferSize: qty("0")}}), "writeBufferSize must be at least 64Ki"),
		Entry("negative writeBufferSize", base().Engines(kvv1.EngineSpec{Name: kvv1.EngineRocksDB, Options: kvv1.EngineOptions{WriteBufferSize: qty("-64Mi")}}), "writeBufferSize must be at least 64Ki"),
		Entry("writeBufferSize 4Gi", base().Memory("16Gi").Engines(kvv1.EngineSpec{Name: kvv1.EngineRocksDB, Options: kvv1.EngineOptions{WriteBufferSize: qty("4Gi")}}), "below 4Gi"),
		Entry("blockSize 0", base().Engines(kvv1.EngineSpec{Name: kvv1.EngineRocksDB, Options: kvv1.EngineOptions{BlockSize: qty("0")}}), "blockSize must be greater than 0"),
		Entry("negative targetFileSizeBase", base().Engines(kvv1.EngineSpec{Name: kvv1.EngineRocksDB, Options: kvv1.EngineOptions{TargetFileSizeBase: qty("-1Mi")}}), "targetFileSizeBase must be greater than 0"),
		Entry("maxBytesForLevelBase 0", base().Engines(kvv1.EngineSpec{Name: kvv1.EngineRocksDB, Options: kvv1.EngineOptions{MaxBytesForLevelBase: qty("0")}}), "maxBytesForLevelBase must be greater than 0"),
		Entry("optimizeForPointLookup below 1Mi", base().Engines(kvv1.EngineSpec{Name: kvv1.EngineRocksDB, Options: kvv1.EngineOptions{OptimizeForPointLookup: qty("512Ki")}}), "optimizeForPointLookup is a block cache size in whole MiB"),
		Entry("negative optimizeForPointLookup", base().Engines(kvv1.EngineSpec{Name: kvv1.EngineRocksDB, Options: kvv1.EngineOptions{OptimizeForPointLookup: qty("-1Gi")}}), "optimizeForPointLookup is a block cache size in whole MiB"),
		Entry("maxWriteBufferNumber 0", base().Engines(kvv1.EngineSpec{Name: kvv1.EngineRocksDB, Options: kvv1.EngineOptions{MaxWriteBufferNumber: ptr.To[int32](0)}}), "spec.engines[0].options.maxWriteBufferNumber"),
		Entry("maxOpenFiles 0", base().Engines(kvv1.EngineSpec{Name: kvv1.EngineRocksDB, Options: kvv1.EngineOptions{MaxOpenFiles: ptr.To[int32](0)}}), "maxOpenFiles 0 opens no table file"),
		Entry("maxBackgroundJobs beyond 1024", base().Engines(kvv1.EngineSpec{Name: kvv1.EngineRocksDB, Options: kvv1.EngineOptions{MaxBackgroundJobs: ptr.To[int32](100000)}}), "spec.engines[0].options.maxBackgroundJobs"),
		Entry("negative storage.size", base().Storage(kvv1.MediumLocalNVMe, "-10Gi", ""), "storage.size must be greater than 0"),
		Entry("valueSize 0 (the runner would use 100)", base().Dataset(func(d *kvv1.DatasetSpec) { d.ValueSize = -1 }), "spec.dataset.valueSize"),
		Entry("workload num beyond the runner's 2^40", base().Workloads(wl(kvv1.WorkloadReadRandom, func(s *kvv1.WorkloadSpec) { s.Num = ptr.To[int64](1 << 41) })), "spec.workloads[0].num"),
		Entry("pulse round with nothing to do", base().Workloads(wl(kvv1.WorkloadPulse, func(s *kvv1.WorkloadSpec) {
			s.Pulse = &kvv1.PulseSpec{Interval: metav1.Duration{Duration: 1e9}, Rounds: 3}
		})), "pulse: a round needs at least one of reads, writes and deletes"),

		// Datasets the runner refuses, and num-sized datasets against the storage size.
		Entry("dataset num beyond the runner's 2^40 keys", base().Storage(kvv1.MediumLocalNVMe, "10Gi", "").DatasetNum(1<<41), "spec.dataset.num"),
		Entry("dataset size below one key-value pair", base().DatasetSize("100"), "dataset.size must hold between one key-value pair"),
		Entry("dataset size beyond 2^40 keys", base().Storage(kvv1.MediumLocalNVMe, "2000Ti", "").Memory("16Gi").DatasetSize("1000Ti").Dataset(func(d *kvv1.DatasetSpec) {
			d.KeySize, d.ValueSize = 8, 1
		}), "dataset.size must hold between one key-value pair"),
		Entry("num-sized dataset larger than storage.size (localNVMe)", base().DatasetNum(100_000_000).Storage(kvv1.MediumLocalNVMe, "10Gi", ""), "storage.size: 10240Mi is too small; the database volume of the largest engine needs storage.size:"),
		Entry("num-sized dataset larger than the tmpfs storage.size", base().Memory("4Gi").DatasetNum(10_000_000).Storage(kvv1.MediumTmpfs, "1Gi", ""), "storage.size: 1024Mi is too small; the database volume of the largest engine needs storage.size:"),

		// Fields that do not apply to the workload or engine.
		Entry("dbbench workload on leveldb", base().Threads(1).EngineNames(kvv1.EngineLevelDB).Workloads(wl(kvv1.WorkloadDBBench, func(s *kvv1.WorkloadSpec) { s.DBBenchArgs = []string{"--benchmarks=fillseq"} })), "a dbbench workload runs RocksDB's db_bench"),
		Entry("dbbench workload next to pebble", base().Threads(1).EngineNames(kvv1.EngineRocksDB, kvv1.EnginePebble).Workloads(wl(kvv1.WorkloadDBBench, func(s *kvv1.WorkloadSpec) { s.DBBenchArgs = []string{"--benchmarks=fillseq"} })), "a dbbench workload runs RocksDB's db_bench"),
		Entry("seekNexts on readrandom", base().Workloads(wl(kvv1.WorkloadReadRandom, func(s *kvv1.WorkloadSpec) { s.SeekNexts = ptr.To[int32](10) })), "seekNexts applies to seekrandom only"),
		Entry("writesPerSecond on fillrandom", base().Workloads(wl(kvv1.WorkloadFillRandom, func(s *kvv1.WorkloadSpec) { s.WritesPerSecond = ptr.To[int64](100) })), "writesPerSecond applies to readwhilewriting only"),
		Entry("num on pulse", base().Workloads(wl(kvv1.WorkloadPulse, func(s *kvv1.WorkloadSpec) {
			s.Pulse = &kvv1.PulseSpec{Reads: 1, Interval: metav1.Duration{Duration: 1e9}, Rounds: 1}
			s.Num = ptr.To[int64](1000)
		})), "pulse ignores num and duration"),
		Entry("duration on dbbench", base().Threads(1).Workloads(wl(kvv1.WorkloadDBBench, func(s *kvv1.WorkloadSpec) {
			s.DBBenchArgs = []string{"--benchmarks=fillseq"}
			s.Duration = &metav1.Duration{Duration: 60e9}
		})), "dbbench ignores num and duration"),
		Entry("dbbench over a thread sweep (runs db_bench identically per count)", base().Threads(1, 4).Workloads(wl(kvv1.WorkloadDBBench, func(s *kvv1.WorkloadSpec) { s.DBBenchArgs = []string{"--benchmarks=fillseq"} })), "a dbbench workload runs db_bench once per thread count"),
		Entry("dbbench --threads different from the workload's thread count", base().Threads(1).Workloads(wl(kvv1.WorkloadDBBench, func(s *kvv1.WorkloadSpec) { s.DBBenchArgs = []string{"--benchmarks=readrandom", "--threads=8"} })), "a dbbench workload runs db_bench once per thread count"),

		// dbBenchArgs that move data off the volume or undo the spec.
		Entry("dbBenchArgs --db", base().Threads(1).Workloads(wl(kvv1.WorkloadDBBench, func(s *kvv1.WorkloadSpec) { s.DBBenchArgs = []string{"--benchmarks=fillseq", "--db=/tmp/elsewhere"} })), "dbBenchArgs must not set --db"),
		Entry("dbBenchArgs -wal_dir", base().Threads(1).Workloads(wl(kvv1.WorkloadDBBench, func(s *kvv1.WorkloadSpec) { s.DBBenchArgs = []string{"--benchmarks=fillseq", "-wal_dir=/dev/shm/wal"} })), "dbBenchArgs must not set"),
		Entry("dbBenchArgs --flagfile", base().Threads(1).Workloads(wl(kvv1.WorkloadDBBench, func(s *kvv1.WorkloadSpec) { s.DBBenchArgs = []string{"--flagfile=/etc/passwd"} })), "dbBenchArgs must not set"),
		Entry("dbBenchArgs --use_existing_db", base().Threads(1).Workloads(wl(kvv1.WorkloadDBBench, func(s *kvv1.WorkloadSpec) { s.DBBenchArgs = []string{"--benchmarks=readrandom", "--use_existing_db=1"} })), "dbBenchArgs must not set"),
		Entry("dbBenchArgs --threads beyond 1024", base().Threads(1).Workloads(wl(kvv1.WorkloadDBBench, func(s *kvv1.WorkloadSpec) { s.DBBenchArgs = []string{"--benchmarks=readrandom", "--threads=5000"} })), "dbBenchArgs --threads must be between 1 and 1024"),
		Entry("dbBenchArgs --threads 0", base().Threads(1).Workloads(wl(kvv1.WorkloadDBBench, func(s *kvv1.WorkloadSpec) { s.DBBenchArgs = []string{"--benchmarks=readrandom", "--threads=0"} })), "dbBenchArgs --threads must be between 1 and 1024"),
		Entry("dbBenchArgs --threads twice", base().Threads(1).Workloads(wl(kvv1.WorkloadDBBench, func(s *kvv1.WorkloadSpec) {
			s.DBBenchArgs = []string{"--benchmarks=readrandom", "--threads=1", "--threads=1"}
		})), "dbBenchArgs must give --threads at most once"),

		// Kubernetes syntax of placement and storage fields.
		Entry("nodeSelector key with a space", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.Placement.NodeSelector = map[string]string{"disk type": "nvme"} }), "placement.nodeSelector keys must be label keys"),
		Entry("nodeSelector key with an upper-case prefix", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) {
			s.Placement.NodeSelector = map[string]string{"Example.COM/disk": "nvme"}
		}), "placement.nodeSelector keys must be label keys"),
		Entry("nodeSelector value longer than a label value", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) {
			s.Placement.NodeSelector = map[string]string{"disk": strings.Repeat("n", 64)}
		}), "placement.nodeSelector values must be label values"),
		Entry("toleration effect misspelt", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) {
			s.Placement.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Effect: "NoSchedul"}}
		}), "placement.tolerations effect must be NoSchedule, PreferNoSchedule or NoExecute"),
		Entry("toleration operator misspelt", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) {
			s.Placement.Tolerations = []corev1.Toleration{{Key: "k", Operator: "Equals", Value: "v"}}
		}), "placement.tolerations operator must be Exists or Equal"),
		Entry("toleration Exists with a value", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) {
			s.Placement.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Value: "v"}}
		}), "operator Exists takes no value"),
		Entry("toleration without key and operator Equal", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) {
			s.Placement.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpEqual, Value: "v"}}
		}), "an empty key needs operator Exists"),
		Entry("tolerationSeconds on NoSchedule", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) {
			s.Placement.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule, TolerationSeconds: ptr.To[int64](5)}}
		}), "tolerationSeconds applies to effect NoExecute only"),
		Entry("storageClassName with upper case and underscore", base().Storage(kvv1.MediumPersistentVolume, "10Gi", "Fast_SSD"), "spec.storage.storageClassName"),
		Entry("storageClassName longer than 253", base().Storage(kvv1.MediumPersistentVolume, "10Gi", strings.Repeat("a", 254)), "spec.storage.storageClassName"),
		Entry("runner image with upper-case repository", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.RunnerImage = "localhost/KVBench-Runner:v1" }), "runnerImage is not an image reference"),
		Entry("runner image with a scheme", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.RunnerImage = "https://registry.example.com/runner:v1" }), "runnerImage is not an image reference"),

		// Direct I/O on a medium that cannot do it.
		Entry("cacheMode direct on tmpfs", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.CacheMode = kvv1.CacheDirect }), "cacheMode direct (O_DIRECT) does not work on tmpfs"),
	)

	DescribeTable("accepts valid specs",
		func(b *w.KVBenchmarkWrapper) {
			Expect(dryRunCreate(b.Obj())).To(Succeed())
		},
		Entry("the default tmpfs spec", base()),
		Entry("rocksdb and rocksjava with every workload, option and protocol step the Java runner has", base().Engines(
			kvv1.EngineSpec{Name: kvv1.EngineRocksDB},
			kvv1.EngineSpec{Name: kvv1.EngineRocksJava, Version: "9.10.0", Options: kvv1.EngineOptions{CacheSize: qty("16Mi"), BloomBits: ptr.To[int32](10),
				Compression: ptr.To(kvv1.CompressionLZ4), Statistics: ptr.To(true), CacheNumShardBits: ptr.To[int32](4), NumLevels: ptr.To[int32](5),
				DisableWAL: ptr.To(true), MaxBackgroundJobs: ptr.To[int32](4)}}).
			Workloads(wl(kvv1.WorkloadFillSeq), wl(kvv1.WorkloadFillRandom), wl(kvv1.WorkloadOverwrite), wl(kvv1.WorkloadWaitForCompaction),
				wl(kvv1.WorkloadReadRandom, func(s *kvv1.WorkloadSpec) { s.Warmup = &kvv1.WarmupSpec{Ops: ptr.To[int64](100)} }),
				wl(kvv1.WorkloadReadSeq), wl(kvv1.WorkloadSeekRandom, func(s *kvv1.WorkloadSpec) { s.SeekNexts = ptr.To[int32](10) }),
				wl(kvv1.WorkloadReadWhileWriting, func(s *kvv1.WorkloadSpec) { s.WritesPerSecond = ptr.To[int64](1000) }), wl(kvv1.WorkloadStats)).
			EditSpec(func(s *kvv1.KVBenchmarkSpec) {
				s.Settle = &kvv1.SettleSpec{Timeout: metav1.Duration{Duration: 60e9}}
				s.Reset, s.Repeat = kvv1.ResetPerPoint, 2
				s.Dataset.LoadMode = kvv1.LoadFillRandom
			})),
		Entry("rocksdb and rocksjava with the YCSB letters and their parameters", ycsbOn(base().EngineNames(kvv1.EngineRocksDB, kvv1.EngineRocksJava),
			func(y *kvv1.YCSBRecordSpec) { y.FieldCount, y.InsertOrder = ptr.To[int32](4), kvv1.YCSBInsertOrdered },
			ycsbWL(kvv1.YCSBSpec{Workload: "A"}), ycsbWL(kvv1.YCSBSpec{Workload: "B", UpdateMode: kvv1.YCSBUpdateOverwrite}),
			ycsbWL(kvv1.YCSBSpec{Workload: "C", RequestDistribution: ptr.To(kvv1.YCSBDistribution("uniform"))}), ycsbWL(kvv1.YCSBSpec{Workload: "D"}),
			ycsbWL(kvv1.YCSBSpec{Workload: "E", MaxScanLength: ptr.To[int32](10)}),
			ycsbWL(kvv1.YCSBSpec{Workload: "F", ReadWriteRatio: "30:1", ReadAllFields: ptr.To(false), WriteAllFields: ptr.To(true)}))),
		Entry("the measurement protocol: warm-ups by ops and by duration, settle, reset perPoint", base().Workloads(
			wl(kvv1.WorkloadReadRandom, func(s *kvv1.WorkloadSpec) { s.Warmup = &kvv1.WarmupSpec{Ops: ptr.To[int64](1000)} }),
			wl(kvv1.WorkloadSeekRandom, func(s *kvv1.WorkloadSpec) {
				s.Warmup = &kvv1.WarmupSpec{Duration: &metav1.Duration{Duration: 30e9}}
			})).EditSpec(func(s *kvv1.KVBenchmarkSpec) {
			s.Settle = &kvv1.SettleSpec{Timeout: metav1.Duration{Duration: 600e9}}
			s.Reset = kvv1.ResetPerPoint
			s.CacheMode = kvv1.CacheCold
		})),
		Entry("a baseline KVBenchmark with a threshold", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) {
			s.Baseline = &kvv1.BaselineRef{Name: "nightly-1", ThresholdPercent: ptr.To[int32](10)}
		})),
		Entry("reset perPoint with room for the checkpoint: local NVMe at twice the dataset and the WALs", base().Storage(kvv1.MediumLocalNVMe, "290Mi", "").
			EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.Reset = kvv1.ResetPerPoint })),
		Entry("reset perPoint on a tmpfs at twice a num dataset", base().Dataset(func(d *kvv1.DatasetSpec) {
			d.Size, d.Num = nil, ptr.To[int64](1<<20)
		}).Storage(kvv1.MediumTmpfs, "404Mi", "").Memory("1Gi").EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.Reset = kvv1.ResetPerPoint })),
		Entry("a baseline gating on ops/s and p99 at alpha 0.01", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) {
			s.Baseline = &kvv1.BaselineRef{Name: "nightly-1", ThresholdPercent: ptr.To[int32](3), Alpha: ptr.To(0.01),
				Metrics: []kvv1.BaselineMetric{kvv1.BaselineOpsPerSec, kvv1.BaselineP99}}
		})),
		Entry("a baseline in a ConfigMap", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.Baseline = &kvv1.BaselineRef{ConfigMap: "nightly-baseline"} })),
		Entry("spread EachNode over at most 100 nodes, engines in parallel", base().EnginePlacement(kvv1.EnginesParallel).EditSpec(func(s *kvv1.KVBenchmarkSpec) {
			s.Placement.Spread, s.Placement.MaxNodes = kvv1.SpreadEachNode, ptr.To[int32](100)
		})),
		Entry("100Gi on local NVMe, thread sweep 1..64, three engines", base().DatasetSize("100Gi").Memory("16Gi").
			Storage(kvv1.MediumLocalNVMe, "200Gi", "").EngineNames(kvv1.EngineRocksDB, kvv1.EngineLevelDB, kvv1.EnginePebble).
			Threads(1, 2, 4, 8, 16, 32, 64)),
		Entry("tmpfs 10Gi with a 1Gi cache in 13Gi", base().DatasetSize("10Gi").Memory("13Gi").
			Engines(kvv1.EngineSpec{Name: kvv1.EngineRocksDB, Options: kvv1.EngineOptions{CacheSize: qty("1Gi")}})),
		Entry("num-based dataset with value range", base().DatasetNum(1_000_000).Dataset(func(d *kvv1.DatasetSpec) {
			d.ValueSizeRange = &kvv1.SizeRange{Min: 30, Max: 101}
		})),
		Entry("leveldb with the options it has", base().Engines(kvv1.EngineSpec{Name: kvv1.EngineLevelDB, Options: kvv1.EngineOptions{
			BloomBits: ptr.To[int32](10), WriteBufferSize: qty("64Mi"), MaxOpenFiles: ptr.To[int32](-1), Compression: ptr.To(kvv1.CompressionSnappy)}})),
		Entry("rocksdb in-memory seed: plainTable with a prefix", base().Dataset(func(d *kvv1.DatasetSpec) { d.PrefixSize = 12; d.KeysPerPrefix = 10 }).
			Engines(kvv1.EngineSpec{Name: kvv1.EngineRocksDB, Options: kvv1.EngineOptions{PlainTable: ptr.To(true), MmapRead: ptr.To(true)}})),
		Entry("readwhilewriting, pulse, dbbench", base().Workloads(
			wl(kvv1.WorkloadReadWhileWriting, func(s *kvv1.WorkloadSpec) { s.WritesPerSecond = ptr.To[int64](10000) }),
			wl(kvv1.WorkloadPulse, func(s *kvv1.WorkloadSpec) {
				s.Pulse = &kvv1.PulseSpec{Reads: 100, Writes: 10, Deletes: 10, Interval: metav1.Duration{Duration: 1e9}, Rounds: 5}
			}),
			wl(kvv1.WorkloadDBBench, func(s *kvv1.WorkloadSpec) {
				s.DBBenchArgs = []string{"--benchmarks=readrandom"}
				s.Threads = []int32{1}
			}),
			wl(kvv1.WorkloadDBBench, func(s *kvv1.WorkloadSpec) {
				s.DBBenchArgs = []string{"--benchmarks=readrandom", "--threads=4", "--num=1000"}
				s.Threads = []int32{4}
			}),
			wl(kvv1.WorkloadSeekRandom, func(s *kvv1.WorkloadSpec) { s.SeekNexts = ptr.To[int32](10) }),
		)),
		Entry("the e2e OOM spec: db_bench with its own 2Gi memtable in 512Mi", base().Memory("512Mi").DatasetNum(1).Threads(1).
			Engines(kvv1.EngineSpec{Name: kvv1.EngineRocksDB, Options: kvv1.EngineOptions{WriteBufferSize: qty("4Mi")}}).
			Dataset(func(d *kvv1.DatasetSpec) { d.LoadMode = kvv1.LoadNone }).
			Workloads(wl(kvv1.WorkloadDBBench, func(s *kvv1.WorkloadSpec) {
				s.DBBenchArgs = []string{"--benchmarks=fillseq", "--num=13000000", "--key_size=16", "--value_size=4", "--write_buffer_size=2147483648", "--disable_wal=1"}
			}))),
		Entry("placement with label-syntax node selector and tolerations", base().EditSpec(func(s *kvv1.KVBenchmarkSpec) {
			s.Placement.NodeSelector = map[string]string{"kubernetes.io/hostname": "node-1", "disk": "", "kvbench.io/tier_2.a": "A-b.c_d"}
			s.Placement.Tolerations = []corev1.Toleration{
				{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "bench", Effect: corev1.TaintEffectNoSchedule},
				{Operator: corev1.TolerationOpExists},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](30)},
			}
		})),
		Entry("leveldb, pebble and rocksdb with explicit memtables within memory", base().Memory("2Gi").Engines(
			kvv1.EngineSpec{Name: kvv1.EngineLevelDB, Options: kvv1.EngineOptions{WriteBufferSize: qty("64Ki"), CacheSize: qty("0")}},
			kvv1.EngineSpec{Name: kvv1.EnginePebble, Options: kvv1.EngineOptions{WriteBufferSize: qty("64Mi"), MaxWriteBufferNumber: ptr.To[int32](4)}},
			kvv1.EngineSpec{Name: kvv1.EngineRocksDB, Options: kvv1.EngineOptions{OptimizeForPointLookup: qty("64Mi"), MaxOpenFiles: ptr.To[int32](-1)}})),
		Entry("ycsb with Pegasus read:write ratios 30:1, 0:1, 1:0, and readPercent", ycsbOn(base(), nil,
			ycsbWL(kvv1.YCSBSpec{Workload: "A", ReadWriteRatio: "30:1"}),
			ycsbWL(kvv1.YCSBSpec{Workload: "D", ReadWriteRatio: "0:1"}),
			ycsbWL(kvv1.YCSBSpec{Workload: "F", ReadWriteRatio: "1:0"}),
			ycsbWL(kvv1.YCSBSpec{Workload: "B", ReadPercent: ptr.To[int32](75)}),
		)),
		Entry("ycsb with every YCSB option, a warm-up and the pseudo-workloads", ycsbOn(base(), func(y *kvv1.YCSBRecordSpec) {
			y.FieldCount, y.FieldLength, y.InsertOrder, y.ZeroPadding = ptr.To[int32](1), ptr.To[int32](320), kvv1.YCSBInsertOrdered, ptr.To[int32](12)
		},
			ycsbWL(kvv1.YCSBSpec{Workload: "A", ReadAllFields: ptr.To(false), WriteAllFields: ptr.To(true), UpdateMode: kvv1.YCSBUpdateOverwrite,
				RequestDistribution: ptr.To[kvv1.YCSBDistribution]("permutedZipfian")}),
			wl(kvv1.WorkloadWaitForCompaction),
			wl(kvv1.WorkloadYCSB, func(s *kvv1.WorkloadSpec) {
				s.YCSB = &kvv1.YCSBSpec{Workload: "E", MaxScanLength: ptr.To[int32](10)}
				s.Warmup = &kvv1.WarmupSpec{Duration: &metav1.Duration{Duration: 30e9}}
			}),
			wl(kvv1.WorkloadStats),
		)),
		Entry("100k YCSB records on storage sized for them (100k x 1163 bytes)", ycsbOn(base().DatasetNum(100_000).Storage(kvv1.MediumLocalNVMe, "1Gi", ""),
			nil, ycsbWL(kvv1.YCSBSpec{Workload: "A"}))),
		Entry("persistentVolume with a class, cpu, direct I/O, digest image", base().Storage(kvv1.MediumPersistentVolume, "20Gi", "standard").CPU("2").
			EditSpec(func(s *kvv1.KVBenchmarkSpec) {
				s.CacheMode = kvv1.CacheDirect
				s.RunnerImage = "localhost/kvbench-runner@sha256:" + strings.Repeat("a", 64)
			})),
	)

	It("applies the documented defaults", func() {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": kvv1.GroupVersion.String(), "kind": "KVBenchmark",
			"metadata": map[string]any{"name": "defaults", "namespace": ns},
			"spec": map[string]any{
				"engines":   []any{map[string]any{"name": "pebble"}},
				"dataset":   map[string]any{"size": "10Mi"},
				"workloads": []any{map[string]any{"name": "readrandom"}},
				"threads":   []any{int64(1)},
				"resources": map[string]any{"memory": "1Gi"},
				"storage":   map[string]any{"medium": "tmpfs"},
			},
		}}
		Expect(k8s.Create(context.Background(), u, client.DryRunAll)).To(Succeed())
		var got kvv1.KVBenchmark
		Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &got)).To(Succeed())
		Expect(got.Spec.CacheMode).To(Equal(kvv1.CacheWarm))
		Expect(got.Spec.Repeat).To(Equal(int32(1)))
		Expect(got.Spec.Placement.Exclusive).To(Equal(ptr.To(true)))
		Expect(got.Spec.Placement.Engines).To(Equal(kvv1.EnginesSequential))
		Expect(got.Spec.Placement.Spread).To(Equal(kvv1.SpreadAnyNode))
		Expect(got.Spec.Placement.MaxNodes).To(BeNil())
		Expect(got.Spec.Cleanup.Policy).To(Equal(kvv1.CleanupDeleteJobs))
		Expect(got.Spec.Cleanup.TTLSecondsAfterFinished).To(Equal(ptr.To[int32](600)))
		Expect(got.Spec.Deadline.Duration.String()).To(Equal("24h0m0s"))
		Expect(got.Spec.Dataset.KeySize).To(Equal(int32(16)))
		Expect(got.Spec.Dataset.LoadMode).To(Equal(kvv1.LoadBulk))
	})

	It("preserves no unknown fields anywhere in the CRD (affinity and tolerations included)", func() {
		crd, err := os.ReadFile(filepath.Join(envtest.RepoRoot(), "config", "crd", "bases", "kvbench.io_kvbenchmarks.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(crd)).NotTo(ContainSubstring("x-kubernetes-preserve-unknown-fields"))
		Expect(string(crd)).To(ContainSubstring("requiredDuringSchedulingIgnoredDuringExecution"), "affinity is a typed schema")
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": kvv1.GroupVersion.String(), "kind": "KVBenchmark",
			"metadata": map[string]any{"name": "unknown", "namespace": ns},
			"spec": map[string]any{
				"engines": []any{map[string]any{"name": "pebble"}}, "dataset": map[string]any{"size": "10Mi"},
				"workloads": []any{map[string]any{"name": "readrandom"}}, "threads": []any{int64(1)},
				"resources": map[string]any{"memory": "1Gi"}, "storage": map[string]any{"medium": "tmpfs"},
				"placement": map[string]any{"affinity": map[string]any{"nodeAffinity": map[string]any{"bogus": true}}},
			},
		}}
		err = k8s.Create(context.Background(), u, client.DryRunAll, client.FieldValidation("Strict"))
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("bogus"))
	})

	It("keeps the spec immutable after creation", func() {
		ctx := context.Background()
		b := w.MakeKVBenchmark("immutable", ns).Obj()
		Expect(k8s.Create(ctx, b)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx, b))).To(Succeed()) })
		b.Spec.Threads = []int32{1, 2, 4}
		err := k8s.Update(ctx, b)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("spec is immutable"))
		// Metadata stays editable.
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
		b.Labels = map[string]string{"team": "storage"}
		Expect(k8s.Update(ctx, b)).To(Succeed())
	})

	// The CEL rules hand-encode api/v1alpha1.UnsupportedOptions and UnsupportedCompression; this
	// checks every engine x option (and compression) against the table through the real API server,
	// so the two cannot drift apart.
	It("rejects exactly the options and compressions the engine lacks (UnsupportedOptions table)", func() {
		opts := optionSamples()
		Expect(opts).To(HaveLen(reflect.TypeOf(kvv1.EngineOptions{}).NumField()))
		for _, engine := range []kvv1.EngineName{kvv1.EngineRocksDB, kvv1.EngineLevelDB, kvv1.EnginePebble, kvv1.EngineRocksJava} {
			for name, value := range opts {
				err := dryRunCreate(withOption(engine, name, value))
				if slices.Contains(kvv1.UnsupportedOptions[engine], name) {
					Expect(err).To(HaveOccurred(), "%s accepted option %s it lacks", engine, name)
					Expect(err.Error()).To(ContainSubstring(fmt.Sprintf("%s does not support the options", engine)))
					Expect(err.Error()).To(ContainSubstring(name))
				} else {
					Expect(err).NotTo(HaveOccurred(), "%s rejected option %s it has", engine, name)
				}
			}
			for _, c := range []kvv1.Compression{kvv1.CompressionNone, kvv1.CompressionSnappy, kvv1.CompressionLZ4, kvv1.CompressionZstd} {
				err := dryRunCreate(withOption(engine, "compression", string(c)))
				if slices.Contains(kvv1.UnsupportedCompression[engine], c) {
					Expect(err).To(HaveOccurred(), "%s accepted compression %s", engine, c)
					Expect(err.Error()).To(ContainSubstring(fmt.Sprintf("%s does not support compression", engine)))
				} else {
					Expect(err).NotTo(HaveOccurred(), "%s rejected compression %s", engine, c)
				}
			}
		}
	})
})

// optionSamples returns a valid sample value for every EngineOptions field, by JSON name.
func optionSamples() map[string]any {
	out := map[string]any{}
	t := reflect.TypeOf(kvv1.EngineOptions{})
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name := strings.Split(f.Tag.Get("json"), ",")[0]
		switch f.Type.Elem() {
		case reflect.TypeOf(resource.Quantity{}):
			out[name] = "1Mi"
		case reflect.TypeOf(true):
			out[name] = true
		case reflect.TypeOf(kvv1.Compression("")):
			out[name] = "snappy"
		case reflect.TypeOf(int32(0)):
			out[name] = int64(4)
		case reflect.TypeOf(""):
			out[name] = "wal"
		default:
			Fail("no sample value for option " + name + "; extend optionSamples")
		}
	}
	return out
}

func withOption(engine kvv1.EngineName, name string, value any) client.Object {
	b := base().EngineNames(engine).Obj()
	if engine != kvv1.EngineRocksJava { // plainTable needs a prefix; rocksjava refuses prefixes (and plainTable)
		b.Spec.Dataset.PrefixSize = 8
	}
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(b)
	Expect(err).NotTo(HaveOccurred())
	u := &unstructured.Unstructured{Object: raw}
	engines, _, _ := unstructured.NestedSlice(u.Object, "spec", "engines")
	engines[0].(map[string]any)["options"] = map[string]any{name: value}
	Expect(unstructured.SetNestedSlice(u.Object, engines, "spec", "engines")).To(Succeed())
	return u
}
