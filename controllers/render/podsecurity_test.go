package render

import (
	"testing"

	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/controllers/plan"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

// Runner pods must pass Pod Security "restricted" for every storage medium; this runs the
// upstream admission checks on the rendered pod template.
func TestJobsMeetPodSecurityRestricted(t *testing.T) {
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks())
	if err != nil {
		t.Fatal(err)
	}
	lv := psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: psaapi.LatestVersion()}
	for _, b := range []*kvv1.KVBenchmark{
		w.MakeKVBenchmark("tmpfs", "ns").Obj(),
		w.MakeKVBenchmark("nvme", "ns").Storage(kvv1.MediumLocalNVMe, "10Gi", "").Obj(),
		w.MakeKVBenchmark("pv", "ns").Storage(kvv1.MediumPersistentVolume, "10Gi", "standard").CPU("2").Exclusive(false).Obj(),
	} {
		job, err := Job(b, plan.Plan(b)[0], DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		agg := policy.AggregateCheckResults(evaluator.EvaluatePod(lv, &job.Spec.Template.ObjectMeta, &job.Spec.Template.Spec))
		if !agg.Allowed {
			t.Errorf("%s: violates restricted: %s: %s", b.Name, agg.ForbiddenReason(), agg.ForbiddenDetail())
		}
	}
}
