package bench_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/runner/engine"
	"github.com/kvbench/kvbench-operator/test/wrappers"
)

// Hand-written OPTIONS files as a user brings them (issue 19): a few keys, the rest defaults. The RocksDB
// one is shared with runner/java's tests (the same file through both loaders).
var rocksdbUserOptions = wrappers.RocksDBUserOptions

// plainTableUserOptions is the user's file with a PlainTable factory instead of its BlockBasedTable section.
var plainTableUserOptions = strings.Replace(rocksdbUserOptions,
	"[TableOptions/BlockBasedTable \"default\"]\n  block_size=16384\n  block_cache=64M\n",
	"  table_factory=PlainTable\n  prefix_extractor=rocksdb.FixedPrefix.4\n[TableOptions/PlainTable \"default\"]\n  user_key_len=16\n", 1)

const (
	pebbleUserOptions = `[Version]
  pebble_version=0.1
[Options]
  mem_table_size=8388608
  mem_table_stop_writes_threshold=5
  l0_compaction_threshold=7
  cache_size=16777216
  wal_dir=/var/lib/prod/wal
[Level "0"]
  block_size=16384
  compression=NoCompression
  filter_policy=rocksdb.BuiltinBloomFilter
`
)

func writeOptions(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "OPTIONS")
	if err := os.WriteFile(p, []byte(text), 0o444); err != nil {
		t.Fatal(err)
	}
	return p
}

// An engine opened from the user's OPTIONS file runs with the file's values, except what a typed
// option sets (listed in provenance.optionsOverrides with both values) and what the runner owns.
func TestOptionsFileIsTheBaseAndTypedOptionsOverride(t *testing.T) {
	for _, tc := range []struct {
		engine   api.EngineName
		file     string
		kept     []string // "Section/key=value" the effective file must show (the file's values)
		override api.OptionOverride
		runner   string // a key the runner replaced, listed
	}{
		{api.EngineRocksDB, rocksdbUserOptions,
			[]string{"DBOptions/max_background_jobs=3", `CFOptions "default"/max_write_buffer_number=5`,
				`CFOptions "default"/level0_file_num_compaction_trigger=7`, `CFOptions "default"/compression=kNoCompression`,
				`TableOptions/BlockBasedTable "default"/block_size=16384`},
			api.OptionOverride{Key: `CFOptions "default"/write_buffer_size`, File: "8388608", Effective: "4194304",
				By: "engines[].options.writeBufferSize"},
			"DBOptions/create_if_missing"},
		{api.EnginePebble, pebbleUserOptions,
			[]string{"Options/mem_table_stop_writes_threshold=5", "Options/l0_compaction_threshold=7",
				"Options/cache_size=16777216", `Level "0"/block_size=16384`, `Level "0"/compression=NoCompression`,
				`Level "0"/filter_policy=rocksdb.BuiltinBloomFilter`},
			api.OptionOverride{Key: "Options/mem_table_size", File: "8388608", Effective: "4194304",
				By: "engines[].options.writeBufferSize"},
			"Options/wal_dir"},
	} {
		t.Run(string(tc.engine), func(t *testing.T) {
			cfg := api.RunnerConfig{Engine: api.EngineSpec{Name: tc.engine,
				Options: api.EngineOptions{WriteBufferSize: ptr.To(resource.MustParse("4Mi"))}},
				DBPath: dbDir(t), OptionsFile: writeOptions(t, tc.file), Threads: []int32{1},
				Dataset:   api.DatasetSpec{Num: i64(5000), LoadMode: api.LoadNone},
				Workloads: []api.WorkloadSpec{{Name: "fillrandom"}, {Name: "readrandom"}}}
			res, out, err := run(t, cfg)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			p := res.Provenance
			if p == nil || p.OptionsFile == nil {
				t.Fatalf("no effective options file in provenance: %+v", p)
			}
			effective := map[string]string{}
			for _, e := range engine.ParseOptionsText(p.OptionsFile.Text) {
				effective[e.Key] = e.Value
			}
			for _, kv := range tc.kept {
				k, v, _ := strings.Cut(kv, "=")
				if effective[k] != v {
					t.Errorf("effective %s = %q, want the file's %q", k, effective[k], v)
				}
			}
			if k := tc.override.Key; effective[k] != tc.override.Effective {
				t.Errorf("effective %s = %q, want the typed option's %q", k, effective[k], tc.override.Effective)
			}
			var sawOverride, sawRunner bool
			for _, o := range p.OptionsOverrides {
				switch {
				case o == tc.override:
					sawOverride = true
				case o.Key == tc.runner && strings.HasPrefix(o.By, "runner: "):
					sawRunner = true
				default:
					t.Errorf("unexpected override %s", o)
				}
			}
			if !sawOverride || !sawRunner {
				t.Errorf("overrides %v: want %s and a runner override of %s", p.OptionsOverrides, tc.override, tc.runner)
			}
		})
	}
}

