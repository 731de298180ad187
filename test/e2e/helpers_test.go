//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/archive"
)

var ctx = context.Background()

// restrictedNamespace creates a namespace that enforces Pod Security "restricted" and deletes it after the spec
// (or the container, for Ordered containers: the caller decides where it is called).
func restrictedNamespace(name string) string {
	GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce":         "restricted",
		"pod-security.kubernetes.io/enforce-version": "latest",
		"kvbench.io/e2e":                             "true",
	}}}
	err := k8s.Create(ctx, ns)
	if apierrors.IsAlreadyExists(err) {
		err = k8s.Update(ctx, ns)
	}
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		_ = k8s.Delete(ctx, ns)
	})
	return name
}

// tmpfsBench is a small valid benchmark: one engine, a 16Mi dataset on tmpfs, readrandom for 2s at 1 and 2
// threads, 768Mi (RocksDB's model with a sweep that writes: 392Mi of engine, overhead and buffers, 343Mi
// of tmpfs for tables and preallocated WALs), not exclusive (the suite runs several at once on one node).
func tmpfsBench(ns, name string, engine kvv1.EngineName) *kvv1.KVBenchmark {
	return &kvv1.KVBenchmark{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: kvv1.KVBenchmarkSpec{
			Engines:   []kvv1.EngineSpec{{Name: engine}},
			Dataset:   kvv1.DatasetSpec{Size: ptr.To(resource.MustParse("16Mi")), KeySize: 16, ValueSize: 100},
			Workloads: []kvv1.WorkloadSpec{{Name: kvv1.WorkloadReadRandom, Duration: &metav1.Duration{Duration: 2 * time.Second}}},
			Threads:   []int32{1, 2},
			Resources: kvv1.BenchmarkResources{Memory: resource.MustParse("768Mi")},
			Storage:   kvv1.StorageSpec{Medium: kvv1.MediumTmpfs},
			Placement: kvv1.PlacementSpec{Exclusive: ptr.To(false)},
			Deadline:  &metav1.Duration{Duration: 5 * time.Minute},
		},
	}
}

func create(b *kvv1.KVBenchmark) *kvv1.KVBenchmark {
	GinkgoHelper()
	Expect(k8s.Create(ctx, b)).To(Succeed())
	return b
}

func get(ns, name string) *kvv1.KVBenchmark {
	GinkgoHelper()
	var b kvv1.KVBenchmark
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &b)).To(Succeed())
	return &b
}

// archivedResult waits (up to a minute) until the operator has archived the full result of the
// benchmark's named run, then reads the archive ConfigMap named in status, verifies it against
// the recorded sha256 and decodes it. It returns the result and the benchmark as last read. A run
// whose archiving failed fails at once, with the operator's error.
func archivedResult(ns, name, run string) (*kvv1.Result, *kvv1.KVBenchmark) {
	GinkgoHelper()
	var res *kvv1.Result
	var cur *kvv1.KVBenchmark
	Eventually(func(g Gomega) {
		cur = get(ns, name)
		i := slices.IndexFunc(cur.Status.Runs, func(r kvv1.RunStatus) bool { return r.Name == run })
		g.Expect(i).NotTo(Equal(-1), "no run %s in status", run)
		fr := cur.Status.Runs[i].FullResult
		g.Expect(fr).NotTo(BeNil(), "run %s: no full result yet", run)
		if fr.Error != "" {
			StopTrying(fmt.Sprintf("run %s: archiving the full result failed: %s", run, fr.Error)).Now()
		}
		g.Expect(fr.ConfigMap).NotTo(BeEmpty())
		var cm corev1.ConfigMap
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: fr.ConfigMap}, &cm)).To(Succeed())
		var err error
		res, err = archive.FromConfigMap(&cm, cur, fr.SHA256)
		g.Expect(err).NotTo(HaveOccurred())
	}, time.Minute, time.Second).Should(Succeed())
	return res, cur
}

// waitFinished waits until the benchmark is Succeeded or Failed and returns it. Every status seen on the way
// is checked: a Succeeded benchmark always has every run Succeeded with results.
func waitFinished(ns, name string, timeout time.Duration) *kvv1.KVBenchmark {
	GinkgoHelper()
	var b *kvv1.KVBenchmark
	Eventually(func(g Gomega) {
		var cur kvv1.KVBenchmark
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &cur)).To(Succeed())
		b = &cur
		if cur.Status.Phase == kvv1.PhaseSucceeded {
			expectCompleteResults(&cur)
		}
		g.Expect(cur.Status.Phase).To(BeElementOf(kvv1.PhaseSucceeded, kvv1.PhaseFailed), func() string {
			return fmt.Sprintf("%s/%s: phase %q, runs %s; %s", ns, name, cur.Status.Phase, runsSummary(&cur), runnerStates(ns, name))
		})
	}, timeout).Should(Succeed())
	return b
}

