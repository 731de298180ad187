package schedule

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// due moves the fake clock to the schedule's next time (plus a few seconds) and returns it.
func (e *env) due(ctx context.Context, name string) time.Time {
	GinkgoHelper()
	s := e.get(ctx, name)
	Expect(s.Status.NextScheduleTime).NotTo(BeNil())
	t := s.Status.NextScheduleTime.Time
	e.clock.SetTime(t.Add(5 * time.Second))
	return t
}

var _ = Describe("KVBenchmarkSchedule", func() {
	It("runs on create and at every cron time, and records each finished run in the history", func(ctx context.Context) {
		e := newEnv(ctx)
		e.schedule(ctx, "hourly", func(s *api.KVBenchmarkSchedule) {
			s.Spec.RunOnCreate = true
			s.Spec.Template.Metadata.Labels = map[string]string{"team": "storage"}
		})
		res := e.reconcile(ctx, "hourly")
		bs := e.children(ctx, "hourly")
		Expect(bs).To(HaveLen(1))
		first := bs[0]
		Expect(first.Annotations[AnnotationCause]).To(Equal(string(api.CauseCreate)))
		Expect(first.Labels).To(HaveKeyWithValue("team", "storage"))
		Expect(first.Labels).To(HaveKeyWithValue("kvbench.io/schedule", "hourly"))
		Expect(metav1.IsControlledBy(&first, e.get(ctx, "hourly"))).To(BeTrue())
		s := e.get(ctx, "hourly")
		Expect(s.Status.Active).To(Equal([]string{first.Name}))
		Expect(s.Status.NextScheduleTime.Minute()).To(Equal(0))
		Expect(res.RequeueAfter).To(BeNumerically("~", s.Status.NextScheduleTime.Sub(e.clock.Now()), 2*time.Second))
		Expect(meta.IsStatusConditionTrue(s.Status.Conditions, ConditionScheduled)).To(BeTrue())

		// A second pass at the same time changes nothing.
		e.reconcile(ctx, "hourly")
		Expect(e.children(ctx, "hourly")).To(HaveLen(1))

		e.finish(ctx, first.Name, api.PhaseSucceeded, 1000)
		due := e.due(ctx, "hourly")
		e.reconcile(ctx, "hourly")
		bs = e.children(ctx, "hourly")
		Expect(childNames(bs)).To(Equal([]string{first.Name, api.ChildName("hourly", api.CauseSchedule, due, "")}))
		h := e.history(ctx, "hourly")
		Expect(h.Runs).To(HaveLen(1))
		Expect(h.Runs[0].Name).To(Equal(first.Name))
		Expect(h.Find("rocksdb readrandom threads=4 opsPerSec").Values()).To(Equal([]float64{1000}))
		s = e.get(ctx, "hourly")
		Expect(s.Status.History.LastRecorded).To(Equal(first.Name))
		Expect(s.Status.LastScheduleTime.Time).To(BeTemporally("==", due))
		Expect(s.Status.LastSuccessfulTime).NotTo(BeNil())
	})

	It("skips a due run while one still runs (Forbid) and records why", func(ctx context.Context) {
		e := newEnv(ctx)
		e.schedule(ctx, "forbid")
		e.reconcile(ctx, "forbid")
		Expect(e.children(ctx, "forbid")).To(BeEmpty())
		e.due(ctx, "forbid")
		e.reconcile(ctx, "forbid")
		Expect(e.children(ctx, "forbid")).To(HaveLen(1))
		running := e.children(ctx, "forbid")[0].Name

		due := e.due(ctx, "forbid")
		e.drain()
		e.reconcile(ctx, "forbid")
		Expect(childNames(e.children(ctx, "forbid"))).To(Equal([]string{running}))
		s := e.get(ctx, "forbid")
		Expect(s.Status.SkippedRuns).To(Equal(int32(1)))
		Expect(s.Status.Skipped).To(HaveLen(1))
		Expect(s.Status.Skipped[0].Reason).To(Equal("ConcurrentRun"))
		Expect(s.Status.Skipped[0].ScheduledTime.Time).To(BeTemporally("==", due))
		Expect(s.Status.Skipped[0].Message).To(ContainSubstring(running + " still running"))
		Expect(eventsWith(e.drain(), "RunSkipped")).To(ConsistOf(ContainSubstring("ConcurrentRun")))

		// The skipped time is not run later, when the running one has finished.
		e.finish(ctx, running, api.PhaseSucceeded, 1000)
		e.clock.Step(10 * time.Minute)
		e.reconcile(ctx, "forbid")
		Expect(e.children(ctx, "forbid")).To(HaveLen(1))
	})

	It("starts runs under Allow, and replaces the running one under Replace", func(ctx context.Context) {
		e := newEnv(ctx)
		e.schedule(ctx, "allow", func(s *api.KVBenchmarkSchedule) { s.Spec.ConcurrencyPolicy = api.AllowConcurrent })
		e.reconcile(ctx, "allow")
		for i := 0; i < 2; i++ {
			e.due(ctx, "allow")
			e.reconcile(ctx, "allow")
		}
		Expect(e.children(ctx, "allow")).To(HaveLen(2))

		e.schedule(ctx, "replace", func(s *api.KVBenchmarkSchedule) { s.Spec.ConcurrencyPolicy = api.ReplaceConcurrent })
		e.reconcile(ctx, "replace")
		e.due(ctx, "replace")
		e.reconcile(ctx, "replace")
		old := e.children(ctx, "replace")[0].Name
		e.due(ctx, "replace")
		e.reconcile(ctx, "replace")
		names := childNames(e.children(ctx, "replace"))
		Expect(names).To(HaveLen(1))
		Expect(names[0]).NotTo(Equal(old))
	})

	It("drops runs later than startingDeadlineSeconds and never starts a burst of missed runs", func(ctx context.Context) {
		e := newEnv(ctx)
		e.schedule(ctx, "deadline", func(s *api.KVBenchmarkSchedule) { s.Spec.StartingDeadlineSeconds = ptr.To[int64](300) })
		e.reconcile(ctx, "deadline")
		due := e.due(ctx, "deadline")
		// The operator was down for three hours and ten minutes after the first due time.
		e.clock.SetTime(due.Add(3*time.Hour + 10*time.Minute))
		e.drain()
		e.reconcile(ctx, "deadline")
		Expect(e.children(ctx, "deadline")).To(BeEmpty())
		s := e.get(ctx, "deadline")
		Expect(s.Status.Skipped).To(HaveLen(2))
		Expect(s.Status.Skipped[0].Reason).To(Equal("MissedDeadline"))
		Expect(s.Status.Skipped[1].Reason).To(Equal("Missed"))
		Expect(s.Status.Skipped[1].Message).To(HavePrefix("3 earlier run(s)"))
		Expect(s.Status.LastScheduleTime.Time).To(BeTemporally("==", due.Add(3*time.Hour)))
		Expect(eventsWith(e.drain(), "RunSkipped")).To(HaveLen(2))

		// Without a deadline, the latest missed time runs, once.
		e.schedule(ctx, "nodeadline")
		e.reconcile(ctx, "nodeadline")
		due = e.due(ctx, "nodeadline")
		e.clock.SetTime(due.Add(3*time.Hour + 10*time.Minute))
		e.reconcile(ctx, "nodeadline")
		e.reconcile(ctx, "nodeadline")
		Expect(childNames(e.children(ctx, "nodeadline"))).To(Equal([]string{api.ChildName("nodeadline", api.CauseSchedule, due.Add(3*time.Hour), "")}))
	})

	It("starts nothing while suspended, and does not catch up on resume", func(ctx context.Context) {
		e := newEnv(ctx)
		s := e.schedule(ctx, "suspended", func(s *api.KVBenchmarkSchedule) { s.Spec.Suspend, s.Spec.RunOnCreate = true, true })
		e.reconcile(ctx, "suspended")
		for i := 0; i < 3; i++ {
			e.due(ctx, "suspended")
			e.reconcile(ctx, "suspended")
		}
		Expect(e.children(ctx, "suspended")).To(BeEmpty())
		s = e.get(ctx, "suspended")
		Expect(s.Status.SkippedRuns).To(BeZero())
		s.Spec.Suspend = false
		Expect(k8s.Update(ctx, s)).To(Succeed())
		e.clock.Step(time.Minute)
		e.reconcile(ctx, "suspended")
		Expect(e.children(ctx, "suspended")).To(BeEmpty())
		e.due(ctx, "suspended")
		e.reconcile(ctx, "suspended")
		Expect(e.children(ctx, "suspended")).To(HaveLen(1))
	})

	It("keeps the history limits of runs, and the history after the runs are deleted", func(ctx context.Context) {
		e := newEnv(ctx)
		e.schedule(ctx, "limits", func(s *api.KVBenchmarkSchedule) {
			s.Spec.SuccessfulRunsHistoryLimit, s.Spec.FailedRunsHistoryLimit = ptr.To[int32](2), ptr.To[int32](1)
		})
		e.reconcile(ctx, "limits")
		var made []string
		for i := 0; i < 6; i++ {
			e.due(ctx, "limits")
			e.reconcile(ctx, "limits")
			bs := e.children(ctx, "limits")
			name := bs[len(bs)-1].Name
			made = append(made, name)
			phase := api.PhaseSucceeded
			if i == 1 || i == 2 {
				phase = api.PhaseFailed
			}
			e.finish(ctx, name, phase, 1000+float64(i))
		}
		e.clock.Step(time.Minute)
		e.reconcile(ctx, "limits")
		// Kept: the newest failed run (2) and the newest two succeeded (4, 5).
		Expect(childNames(e.children(ctx, "limits"))).To(Equal([]string{made[2], made[4], made[5]}))
		h := e.history(ctx, "limits")
		var recorded []string
		for _, r := range h.Runs {
			recorded = append(recorded, r.Name)
		}
		Expect(recorded).To(Equal(made))
		Expect(h.Find("rocksdb readrandom threads=4 opsPerSec").Values()).To(Equal([]float64{1000, 1003, 1004, 1005}))
		s := e.get(ctx, "limits")
		Expect(s.Status.History.Runs).To(Equal(int32(6)))
		Expect(s.Status.History.ConfigMap).To(Equal("limits-history"))

		// A history limit keeps the newest runs.
		s.Spec.HistoryLimit = ptr.To[int32](3)
		Expect(k8s.Update(ctx, s)).To(Succeed())
		e.due(ctx, "limits")
		e.reconcile(ctx, "limits")
		bs := e.children(ctx, "limits")
		e.finish(ctx, bs[len(bs)-1].Name, api.PhaseSucceeded, 1006)
		e.clock.Step(time.Minute)
		e.reconcile(ctx, "limits")
		Expect(e.history(ctx, "limits").Runs).To(HaveLen(3))
	})

	It("reports a change point once, with a condition, an event and a gauge, until acknowledged", func(ctx context.Context) {
		e := newEnv(ctx)
		e.schedule(ctx, "cp", func(s *api.KVBenchmarkSchedule) { s.Spec.SuccessfulRunsHistoryLimit = ptr.To[int32](1) })
		e.reconcile(ctx, "cp")
		levels := []float64{1000, 1010, 990, 1005, 995, 1000, 1008, 992, 1003, 997, 1001, 999, 500, 505, 495, 502, 498}
		var made []string
		for _, v := range levels {
			e.due(ctx, "cp")
			e.reconcile(ctx, "cp")
			bs := e.children(ctx, "cp")
			made = append(made, bs[len(bs)-1].Name)
			e.finish(ctx, made[len(made)-1], api.PhaseSucceeded, v)
		}
		e.clock.Step(time.Minute)
		e.reconcile(ctx, "cp")
		s := e.get(ctx, "cp")
		// ops/s and p99 (watched by default) changed at the 13th run: one change point each.
		Expect(s.Status.ChangePoints).To(HaveLen(2))
		var ops api.ScheduleChangePoint
		for _, c := range s.Status.ChangePoints {
			Expect(c.Child).To(Equal(made[12]))
			Expect(c.Direction).To(Equal(api.Regressed))
			if c.Metric == api.MetricOpsPerSec {
				ops = c
			}
		}
		Expect(ops.Series).To(Equal("rocksdb readrandom threads=4 opsPerSec"))
		Expect(ops.ChangePercent).To(BeNumerically("~", -50, 0.5))
		Expect(ops.Before.N).To(Equal(int32(12)))
		Expect(ops.Before.First).To(Equal(made[0]))
		Expect(ops.Before.Last).To(Equal(made[11]))
		Expect(ops.After.First).To(Equal(made[12]))
		Expect(ops.P).To(BeNumerically("<", 1e-6))
		Expect(ops.Before.CILow).To(BeNumerically("<", ops.Before.Mean))
		c := meta.FindStatusCondition(s.Status.Conditions, ConditionRegressed)
		Expect(c.Status).To(Equal(metav1.ConditionTrue))
		// Reported when the 14th run confirmed the change at the 13th (confirm NextRun, the default).
		Expect(c.Message).To(HavePrefix("2 unacknowledged change points; the latest: rocksdb readrandom threads=4 p99Micros rose 99.8% at " + made[12]))
		Expect(c.Message).To(ContainSubstring("over 12 runs (" + made[0] + ".." + made[11] + ") -> 1998 [1971, 2025] over 4 runs (" + made[12] + ".." + made[15] + ")"))
		Expect(c.Message).To(HaveSuffix("; confirmed by the next run"))
		Expect(meta.IsStatusConditionFalse(s.Status.Conditions, ConditionImproved)).To(BeTrue())
		evs := e.drain()
		Expect(eventsWith(evs, "Warning Regressed")).To(HaveLen(2))
		Expect(gauge(e.r.Metrics, "kvbench_schedule_change_point")).To(HaveLen(2))

		// Later runs at the new level report nothing more.
		for _, v := range []float64{501, 499, 500} {
			e.due(ctx, "cp")
			e.reconcile(ctx, "cp")
			bs := e.children(ctx, "cp")
			e.finish(ctx, bs[len(bs)-1].Name, api.PhaseSucceeded, v)
		}
		e.clock.Step(time.Minute)
		e.reconcile(ctx, "cp")
		Expect(e.get(ctx, "cp").Status.ChangePoints).To(HaveLen(2))
		Expect(eventsWith(e.drain(), "Regressed")).To(BeEmpty())

		// kubectl kvbench ack: the condition clears, the gauge goes, the history records it.
		s = e.get(ctx, "cp")
		s.Annotations = map[string]string{api.AnnotationAck: made[12] + "@2026-11-24T10:00:00Z"}
		Expect(k8s.Update(ctx, s)).To(Succeed())
		e.reconcile(ctx, "cp")
		s = e.get(ctx, "cp")
		Expect(meta.IsStatusConditionFalse(s.Status.Conditions, ConditionRegressed)).To(BeTrue())
		for _, c := range s.Status.ChangePoints {
			Expect(c.AcknowledgedAt).NotTo(BeNil())
		}
		Expect(gauge(e.r.Metrics, "kvbench_schedule_change_point")).To(BeEmpty())
		Expect(e.history(ctx, "cp").Acks).To(HaveLen(2))
		Expect(eventsWith(e.drain(), "Acknowledged")).To(HaveLen(1))
	})

	It("runs now on a trigger, once per annotation value, waiting while a run goes", func(ctx context.Context) {
		e := newEnv(ctx)
		s := e.schedule(ctx, "trig", func(s *api.KVBenchmarkSchedule) { s.Spec.Schedule = "0 3 * * *" })
		e.reconcile(ctx, "trig")
		s = e.get(ctx, "trig")
		s.Annotations = map[string]string{api.AnnotationTrigger: "2026-11-24T10:00:00Z"}
		Expect(k8s.Update(ctx, s)).To(Succeed())
		e.reconcile(ctx, "trig")
		e.reconcile(ctx, "trig")
		bs := e.children(ctx, "trig")
		Expect(bs).To(HaveLen(1))
		Expect(bs[0].Annotations[AnnotationCause]).To(Equal(string(api.CauseTrigger)))
		Expect(e.get(ctx, "trig").Status.LastTrigger).To(Equal("2026-11-24T10:00:00Z"))

		// A second trigger while the first runs waits for it.
		s = e.get(ctx, "trig")
		s.Annotations[api.AnnotationTrigger] = "2026-11-24T10:01:00Z"
		Expect(k8s.Update(ctx, s)).To(Succeed())
		res := e.reconcile(ctx, "trig")
		Expect(e.children(ctx, "trig")).To(HaveLen(1))
		Expect(res.RequeueAfter).To(Equal(15 * time.Second))
		e.finish(ctx, bs[0].Name, api.PhaseSucceeded, 1000)
		e.reconcile(ctx, "trig")
		Expect(e.children(ctx, "trig")).To(HaveLen(2))
	})

	It("says so when the schedule cannot run (a range that runs backwards passes the API server)", func(ctx context.Context) {
		e := newEnv(ctx)
		e.schedule(ctx, "bad", func(s *api.KVBenchmarkSchedule) { s.Spec.Schedule = "5-3 * * * *" })
		e.reconcile(ctx, "bad")
		s := e.get(ctx, "bad")
		c := meta.FindStatusCondition(s.Status.Conditions, ConditionScheduled)
		Expect(c.Status).To(Equal(metav1.ConditionFalse))
		Expect(c.Reason).To(Equal("InvalidSchedule"))
		Expect(c.Message).To(ContainSubstring("beyond end of range"))
		Expect(eventsWith(e.drain(), "InvalidSchedule")).To(HaveLen(1))
		e.reconcile(ctx, "bad")
		Expect(e.drain()).To(BeEmpty(), "the event is not repeated on every pass")
	})

	It("confirms a suspected regression with an immediate run on the same node (confirm Rerun)", func(ctx context.Context) {
		e := newEnv(ctx)
		e.schedule(ctx, "confirm", func(s *api.KVBenchmarkSchedule) {
			s.Spec.Detection.Confirm = api.ConfirmRerun
			s.Spec.Detection.Metrics = []api.DetectionMetric{{Name: api.MetricOpsPerSec}}
		})
		e.reconcile(ctx, "confirm")
		for _, v := range []float64{1000, 1010, 990, 1005, 995, 1000, 1008, 992, 1003, 997, 500, 505, 495} {
			e.due(ctx, "confirm")
			e.reconcile(ctx, "confirm")
			bs := e.children(ctx, "confirm")
			e.finish(ctx, bs[len(bs)-1].Name, api.PhaseSucceeded, v)
		}
		e.clock.Step(time.Minute)
		e.reconcile(ctx, "confirm")
		s := e.get(ctx, "confirm")
		Expect(s.Status.ChangePoints).To(BeEmpty())
		Expect(s.Status.Suspects).To(HaveLen(1))
		Expect(meta.IsStatusConditionTrue(s.Status.Conditions, ConditionRegressed)).To(BeFalse())
		bs := e.children(ctx, "confirm")
		rerun := bs[len(bs)-1]
		Expect(rerun.Annotations[AnnotationCause]).To(Equal(string(api.CauseConfirm)))
		Expect(rerun.Spec.Placement.NodeSelector).To(HaveKeyWithValue(corev1.LabelHostname, "node-a"))

		e.finish(ctx, rerun.Name, api.PhaseSucceeded, 502)
		e.clock.Step(time.Minute)
		e.reconcile(ctx, "confirm")
		s = e.get(ctx, "confirm")
		Expect(s.Status.Suspects).To(BeEmpty())
		Expect(s.Status.ChangePoints).To(HaveLen(1))
		Expect(s.Status.ChangePoints[0].Confirmed).To(BeTrue())
		Expect(s.Status.ChangePoints[0].Child).To(Equal(s.Status.ChangePoints[0].After.First))
		Expect(meta.IsStatusConditionTrue(s.Status.Conditions, ConditionRegressed)).To(BeTrue())
	})

	It("records a run the API server refuses as skipped, and goes on", func(ctx context.Context) {
		e := newEnv(ctx)
		e.schedule(ctx, "refused")
		e.reconcile(ctx, "refused")
		s := e.get(ctx, "refused")
		due := s.Status.NextScheduleTime.Time
		// A KVBenchmark may not be its own baseline: the run due next would be.
		s.Spec.Template.Spec.Baseline = &api.BaselineRef{Name: api.ChildName("refused", api.CauseSchedule, due, "")}
		Expect(k8s.Update(ctx, s)).To(Succeed())
		e.due(ctx, "refused")
		e.reconcile(ctx, "refused")
		Expect(e.children(ctx, "refused")).To(BeEmpty())
		s = e.get(ctx, "refused")
		Expect(s.Status.Skipped).To(HaveLen(1))
		Expect(s.Status.Skipped[0].Reason).To(Equal("CreateFailed"))
		Expect(s.Status.Skipped[0].Message).To(ContainSubstring("spec.baseline.name must name another KVBenchmark"))
		Expect(s.Status.LastScheduleTime.Time).To(BeTemporally("==", due))
		e.due(ctx, "refused")
		e.reconcile(ctx, "refused")
		Expect(e.children(ctx, "refused")).To(HaveLen(1), "the next time runs")
	})

	It("exports the history's series after an operator restart, before the next run ends", func(ctx context.Context) {
		e := newEnv(ctx)
		e.schedule(ctx, "restart", func(s *api.KVBenchmarkSchedule) { s.Spec.RunOnCreate = true })
		e.reconcile(ctx, "restart")
		e.finish(ctx, e.children(ctx, "restart")[0].Name, api.PhaseSucceeded, 1234)
		e.clock.Step(time.Minute)
		e.reconcile(ctx, "restart")
		Expect(gauge(e.r.Metrics, "kvbench_schedule_series_median")).NotTo(BeEmpty())
		e.r.Metrics = NewCollector() // a new operator process
		e.reconcile(ctx, "restart")
		Expect(gauge(e.r.Metrics, "kvbench_schedule_series_median")).To(ContainElement(And(
			HaveKeyWithValue("schedule", "restart"), HaveKeyWithValue("metric", "opsPerSec"), HaveKeyWithValue("run", "rocksdb"))))
	})

	It("reports at once with confirm None", func(ctx context.Context) {
		e := newEnv(ctx)
		e.schedule(ctx, "noconfirm", func(s *api.KVBenchmarkSchedule) {
			s.Spec.Detection.Confirm = api.ConfirmNone
			s.Spec.Detection.Metrics = []api.DetectionMetric{{Name: api.MetricOpsPerSec}}
		})
		e.reconcile(ctx, "noconfirm")
		for _, v := range []float64{1000, 1010, 990, 1005, 995, 1000, 1008, 992, 1003, 997, 500, 505, 495} {
			e.due(ctx, "noconfirm")
			e.reconcile(ctx, "noconfirm")
			bs := e.children(ctx, "noconfirm")
			e.finish(ctx, bs[len(bs)-1].Name, api.PhaseSucceeded, v)
		}
		e.clock.Step(time.Minute)
		e.reconcile(ctx, "noconfirm")
		s := e.get(ctx, "noconfirm")
		Expect(s.Status.ChangePoints).To(HaveLen(1))
		Expect(s.Status.ChangePoints[0].After.N).To(Equal(int32(3)))
		Expect(s.Status.ChangePoints[0].Confirmed).To(BeFalse())
		Expect(s.Status.Suspects).To(BeEmpty())
	})

	It("deletes a schedule's runs and history with it (owner references)", func(ctx context.Context) {
		e := newEnv(ctx)
		e.schedule(ctx, "owned", func(s *api.KVBenchmarkSchedule) { s.Spec.RunOnCreate = true })
		e.reconcile(ctx, "owned")
		s := e.get(ctx, "owned")
		bs := e.children(ctx, "owned")
		e.finish(ctx, bs[0].Name, api.PhaseSucceeded, 1000)
		e.clock.Step(time.Minute)
		e.reconcile(ctx, "owned")
		var cm corev1.ConfigMap
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "owned-history"}, &cm)).To(Succeed())
		Expect(metav1.IsControlledBy(&cm, s)).To(BeTrue())
		Expect(metav1.IsControlledBy(&bs[0], s)).To(BeTrue())
	})
})

