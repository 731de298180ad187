// Package schedule is the KVBenchmarkSchedule controller: it creates a KVBenchmark from the
// schedule's template at every cron time (CronJob's semantics: concurrencyPolicy,
// startingDeadlineSeconds, suspend, history limits), records every finished one in the schedule's
// history (package history), and reports change points in that history (stats.Watch) as
// conditions, events and a gauge.
package schedule

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/archive"
	"github.com/kvbench/kvbench-operator/history"
)

const (
	// AnnotationScheduledTime and AnnotationCause on a KVBenchmark say when and why it was made.
	AnnotationScheduledTime = "kvbench.io/scheduled-time"
	AnnotationCause         = "kvbench.io/cause"
	// AnnotationGeneration is the schedule's generation (its template) that made the KVBenchmark.
	AnnotationGeneration = "kvbench.io/schedule-generation"

	// Condition types.
	ConditionScheduled = "Scheduled"
	ConditionRegressed = "Regressed"
	ConditionImproved  = "Improved"

	// maxChangePoints, maxSkipped and maxSuspects bound the lists in status; maxEvents the change
	// point events of one run (a software change can move every series at once).
	maxChangePoints = 50
	maxSkipped      = 10
	maxSuspects     = 200
	maxEvents       = 10
	// archiveWait is how long a finished run waits for its archives (the engine counters) before
	// it is recorded without them; the benchmark controller gives up archiving after 5 minutes.
	archiveWait = 6 * time.Minute
	// maxMessage bounds a condition message.
	maxMessage = 2048
)

// Reconciler reconciles KVBenchmarkSchedules.
type Reconciler struct {
	client.Client
	// APIReader reads ConfigMaps (the history, the archives) from the API server: the manager
	// caches no ConfigMaps.
	APIReader client.Reader
	Recorder  record.EventRecorder
	Clock     clock.PassiveClock
	Metrics   *Collector
}

