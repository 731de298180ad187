package bench

import (
	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/runner/hist"
)

// The measurement protocol: what the runner does around a measured phase (warm-up, settle,
// reset, cold-cache check) and what it says about rate-limited phases, recorded in
// PhaseResult.Protocol so a reviewer can tell a flattering number from a fair one.

// targetMissedShare is how far a rate-limited phase may fall short of its target before the
// result says the target was missed.
const targetMissedShare = 0.05

// rateProtocol adds a rate-limited writer's target, whether it was missed, and its service time
// (from each write's actual start) to pr; unlimited writers (target 0) add nothing.
func rateProtocol(pr *api.MeasurementProtocol, target, reached float64, service *hist.Histogram) *api.MeasurementProtocol {
	if target <= 0 {
		return pr
	}
	if pr == nil {
		pr = &api.MeasurementProtocol{}
	}
	pr.TargetOpsPerSec = &target
	pr.TargetMissed = reached < (1-targetMissedShare)*target
	if service != nil && service.Count() > 0 {
		pr.ServiceLatencyMicros = service.Percentiles()
	}
	return pr
}
