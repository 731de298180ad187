// Package examples holds the small size each seed example (examples/seed-*.yaml) runs at in the e2e
// suite, shared with the API tests that check those scaled specs are accepted.
package examples

import (
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/kvbench/kvbench-operator/cmd/kubectl-kvbench/scale"
)

// Scale is each example file's one size field in the e2e suite, set so that every example finishes
// in about a minute on a 2-core node.
var Scale = map[string]scale.Target{
	"seed-000-rocksdb-in-memory.yaml":  {Num: ptr.To[int64](200_000)},
	"seed-001-db-bench-basics.yaml":    {Num: ptr.To[int64](100_000)},
	"seed-002-leveldb-vs-rocksdb.yaml": {Size: ptr.To(resource.MustParse("32Mi"))},
	"seed-003-rocksdb-on-flash.yaml":   {Num: ptr.To[int64](100_000)},
	"seed-004-ycsb-pegasus.yaml":       {Size: ptr.To(resource.MustParse("32Mi"))},
}