// +kubebuilder:rbac:groups=kvbench.io,resources=kvbenchmarkschedules,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kvbench.io,resources=kvbenchmarkschedules/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kvbench.io,resources=kvbenchmarkschedules/finalizers,verbs=update
// +kubebuilder:rbac:groups=kvbench.io,resources=kvbenchmarks,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;create;update
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// Reconcile records finished runs in the history and looks for change points, acts on trigger
// and ack annotations, starts the run that is due (or records why not), deletes runs beyond the
// history limits, and writes status once.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var s api.KVBenchmarkSchedule
	if err := r.Get(ctx, req.NamespacedName, &s); err != nil {
		if apierrors.IsNotFound(err) {
			r.Metrics.Delete(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	p := &pass{r: r, s: &s, old: s.Status.DeepCopy(), now: metav1.NewTime(r.Clock.Now())}
	children, err := r.children(ctx, &s)
	if err != nil {
		return ctrl.Result{}, err
	}
	errs := []error{p.record(ctx, children)}
	p.ack(ctx)
	errs = append(errs, p.saveHistory(ctx))
	active := activeOf(children)
	requeue, err := p.run(ctx, active)
	errs = append(errs, err, p.cleanup(ctx, children))
	p.conditions()
	s.Status.Active = p.active(activeOf(children))
	s.Status.ObservedGeneration = s.Generation
	if err := r.writeStatus(ctx, &s, p.old); err != nil {
		if apierrors.IsConflict(err) {
			// Another writer was first (the user's kubectl annotate, a status write of an earlier
			// pass still in the cache): read again at once; no "Reconciler error" (issue 34).
			logf.FromContext(ctx).V(1).Info("status write conflict", "resourceVersion", s.ResourceVersion)
			return ctrl.Result{Requeue: true}, nil
		}
		return ctrl.Result{}, err
	}
	for _, e := range p.events {
		r.Recorder.Event(&s, e.kind, e.reason, e.message)
	}
	if p.h == nil && !r.Metrics.HasSeries(req.NamespacedName) {
		_ = p.loadHistory(ctx) // after a restart: the series of the history before the next run ends
	}
	r.Metrics.Set(&s, p.h)
	if err := errors.Join(errs...); err != nil {
		return ctrl.Result{}, err
	}
	if p.waitArchive > 0 && (requeue == 0 || p.waitArchive < requeue) {
		requeue = p.waitArchive
	}
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// pass is one reconcile of one schedule.
type pass struct {
	r      *Reconciler
	s      *api.KVBenchmarkSchedule
	old    *api.KVBenchmarkScheduleStatus
	now    metav1.Time
	h      *history.History
	dirty  bool // the history changed
	events []event
	// waitArchive: a finished run waits for its archives; look again then.
	waitArchive time.Duration
	// confirmOn is set when a confirmation run is wanted (on that node; "" any).
	confirm   bool
	confirmOn string
	confirmOf string // the suspected run
	// created and replaced are runs this pass made and deleted (the listed children predate both).
	created, replaced []string
}

// active are the running children after this pass.
func (p *pass) active(listed []api.KVBenchmark) []string {
	var out []string
	for _, n := range names(listed) {
		if !slices.Contains(p.replaced, n) {
			out = append(out, n)
		}
	}
	for _, n := range p.created {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

type event struct{ kind, reason, message string }

func (p *pass) event(kind, reason, format string, args ...any) {
	p.events = append(p.events, event{kind, reason, fmt.Sprintf(format, args...)})
}

// children are the schedule's KVBenchmarks (label and controller reference), oldest first.
func (r *Reconciler) children(ctx context.Context, s *api.KVBenchmarkSchedule) ([]api.KVBenchmark, error) {
	var list api.KVBenchmarkList
	if err := r.List(ctx, &list, client.InNamespace(s.Namespace), client.MatchingLabels{history.LabelSchedule: s.Name}); err != nil {
		return nil, err
	}
	out := slices.DeleteFunc(list.Items, func(b api.KVBenchmark) bool {
		ref := metav1.GetControllerOf(&b)
		return ref == nil || ref.UID != s.UID
	})
	slices.SortFunc(out, func(a, b api.KVBenchmark) int {
		if c := scheduledTime(&a).Compare(scheduledTime(&b)); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, nil
}

func scheduledTime(b *api.KVBenchmark) time.Time {
	if t, err := time.Parse(time.RFC3339, b.Annotations[AnnotationScheduledTime]); err == nil {
		return t
	}
	return b.CreationTimestamp.Time
}

func finished(b *api.KVBenchmark) bool {
	return b.Status.Phase == api.PhaseSucceeded || b.Status.Phase == api.PhaseFailed
}

func activeOf(children []api.KVBenchmark) []api.KVBenchmark {
	var out []api.KVBenchmark
	for _, b := range children {
		if !finished(&b) && b.DeletionTimestamp == nil {
			out = append(out, b)
		}
	}
	return out
}

func names(bs []api.KVBenchmark) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Name)
	}
	return out
}

// loadHistory reads the history ConfigMap; a missing one is an empty history.
func (p *pass) loadHistory(ctx context.Context) error {
	if p.h != nil {
		return nil
	}
	var cm corev1.ConfigMap
	err := p.r.APIReader.Get(ctx, types.NamespacedName{Namespace: p.s.Namespace, Name: history.ConfigMapName(p.s.Name)}, &cm)
	if apierrors.IsNotFound(err) {
		p.h = history.New(p.s.Name)
		return nil
	}
	if err != nil {
		return err
	}
	h, err := history.FromConfigMap(&cm, p.s)
	if err != nil {
		// Not ours, or unreadable: do not overwrite it; say so.
		p.s.Status.History.Error = err.Error()
		return err
	}
	p.h = h
	return nil
}

// record adds the finished runs not yet recorded to the history, in the order they were
// scheduled, and looks for change points after each. It stops at the first run still going (or
// still waiting for its archives), so the history keeps that order also under Allow.
func (p *pass) record(ctx context.Context, children []api.KVBenchmark) error {
	last := p.s.Status.History.LastRecordedTime
	var todo []*api.KVBenchmark
	for i := range children {
		b := &children[i]
		if last != nil && !after(b, last.Time, p.s.Status.History.LastRecorded) || b.DeletionTimestamp != nil && !finished(b) {
			continue
		}
		if !finished(b) {
			break
		}
		todo = append(todo, b)
	}
	if len(todo) == 0 {
		return nil
	}
	if err := p.loadHistory(ctx); err != nil {
		return err
	}
	for _, b := range todo {
		full, wait := p.r.archives(ctx, b, p.now.Time)
		if wait > 0 {
			p.waitArchive = wait
			break
		}
		if !p.h.Has(b.Name) {
			gen := int64(0)
			fmt.Sscan(b.Annotations[AnnotationGeneration], &gen)
			run := history.Run{Time: metav1.NewTime(scheduledTime(b)), Cause: api.RunCause(b.Annotations[AnnotationCause]), Generation: gen}
			p.s.Status.History.DroppedSeries += int32(p.h.Record(b, full, run, int(ptr.Deref(p.s.Spec.HistoryLimit, 100))))
			p.dirty = true
			p.findings(detect(p.h, b.Name, p.s, p.now), b.Name)
		}
		t := metav1.NewTime(scheduledTime(b))
		p.s.Status.History.LastRecorded, p.s.Status.History.LastRecordedTime = b.Name, &t
		if b.Status.Phase == api.PhaseSucceeded {
			p.s.Status.LastSuccessfulTime = &t
		}
	}
	return nil
}

// after orders runs by scheduled time, then name.
func after(b *api.KVBenchmark, t time.Time, name string) bool {
	bt := scheduledTime(b)
	return bt.After(t) || bt.Equal(t) && b.Name > name
}

// findings puts new change points into status (once each) and keeps the suspects.
func (p *pass) findings(f findings, child string) {
	for i, cp := range f.Report {
		p.s.Status.ChangePoints = append(p.s.Status.ChangePoints, cp)
		p.h.Reported = append(p.h.Reported, history.Mark{Child: cp.Child, Series: cp.Series, Time: p.now})
		kind := corev1.EventTypeNormal
		if cp.Direction == api.Regressed {
			kind = corev1.EventTypeWarning
		}
		switch {
		case i < maxEvents:
			p.event(kind, string(cp.Direction), "%s", message(&cp))
		case i == maxEvents:
			p.event(kind, string(cp.Direction), "and %d more change points at this run (status.changePoints, kubectl kvbench history)", len(f.Report)-maxEvents)
		}
	}
	p.s.Status.ChangePoints = trimChangePoints(p.s.Status.ChangePoints)
	if len(f.Suspects) > maxSuspects {
		f.Suspects = f.Suspects[:maxSuspects] // the others are suspected again at the next run
	}
	for _, sp := range f.Dropped {
		p.event(corev1.EventTypeNormal, "SuspectDropped", "%s at %s: the next run did not confirm the change", sp.Series, sp.Child)
	}
	for _, sp := range f.Suspects {
		if !slices.Contains(p.s.Status.Suspects, sp) {
			p.event(corev1.EventTypeNormal, "SuspectedRegression", "%s at %s: waiting for a confirmation run", sp.Series, sp.Child)
		}
	}
	p.s.Status.Suspects = f.Suspects
	if f.Confirm {
		p.confirm, p.confirmOn, p.confirmOf = true, f.ConfirmOn, child
	}
}

// trimChangePoints keeps the newest maxChangePoints, dropping acknowledged ones first.
func trimChangePoints(cps []api.ScheduleChangePoint) []api.ScheduleChangePoint {
	for len(cps) > maxChangePoints {
		i := slices.IndexFunc(cps, func(c api.ScheduleChangePoint) bool { return c.AcknowledgedAt != nil })
		if i < 0 {
			i = 0
		}
		cps = slices.Delete(cps, i, i+1)
	}
	return cps
}

// message describes a change point in one line.
func message(c *api.ScheduleChangePoint) string {
	verb := "rose"
	if c.ChangePercent < 0 {
		verb = "fell"
	}
	msg := fmt.Sprintf("%s %s %.1f%% at %s (%s): mean %s [%s, %s] over %d runs (%s..%s) -> %s [%s, %s] over %d runs (%s..%s), %s",
		c.Series, verb, abs(c.ChangePercent), c.Child, c.Time.UTC().Format(time.RFC3339),
		num(c.Before.Mean), num(c.Before.CILow), num(c.Before.CIHigh), c.Before.N, c.Before.First, c.Before.Last,
		num(c.After.Mean), num(c.After.CILow), num(c.After.CIHigh), c.After.N, c.After.First, c.After.Last, pValue(c.P))
	if c.Cause != "" {
		msg += "; likely cause: " + c.Cause
	}
	if c.Scope != "" {
		msg += "; " + c.Scope
	}
	if c.Confirmed {
		msg += "; confirmed by the next run"
	}
	return msg
}

// pValue prints a p-value; below 1e-15 the t distribution's tail is beyond float64's precision.
func pValue(p float64) string {
	if p < 1e-15 {
		return "p<1e-15"
	}
	return fmt.Sprintf("p=%.2g", p)
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// num prints a mean or bound with 4 significant digits, without an exponent for large numbers.
func num(v float64) string {
	if abs(v) >= 1e4 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.4g", v)
}

// archives are the full results of a finished run's runs, by run name. A run whose archive is
// still being written makes the caller wait (returned: how long at most), up to archiveWait after
// the benchmark ended; then the run is recorded from status alone.
func (r *Reconciler) archives(ctx context.Context, b *api.KVBenchmark, now time.Time) (map[string]*api.Result, time.Duration) {
	out := map[string]*api.Result{}
	ended := b.CreationTimestamp.Time
	if b.Status.CompletionTime != nil {
		ended = b.Status.CompletionTime.Time
	}
	for _, run := range b.Status.Runs {
		if len(run.Results) == 0 {
			continue
		}
		if run.FullResult == nil {
			if left := archiveWait - now.Sub(ended); left > 0 {
				return nil, min(left, 30*time.Second)
			}
			continue
		}
		if run.FullResult.ConfigMap == "" {
			continue
		}
		var cm corev1.ConfigMap
		if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: b.Namespace, Name: run.FullResult.ConfigMap}, &cm); err != nil {
			logf.FromContext(ctx).Info("cannot read an archived result; recording the run from status", "configMap", run.FullResult.ConfigMap, "error", err.Error())
			continue
		}
		res, err := archive.FromConfigMap(&cm, b, run.FullResult.SHA256)
		if err != nil {
			logf.FromContext(ctx).Info("cannot decode an archived result; recording the run from status", "configMap", run.FullResult.ConfigMap, "error", err.Error())
			continue
		}
		out[run.Name] = res
	}
	return out, 0
}

// ack acts on a new kvbench.io/ack annotation.
func (p *pass) ack(ctx context.Context) {
	v := p.s.Annotations[api.AnnotationAck]
	if v == "" || v == p.s.Status.LastAck {
		return
	}
	p.s.Status.LastAck = v
	target, _, _ := strings.Cut(v, "@")
	n := 0
	for i := range p.s.Status.ChangePoints {
		c := &p.s.Status.ChangePoints[i]
		if c.AcknowledgedAt != nil || (target != "*" && target != c.Child) {
			continue
		}
		c.AcknowledgedAt = ptr.To(p.now)
		n++
		if p.loadHistory(ctx) == nil {
			p.h.Acks = append(p.h.Acks, history.Mark{Child: c.Child, Series: c.Series, Time: p.now})
			p.dirty = true
		}
	}
	if n == 0 {
		p.event(corev1.EventTypeWarning, "AckIgnored", "%s: no unacknowledged change point at %q", api.AnnotationAck, target)
		return
	}
	p.event(corev1.EventTypeNormal, "Acknowledged", "%d change point(s) at %s acknowledged as expected", n, target)
}

// saveHistory writes the history ConfigMap when it changed.
func (p *pass) saveHistory(ctx context.Context) error {
	if !p.dirty || p.h == nil {
		if p.h != nil {
			p.s.Status.History.Runs, p.s.Status.History.Series = int32(len(p.h.Runs)), int32(len(p.h.Series))
		}
		return nil
	}
	data, dropped, err := p.h.Encode()
	if err != nil {
		return err
	}
	if dropped > 0 {
		p.event(corev1.EventTypeWarning, "HistoryTrimmed", "the history's %d oldest runs were dropped to keep it under %d bytes", dropped, history.MaxBytes)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: p.s.Namespace, Name: history.ConfigMapName(p.s.Name),
		Labels: map[string]string{history.LabelSchedule: p.s.Name}}}
	if err := controllerutil.SetControllerReference(p.s, cm, p.r.Scheme()); err != nil {
		return err
	}
	cm.BinaryData = map[string][]byte{history.Key: data}
	var cur corev1.ConfigMap
	err = p.r.APIReader.Get(ctx, client.ObjectKeyFromObject(cm), &cur)
	switch {
	case apierrors.IsNotFound(err):
		err = p.r.Create(ctx, cm)
	case err == nil:
		if ref := metav1.GetControllerOf(&cur); ref == nil || ref.UID != p.s.UID {
			err = fmt.Errorf("%s: %w", cm.Name, history.ErrNotOurs)
			break
		}
		cur.BinaryData = cm.BinaryData
		err = p.r.Update(ctx, &cur)
	}
	if err != nil {
		p.s.Status.History.Error = err.Error()
		return err
	}
	st := &p.s.Status.History
	st.ConfigMap, st.Runs, st.Series, st.Bytes, st.Error = cm.Name, int32(len(p.h.Runs)), int32(len(p.h.Series)), int32(len(data)), ""
	return nil
}

// run starts what is due: a confirmation, a trigger, the first run (runOnCreate) and the cron
// time, and returns when to look again.
func (p *pass) run(ctx context.Context, active []api.KVBenchmark) (time.Duration, error) {
	s := p.s
	sched, loc, err := Parse(s.Spec.Schedule, s.Spec.TimeZone)
	if err != nil {
		if c := meta.FindStatusCondition(s.Status.Conditions, ConditionScheduled); c == nil || c.Status != metav1.ConditionFalse || c.Message != err.Error() {
			p.event(corev1.EventTypeWarning, "InvalidSchedule", "%s", err.Error())
		}
		p.setCondition(ConditionScheduled, metav1.ConditionFalse, "InvalidSchedule", err.Error())
		s.Status.NextScheduleTime = nil
		return 0, nil
	}
	p.setCondition(ConditionScheduled, metav1.ConditionTrue, "Valid", fmt.Sprintf("%q in %s", s.Spec.Schedule, loc))
	busy := len(active) > 0 && s.Spec.ConcurrencyPolicy != api.AllowConcurrent && s.Spec.ConcurrencyPolicy != api.ReplaceConcurrent

	// A confirmation run goes first, when nothing else runs.
	if p.confirm && !s.Spec.Suspend {
		if busy {
			p.event(corev1.EventTypeNormal, "ConfirmationWaiting", "a confirmation run of %s waits for %s", p.confirmOf, names(active)[0])
		} else if err := p.create(ctx, api.CauseConfirm, p.now.Time, p.confirmOf, p.confirmOn); err != nil {
			return 0, err
		} else {
			busy = s.Spec.ConcurrencyPolicy != api.AllowConcurrent
		}
	}

	// A trigger waits (rather than being skipped) while a run goes under Forbid: it is a request;
	// the annotation not yet in status.lastTrigger shows it waits.
	retry := time.Duration(0)
	if v := s.Annotations[api.AnnotationTrigger]; v != "" && v != s.Status.LastTrigger {
		if busy {
			retry = 15 * time.Second
		} else {
			if err := p.create(ctx, api.CauseTrigger, p.now.Time, v, ""); err != nil {
				return 0, err
			}
			s.Status.LastTrigger = v
			busy = s.Spec.ConcurrencyPolicy != api.AllowConcurrent
		}
	}

	last := s.CreationTimestamp.Time
	if s.Status.LastScheduleTime != nil {
		last = s.Status.LastScheduleTime.Time
	} else if s.Spec.RunOnCreate && !s.Spec.Suspend {
		if err := p.create(ctx, api.CauseCreate, p.now.Time, "", ""); err != nil {
			return 0, err
		}
		s.Status.LastScheduleTime = ptr.To(p.now)
		last = p.now.Time
		busy = s.Spec.ConcurrencyPolicy != api.AllowConcurrent
	}

	due, missed := Due(sched, loc, last, p.now.Time)
	if !due.IsZero() {
		prev := s.Status.LastScheduleTime
		s.Status.LastScheduleTime = &metav1.Time{Time: due}
		if err := p.due(ctx, due, active, busy); err != nil {
			if !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) {
				// Retried with back-off (a quota, a timeout), within startingDeadlineSeconds.
				s.Status.LastScheduleTime = prev
				return 0, err
			}
			p.skip(due, "CreateFailed", fmt.Sprintf("the API server refused the run: %v", err))
		}
		if missed > 0 && !s.Spec.Suspend {
			p.skip(due, "Missed", fmt.Sprintf("%d earlier run(s) due since %s were missed (the operator was not running); only the latest is considered", missed, last.UTC().Format(time.RFC3339)))
		}
	}
	next := Next(sched, loc, maxTime(p.now.Time, s.Status.LastScheduleTime))
	s.Status.NextScheduleTime = &metav1.Time{Time: next}
	wait := next.Sub(p.now.Time) + time.Second
	if retry > 0 && retry < wait {
		wait = retry
	}
	return wait, nil
}

func maxTime(a time.Time, b *metav1.Time) time.Time {
	if b != nil && b.After(a) {
		return b.Time
	}
	return a
}

// due handles the run due at t.
func (p *pass) due(ctx context.Context, t time.Time, active []api.KVBenchmark, busy bool) error {
	s := p.s
	late := p.now.Sub(t)
	switch {
	case s.Spec.Suspend:
		return nil // not recorded: a suspended schedule is expected to skip
	case s.Spec.StartingDeadlineSeconds != nil && late > time.Duration(*s.Spec.StartingDeadlineSeconds)*time.Second:
		p.skip(t, "MissedDeadline", fmt.Sprintf("the run due at %s is %s late, beyond startingDeadlineSeconds %d", t.UTC().Format(time.RFC3339), late.Round(time.Second), *s.Spec.StartingDeadlineSeconds))
		return nil
	case len(active) > 0 && s.Spec.ConcurrencyPolicy == api.ReplaceConcurrent:
		for i := range active {
			if err := p.r.Delete(ctx, &active[i], client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
				return err
			}
			p.replaced = append(p.replaced, active[i].Name)
			p.event(corev1.EventTypeNormal, "Replaced", "deleted %s, still running when the run due at %s started", active[i].Name, t.UTC().Format(time.RFC3339))
		}
	case busy:
		running := names(active)
		if len(running) == 0 {
			running = []string{"a run started in this pass"}
		}
		p.skip(t, "ConcurrentRun", fmt.Sprintf("concurrencyPolicy Forbid: %s still running", strings.Join(running, ", ")))
		return nil
	}
	return p.create(ctx, api.CauseSchedule, t, "", "")
}

// skip records a run that did not start, with an event.
func (p *pass) skip(t time.Time, reason, msg string) {
	s := &p.s.Status
	s.SkippedRuns++
	s.Skipped = append(s.Skipped, api.SkippedRun{ScheduledTime: metav1.NewTime(t), Reason: reason, Message: msg})
	if len(s.Skipped) > maxSkipped {
		s.Skipped = s.Skipped[len(s.Skipped)-maxSkipped:]
	}
	p.event(corev1.EventTypeWarning, "RunSkipped", "%s: %s", reason, msg)
}

// create makes one run from the template. token names a trigger or the suspected run; node pins
// a confirmation run.
func (p *pass) create(ctx context.Context, cause api.RunCause, at time.Time, token, node string) error {
	b := Child(p.s, cause, at, token, node)
	if err := controllerutil.SetControllerReference(p.s, b, p.r.Scheme()); err != nil {
		return err
	}
	err := p.r.Create(ctx, b)
	if err == nil || apierrors.IsAlreadyExists(err) {
		p.created = append(p.created, b.Name)
	}
	if apierrors.IsAlreadyExists(err) {
		return nil // made by an earlier pass whose status write failed
	}
	if err != nil {
		p.event(corev1.EventTypeWarning, "CreateFailed", "%s: %v", b.Name, err)
		return err
	}
	p.event(corev1.EventTypeNormal, "RunCreated", "%s (%s)", b.Name, cause)
	return nil
}

// Child is the KVBenchmark a schedule creates: the template, labelled with the schedule, named
// after the time or token (api.ChildName). A confirmation run goes to one node: node when known,
// without the template's EachNode spread.
func Child(s *api.KVBenchmarkSchedule, cause api.RunCause, at time.Time, token, node string) *api.KVBenchmark {
	b := &api.KVBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: api.ChildName(s.Name, cause, at, token),
		Labels: map[string]string{}, Annotations: map[string]string{}}}
	for k, v := range s.Spec.Template.Metadata.Labels {
		b.Labels[k] = v
	}
	for k, v := range s.Spec.Template.Metadata.Annotations {
		b.Annotations[k] = v
	}
	b.Labels[history.LabelSchedule] = s.Name
	b.Annotations[AnnotationScheduledTime] = at.UTC().Format(time.RFC3339)
	b.Annotations[AnnotationCause] = string(cause)
	b.Annotations[AnnotationGeneration] = fmt.Sprint(s.Generation)
	b.Spec = *s.Spec.Template.Spec.DeepCopy()
	if cause == api.CauseConfirm {
		b.Spec.Placement.Spread, b.Spec.Placement.MaxNodes = "", nil
		if node != "" {
			if b.Spec.Placement.NodeSelector == nil {
				b.Spec.Placement.NodeSelector = map[string]string{}
			}
			b.Spec.Placement.NodeSelector[corev1.LabelHostname] = node
		}
	}
	return b
}

