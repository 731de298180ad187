package wrappers

import _ "embed"

// RocksDBUserOptions is a hand-written RocksDB OPTIONS file as a user brings it (issue 19): a few keys, the
// rest RocksDB's defaults; block_cache is how a file sizes the block cache (docs/operator.md: the CRD's
// message for rocksjava). The Go runner's and the Java runner's tests give both loaders this same file.
//
//go:embed testdata/rocksdb-user-OPTIONS
var RocksDBUserOptions string