// The wiring cmd/manager uses: the manager's cached client, the watch on owned KVBenchmarks (a run's
// status change reconciles its schedule) and the real clock.
var _ = Describe("KVBenchmarkSchedule in a manager", func() {
	It("creates the first run and records it when it finishes", func(ctx context.Context) {
		e := newEnv(ctx)
		mgr, err := ctrl.NewManager(testEnv.Config, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"},
			Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{e.ns: {}}}})
		Expect(err).NotTo(HaveOccurred())
		Expect((&Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorderFor("test")}).SetupWithManager(mgr)).To(Succeed())
		mctx, cancel := context.WithCancel(ctx)
		DeferCleanup(cancel)
		go func() {
			defer GinkgoRecover()
			Expect(mgr.Start(mctx)).To(Succeed())
		}()
		e.schedule(ctx, "managed", func(s *api.KVBenchmarkSchedule) { s.Spec.RunOnCreate, s.Spec.Schedule = true, "0 3 * * *" })
		var first string
		Eventually(func(g Gomega) {
			var list api.KVBenchmarkList
			g.Expect(k8s.List(ctx, &list, client.InNamespace(e.ns))).To(Succeed())
			g.Expect(list.Items).To(HaveLen(1))
			first = list.Items[0].Name
		}, 30*time.Second).Should(Succeed())
		e.clock.SetTime(time.Now())
		e.finish(ctx, first, api.PhaseSucceeded, 1000)
		Eventually(func(g Gomega) {
			s := e.get(ctx, "managed")
			g.Expect(s.Status.History.LastRecorded).To(Equal(first))
			g.Expect(s.Status.Active).To(BeEmpty())
		}, 30*time.Second).Should(Succeed())
	})
})
