package kvbenchmark

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/stats"
)

// A benchmark with spec.baseline is compared with it once both have ended, with the statistics
// and verdict of `kubectl kvbench compare --fail-on-regression` (package stats). The verdict is
// final once made; a baseline that cannot be compared yet (not finished) is looked at again.

// Event reasons of the baseline comparison.
const (
	EventRegressed        = "Regressed"
	EventNoRegression     = "NoRegression"
	EventBaselineUnusable = "BaselineUnusable"
	EventNoVerdict        = "NoVerdict"
)

// Regressed condition reasons.
const (
	ReasonRegression          = "Regression"
	ReasonNoRegression        = "NoRegression"
	ReasonBaselineNotFound    = "BaselineNotFound"
	ReasonBaselineNotFinished = "BaselineNotFinished"
	ReasonBaselineFailed      = "BaselineFailed"
	ReasonBaselineInvalid     = "BaselineInvalid"
	ReasonBaselineMismatch    = "BaselineMismatch"
	ReasonBenchmarkFailed     = "BenchmarkFailed"
	// ReasonTooFewRepeats: compared, but with fewer repeats than the U test needs to find any
	// difference (stats.MinRepeats), so there is no verdict; the changes are in status.baseline.
	ReasonTooFewRepeats = "TooFewRepeats"
)

// ReasonStateDrift is the Noisy reason when the repeats shared one database that the sweep's
// writes changed (reset none), so their variation is not noise alone.
const ReasonStateDrift = "StateDrift"

// BaselineConfigMapKey is the key of a saved benchmark (`kubectl kvbench save`'s NAME.yaml) in a
// baseline ConfigMap.
const BaselineConfigMapKey = "benchmark.yaml"

// baselineRetry is how often a benchmark whose baseline is still running looks again.
const baselineRetry = 30 * time.Second

// maxBaselineChanges bounds status.baseline.changes (the CRD's MaxItems).
const maxBaselineChanges = 64

// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get

// compareBaseline fills st.Baseline and the Regressed condition of an ended benchmark with a
// spec.baseline, and returns when to look again (0: no need).
func (r *KVBenchmarkReconciler) compareBaseline(ctx context.Context, b *kvv1.KVBenchmark, st *kvv1.KVBenchmarkStatus, now time.Time) time.Duration {
	ref := b.Spec.Baseline
	if ref == nil || (st.Phase != kvv1.PhaseSucceeded && st.Phase != kvv1.PhaseFailed) {
		return 0
	}
	if prev := b.Status.Baseline; prev != nil && prev.Error == "" {
		st.Baseline = prev // the verdict is final
		return 0
	}
	base, unusable, err := r.loadBaseline(ctx, b.Namespace, ref)
	if err != nil {
		logf.FromContext(ctx).Info("cannot read the baseline yet", "error", err.Error())
		return baselineRetry
	}
	v := verdictFor(b, st, base, unusable, ref, now)
	st.Baseline = v.comparison
	setCondition(st, b.Generation, now, kvv1.ConditionRegressed, v.status, v.reason, v.message)
	if v.reason == ReasonBaselineNotFinished {
		return baselineRetry
	}
	return 0
}

// unusable says why a baseline cannot be read.
type unusable struct{ reason, message string }

// loadBaseline reads the baseline benchmark: a KVBenchmark of the namespace or a saved one in a
// ConfigMap. A baseline that is missing or not a benchmark is unusable, not an error.
func (r *KVBenchmarkReconciler) loadBaseline(ctx context.Context, ns string, ref *kvv1.BaselineRef) (*kvv1.KVBenchmark, *unusable, error) {
	if ref.Name != "" {
		var base kvv1.KVBenchmark
		err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, &base)
		if apierrors.IsNotFound(err) {
			return nil, &unusable{ReasonBaselineNotFound, fmt.Sprintf("KVBenchmark %s not found in namespace %s", ref.Name, ns)}, nil
		}
		if err != nil {
			return nil, nil, err
		}
		return &base, nil, nil
	}
	// ConfigMaps are read from the API server: caching every ConfigMap of the cluster for this
	// one read would cost more than the read.
	var cm corev1.ConfigMap
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.ConfigMap}, &cm)
	if apierrors.IsNotFound(err) {
		return nil, &unusable{ReasonBaselineNotFound, fmt.Sprintf("ConfigMap %s not found in namespace %s", ref.ConfigMap, ns)}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	base, err := savedBenchmark(&cm)
	if err != nil {
		return nil, &unusable{ReasonBaselineInvalid, fmt.Sprintf("ConfigMap %s: %v", ref.ConfigMap, err)}, nil
	}
	return base, nil, nil
}