// cleanup deletes finished runs beyond the history limits, oldest first, once they are in the
// history (their results then outlive them).
func (p *pass) cleanup(ctx context.Context, children []api.KVBenchmark) error {
	keep := map[api.BenchmarkPhase]int{
		api.PhaseSucceeded: int(ptr.Deref(p.s.Spec.SuccessfulRunsHistoryLimit, 3)),
		api.PhaseFailed:    int(ptr.Deref(p.s.Spec.FailedRunsHistoryLimit, 1)),
	}
	count := map[api.BenchmarkPhase]int{}
	for i := len(children) - 1; i >= 0; i-- {
		b := &children[i]
		if !finished(b) || b.DeletionTimestamp != nil {
			continue
		}
		count[b.Status.Phase]++
		if count[b.Status.Phase] <= keep[b.Status.Phase] {
			continue
		}
		if err := p.loadHistory(ctx); err != nil {
			return err
		}
		if !p.h.Has(b.Name) {
			continue // not recorded yet (or trimmed from a short history: kept until recorded runs pass it)
		}
		if err := p.r.Delete(ctx, b, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}

// conditions sets Regressed and Improved from the unacknowledged change points.
func (p *pass) conditions() {
	for _, d := range []struct {
		dir  api.Direction
		cond string
	}{{api.Regressed, ConditionRegressed}, {api.Improved, ConditionImproved}} {
		var open []*api.ScheduleChangePoint
		for i := range p.s.Status.ChangePoints {
			c := &p.s.Status.ChangePoints[i]
			if c.Direction == d.dir && c.AcknowledgedAt == nil {
				open = append(open, c)
			}
		}
		if len(open) == 0 {
			p.setCondition(d.cond, metav1.ConditionFalse, "NoChangePoint", "no unacknowledged change point")
			continue
		}
		msg := message(open[len(open)-1])
		if len(open) > 1 {
			msg = fmt.Sprintf("%d unacknowledged change points; the latest: %s", len(open), msg)
		}
		p.setCondition(d.cond, metav1.ConditionTrue, "ChangePoint", msg)
	}
}

func (p *pass) setCondition(t string, status metav1.ConditionStatus, reason, msg string) {
	if len(msg) > maxMessage {
		msg = msg[:maxMessage-3] + "..."
	}
	meta.SetStatusCondition(&p.s.Status.Conditions, metav1.Condition{Type: t, Status: status, Reason: reason, Message: msg,
		ObservedGeneration: p.s.Generation, LastTransitionTime: p.now})
}

// writeStatus writes status when it changed.
func (r *Reconciler) writeStatus(ctx context.Context, s *api.KVBenchmarkSchedule, old *api.KVBenchmarkScheduleStatus) error {
	if equality.Semantic.DeepEqual(&s.Status, old) {
		return nil
	}
	return r.Status().Update(ctx, s)
}

// SetupWithManager watches schedules and the KVBenchmarks they own.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	if r.Metrics == nil {
		r.Metrics = NewCollector()
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&api.KVBenchmarkSchedule{}).
		Owns(&api.KVBenchmark{}).
		Named("kvbenchmarkschedule").
		Complete(r)
}
