//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// Issue 12's "done when" scenarios: whatever fails, every finished phase reaches status, the
// archive and Prometheus; the live series join the results; every dashboard query has data.

// deadlineKeepsPhases: a sweep longer than its deadline (the CRD's minimum, 1m) ends
// DeadlineExceeded with the phases that finished before it; while it runs, the runner's live
// series carry benchmark and engine and status lists the finished phases.
func deadlineKeepsPhases(ns string) {
	b := tmpfsBench(ns, "deadline", kvv1.EngineRocksDB)
	b.Spec.Workloads[0].Duration = &metav1.Duration{Duration: 20 * time.Second}
	b.Spec.Threads = []int32{1, 2, 3, 4} // 80s of phases after the load
	b.Spec.Deadline = &metav1.Duration{Duration: time.Minute}
	create(b)
	pod := waitRunnerRunning(ns, b.Name, 2*time.Second)

	By("the runner's live series carry namespace, benchmark and engine, and a live p99")
	Eventually(func(g Gomega) {
		for _, m := range []string{"kvbench_runner_ops_per_second", "kvbench_runner_latency_p99_seconds"} {
			got, err := promQuery(fmt.Sprintf(`%s{namespace=%q,pod=%q}`, m, ns, pod.Name))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).NotTo(BeEmpty(), m)
			for _, s := range got {
				g.Expect(s.Metric).To(HaveKeyWithValue("benchmark", b.Name), m)
				g.Expect(s.Metric).To(HaveKeyWithValue("engine", "rocksdb"), m)
			}
		}
	}, 40*time.Second, 2*time.Second).Should(Succeed())

	By("while it runs, status lists the phases that finished and counts them")
	Eventually(func(g Gomega) {
		cur := get(ns, b.Name)
		g.Expect(cur.Status.Phase).To(Equal(kvv1.PhaseRunning))
		g.Expect(cur.Status.Runs[0].Results).NotTo(BeEmpty())
		g.Expect(cur.Status.PhaseProgress).To(MatchRegexp(`^[1-9][0-9]*/4$`))
	}, 50*time.Second, 2*time.Second).Should(Succeed())

	got := waitFinished(ns, b.Name, 3*time.Minute)
	r := got.Status.Runs[0]
	Expect(got.Status.Phase).To(Equal(kvv1.PhaseFailed), runsSummary(got))
	Expect(r.Reason).To(Equal(kvv1.ReasonDeadlineExceeded), runsSummary(got))
	Expect(len(r.Results)).To(BeNumerically(">=", 1), "the phases that finished before the deadline")
	Expect(len(r.Results)).To(BeNumerically("<", 4))
	for i, p := range r.Results {
		Expect(p.Index).To(Equal(int32(i)))
		Expect(p.Threads).To(Equal(b.Spec.Threads[i]))
		Expect(p.OpsPerSec).To(BeNumerically(">", 0))
	}
	AddReportEntry("deadline mid-sweep", runsSummary(got))
	expectPrometheusMatchesStatus(got)
}

// oomKeepsPhases: a run whose first phases finish and whose next phase is OOM-killed (a fill
// into a 2Gi memtable without WAL under a 512Mi limit) keeps the finished phases.
// The kill's time is the kernel's: with tiny values (13M 4-byte ones) the memtable grows by small
// allocations, and near the limit the kernel evicts and refaults the container's own code pages
// (cgroup v1, no swap) for seconds on a quiet machine, minutes on a loaded one, or until the run's
// 5-minute deadline (twice in fresh-clone CI runs). 1 MiB values outgrow 512Mi in a few hundred
// writes: db_bench in a 512Mi cgroup was killed after 0.8-1.5 s (quiet) and 3-12.5 s (3 CPU hogs),
// against 14.5 s and minutes for the tiny values (db_bench in a 512Mi memory cgroup, 2026-11-25).
// The wait still covers the run's deadline, so a run the kernel never kills fails DeadlineExceeded,
// not a timeout that blames the operator.
func oomKeepsPhases(ns string) {
	b := tmpfsBench(ns, "oom-after-phases", kvv1.EngineRocksDB)
	// 4Mi memtables for the runner's own readrandom phase, so that 512Mi holds its model (WALs on
	// tmpfs included) and db_bench's 2Gi memtable still overruns it.
	b.Spec.Engines[0].Options.WriteBufferSize = ptr.To(resource.MustParse("4Mi"))
	b.Spec.Resources.Memory = resource.MustParse("512Mi")
	b.Spec.Dataset = kvv1.DatasetSpec{Size: ptr.To(resource.MustParse("16Mi")), KeySize: 16, ValueSize: 4, LoadMode: kvv1.LoadBulk}
	b.Spec.Threads = []int32{1}
	// The CRD's memory rule refuses engine options that cannot fit, so the memory hog is db_bench's
	// own 2Gi memtable (dbBenchArgs are not in the model), run after a measured runner phase.
	b.Spec.Workloads = []kvv1.WorkloadSpec{
		{Name: kvv1.WorkloadReadRandom, Duration: &metav1.Duration{Duration: 2 * time.Second}},
		{Name: kvv1.WorkloadDBBench, DBBenchArgs: []string{"--benchmarks=fillseq", "--num=2048", "--key_size=16",
			"--value_size=1048576", "--write_buffer_size=2147483648", "--disable_wal=1"}},
	}
	create(b)
	got := waitFinished(ns, b.Name, b.Spec.Deadline.Duration+time.Minute)
	r := got.Status.Runs[0]
	Expect(got.Status.Phase).To(Equal(kvv1.PhaseFailed), runsSummary(got))
	Expect(r.Reason).To(Equal(kvv1.ReasonOOMKilled), runsSummary(got))
	Expect(r.Results).To(HaveLen(1), "the readrandom phase finished before the OOM kill: %s", runsSummary(got))
	Expect(r.Results[0].Workload).To(Equal("readrandom"))
	Expect(r.Load).NotTo(BeNil())
	AddReportEntry("OOM after a finished phase", fmt.Sprintf("%sdecided %s; %s", runsSummary(got),
		r.CompletionTime.UTC().Format(time.TimeOnly), runnerStates(ns, b.Name)))
}

