package kvbenchmark

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// FuzzParseSummary: the termination message comes from a user-selectable runner image, so any
// text is parsed without panicking, and what is accepted has a known schema and copies into status.
// Seed corpus: testdata/fuzz/FuzzParseSummary.
func FuzzParseSummary(f *testing.F) {
	f.Add(`{"schemaVersion":"` + kvv1.ResultSchemaVersion + `","engine":"rocksdb","phases":[{"workload":"readrandom","threads":1,"opsPerSec":5}]}`)
	f.Fuzz(func(t *testing.T, msg string) {
		s, err := parseSummary(&corev1.ContainerStateTerminated{Message: msg})
		if err != nil {
			if s != nil {
				t.Fatalf("summary with error %v", err)
			}
			return
		}
		if !kvv1.KnownResultSchema(s.SchemaVersion) {
			t.Fatalf("accepted schema %q", s.SchemaVersion)
		}
		var st kvv1.RunStatus
		mergeResults(&st, s, nil)
		// Phases merge by index (a forged summary may repeat one), so never more than were sent.
		if len(st.Results) > len(s.Phases) {
			t.Fatalf("status has %d phases from a summary of %d", len(st.Results), len(s.Phases))
		}
	})
}
