package pebble

import (
	"fmt"
	"os"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"

	"github.com/kvbench/kvbench-operator/runner/engine"
)

// loadOptionsFile reads the user's OPTIONS file into opts with Pebble's own parser
// (Options.Parse); its message is the error. The hooks accept what this runner can construct:
// the default comparer and merger, and Pebble's bloom filter (the file names the policy, not its
// bits per key: 10, Pebble's and RocksDB's usual value; engines[].options.bloomBits sets others).
func loadOptionsFile(opts *pebble.Options, path string) error {
	text, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("pebble OPTIONS file: %w", err)
	}
	hooks := &pebble.ParseHooks{
		NewComparer: func(name string) (*pebble.Comparer, error) {
			return nil, fmt.Errorf("comparer %q is not in the runner (it has %q)", name, pebble.DefaultComparer.Name)
		},
		NewMerger: func(name string) (*pebble.Merger, error) {
			if name == pebble.DefaultMerger.Name {
				return pebble.DefaultMerger, nil
			}
			return nil, fmt.Errorf("merger %q is not in the runner (it has %q)", name, pebble.DefaultMerger.Name)
		},
		NewFilterPolicy: func(name string) (pebble.FilterPolicy, error) {
			switch name {
			case pebble.NoFilterPolicy.Name():
				return pebble.NoFilterPolicy, nil
			case bloom.FilterPolicy(10).Name():
				return bloom.FilterPolicy(10), nil
			}
			return nil, fmt.Errorf("filter policy %q is not in the runner (it has %q and %q)", name, bloom.FilterPolicy(10).Name(), pebble.NoFilterPolicy.Name())
		},
	}
	if err := opts.Parse(string(text), hooks); err != nil {
		return fmt.Errorf("pebble OPTIONS file %s: %w", path, err)
	}
	return nil
}

// fileReplacements are the keys of an OPTIONS file the typed options and the runner set (nil without one).
func fileReplacements(cfg engine.Config) []engine.Replacement {
	if cfg.OptionsFile == "" {
		return nil
	}
	o := cfg.Options
	const opt, lvl = "Options/", `Level "*"/`
	typed := []struct {
		field string
		set   bool
		keys  []string
	}{
		{"cacheSize", o.CacheSize != nil, []string{opt + "cache_size"}},
		{"writeBufferSize", o.WriteBufferSize != nil, []string{opt + "mem_table_size"}},
		{"maxWriteBufferNumber", o.MaxWriteBufferNumber != nil, []string{opt + "mem_table_stop_writes_threshold"}},
		{"maxOpenFiles", o.MaxOpenFiles != nil, []string{opt + "max_open_files"}},
		{"level0FileNumCompactionTrigger", o.Level0FileNumCompactionTrigger != nil, []string{opt + "l0_compaction_threshold"}},
		{"level0SlowdownWritesTrigger", o.Level0SlowdownWritesTrigger != nil, []string{opt + "l0_compaction_file_threshold"}},
		{"level0StopWritesTrigger", o.Level0StopWritesTrigger != nil, []string{opt + "l0_stop_writes_threshold"}},
		{"maxBytesForLevelBase", o.MaxBytesForLevelBase != nil, []string{opt + "lbase_max_bytes"}},
		{"maxBackgroundJobs", o.MaxBackgroundJobs != nil, []string{opt + "concurrent_compactions", opt + "max_concurrent_compactions"}},
		{"targetFileSizeBase", o.TargetFileSizeBase != nil, []string{`Level "0"/target_file_size`}},
		{"blockSize", o.BlockSize != nil, []string{lvl + "block_size"}},
		{"bloomBits", o.BloomBits != nil, []string{lvl + "filter_policy"}},
		{"compression", o.Compression != nil, []string{lvl + "compression"}},
		{"disableWAL", o.DisableWAL != nil, []string{opt + "disable_wal"}},
		{"walDir", o.WALDir != nil, []string{opt + "wal_dir"}},
	}
	var reps []engine.Replacement
	for _, t := range typed {
		if t.set {
			reps = append(reps, engine.Replacement{By: "engines[].options." + t.field, Keys: t.keys})
		}
	}
	return append(reps, engine.Replacement{By: "runner: the WAL stays on the benchmarked volume",
		Keys: []string{opt + "wal_dir", "WAL Failover/secondary_dir"}})
}

// OptionsFileReplacements implements engine.OptionsFileReplacer.
func (d *DB) OptionsFileReplacements() []engine.Replacement { return d.reps }