// savedBenchmark parses the KVBenchmark saved under BaselineConfigMapKey.
func savedBenchmark(cm *corev1.ConfigMap) (*kvv1.KVBenchmark, error) {
	text, ok := cm.Data[BaselineConfigMapKey]
	if !ok {
		return nil, fmt.Errorf("no key %s (create it with: kubectl create configmap %s --from-file=%s=saved/NAME.yaml)", BaselineConfigMapKey, cm.Name, BaselineConfigMapKey)
	}
	var base kvv1.KVBenchmark
	if err := yaml.UnmarshalStrict([]byte(text), &base); err != nil {
		return nil, fmt.Errorf("%s is not a KVBenchmark: %v", BaselineConfigMapKey, err)
	}
	if base.Kind != "" && base.Kind != "KVBenchmark" {
		return nil, fmt.Errorf("%s holds a %s, not a KVBenchmark", BaselineConfigMapKey, base.Kind)
	}
	return &base, nil
}

// verdict is what compareBaseline writes.
type verdict struct {
	comparison *kvv1.BaselineComparison
	status     metav1.ConditionStatus
	reason     string
	message    string
}

// verdictFor compares the ended benchmark (status st) with base; u says why base could not be
// read, when it could not.
func verdictFor(b *kvv1.KVBenchmark, st *kvv1.KVBenchmarkStatus, base *kvv1.KVBenchmark, u *unusable, ref *kvv1.BaselineRef, now time.Time) verdict {
	name := "kvbenchmark/" + ref.Name
	if ref.ConfigMap != "" {
		name = "configmap/" + ref.ConfigMap
	}
	unknown := func(reason, msg string) verdict {
		return verdict{comparison: &kvv1.BaselineComparison{Baseline: name, Error: truncate(msg)},
			status: metav1.ConditionUnknown, reason: reason, message: msg}
	}
	if u != nil {
		return unknown(u.reason, "baseline "+name+": "+u.message)
	}
	switch base.Status.Phase {
	case kvv1.PhaseSucceeded:
	case kvv1.PhaseFailed:
		return unknown(ReasonBaselineFailed, fmt.Sprintf("baseline %s failed; a failed benchmark is no baseline", name))
	default:
		return unknown(ReasonBaselineNotFinished, fmt.Sprintf("baseline %s is %s; compared once it has finished", name, orPending(base.Status.Phase)))
	}
	if st.Phase != kvv1.PhaseSucceeded {
		return unknown(ReasonBenchmarkFailed, "this benchmark failed; its results are incomplete, so it is not compared with baseline "+name)
	}
	ended := b.DeepCopy()
	ended.Status = *st
	if diff := stats.Mismatch(base, ended); len(diff) > 0 {
		return unknown(ReasonBaselineMismatch, fmt.Sprintf("baseline %s is not comparable with this benchmark (baseline vs this): %s",
			name, strings.Join(diff, "; ")))
	}
	var oldPts, newPts []stats.Point
	for i := range base.Status.Runs {
		oldPts = append(oldPts, stats.RunPoints(&base.Status.Runs[i])...)
	}
	for i := range st.Runs {
		newPts = append(newPts, stats.RunPoints(&st.Runs[i])...)
	}
	o, err := baselineOptions(ref)
	if err != nil {
		return unknown(ReasonBaselineInvalid, fmt.Sprintf("spec.baseline: %v", err))
	}
	c := stats.Compare(oldPts, newPts, o)
	if c.Matched == 0 {
		return unknown(ReasonBaselineMismatch, fmt.Sprintf("baseline %s has no point in common with this benchmark (engine, workload, threads): baseline %s; this %s",
			name, pointList(oldPts), pointList(newPts)))
	}
	msg := c.Verdict()
	if n := len(c.OnlyOld) + len(c.OnlyNew); n > 0 {
		msg += fmt.Sprintf("; %d point(s) only in the baseline, %d only in this benchmark", len(c.OnlyOld), len(c.OnlyNew))
	}
	msg += "; " + gateText(o)
	v := verdict{comparison: &kvv1.BaselineComparison{Baseline: name, ComparedAt: &metav1.Time{Time: now}, Changes: c.PointChanges(maxBaselineChanges)},
		status: metav1.ConditionFalse, reason: ReasonNoRegression, message: "against " + name + ": " + msg}
	switch c.Outcome() {
	case stats.OutcomeRegressed:
		v.status, v.reason = metav1.ConditionTrue, ReasonRegression
	case stats.OutcomeNoVerdict:
		v.status, v.reason = metav1.ConditionUnknown, ReasonTooFewRepeats
	}
	return v
}

