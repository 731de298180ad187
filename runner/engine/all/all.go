// Package all registers every engine adapter.
package all

import (
	_ "github.com/kvbench/kvbench-operator/runner/engine/leveldb"
	_ "github.com/kvbench/kvbench-operator/runner/engine/pebble"
	_ "github.com/kvbench/kvbench-operator/runner/engine/rocksdb"
)