// bigSweepInPrometheus: a sweep whose summary overflows the 4 KiB termination message has every
// phase in status and in Prometheus, equal to the archived full result; two readwhilewriting
// phases at one thread count and different write rates (seed 000's 10K and 80K writes/s) are
// two series.
func bigSweepInPrometheus(ns string) {
	b := tmpfsBench(ns, "big-sweep", kvv1.EnginePebble)
	n := ptr.To[int64](2000)
	b.Spec.Workloads = []kvv1.WorkloadSpec{
		{Name: kvv1.WorkloadReadRandom, Num: n}, {Name: kvv1.WorkloadReadSeq, Num: n},
		{Name: kvv1.WorkloadSeekRandom, Num: n}, {Name: kvv1.WorkloadReadRandomWriteRandom, Num: n},
		{Name: kvv1.WorkloadReadWhileWriting, Duration: &metav1.Duration{Duration: time.Second}, WritesPerSecond: ptr.To[int64](10_000), Threads: []int32{2}},
		{Name: kvv1.WorkloadReadWhileWriting, Duration: &metav1.Duration{Duration: time.Second}, WritesPerSecond: ptr.To[int64](80_000), Threads: []int32{2}},
	}
	b.Spec.Threads = []int32{1, 2, 3, 4, 5, 6}
	b.Spec.Repeat = 2 // (4x6 + 2) x 2 = 52 phases
	create(b)
	got := waitFinished(ns, b.Name, 3*time.Minute)
	Expect(got.Status.Phase).To(Equal(kvv1.PhaseSucceeded), runsSummary(got))
	full, got := archivedResult(ns, b.Name, got.Status.Runs[0].Name)
	Expect(full.Phases).To(HaveLen(52))
	Expect(got.Status.Runs[0].Results).To(HaveLen(52), "status has every phase once the archive is read")
	Expect(got.Status.PhaseProgress).To(Equal("52/52"))

	sel := fmt.Sprintf(`namespace=%q,benchmark=%q`, ns, b.Name)
	Eventually(func(g Gomega) {
		got, err := promQuery(`kvbench_result_ops_per_second{` + sel + `,phase!="load"}`)
		g.Expect(err).NotTo(HaveOccurred())
		have := map[string]float64{}
		for _, s := range got {
			have[s.Metric["phase"]] = s.float()
		}
		g.Expect(have).To(HaveLen(len(full.Phases)))
		for i, p := range full.Phases {
			k := strconv.Itoa(i)
			g.Expect(have).To(HaveKey(k))
			g.Expect(math.Abs(have[k]-p.OpsPerSec)).To(BeNumerically("<=", 1e-9*math.Max(1, p.OpsPerSec)), "phase %s", k)
		}
		rates, err := promQuery(`kvbench_result_achieved_writes_per_second{` + sel + `,workload="readwhilewriting",threads="2",iteration="0"}`)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(rates).To(HaveLen(2), "both write rates, one series each")
	}, 90*time.Second, 3*time.Second).Should(Succeed())
}

// dashboardHasData runs every query of the chart's dashboard over the last 30 minutes (the
// suite's benchmarks, live ones included, ran in that window) and fails for any that returns
// nothing. The panels titled "Schedule..." have data only after a KVBenchmarkSchedule ran: they
// are checked with schedules (test/e2e/schedule_test.go), the others without.
func dashboardHasData(ns string, schedules bool) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "charts", "kvbench-operator", "files", "dashboard.json"))
	Expect(err).NotTo(HaveOccurred())
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	Expect(json.Unmarshal(raw, &d)).To(Succeed())
	Expect(d.Panels).NotTo(BeEmpty())
	end := time.Now()
	for _, p := range d.Panels {
		if strings.HasPrefix(p.Title, "Schedule") != schedules {
			continue
		}
		for _, t := range p.Targets {
			q := strings.NewReplacer(`$namespace`, ns, `$benchmark`, ".*", `$schedule`, ".*", `$metric`, ".*").Replace(t.Expr)
			n, err := promRangeCount(q, end.Add(-30*time.Minute), end)
			Expect(err).NotTo(HaveOccurred(), "panel %q", p.Title)
			Expect(n).To(BeNumerically(">", 0), "panel %q: %s returned no data", p.Title, q)
		}
	}
}

// promRangeCount runs a range query (15s steps) and returns how many series it returned.
func promRangeCount(q string, start, end time.Time) (int, error) {
	out, err := exec.Command("curl", "-fsS", "--max-time", "20", "--get", promURL+"/api/v1/query_range",
		"--data-urlencode", "query="+q, "--data-urlencode", fmt.Sprintf("start=%d", start.Unix()),
		"--data-urlencode", fmt.Sprintf("end=%d", end.Unix()), "--data-urlencode", "step=15").Output()
	if err != nil {
		return 0, fmt.Errorf("query_range %s: %w", q, err)
	}
	var resp struct {
		Status string `json:"status"`
		Data   struct {
			Result []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		return 0, err
	}
	if resp.Status != "success" {
		return 0, fmt.Errorf("query_range %s: %s", q, out)
	}
	return len(resp.Data.Result), nil
}