// baselineOptions are the comparison's settings from spec.baseline, the CLI's defaults for what
// is unset. The API server has checked the ranges and names; err is for objects it did not check
// (a spec written before these fields had their validation).
func baselineOptions(ref *kvv1.BaselineRef) (stats.Options, error) {
	o := stats.Defaults
	if ref.ThresholdPercent != nil {
		o.ThresholdPercent = float64(*ref.ThresholdPercent)
	}
	if ref.Alpha != nil {
		if a := *ref.Alpha; !(a > 0 && a <= 0.5) {
			return o, fmt.Errorf("alpha %g: want a significance level in (0, 0.5], e.g. 0.05", a)
		}
		o.Alpha = *ref.Alpha
	}
	if len(ref.Metrics) > 0 {
		names := make([]string, len(ref.Metrics))
		for i, m := range ref.Metrics {
			names[i] = string(m)
		}
		ms, err := stats.ParseMetrics(strings.Join(names, ","))
		if err != nil {
			return o, fmt.Errorf("metrics: %w", err)
		}
		// In table order, however the spec lists them.
		o.Metrics = slices.DeleteFunc(slices.Clone(stats.Metrics), func(m stats.Metric) bool { return !slices.Contains(ms, m) })
	}
	return o, nil
}

// gateText says what the verdict was made with, in spec.baseline's words, e.g. "compared ops,
// p99 at alpha 0.05, threshold 5%".
func gateText(o stats.Options) string {
	ms := o.Metrics
	if len(ms) == 0 {
		ms = stats.Metrics
	}
	short := map[stats.Metric]kvv1.BaselineMetric{stats.OpsPerSec: kvv1.BaselineOpsPerSec, stats.P50Micros: kvv1.BaselineP50,
		stats.P99Micros: kvv1.BaselineP99, stats.P999Micros: kvv1.BaselineP999}
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = string(short[m])
	}
	return fmt.Sprintf("compared %s at alpha %g, threshold %g%%", strings.Join(names, ", "), o.Alpha, o.ThresholdPercent)
}

func pointList(ps []stats.Point) string {
	if len(ps) == 0 {
		return "none"
	}
	var out []string
	for i := range ps {
		out = append(out, ps[i].Label())
		if i == 4 && len(ps) > 5 {
			out = append(out, fmt.Sprintf("and %d more", len(ps)-5))
			break
		}
	}
	return strings.Join(out, ", ")
}

func orPending(p kvv1.BenchmarkPhase) kvv1.BenchmarkPhase {
	if p == "" {
		return kvv1.PhasePending
	}
	return p
}

func setCondition(st *kvv1.KVBenchmarkStatus, generation int64, now time.Time, t string, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: t, Status: status, Reason: reason, Message: truncate(msg),
		ObservedGeneration: generation, LastTransitionTime: metav1.Time{Time: now}})
}

// noisyCondition is the Noisy condition for benchmarks with repeats: True names the points whose
// ops/s vary more than 5% (CoV) over their repeats. Nil without repeats.
func noisyCondition(spec *kvv1.KVBenchmarkSpec, runs []kvv1.RunStatus) *metav1.Condition {
	repeated := false
	for _, r := range runs {
		repeated = repeated || len(r.Points) > 0
	}
	if !repeated {
		return nil
	}
	noisy := stats.NoisyPoints(runs)
	if len(noisy) == 0 {
		return &metav1.Condition{Type: kvv1.ConditionNoisy, Status: metav1.ConditionFalse, Reason: "Steady",
			Message: fmt.Sprintf("every repeated point's ops/s vary by at most %g%% (CoV)", 100*stats.DefaultNoisyCoV)}
	}
	msg := fmt.Sprintf("ops/s vary by more than %g%% (CoV) over the repeats of: %s", 100*stats.DefaultNoisyCoV, strings.Join(noisy, ", "))
	if kvv1.SharesState(spec) {
		// The iterations did not measure the same database: the variation is (also) its drift.
		return &metav1.Condition{Type: kvv1.ConditionNoisy, Status: metav1.ConditionTrue, Reason: ReasonStateDrift,
			Message: msg + "; the sweep writes and reset is none, so each iteration ran on the database the previous one left: the variation comes from that state, not only from noise (reset: perIteration restores the loaded database before each iteration)"}
	}
	return &metav1.Condition{Type: kvv1.ConditionNoisy, Status: metav1.ConditionTrue, Reason: "NoisyPoints", Message: msg}
}

// emitBaseline records an event when the Regressed condition changes.
func (r *KVBenchmarkReconciler) emitBaseline(old, b *kvv1.KVBenchmark) {
	c := meta.FindStatusCondition(b.Status.Conditions, kvv1.ConditionRegressed)
	if c == nil {
		return
	}
	if p := meta.FindStatusCondition(old.Status.Conditions, kvv1.ConditionRegressed); p != nil && p.Status == c.Status && p.Reason == c.Reason {
		return
	}
	switch c.Status {
	case metav1.ConditionTrue:
		r.Recorder.Event(b, corev1.EventTypeWarning, EventRegressed, c.Message)
	case metav1.ConditionFalse:
		r.Recorder.Event(b, corev1.EventTypeNormal, EventNoRegression, c.Message)
	default:
		reason := EventBaselineUnusable
		if c.Reason == ReasonTooFewRepeats {
			reason = EventNoVerdict
		}
		r.Recorder.Event(b, corev1.EventTypeWarning, reason, c.Message)
	}
}
