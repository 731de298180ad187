package v1alpha1_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func optionsFrom(name, key string) map[string]any {
	return map[string]any{"configMapKeyRef": map[string]any{"name": name, "key": key}}
}

// Issue 19: engines[].optionsFrom is refused where it cannot apply, with one message that says what to do.
var _ = DescribeTable("engines[].optionsFrom",
	func(edit func(spec map[string]any), want string) {
		err := k8s.Create(context.Background(), asTyped(edit), client.DryRunAll)
		if want == "" {
			Expect(err).NotTo(HaveOccurred())
			return
		}
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(Equal(invalid + want))
	},
	Entry("rocksdb and pebble take a file", func(s map[string]any) {
		s["engines"] = []any{
			map[string]any{"name": "rocksdb", "optionsFrom": optionsFrom("prod", "OPTIONS"), "options": map[string]any{"writeBufferSize": "4Mi"}},
			map[string]any{"name": "pebble", "optionsFrom": optionsFrom("prod", "pebble.OPTIONS")},
		}
	}, ""),
	Entry("rocksjava takes a file, with the typed options that are no table options", func(s map[string]any) {
		s["engines"] = []any{map[string]any{"name": "rocksjava", "optionsFrom": optionsFrom("prod", "OPTIONS"),
			"options": map[string]any{"writeBufferSize": "4Mi", "compression": "lz4", "statistics": true}}}
	}, ""),
	Entry("rocksjava cannot set table options over a file", func(s map[string]any) {
		s["engines"] = []any{map[string]any{"name": "rocksjava", "optionsFrom": optionsFrom("prod", "OPTIONS"),
			"options": map[string]any{"cacheSize": "16Mi", "bloomBits": int64(10)}}}
	}, `spec: Invalid value: "object": engine rocksjava with optionsFrom: the options cacheSize, cacheNumShardBits, bloomBits and blockSize are BlockBasedTable options, which the Java runner cannot set over the OPTIONS file's table factory (RocksJava replaces the whole factory): put them in the file's [TableOptions/BlockBasedTable "default"] section (e.g. block_size=16384, filter_policy=bloomfilter:10:false, block_cache=64M), or use engine rocksdb`),
	Entry("leveldb has no OPTIONS file", func(s map[string]any) {
		s["engines"] = []any{map[string]any{"name": "leveldb", "optionsFrom": optionsFrom("prod", "OPTIONS")}}
	}, `spec.engines: Invalid value: "array": engines[].optionsFrom: leveldb has no OPTIONS file (its options are Open arguments only): remove optionsFrom from the leveldb engine and use engines[].options, e.g. options: {writeBufferSize: 4Mi}`),
	Entry("presets do not combine with a file", func(s map[string]any) {
		s["engines"] = []any{map[string]any{"name": "rocksdb", "optionsFrom": optionsFrom("prod", "OPTIONS"),
			"options": map[string]any{"increaseParallelism": int64(4)}}}
	}, `spec.engines: Invalid value: "array": engines[].options.optimizeForPointLookup and increaseParallelism are presets that rewrite many options, which cannot be listed as overrides of an OPTIONS file: with optionsFrom, put their result in the file (e.g. max_background_jobs=16)`),
	Entry("a ConfigMap name in capitals", func(s map[string]any) {
		s["engines"] = []any{map[string]any{"name": "pebble", "optionsFrom": optionsFrom("Prod_Opts", "OPTIONS")}}
	}, `spec.engines[0].optionsFrom.configMapKeyRef.name: Invalid value: "string": engines[].optionsFrom.configMapKeyRef.name "Prod_Opts" is not a ConfigMap name: lower-case letters, digits, - and ., e.g. my-rocksdb-options`),
	Entry("a key with a slash", func(s map[string]any) {
		s["engines"] = []any{map[string]any{"name": "pebble", "optionsFrom": optionsFrom("prod", "db/OPTIONS")}}
	}, `spec.engines[0].optionsFrom.configMapKeyRef.key: Invalid value: "string": engines[].optionsFrom.configMapKeyRef.key "db/OPTIONS" is not a ConfigMap key: letters, digits, -, _ and ., e.g. OPTIONS`),
	Entry("dbbench with its own --options_file", func(s map[string]any) {
		s["engines"] = []any{map[string]any{"name": "rocksdb", "optionsFrom": optionsFrom("prod", "OPTIONS")}}
		s["workloads"] = []any{map[string]any{"name": "dbbench", "dbBenchArgs": []any{"--benchmarks=fillseq", "--options_file=/x/OPTIONS"}}}
		s["resources"] = map[string]any{"memory": "2Gi"}
		s["storage"] = map[string]any{"medium": "tmpfs", "size": "1Gi"}
	}, `spec: Invalid value: "object": dbBenchArgs --options_file: with engines[].optionsFrom the runner passes db_bench --options_file itself (the mounted file); remove --options_file from dbBenchArgs`),
)