// A file the engine's loader refuses fails the run before any phase, with the loader's message.
func TestOptionsFileTheEngineRefusesFailsEarly(t *testing.T) {
	for _, tc := range []struct {
		name   string
		engine api.EngineName
		file   string
		opts   api.EngineOptions
		want   string
	}{
		{"rocksdb unknown key", api.EngineRocksDB, strings.Replace(rocksdbUserOptions, "max_background_jobs=3", "max_backgruond_jobs=3", 1), api.EngineOptions{},
			"rocksdb OPTIONS file"},
		{"rocksdb not an options file", api.EngineRocksDB, "write_buffer_size: 64Mi\n", api.EngineOptions{}, "rocksdb OPTIONS file"},
		{"rocksdb another column family", api.EngineRocksDB, rocksdbUserOptions + "[CFOptions \"events\"]\n  write_buffer_size=1048576\n", api.EngineOptions{},
			"has column families default, events: the runner benchmarks the default column family only"},
		{"rocksdb preset", api.EngineRocksDB, rocksdbUserOptions, api.EngineOptions{IncreaseParallelism: ptr.To[int32](4)},
			"presets that rewrite many options"},
		{"pebble unknown key", api.EnginePebble, pebbleUserOptions + "  mem_tabel_size=1\n", api.EngineOptions{},
			"pebble: unknown option: Level \"0\".mem_tabel_size"},
		{"pebble unknown comparer", api.EnginePebble, strings.Replace(pebbleUserOptions, "[Options]\n", "[Options]\n  comparer=cockroach_comparator\n", 1), api.EngineOptions{},
			`comparer "cockroach_comparator" is not in the runner`},
		{"rocksdb block options over a PlainTable file", api.EngineRocksDB, plainTableUserOptions,
			api.EngineOptions{BlockSize: ptr.To(resource.MustParse("8Ki"))},
			"are BlockBasedTable options, and the OPTIONS file's table factory is PlainTable"},
		{"leveldb has none", api.EngineLevelDB, rocksdbUserOptions, api.EngineOptions{}, "engine leveldb has no OPTIONS file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := api.RunnerConfig{Engine: api.EngineSpec{Name: tc.engine, Options: tc.opts},
				DBPath: dbDir(t), OptionsFile: writeOptions(t, tc.file), Threads: []int32{1},
				Dataset:   api.DatasetSpec{Num: i64(1000)},
				Workloads: []api.WorkloadSpec{{Name: "readrandom"}}}
			res, _, err := run(t, cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one containing %q", err, tc.want)
			}
			if res.Load != nil || len(res.Phases) > 0 {
				t.Errorf("the run loaded or measured before failing: load %v, %d phases", res.Load, len(res.Phases))
			}
			t.Logf("%s: %v", tc.name, err)
		})
	}
}

// Pebble's walDir was accepted (the CRD allows it for pebble) but not applied: the WAL stayed in
// the database directory. It goes to the directory asked for, inside the database directory.
func TestPebbleWALDirIsApplied(t *testing.T) {
	dir := dbDir(t)
	cfg := api.RunnerConfig{Engine: api.EngineSpec{Name: api.EnginePebble, Options: api.EngineOptions{WALDir: ptr.To("wal")}},
		DBPath: dir, Threads: []int32{1}, Dataset: api.DatasetSpec{Num: i64(2000), LoadMode: api.LoadNone},
		Workloads: []api.WorkloadSpec{{Name: "fillrandom"}}}
	if _, out, err := run(t, cfg); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	inWAL, _ := filepath.Glob(filepath.Join(dir, "wal", "*.log"))
	inDB, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	if len(inWAL) == 0 || len(inDB) > 0 {
		t.Errorf("WAL files in %s/wal: %v, in the database directory: %v; want them all in wal/", dir, inWAL, inDB)
	}
}

// The dbbench workload hands the file to db_bench's own --options_file: db_bench's database
// records the file's values, and a file db_bench refuses fails the run with db_bench's message.
func TestDBBenchWorkloadGetsTheOptionsFile(t *testing.T) {
	if _, err := os.Stat("/usr/bin/db_bench"); err != nil {
		t.Fatal("db_bench not installed: run hack/install-deps.sh (Debian rocksdb-tools)")
	}
	cfg := func(file string) api.RunnerConfig {
		return api.RunnerConfig{Engine: api.EngineSpec{Name: api.EngineRocksDB}, DBPath: dbDir(t), OptionsFile: writeOptions(t, file),
			Threads: []int32{1}, Dataset: api.DatasetSpec{Num: i64(1000)},
			Workloads: []api.WorkloadSpec{{Name: api.WorkloadDBBench, DBBenchArgs: []string{"--benchmarks=fillseq", "--num=2000"}}}}
	}
	res, out, err := run(t, cfg(rocksdbUserOptions))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if p := res.Provenance; p == nil || p.OptionsFile == nil ||
		!strings.Contains(p.OptionsFile.Text, "max_write_buffer_number=5") || !strings.Contains(p.OptionsFile.Text, "block_size=16384") {
		t.Fatalf("db_bench's effective options do not show the file's values: %+v", res.Provenance)
	}
	_, _, err = run(t, cfg("write_buffer_size: 64Mi\n"))
	if err == nil || !strings.Contains(err.Error(), "db_bench failed") {
		t.Fatalf("err %v, want db_bench's failure", err)
	}
	t.Log(err)
}

// A PlainTable OPTIONS file runs: its files cannot be ingested, so the bulk load writes instead,
// as with the typed plainTable.
func TestPlainTableOptionsFileLoads(t *testing.T) {
	file := strings.Replace(plainTableUserOptions, "[DBOptions]\n", "[DBOptions]\n  allow_mmap_reads=true\n", 1)
	cfg := api.RunnerConfig{Engine: api.EngineSpec{Name: api.EngineRocksDB}, DBPath: dbDir(t), OptionsFile: writeOptions(t, file),
		Threads: []int32{1}, Dataset: api.DatasetSpec{Num: i64(5000)},
		Workloads: []api.WorkloadSpec{{Name: "readrandom", Num: i64(2000)}}}
	res, out, err := run(t, cfg)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if p := res.Provenance; p == nil || p.OptionsFile == nil || !strings.Contains(p.OptionsFile.Text, "table_factory=PlainTable") {
		t.Fatalf("the effective options are not PlainTable: %+v", res.Provenance)
	}
	if len(res.Phases) != 1 || res.Phases[0].Found == nil || *res.Phases[0].Found == 0 {
		t.Errorf("readrandom found nothing after the load: %+v", res.Phases)
	}
}
