package kvbenchmark

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Seen in e2e right after the chart installed the CRDs: OwnerReferencesPermissionEnforcement
// refused the first runner Job because the API server had not yet discovered KVBenchmark, and the
// run failed as JobRejected. That refusal is transient: the Job is created again.
func TestCreatePermanent(t *testing.T) {
	jobs := schema.GroupResource{Group: "batch", Resource: "jobs"}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"policy", apierrors.NewForbidden(jobs, "b-rocksdb", errString("runner Jobs are not allowed here")), true},
		{"quota", apierrors.NewForbidden(jobs, "b-rocksdb", errString("exceeded quota: no-jobs")), false},
		{"CRD not yet discovered", apierrors.NewForbidden(jobs, "b-rocksdb", errString(
			"cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion kvbench.io/v1alpha1 Kind KVBenchmark: no matches for kind \"KVBenchmark\" in version \"kvbench.io/v1alpha1\"")), false},
		{"invalid", apierrors.NewInvalid(schema.GroupKind{Group: "batch", Kind: "Job"}, "b-rocksdb", nil), true},
	} {
		if got := createPermanent(tc.err); got != tc.want {
			t.Errorf("%s: createPermanent = %v, want %v", tc.name, got, tc.want)
		}
	}
}

type errString string

func (e errString) Error() string { return string(e) }