// runnerStates says where the benchmark's runner containers are (running since, or ended when and why), so that
// a benchmark still unfinished at a timeout tells a runner that had not ended from an operator that did not see it.
func runnerStates(ns, name string) string {
	var pods corev1.PodList
	if err := k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"kvbench.io/benchmark": name}); err != nil {
		return "runner pods: " + err.Error()
	}
	s := fmt.Sprintf("now %s, runner pods:", time.Now().UTC().Format(time.TimeOnly))
	for _, p := range pods.Items {
		s += fmt.Sprintf(" %s %s", p.Name, p.Status.Phase)
		for _, c := range p.Status.ContainerStatuses {
			switch st := c.State; {
			case st.Running != nil:
				s += fmt.Sprintf(" (%s running since %s)", c.Name, st.Running.StartedAt.UTC().Format(time.TimeOnly))
			case st.Terminated != nil:
				s += fmt.Sprintf(" (%s started %s, %s at %s)", c.Name, st.Terminated.StartedAt.UTC().Format(time.TimeOnly),
					st.Terminated.Reason, st.Terminated.FinishedAt.UTC().Format(time.TimeOnly))
			}
		}
	}
	return s
}

// expectCompleteResults: every run Succeeded with a load phase (unless loadMode none) and one result per workload x thread count x iteration.
func expectCompleteResults(b *kvv1.KVBenchmark) {
	GinkgoHelper()
	Expect(b.Status.Runs).To(HaveLen(len(b.Spec.Engines)), "runs of %s", b.Name)
	total := 0
	for _, r := range b.Status.Runs {
		Expect(r.Phase).To(Equal(kvv1.RunSucceeded), "run %s of a Succeeded benchmark", r.Name)
		want := 0
		for _, w := range b.Spec.Workloads {
			n := len(b.Spec.Threads)
			if len(w.Threads) > 0 {
				n = len(w.Threads)
			}
			if w.Name == kvv1.WorkloadDBBench {
				n = dbBenchCount(w.DBBenchArgs) // one result per db_bench benchmark; its own --threads
			}
			want += n
		}
		want *= int(max(b.Spec.Repeat, 1))
		Expect(r.Results).To(HaveLen(want), "results of run %s (Succeeded)", r.Name)
		total += want
		for _, p := range r.Results {
			Expect(p.OpsPerSec).To(BeNumerically(">", 0), "ops/s of %s %s/%d", r.Name, p.Workload, p.Threads)
			Expect(p.Ops).To(BeNumerically(">", 0))
		}
		if b.Spec.Dataset.LoadMode != kvv1.LoadNone {
			Expect(r.Load).NotTo(BeNil(), "load phase of run %s", r.Name)
		}
		Expect(r.EngineVersion).NotTo(BeEmpty())
		Expect(r.NodeName).To(Equal(nodeName))
	}
	Expect(b.Status.Headline).NotTo(BeNil())
	Expect(b.Status.Headline.OpsPerSec).To(BeNumerically(">", 0))
	Expect(b.Status.Progress).To(Equal(fmt.Sprintf("%d/%d", len(b.Spec.Engines), len(b.Spec.Engines))))
	Expect(b.Status.PhaseProgress).To(Equal(fmt.Sprintf("%d/%d", total, total)), "the Progress column of %s", b.Name)
}

func runsSummary(b *kvv1.KVBenchmark) string {
	s := ""
	for _, r := range b.Status.Runs {
		s += fmt.Sprintf("[%s %s %s: %.200s results=%d] ", r.Name, r.Phase, r.Reason, r.Message, len(r.Results))
	}
	return s
}

func condition(b *kvv1.KVBenchmark, t string) *metav1.Condition {
	for i := range b.Status.Conditions {
		if b.Status.Conditions[i].Type == t {
			return &b.Status.Conditions[i]
		}
	}
	return nil
}

// runnerPod returns the benchmark's runner pod, or nil.
func runnerPod(ns, name string) *corev1.Pod {
	GinkgoHelper()
	var pods corev1.PodList
	Expect(k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"kvbench.io/benchmark": name})).To(Succeed())
	if len(pods.Items) == 0 {
		return nil
	}
	return &pods.Items[0]
}

// waitRunnerRunning waits until the benchmark's runner container has run for at least `for`.
func waitRunnerRunning(ns, name string, atLeast time.Duration) *corev1.Pod {
	GinkgoHelper()
	var pod *corev1.Pod
	Eventually(func(g Gomega) {
		pod = runnerPod(ns, name)
		g.Expect(pod).NotTo(BeNil())
		g.Expect(pod.Status.ContainerStatuses).NotTo(BeEmpty())
		r := pod.Status.ContainerStatuses[0].State.Running
		g.Expect(r).NotTo(BeNil(), "runner container of %s is not running: %+v", pod.Name, pod.Status.ContainerStatuses[0].State)
		g.Expect(time.Since(r.StartedAt.Time)).To(BeNumerically(">=", atLeast))
	}, 2*time.Minute).Should(Succeed())
	return pod
}

