package report

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

func TestBuildNotes(t *testing.T) {
	release := "rocksdb: 7.8.3, assertions off, release build of Debian source package rocksdb 7.8.3-2 (amd64)"
	debian := api.LibraryBuild{Version: "7.8.3", Assertions: "on", Source: "Debian package librocksdb-dev 7.8.3-2"}
	a, b := fleet(), fleet()
	a.Name, b.Name = "a", "b"
	a.Status.Runs, b.Status.Runs = a.Status.Runs[:1], b.Status.Runs[:1]
	a.Status.Runs[0].Provenance = &api.ProvenanceSummary{Builds: []string{"leveldb: 1.23, assertions off, x", release}}
	if diff := cmp.Diff([]string{"build: rocksdb 7.8.3, assertions off, release build of Debian source package rocksdb 7.8.3-2 (amd64)"},
		BuildNotes(a)); diff != "" {
		t.Errorf("one build (-want +got):\n%s", diff)
	}
	// The full result's provenance wins over the summary; two builds of one engine are a warning,
	// and assertions on are named.
	b.Results = map[string]*api.Result{b.Status.Runs[0].Name: {Engine: api.EngineRocksDB,
		Provenance: &api.Provenance{LibraryBuilds: map[string]api.LibraryBuild{"rocksdb": debian}}}}
	want := []string{
		"warning: the runs' rocksdb builds differ (default/a/rocksdb@nvme-0: 7.8.3, assertions off, release build of Debian source package rocksdb 7.8.3-2 (amd64); " +
			"default/b/rocksdb@nvme-0: 7.8.3, assertions on, Debian package librocksdb-dev 7.8.3-2), so the comparison is also one of builds",
		"warning: rocksdb was compiled with assertions on (7.8.3, assertions on, Debian package librocksdb-dev 7.8.3-2): slower than the release build its users run (docs/benchmarks.md)",
	}
	if diff := cmp.Diff(want, BuildNotes(a, b)); diff != "" {
		t.Errorf("two builds (-want +got):\n%s", diff)
	}
	// Nothing recorded, nothing said.
	if got := BuildNotes(fleet()); got != nil {
		t.Errorf("unrecorded builds: %q", got)
	}
}
