package v1alpha1_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// asTyped is a benchmark as a user writes it in YAML (strings where the Go types would not let a
// test put a typo), one pebble engine, a 32Mi dataset on tmpfs and 1Gi, with edit applied.
func asTyped(edit func(spec map[string]any)) *unstructured.Unstructured {
	spec := map[string]any{
		"engines":   []any{map[string]any{"name": "pebble"}},
		"dataset":   map[string]any{"size": "32Mi"},
		"workloads": []any{map[string]any{"name": "readrandom"}},
		"threads":   []any{int64(1)},
		"resources": map[string]any{"memory": "1Gi"},
		"storage":   map[string]any{"medium": "tmpfs"},
	}
	edit(spec)
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": kvv1.GroupVersion.String(), "kind": "KVBenchmark",
		"metadata": map[string]any{"name": "typo", "namespace": ns}, "spec": spec}}
}

const invalid = `KVBenchmark.kvbench.io "typo" is invalid: `

// Issue 21: a user's typo gets one error that names the field, the value and an accepted example:
// no CEL conversion errors, no regular expressions, no wrong follow-up errors, and no trailing
// "<nil>: ... some validation rules were not checked" (enums are CEL rules, not schema enums).
var _ = DescribeTable("a typo gets one message that says what to fix",
	func(edit func(spec map[string]any), want string) {
		err := k8s.Create(context.Background(), asTyped(edit), client.DryRunAll)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(Equal(invalid + want))
	},
	Entry("duration 3sec", func(s map[string]any) {
		s["workloads"] = []any{map[string]any{"name": "readrandom", "duration": "3sec"}}
	}, `spec.workloads[0].duration: Invalid value: "string": workloads[].duration "3sec" is not a duration: write a number with a unit, e.g. 30s, 5m or 1h30m (units h, m, s, ms, us, ns; no spaces, no d)`),
	Entry("deadline 1d", func(s map[string]any) { s["deadline"] = "1d" },
		`spec.deadline: Invalid value: "string": deadline "1d" is not a duration: write a number with a unit, e.g. 24h or 90m (units h, m, s, ms, us, ns; no spaces, no d)`),
	Entry("warmup 10 s", func(s map[string]any) {
		s["workloads"] = []any{map[string]any{"name": "readrandom", "warmup": map[string]any{"duration": "10 s"}}}
	}, `spec.workloads[0].warmup.duration: Invalid value: "string": warmup.duration "10 s" is not a duration: write a number with a unit, e.g. 10s or 1m (units h, m, s, ms, us, ns; no spaces, no d)`),
	Entry("size 32mb", func(s map[string]any) { s["dataset"] = map[string]any{"size": "32mb"} },
		`spec.dataset.size: Invalid value: "": dataset.size "32mb" is not a quantity: write a number with a suffix, e.g. 32Mi or 10Gi (Ki, Mi, Gi, Ti are powers of 1024; k, M, G, T powers of 1000; no B, and m means milli)`),
	Entry("memory 1GB", func(s map[string]any) { s["resources"] = map[string]any{"memory": "1GB"} },
		`spec.resources.memory: Invalid value: "": resources.memory "1GB" is not a quantity: write a number with a suffix, e.g. 1Gi (Ki, Mi, Gi, Ti are powers of 1024; k, M, G, T powers of 1000; no B, and m means milli)`),
	Entry("cacheSize 8 MiB", func(s map[string]any) {
		s["engines"] = []any{map[string]any{"name": "pebble", "options": map[string]any{"cacheSize": "8 MiB"}}}
	}, `spec.engines[0].options.cacheSize: Invalid value: "": engines[].options.cacheSize "8 MiB" is not a quantity: write a number with a suffix, e.g. 512Mi (Ki, Mi, Gi, Ti are powers of 1024; k, M, G, T powers of 1000; no B, and m means milli)`),
	Entry("engine lmdb", func(s map[string]any) { s["engines"] = []any{map[string]any{"name": "lmdb"}} },
		`spec.engines[0].name: Invalid value: "string": engines[].name "lmdb" is not supported: use rocksdb, leveldb, pebble or rocksjava`),
	Entry("medium disk", func(s map[string]any) { s["storage"] = map[string]any{"medium": "disk"} },
		`spec.storage.medium: Invalid value: "string": storage.medium "disk" is not supported: use tmpfs, localNVMe or persistentVolume`),
	Entry("workload readrand", func(s map[string]any) { s["workloads"] = []any{map[string]any{"name": "readrand"}} },
		`spec.workloads[0].name: Invalid value: "string": workloads[].name "readrand" is not supported: use fillseq, fillrandom, filluniquerandom, overwrite, fillsync, readseq, readreverse, readrandom, readmissing, readwhilewriting, readrandomwriterandom, seekrandom, deleteseq, deleterandom, updaterandom, pulse, ycsb, dbbench, stats, levelstats or waitforcompaction`),
	Entry("reset perRepeat", func(s map[string]any) { s["reset"] = "perRepeat" },
		`spec.reset: Invalid value: "string": reset "perRepeat" is not supported: use none, perPoint or perIteration`),
	Entry("cacheMode hot", func(s map[string]any) { s["cacheMode"] = "hot" },
		`spec.cacheMode: Invalid value: "string": cacheMode "hot" is not supported: use warm, cold or direct`),
	// 8Mi cache + 2 x 4Mi memtables + 256Mi overhead + 2Mi buffers + 32Mi x 1.1 of tables + 4 x 1.1 x
	// 4Mi WALs + 8Mi metadata = 335Mi.
	Entry("memory 300Mi for a 32Mi tmpfs dataset", func(s map[string]any) { s["resources"] = map[string]any{"memory": "300Mi"} },
		`spec: Invalid value: "object": resources.memory: need 335Mi or more, have 300Mi. `+
			`The need is that of the largest engine: for every engine, its block cache (cacheSize, 8Mi when unset) + the optimizeForPointLookup cache + writeBufferSize x maxWriteBufferNumber (unset: rocksdb 64Mi x 2, leveldb and pebble 4Mi x 2) + 256Mi overhead + the runner value buffers (2 x the largest thread count x max(1Mi, the largest value)), `+
			`and on tmpfs the database volume, because tmpfs pages are charged to the memory limit of the pod: storage.size, else the dataset x 1.1 (table overhead) x (1, +1 for the checkpoint of reset perPoint or perIteration, the default when a repeated sweep writes, +2 when the sweep or the load writes: new versions and compaction output beside the old tables) + the write-ahead logs and flushes (1.1 x writeBufferSize per memtable, twice when anything writes, pebble 2 more) + 8Mi of metadata`),
	// 32Mi x 1.1 of tables + 4 x 1.1 x 4Mi WALs + 8Mi metadata = 60.8Mi.
	Entry("storage.size 40Mi for a 32Mi dataset", func(s map[string]any) {
		s["storage"] = map[string]any{"medium": "localNVMe", "size": "40Mi"}
	}, `spec: Invalid value: "object": storage.size: 40Mi is too small; the database volume of the largest engine needs storage.size: 61Mi or more: `+
		`the dataset x 1.1 (table overhead; twice with the checkpoint of reset perPoint or perIteration, the default when a repeated sweep writes) + the write-ahead logs and flushes of the engine (1.1 x writeBufferSize per memtable, twice when anything writes, pebble 2 more) + 8Mi of metadata; a sweep that writes may need up to twice the dataset more while compaction catches up (without storage.size, tmpfs reserves it)`),
)