// sample is one Prometheus instant-vector element.
type sample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

func (s sample) float() float64 {
	v, err := strconv.ParseFloat(s.Value[1].(string), 64)
	Expect(err).NotTo(HaveOccurred())
	return v
}

// promQuery runs an instant query against the in-cluster Prometheus (the host reaches ClusterIPs).
func promQuery(q string) ([]sample, error) {
	out, err := exec.Command("curl", "-fsS", "--max-time", "10", "--get", promURL+"/api/v1/query",
		"--data-urlencode", "query="+q).Output()
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", url.QueryEscape(q), err)
	}
	var resp struct {
		Status string `json:"status"`
		Data   struct {
			Result []sample `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		return nil, err
	}
	if resp.Status != "success" {
		return nil, fmt.Errorf("query %s: %s", q, out)
	}
	return resp.Data.Result, nil
}

// promTarget is one of Prometheus's active scrape targets.
type promTarget struct {
	ScrapeURL string            `json:"scrapeUrl"`
	Health    string            `json:"health"`
	LastError string            `json:"lastError"`
	Labels    map[string]string `json:"labels"`
}

// promTargets lists the in-cluster Prometheus's active scrape targets.
func promTargets() ([]promTarget, error) {
	out, err := exec.Command("curl", "-fsS", "--max-time", "10", promURL+"/api/v1/targets?state=active").Output()
	if err != nil {
		return nil, fmt.Errorf("targets: %w", err)
	}
	var resp struct {
		Data struct {
			ActiveTargets []promTarget `json:"activeTargets"`
		} `json:"data"`
	}
	return resp.Data.ActiveTargets, json.Unmarshal(out, &resp)
}

// phaseKey names one phase of one run as the operator's series do (the phase label is the phase's
// index, "load" for the load).
func phaseKey(engine, phase string) string { return engine + "/" + phase }

// expectPrometheusMatchesStatus waits until Prometheus has scraped the operator's result series of the benchmark
// and checks that ops/s and p99 latency equal the status, phase by phase (the load included).
func expectPrometheusMatchesStatus(b *kvv1.KVBenchmark) {
	GinkgoHelper()
	wantOps, wantP99 := map[string]float64{}, map[string]float64{}
	for _, r := range b.Status.Runs {
		phases := append([]kvv1.PhaseSummary{}, r.Results...)
		labels := make([]string, 0, len(phases)+1)
		for _, p := range phases {
			labels = append(labels, strconv.Itoa(int(p.Index)))
		}
		if r.Load != nil {
			phases, labels = append(phases, *r.Load), append(labels, "load")
		}
		for i, p := range phases {
			k := phaseKey(string(r.Engine), labels[i])
			wantOps[k] = p.OpsPerSec
			if p.LatencyMicros != nil {
				wantP99[k] = p.LatencyMicros.P99 / 1e6
			}
		}
	}
	sel := fmt.Sprintf(`namespace=%q,benchmark=%q`, b.Namespace, b.Name)
	check := func(g Gomega, q string, want map[string]float64) {
		got, err := promQuery(q)
		g.Expect(err).NotTo(HaveOccurred())
		have := map[string]float64{}
		for _, s := range got {
			have[phaseKey(s.Metric["engine"], s.Metric["phase"])] = s.float()
		}
		g.Expect(have).To(HaveLen(len(want)), "%s: Prometheus has %v, status has %v", q, have, want)
		for k, v := range want {
			g.Expect(have).To(HaveKey(k), q)
			g.Expect(math.Abs(have[k]-v)).To(BeNumerically("<=", 1e-9*math.Max(1, math.Abs(v))),
				"%s %s: Prometheus %v, status %v", q, k, have[k], v)
		}
	}
	Eventually(func(g Gomega) {
		check(g, "kvbench_result_ops_per_second{"+sel+"}", wantOps)
		check(g, `kvbench_result_latency_seconds{`+sel+`,quantile="0.99"}`, wantP99)
		ph, err := promQuery(`kvbench_benchmark_phase{` + sel + `} == 1`)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(ph).To(HaveLen(1))
		g.Expect(ph[0].Metric["phase"]).To(Equal(string(b.Status.Phase)))
	}, 90*time.Second, 3*time.Second).Should(Succeed())
}

// dbBenchCount is the number of benchmarks a db_bench command line runs (its --benchmarks list).
func dbBenchCount(args []string) int {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--benchmarks="); ok {
			return len(strings.Split(v, ","))
		}
	}
	return 1
}

// reportNotes are the notes of a `kubectl kvbench report` other than its build lines ("note: build: rocksdb
// 7.8.3, assertions off, …"), which every report of a C++ engine prints: a note beyond those means something
// was missing or not comparable.
func reportNotes(out string) []string {
	var notes []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "note:") && !strings.HasPrefix(l, "note: build: ") {
			notes = append(notes, l)
		}
	}
	return notes
}
