package v1alpha1_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/controllers/schedule"
)

func sched(cron string, f ...func(*kvv1.KVBenchmarkSchedule)) *kvv1.KVBenchmarkSchedule {
	s := &kvv1.KVBenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: ns},
		Spec: kvv1.KVBenchmarkScheduleSpec{Schedule: cron, Template: kvv1.KVBenchmarkTemplate{Spec: base().Obj().Spec}}}
	for _, fn := range f {
		fn(s)
	}
	return s
}

// backwards says whether a cron text has a range a-b with a > b (names as numbers).
func backwards(cron string) bool {
	names := map[string]int{"jan": 1, "feb": 2, "dec": 12, "sun": 0, "mon": 1, "sat": 6}
	num := func(s string) int {
		if n, ok := names[strings.ToLower(s)]; ok {
			return n
		}
		var n int
		fmt.Sscan(s, &n)
		return n
	}
	for _, f := range strings.Fields(cron) {
		for _, item := range strings.Split(f, ",") {
			r, _, _ := strings.Cut(item, "/")
			if a, b, ok := strings.Cut(r, "-"); ok && num(a) > num(b) {
				return true
			}
		}
	}
	return false
}

var _ = Describe("KVBenchmarkSchedule validation", func() {
	DescribeTable("accepts",
		func(s *kvv1.KVBenchmarkSchedule) {
			Expect(dryRunCreate(s)).To(Succeed())
		},
		Entry("every 5 minutes", sched("*/5 * * * *")),
		Entry("nightly", sched("0 3 * * *")),
		Entry("@daily", sched("@daily")),
		Entry("weekdays by name", sched("30 2 * * mon-fri")),
		Entry("months by name, a list", sched("0 0 1 jan,jul *")),
		Entry("? for a day", sched("0 0 ? * SUN")),
		Entry("a time zone", sched("0 3 * * *", func(s *kvv1.KVBenchmarkSchedule) { s.Spec.TimeZone = ptr.To("Europe/Berlin") })),
		Entry("a 40-character name", sched("@hourly", func(s *kvv1.KVBenchmarkSchedule) { s.Name = strings.Repeat("a", 40) })),
		Entry("detection settings", sched("@hourly", func(s *kvv1.KVBenchmarkSchedule) {
			s.Spec.Detection = kvv1.DetectionSpec{MaxP: ptr.To(0.001), Window: ptr.To[int32](30), Confirm: kvv1.ConfirmRerun,
				Metrics: []kvv1.DetectionMetric{{Name: kvv1.MetricOpsPerSec, MinChangePercent: ptr.To(3.0)}, {Name: kvv1.MetricStallPercent}}}
		})),
	)

	DescribeTable("rejects with a specific message",
		func(s *kvv1.KVBenchmarkSchedule, want string) {
			err := dryRunCreate(s)
			Expect(err).To(HaveOccurred(), "the API server accepted an invalid schedule")
			Expect(err.Error()).To(ContainSubstring(want))
			Expect(err.Error()).NotTo(ContainSubstring("evaluating rule"))
		},
		Entry("empty schedule", sched(""), "spec.schedule"),
		Entry("four fields", sched("* * * *"), "schedule is not a cron schedule"),
		Entry("six fields", sched("0 * * * * *"), "schedule is not a cron schedule"),
		Entry("minute 60", sched("60 * * * *"), "schedule is not a cron schedule"),
		Entry("hour 24", sched("0 24 * * *"), "schedule is not a cron schedule"),
		Entry("day 0", sched("0 0 0 * *"), "schedule is not a cron schedule"),
		Entry("month 13", sched("0 0 1 13 *"), "schedule is not a cron schedule"),
		Entry("weekday 7", sched("0 0 * * 7"), "schedule is not a cron schedule"),
		Entry("step 0", sched("*/0 * * * *"), "schedule is not a cron schedule"),
		Entry("a tab between fields", sched("0\t3 * * *"), "schedule is not a cron schedule"),
		Entry("a word", sched("nightly"), "schedule is not a cron schedule"),
		Entry("@every", sched("@every 1h"), "schedule is not a cron schedule"),
		Entry("@reboot", sched("@reboot"), "schedule is not a cron schedule"),
		Entry("TZ= in the schedule", sched("TZ=UTC 0 3 * * *"), "give the time zone in timeZone"),
		Entry("a time zone that is no name", sched("@daily", func(s *kvv1.KVBenchmarkSchedule) { s.Spec.TimeZone = ptr.To("UTC+2 hours") }), "timeZone must be an IANA time zone name"),
		Entry("a 41-character name", sched("@hourly", func(s *kvv1.KVBenchmarkSchedule) { s.Name = strings.Repeat("a", 41) }), "metadata.name must be at most 40 characters"),
		Entry("unknown concurrency policy", sched("@hourly", func(s *kvv1.KVBenchmarkSchedule) { s.Spec.ConcurrencyPolicy = "Queue" }), "spec.concurrencyPolicy"),
		Entry("negative starting deadline", sched("@hourly", func(s *kvv1.KVBenchmarkSchedule) { s.Spec.StartingDeadlineSeconds = ptr.To[int64](-1) }), "spec.startingDeadlineSeconds"),
		Entry("history limit 0", sched("@hourly", func(s *kvv1.KVBenchmarkSchedule) { s.Spec.HistoryLimit = ptr.To[int32](0) }), "spec.historyLimit"),
		Entry("history limit 1001", sched("@hourly", func(s *kvv1.KVBenchmarkSchedule) { s.Spec.HistoryLimit = ptr.To[int32](1001) }), "spec.historyLimit"),
		Entry("maxP 0.5", sched("@hourly", func(s *kvv1.KVBenchmarkSchedule) { s.Spec.Detection.MaxP = ptr.To(0.5) }), "spec.detection.maxP"),
		Entry("unknown metric", sched("@hourly", func(s *kvv1.KVBenchmarkSchedule) {
			s.Spec.Detection.Metrics = []kvv1.DetectionMetric{{Name: "cpuSeconds"}}
		}), "spec.detection.metrics[0].name"),
		Entry("unknown confirm policy", sched("@hourly", func(s *kvv1.KVBenchmarkSchedule) { s.Spec.Detection.Confirm = "Twice" }), "spec.detection.confirm"),
		// The template is a KVBenchmark spec with all of its rules.
		Entry("template memory too small", sched("@hourly", func(s *kvv1.KVBenchmarkSchedule) {
			s.Spec.Template.Spec = base().DatasetSize("1Gi").Memory("1Gi").Obj().Spec
		}), "resources.memory: need 1676Mi or more, have 1024Mi"),
		Entry("template without engines", sched("@hourly", func(s *kvv1.KVBenchmarkSchedule) {
			s.Spec.Template.Spec = base().EngineNames().Obj().Spec
		}), "spec.template.spec.engines"),
	)

	It("lets the template change (a run's spec is immutable, the schedule's template is not)", func(ctx context.Context) {
		s := sched("@hourly", func(s *kvv1.KVBenchmarkSchedule) { s.Name = "template-change" })
		Expect(k8s.Create(ctx, s)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { Expect(k8s.Delete(ctx, s)).To(Succeed()) })
		s.Spec.Template.Spec.Threads = []int32{1, 2}
		Expect(k8s.Update(ctx, s)).To(Succeed())
		// Defaults apply: Forbid, 3 succeeded and 1 failed runs kept, 100 runs of history.
		Expect(s.Spec.ConcurrencyPolicy).To(Equal(kvv1.ForbidConcurrent))
		Expect(s.Spec.SuccessfulRunsHistoryLimit).To(Equal(ptr.To[int32](3)))
		Expect(s.Spec.FailedRunsHistoryLimit).To(Equal(ptr.To[int32](1)))
		Expect(s.Spec.HistoryLimit).To(Equal(ptr.To[int32](100)))
		Expect(s.Spec.Detection.Confirm).To(Equal(kvv1.ConfirmNextRun))
	})

	It("shows schedule, suspend (false too), runs and Regressed in kubectl get kvbs", func(ctx context.Context) {
		s := sched("0 3 * * *", func(s *kvv1.KVBenchmarkSchedule) { s.Name = "columns" })
		Expect(k8s.Create(ctx, s)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { Expect(k8s.Delete(ctx, s)).To(Succeed()) })
		s.Status.History.Runs = 41
		s.Status.Conditions = []metav1.Condition{{Type: "Regressed", Status: metav1.ConditionTrue, Reason: "ChangePoint", LastTransitionTime: metav1.Now()}}
		Expect(k8s.Status().Update(ctx, s)).To(Succeed())
		table := getTable("kvbenchmarkschedules", "columns")
		cells := map[string]any{}
		for i, c := range table.ColumnDefinitions {
			cells[c.Name] = table.Rows[0].Cells[i]
		}
		Expect(cells).To(HaveKeyWithValue("Schedule", "0 3 * * *"))
		Expect(cells).To(HaveKeyWithValue("Suspend", false))
		Expect(cells).To(HaveKeyWithValue("Runs", BeNumerically("==", 41)))
		Expect(cells).To(HaveKeyWithValue("Regressed", "True"))
	})

	// The CEL rule and the operator's parser (robfig/cron, as CronJob's) must agree on every five
	// field schedule: the API server accepts exactly what the operator can run.
	It("accepts exactly the five-field schedules the operator's cron parser reads", func() {
		r := rand.New(rand.NewPCG(20, 1))
		names := map[int][]string{3: {"jan", "FEB", "Dec"}, 4: {"sun", "MON", "sat"}}
		limits := [][2]int{{0, 59}, {0, 23}, {1, 31}, {1, 12}, {0, 6}}
		item := func(field int) string {
			lo, hi := limits[field][0], limits[field][1]
			n := func() string {
				if ns := names[field]; ns != nil && r.IntN(4) == 0 {
					return ns[r.IntN(len(ns))]
				}
				return fmt.Sprint(lo - 1 + r.IntN(hi-lo+3)) // one beyond either end now and then
			}
			var s string
			switch r.IntN(5) {
			case 0:
				s = "*"
			case 1:
				s = n()
			case 2:
				s = n() + "-" + n()
			case 3:
				s = "*/" + fmt.Sprint(r.IntN(4)*7)
			case 4:
				s = n() + "-" + n() + "/" + fmt.Sprint(1+r.IntN(5))
			}
			return s
		}
		accepted, rejected := 0, 0
		for i := 0; i < 150; i++ {
			fields := make([]string, 5)
			for f := range fields {
				fields[f] = item(f)
				if r.IntN(5) == 0 {
					fields[f] += "," + item(f)
				}
			}
			cron := strings.Join(fields, " ")
			apiErr := dryRunCreate(sched(cron))
			_, _, parseErr := schedule.Parse(cron, nil)
			switch {
			case apiErr != nil:
				rejected++
				Expect(apiErr.Error()).To(ContainSubstring("schedule is not a cron schedule"), cron)
				Expect(parseErr).To(HaveOccurred(), "the API server rejected %q, which the operator parses", cron)
			case backwards(cron):
				// The one gap, by design: the operator reports it (condition Scheduled False).
				Expect(parseErr).To(MatchError(ContainSubstring("beyond end of range")), cron)
			default:
				accepted++
				Expect(parseErr).NotTo(HaveOccurred(), "the API server accepted %q, which the operator cannot parse", cron)
			}
		}
		Expect(accepted).To(BeNumerically(">", 10))
		Expect(rejected).To(BeNumerically(">", 10))
	})
})
