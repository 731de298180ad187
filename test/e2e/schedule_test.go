//go:build e2e

package e2e

import (
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/controllers/schedule"
	"github.com/kvbench/kvbench-operator/history"
)

// KVBenchmarkSchedules on the real cluster: the short one runs in the main suite, the long one
// (make test-e2e-schedule, label schedule-long) injects a slowdown and follows the change point to
// the alert in the real Prometheus and back.

func getSchedule(ns, name string) *kvv1.KVBenchmarkSchedule {
	GinkgoHelper()
	var s kvv1.KVBenchmarkSchedule
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &s)).To(Succeed())
	return &s
}

func scheduleHistory(ns, name string) *history.History {
	GinkgoHelper()
	var cm corev1.ConfigMap
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: history.ConfigMapName(name)}, &cm)).To(Succeed())
	h, err := history.FromConfigMap(&cm, getSchedule(ns, name))
	Expect(err).NotTo(HaveOccurred())
	return h
}

// deleteSchedule deletes a schedule and waits until the garbage collector has removed its runs and
// its history.
func deleteSchedule(ns, name string) {
	GinkgoHelper()
	s := getSchedule(ns, name)
	Expect(k8s.Delete(ctx, s)).To(Succeed())
	Eventually(func(g Gomega) {
		var list kvv1.KVBenchmarkList
		g.Expect(k8s.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{history.LabelSchedule: name})).To(Succeed())
		g.Expect(list.Items).To(BeEmpty())
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: history.ConfigMapName(name)}, &corev1.ConfigMap{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the history ConfigMap goes with its schedule")
	}, 2*time.Minute).Should(Succeed())
}

// scheduleShort: a schedule every minute with concurrencyPolicy Allow, run on create and at once
// twice more with `kubectl kvbench trigger`, so three runs take about as long as one benchmark; each
// ends up in the history, in order, which `kubectl kvbench history` and Prometheus show. (Forbid,
// missed runs and the cron clock are the envtest suite's; the long scenario runs on the cron.)
func scheduleShort(ns string) {
	plugin := buildPlugin()
	s := &kvv1.KVBenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Name: "every-minute", Namespace: ns},
		Spec: kvv1.KVBenchmarkScheduleSpec{Schedule: "* * * * *", RunOnCreate: true, ConcurrencyPolicy: kvv1.AllowConcurrent,
			Template: kvv1.KVBenchmarkTemplate{Spec: tmpfsBench(ns, "x", kvv1.EngineRocksDB).Spec}}}
	Expect(k8s.Create(ctx, s)).To(Succeed())
	for i := 0; i < 2; i++ {
		GinkgoWriter.Print(run(plugin, "trigger", s.Name, "-n", ns))
		Eventually(func(g Gomega) {
			cur := getSchedule(ns, s.Name)
			g.Expect(cur.Status.LastTrigger).To(Equal(cur.Annotations[kvv1.AnnotationTrigger]))
		}, 30*time.Second).Should(Succeed())
	}
	causes := map[kvv1.RunCause]int{}
	Eventually(func(g Gomega) {
		cur := getSchedule(ns, s.Name)
		g.Expect(cur.Status.History.Runs).To(BeNumerically(">=", 3), "runs recorded; active %v", cur.Status.Active)
		clear(causes)
		for _, r := range scheduleHistory(ns, s.Name).Runs {
			causes[r.Cause]++
			g.Expect(r.Phase).To(Equal(kvv1.PhaseSucceeded), r.Name)
		}
		g.Expect(causes[kvv1.CauseCreate]).To(Equal(1))
		g.Expect(causes[kvv1.CauseTrigger]).To(Equal(2))
	}, 3*time.Minute, 2*time.Second).Should(Succeed())
	cur := getSchedule(ns, s.Name)
	Expect(meta.IsStatusConditionTrue(cur.Status.Conditions, schedule.ConditionScheduled)).To(BeTrue())
	Expect(cur.Status.History.ConfigMap).To(Equal("every-minute-history"))
	h := scheduleHistory(ns, s.Name)
	Expect(len(h.Runs)).To(BeNumerically(">=", 3))
	se := h.Find("rocksdb readrandom threads=2 opsPerSec")
	Expect(se).NotTo(BeNil(), "series %v", h.Series)
	Expect(len(se.Points)).To(BeNumerically(">=", 3))
	out := run(plugin, "history", s.Name, "-n", ns, "--metric", "opsPerSec")
	Expect(out).To(ContainSubstring("rocksdb readrandom threads=2 opsPerSec"))
	AddReportEntry("kubectl kvbench history every-minute", out)
	Eventually(func(g Gomega) {
		// The history read again each time: the cron (every minute) may add a run after the one above,
		// and Prometheus then shows the newer median.
		last := scheduleHistory(ns, s.Name).Find("rocksdb readrandom threads=2 opsPerSec")
		g.Expect(last).NotTo(BeNil())
		got, err := promQuery(fmt.Sprintf(`kvbench_schedule_series_median{namespace=%q, schedule="every-minute", metric="opsPerSec", threads="2"}`, ns))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(HaveLen(1))
		g.Expect(got[0].float()).To(Equal(last.Points[len(last.Points)-1].Median))
	}, time.Minute).Should(Succeed())
	deleteSchedule(ns, s.Name)
}

// scheduleChangePoint: a schedule every minute whose runs are bound by their CPU limit (so their
// throughput is the limit's, not the shared machine's); after five recorded runs the template's CPU
// limit is halved. Exactly one change point must be reported, naming the first run of the new
// template; its alert fires once in Prometheus; kubectl kvbench ack clears it.
func scheduleChangePoint(ns string) {
	plugin := buildPlugin()
	tpl := tmpfsBench(ns, "x", kvv1.EngineRocksDB).Spec
	tpl.Dataset.Size = ptr.To(resource.MustParse("4Mi"))
	tpl.Threads = []int32{1}
	tpl.Repeat = 6 // 6 repeats give each point a 95% interval (the dashboard's band)
	tpl.Workloads[0].Duration = &metav1.Duration{Duration: 2 * time.Second}
	tpl.Resources.CPU = ptr.To(resource.MustParse("200m"))
	tpl.Placement.Spread, tpl.Placement.MaxNodes = kvv1.SpreadEachNode, ptr.To[int32](1) // a series per node (the fleet panel)
	s := &kvv1.KVBenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Name: "slowdown", Namespace: ns},
		Spec: kvv1.KVBenchmarkScheduleSpec{Schedule: "* * * * *", RunOnCreate: true, SuccessfulRunsHistoryLimit: ptr.To[int32](2),
			Detection: kvv1.DetectionSpec{Metrics: []kvv1.DetectionMetric{{Name: kvv1.MetricOpsPerSec, MinChangePercent: ptr.To(10.0)}}},
			Template:  kvv1.KVBenchmarkTemplate{Spec: tpl}}}
	Expect(k8s.Create(ctx, s)).To(Succeed())
	series := fmt.Sprintf("rocksdb@%s readrandom threads=1 opsPerSec", nodeName)

	By("five runs at 200m CPU, recorded in the history; the older runs are deleted, their points kept")
	Eventually(func(g Gomega) {
		g.Expect(getSchedule(ns, s.Name).Status.History.Runs).To(BeNumerically(">=", 5))
	}, 10*time.Minute, 5*time.Second).Should(Succeed())
	cur := getSchedule(ns, s.Name)
	Expect(cur.Status.ChangePoints).To(BeEmpty(), "a change point before the slowdown: %+v", cur.Status.ChangePoints)
	var children kvv1.KVBenchmarkList
	Expect(k8s.List(ctx, &children, client.InNamespace(ns), client.MatchingLabels{history.LabelSchedule: s.Name})).To(Succeed())
	Expect(len(children.Items)).To(BeNumerically("<", 5), "successfulRunsHistoryLimit 2 deletes recorded runs")
	before := scheduleHistory(ns, s.Name).Find(series)
	Expect(before).NotTo(BeNil())
	GinkgoWriter.Printf("before the slowdown: %v\n", before.Values())

	By("halving the template's CPU limit")
	cur.Spec.Template.Spec.Resources.CPU = ptr.To(resource.MustParse("100m"))
	Expect(k8s.Update(ctx, cur)).To(Succeed())
	slowGen := cur.Generation

	By("exactly one Regressed change point, at the first run of the new template")
	var cp kvv1.ScheduleChangePoint
	Eventually(func(g Gomega) {
		cur := getSchedule(ns, s.Name)
		g.Expect(cur.Status.ChangePoints).NotTo(BeEmpty(), "history: %d runs; suspects %v", cur.Status.History.Runs, cur.Status.Suspects)
		cp = cur.Status.ChangePoints[0]
	}, 12*time.Minute, 5*time.Second).Should(Succeed())
	h := scheduleHistory(ns, s.Name)
	first := slices.IndexFunc(h.Runs, func(r history.Run) bool { return r.Generation == slowGen })
	Expect(first).NotTo(Equal(-1))
	GinkgoWriter.Printf("series: %v\nchange point: %+v\n", h.Find(series).Values(), cp)
	cur = getSchedule(ns, s.Name)
	Expect(cur.Status.ChangePoints).To(HaveLen(1))
	Expect(cp.Series).To(Equal(series))
	Expect(cp.Direction).To(Equal(kvv1.Regressed))
	Expect(cp.Child).To(Equal(h.Runs[first].Name), "the change point names the first slower run")
	Expect(cp.ChangePercent).To(BeNumerically("<", -25))
	Expect(cp.Cause).To(ContainSubstring(fmt.Sprintf("template generation %d -> %d", slowGen-1, slowGen)))
	Expect(cp.Confirmed).To(BeTrue())
	c := meta.FindStatusCondition(cur.Status.Conditions, schedule.ConditionRegressed)
	Expect(c).NotTo(BeNil())
	Expect(c.Status).To(Equal(metav1.ConditionTrue))
	Expect(c.Message).To(ContainSubstring(cp.Child))
	var evs corev1.EventList
	Expect(k8s.List(ctx, &evs, client.InNamespace(ns), client.MatchingFields{"involvedObject.name": s.Name})).To(Succeed())
	regressed := 0
	for _, e := range evs.Items {
		if e.Reason == "Regressed" {
			regressed += int(max(e.Count, 1))
		}
	}
	Expect(regressed).To(Equal(1), "one event per change point")
	out := run(plugin, "history", s.Name, "-n", ns, "--series", series)
	Expect(out).To(ContainSubstring("<- Regressed"))
	AddReportEntry("kubectl kvbench history slowdown", out)
	GinkgoWriter.Println(out)
	out = run(kubectl, "get", "kvbs", "-n", ns)
	GinkgoWriter.Println(out)
	Expect(out).To(ContainSubstring("slowdown"))
	GinkgoWriter.Println(c.Message)

	By("the chart's PrometheusRule fires one alert for it")
	alerts := fmt.Sprintf(`ALERTS{alertname="KVBenchScheduleRegressed", namespace=%q, schedule="slowdown"}`, ns)
	firing := strings.Replace(alerts, "}", `, alertstate="firing"}`, 1)
	Eventually(func(g Gomega) {
		got, err := promQuery(firing)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(HaveLen(1))
		g.Expect(got[0].Metric).To(HaveKeyWithValue("child", cp.Child))
	}, 2*time.Minute, 5*time.Second).Should(Succeed())

	By("kubectl kvbench ack clears the condition, the gauge and the alert")
	out = run(plugin, "ack", s.Name, cp.Child, "-n", ns)
	Expect(out).To(ContainSubstring("1 change point(s) acknowledged"))
	Eventually(func(g Gomega) {
		cur := getSchedule(ns, s.Name)
		g.Expect(meta.IsStatusConditionFalse(cur.Status.Conditions, schedule.ConditionRegressed)).To(BeTrue())
		got, err := promQuery(fmt.Sprintf(`kvbench_schedule_change_point{namespace=%q, schedule="slowdown"}`, ns))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(BeEmpty())
		got, err = promQuery(alerts)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(BeEmpty())
	}, 2*time.Minute, 5*time.Second).Should(Succeed())
	Expect(scheduleHistory(ns, s.Name).Acks).To(HaveLen(1))

	By("two more runs at the new level: no new change point; the alert fired once in all")
	runs := getSchedule(ns, s.Name).Status.History.Runs
	Eventually(func(g Gomega) {
		g.Expect(getSchedule(ns, s.Name).Status.History.Runs).To(BeNumerically(">=", runs+2))
	}, 5*time.Minute, 5*time.Second).Should(Succeed())
	Expect(getSchedule(ns, s.Name).Status.ChangePoints).To(HaveLen(1))
	n, err := promRangeCount(firing, time.Now().Add(-30*time.Minute), time.Now())
	Expect(err).NotTo(HaveOccurred())
	Expect(n).To(Equal(1), "one alert series in the last 30 minutes")

	By("the dashboard's schedule panels have data")
	dashboardHasData(ns, true)
	deleteSchedule(ns, s.Name)
	GinkgoWriter.Println(strings.Repeat("-", 40))
}
