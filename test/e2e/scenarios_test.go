//go:build e2e

package e2e

import (
	"fmt"
	pngpkg "image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// One Ordered container: the scenarios share the chart installed in BeforeSuite and end with helm uninstall, then
// the install paths that need the cluster without that release: a chart upgrade that changes the CRD, and the
// one-file installer.
// ContinueOnFailure: a failed scenario does not skip the others (each creates its own benchmarks).
var _ = Describe("kvbench operator installed by the Helm chart", Ordered, ContinueOnFailure, func() {
	var ns string
	BeforeAll(func() {
		ns = restrictedNamespace("kvb-e2e")
	})

	It("runs tmpfs RocksDB, tmpfs LevelDB and Pebble on local NVMe to Succeeded, with the status results in Prometheus", func() {
		rocks := tmpfsBench(ns, "rocksdb-tmpfs", kvv1.EngineRocksDB)
		level := tmpfsBench(ns, "leveldb-tmpfs", kvv1.EngineLevelDB)
		pebble := tmpfsBench(ns, "pebble-nvme", kvv1.EnginePebble)
		pebble.Spec.Storage = kvv1.StorageSpec{Medium: kvv1.MediumLocalNVMe, Size: ptr.To(resource.MustParse("1Gi"))}
		for _, b := range []*kvv1.KVBenchmark{rocks, level, pebble} {
			create(b)
		}
		for _, b := range []*kvv1.KVBenchmark{rocks, level, pebble} {
			got := waitFinished(ns, b.Name, 4*time.Minute)
			Expect(got.Status.Phase).To(Equal(kvv1.PhaseSucceeded), "%s: %s", b.Name, runsSummary(got))
			expectCompleteResults(got)
			Expect(condition(got, kvv1.ConditionSucceeded)).NotTo(BeNil())
			Expect(condition(got, kvv1.ConditionSucceeded).Status).To(Equal(metav1.ConditionTrue))
		}
		By("the Pebble run's volume was a local-nvme PersistentVolume on the labelled node")
		var pvs corev1.PersistentVolumeList
		Expect(k8s.List(ctx, &pvs, client.MatchingLabels{"kvbench.io/local-nvme": "true"})).To(Succeed())
		used := []string{}
		for _, pv := range pvs.Items {
			if pv.Spec.ClaimRef != nil && pv.Spec.ClaimRef.Namespace == ns {
				used = append(used, pv.Name+"<-"+pv.Spec.ClaimRef.Name)
			}
		}
		Expect(used).To(HaveLen(1), "local-nvme PVs claimed from %s", ns)
		Expect(used[0]).To(ContainSubstring("pebble-nvme"))

		By("Prometheus has the same numbers as the status")
		for _, b := range []*kvv1.KVBenchmark{rocks, level, pebble} {
			expectPrometheusMatchesStatus(get(ns, b.Name))
		}
		out := run(kubectl, "get", "kvb", "-n", ns, "-o", "wide")
		GinkgoWriter.Println(out)
		AddReportEntry("kubectl get kvb -o wide", out)
		// The default columns explain: progress in phases, the labelled headline.
		out = run(kubectl, "get", "kvb", "rocksdb-tmpfs", "-n", ns)
		Expect(out).To(MatchRegexp(`(?m)^NAME +ENGINES +DATASET +MEDIUM +PHASE +PROGRESS +REASON +VERDICT +RESULT +AGE$`))
		Expect(out).To(MatchRegexp(`(?m)^rocksdb-tmpfs +rocksdb +16Mi +tmpfs +Succeeded +2/2 +rocksdb readrandom threads=2: [0-9]+ ops/s +`))
		AddReportEntry("kubectl get kvb", out)
	})

	It("admits runner pods in a namespace enforcing Pod Security restricted", func() {
		var nsObj corev1.Namespace
		Expect(k8s.Get(ctx, client.ObjectKey{Name: ns}, &nsObj)).To(Succeed())
		Expect(nsObj.Labels).To(HaveKeyWithValue("pod-security.kubernetes.io/enforce", "restricted"))
		By("the namespace really enforces: a privileged pod is rejected")
		bad := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "privileged", Namespace: ns}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: *runnerImage,
				SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}}}}
		err := k8s.Create(ctx, bad, client.DryRunAll)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("violates PodSecurity"))
		By("no runner Job in it failed to create its pod")
		var evs corev1.EventList
		Expect(k8s.List(ctx, &evs, client.InNamespace(ns))).To(Succeed())
		for _, e := range evs.Items {
			Expect(e.Reason).NotTo(Equal("FailedCreate"), "event %s: %s", e.InvolvedObject.Name, e.Message)
		}
	})

	It("keeps a benchmark that needs a label no node has Pending and Unschedulable, then runs it once the node is labelled", func() {
		const key, val = "kvbench.io/e2e-zone", "unschedulable-test"
		DeferCleanup(func() { _, _ = tryRun(kubectl, "label", "node", nodeName, key+"-") })
		b := tmpfsBench(ns, "needs-label", kvv1.EngineRocksDB)
		b.Spec.Placement.NodeSelector = map[string]string{key: val}
		create(b)
		Eventually(func(g Gomega) {
			cur := get(ns, b.Name)
			g.Expect(cur.Status.Phase).To(Equal(kvv1.PhasePending))
			g.Expect(cur.Status.Runs).To(HaveLen(1))
			g.Expect(cur.Status.Runs[0].Reason).To(Equal(kvv1.ReasonUnschedulable))
			g.Expect(cur.Status.Runs[0].Message).To(ContainSubstring("node affinity/selector"))
		}, time.Minute).Should(Succeed())
		By("it stays Pending while no node matches")
		Consistently(func(g Gomega) {
			cur := get(ns, b.Name)
			g.Expect(cur.Status.Phase).To(Equal(kvv1.PhasePending))
			g.Expect(cur.Status.Runs[0].Reason).To(Equal(kvv1.ReasonUnschedulable))
		}, 10*time.Second, time.Second).Should(Succeed())
		cur := get(ns, b.Name)
		AddReportEntry("unschedulable status", fmt.Sprintf("runs[0]: %s: %s; conditions: %+v", cur.Status.Runs[0].Reason, cur.Status.Runs[0].Message, cur.Status.Conditions))
		By("the benchmark says why in a condition, too")
		found := false
		for _, c := range cur.Status.Conditions {
			if strings.Contains(c.Reason+c.Message, "Unschedulable") || strings.Contains(c.Message, "node affinity/selector") {
				found = true
			}
		}
		// checked at the end, so that the rest of the scenario runs either way

		By("labelling the node lets it run")
		run(kubectl, "label", "node", nodeName, key+"="+val, "--overwrite")
		got := waitFinished(ns, b.Name, 3*time.Minute)
		Expect(got.Status.Phase).To(Equal(kvv1.PhaseSucceeded), runsSummary(got))
		Expect(found).To(BeTrue(), "while Pending, no condition of %s said Unschedulable (only status.runs[0].reason did): %+v",
			b.Name, cur.Status.Conditions)
	})

	It("ends Failed with OOMKilled when db_bench's own memtable outgrows the memory limit", func() {
		// Accepted by the CRD's memory rule, which counts what the runner's engine and buffers take (8Mi cache +
		// 2 x 4Mi memtables + 256Mi overhead + 2Mi buffers + the tmpfs's WALs and metadata <= 512Mi); dbBenchArgs
		// are db_bench's own and not in the model: a 2Gi write buffer with the WAL off keeps the whole fillseq in one
		// memtable, and 1 MiB values pass 512Mi in a few hundred writes (oomKeepsPhases says why not tiny ones).
		b := tmpfsBench(ns, "oom", kvv1.EngineRocksDB)
		// The runner's own engine (it only opens the empty database) gets 4Mi memtables, so that 512Mi
		// holds its model, WALs on tmpfs included.
		b.Spec.Engines[0].Options.WriteBufferSize = ptr.To(resource.MustParse("4Mi"))
		b.Spec.Resources.Memory = resource.MustParse("512Mi")
		b.Spec.Dataset = kvv1.DatasetSpec{Num: ptr.To[int64](1), KeySize: 16, ValueSize: 4, LoadMode: kvv1.LoadNone}
		b.Spec.Workloads = []kvv1.WorkloadSpec{{Name: kvv1.WorkloadDBBench, DBBenchArgs: []string{"--benchmarks=fillseq",
			"--num=2048", "--key_size=16", "--value_size=1048576", "--write_buffer_size=2147483648", "--disable_wal=1"}}}
		b.Spec.Threads = []int32{1}
		create(b)
		// The kernel's kill may come minutes after the limit is reached on a loaded machine (oomKeepsPhases).
		got := waitFinished(ns, b.Name, b.Spec.Deadline.Duration+time.Minute)
		Expect(got.Status.Phase).To(Equal(kvv1.PhaseFailed), runsSummary(got))
		Expect(got.Status.Runs[0].Reason).To(Equal(kvv1.ReasonOOMKilled), runsSummary(got))
		Expect(condition(got, kvv1.ConditionFailed).Status).To(Equal(metav1.ConditionTrue))
	})

	It("ends a benchmark whose runner pod is deleted mid-run Failed with the phases that finished, never Succeeded", func() {
		b := tmpfsBench(ns, "pod-deleted", kvv1.EngineRocksDB)
		b.Spec.Workloads[0].Duration = &metav1.Duration{Duration: 8 * time.Second}
		b.Spec.Threads = []int32{1, 2, 3}
		create(b)
		pod := waitRunnerRunning(ns, b.Name, 0)
		By("deleting the pod as soon as its first phase is logged, before the operator's next periodic log read")
		Eventually(func() string {
			out, _ := tryRun(kubectl, "logs", "-n", ns, pod.Name)
			return out
		}, time.Minute, 500*time.Millisecond).Should(MatchRegexp(regexp.QuoteMeta(kvv1.ResultPhaseLogPrefix) + `.*"workload":"readrandom"`))
		Expect(k8s.Delete(ctx, pod)).To(Succeed())
		got := waitFinished(ns, b.Name, 3*time.Minute)
		Expect(got.Status.Phase).To(Equal(kvv1.PhaseFailed), runsSummary(got))
		Expect(got.Status.Runs[0].Phase).To(Equal(kvv1.RunFailed))
		Expect(got.Status.Runs[0].Reason).NotTo(BeEmpty())
		Expect(got.Status.Runs[0].Results).NotTo(BeEmpty(), "the phase that finished before the deletion: %s", runsSummary(got))
		Expect(got.Status.Runs[0].Results[0].Threads).To(Equal(int32(1)))
		Expect(len(got.Status.Runs[0].Results)).To(BeNumerically("<", 3), "the deleted run cannot have finished every phase")
		if got.Status.Runs[0].Reason == kvv1.ReasonRunnerError {
			Expect(got.Status.Runs[0].Message).To(ContainSubstring("interrupted by SIGTERM"), "the runner says what stopped it")
		}
		AddReportEntry("pod deleted mid-run", runsSummary(got))
		By("it stays Failed (no second attempt with a fresh Job)")
		Consistently(func() kvv1.BenchmarkPhase { return get(ns, b.Name).Status.Phase }, 10*time.Second, time.Second).
			Should(Equal(kvv1.PhaseFailed))
	})

	It("finishes a run correctly when the operator restarts mid-run", func() {
		b := tmpfsBench(ns, "operator-restart", kvv1.EngineRocksDB)
		// Two 20 s phases: time for Prometheus to discover and scrape the pod (5 s interval) on a loaded machine.
		b.Spec.Workloads[0].Duration = &metav1.Duration{Duration: 20 * time.Second}
		create(b)
		pod := waitRunnerRunning(ns, b.Name, 2*time.Second)
		By("Prometheus scrapes the live runner through the chart's PodMonitor")
		Eventually(func(g Gomega) {
			got, err := promQuery(fmt.Sprintf(`kvbench_runner_operations_total{namespace=%q,pod=%q}`, ns, pod.Name))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).NotTo(BeEmpty())
		}, 35*time.Second).Should(Succeed())
		var job batchv1.Job
		jobName := get(ns, b.Name).Status.Runs[0].JobName
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: jobName}, &job)).To(Succeed())

		By("deleting the operator pod")
		var pods corev1.PodList
		Expect(k8s.List(ctx, &pods, client.InNamespace(releaseNS), client.MatchingLabels{
			"app.kubernetes.io/instance": release, "app.kubernetes.io/component": "manager"})).To(Succeed())
		Expect(pods.Items).To(HaveLen(1))
		old := pods.Items[0]
		Expect(k8s.Delete(ctx, &old)).To(Succeed())
		Eventually(func(g Gomega) {
			var ps corev1.PodList
			g.Expect(k8s.List(ctx, &ps, client.InNamespace(releaseNS), client.MatchingLabels{
				"app.kubernetes.io/instance": release, "app.kubernetes.io/component": "manager"})).To(Succeed())
			ready := 0
			for _, p := range ps.Items {
				g.Expect(p.UID).NotTo(Equal(old.UID))
				for _, c := range p.Status.Conditions {
					if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
						ready++
					}
				}
			}
			g.Expect(ready).To(Equal(1))
		}, 2*time.Minute).Should(Succeed())

		got := waitFinished(ns, b.Name, 3*time.Minute)
		Expect(got.Status.Phase).To(Equal(kvv1.PhaseSucceeded), runsSummary(got))
		expectCompleteResults(got)
		By("the run's Job is the one created before the restart")
		var after batchv1.Job
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: jobName}, &after)
		if !apierrors.IsNotFound(err) {
			Expect(err).NotTo(HaveOccurred())
			Expect(after.UID).To(Equal(job.UID))
		}
		expectPrometheusMatchesStatus(got)
	})

	It("runs every seed example, scaled down by its one size field, to Succeeded with the numbers its document reports", func() {
		byName := map[string]*kvv1.KVBenchmark{}
		for _, b := range runExamples(ns) {
			byName[b.Name] = b
		}
		phases := func(name, workload string) []kvv1.PhaseSummary {
			var out []kvv1.PhaseSummary
			for _, r := range byName[name].Status.Runs {
				for _, p := range r.Results {
					if p.Workload == workload {
						out = append(out, p)
					}
				}
			}
			return out
		}
		By("seed 000: readwhilewriting reports the write rate reached at both target rates")
		for _, name := range []string{"seed-000-point", "seed-000-prefix"} {
			rww := phases(name, "readwhilewriting")
			Expect(rww).To(HaveLen(2), name)
			for _, p := range rww {
				Expect(p.WriteRate).NotTo(BeNil(), name)
				Expect(*p.WriteRate).To(BeNumerically(">", 0))
				Expect(*p.Found).To(Equal(p.Ops), "%s: readers only ask for keys that exist", name)
			}
		}
		By("seed 001: the runner's workloads and the image's db_bench side by side")
		Expect(phases("seed-001-fillseq", "readseq")).To(HaveLen(1))
		Expect(phases("seed-001-dbbench", "dbbench:fillseq")).To(HaveLen(3), "db_bench's own lines, parsed")
		Expect(phases("seed-001-dbbench", "dbbench:fillrandom")).To(HaveLen(1))
		Expect(phases("seed-001-dbbench", "dbbench:readrandom")).To(HaveLen(2))
		Expect(phases("seed-001-dbbench", "dbbench:readseq")).To(HaveLen(2))
		By("seed 002: one pulse result per thread count, with every round counted")
		for _, name := range []string{"seed-002-defaults", "seed-002-tuned"} {
			pulse := phases(name, "pulse")
			Expect(pulse).To(HaveLen(2*7), "%s: two engines x seven thread counts", name)
			for _, p := range pulse {
				Expect(p.Pulse).NotTo(BeNil())
				Expect(p.Pulse.Rounds).To(BeEquivalentTo(5))
				Expect(p.Pulse.MeanRoundSeconds).To(BeNumerically(">", 0))
			}
		}
		By("seed 003: 32 readers, and a writer at its target rate")
		Expect(phases("seed-003-readrandom", "readrandom")[0].Threads).To(BeEquivalentTo(32))
		Expect(phases("seed-003-readwhilewriting", "readwhilewriting")[0].WriteRate).NotTo(BeNil())
		By("seed 004: Pegasus read:write ratios with per-operation QPS and latency percentiles")
		for _, name := range []string{"seed-004-320b", "seed-004-1kb"} {
			for _, p := range phases(name, "ycsb-a") {
				ops := map[string]kvv1.OperationSummary{}
				for _, o := range p.Operations {
					ops[o.Name] = o
					Expect(o.LatencyMicros).NotTo(BeNil(), "%s %s", name, o.Name)
					Expect(o.LatencyMicros.P999).To(BeNumerically(">=", o.LatencyMicros.P99))
				}
				Expect(ops).NotTo(BeEmpty(), name)
			}
		}
		ratios := map[string]bool{}
		for _, p := range phases("seed-004-1kb", "ycsb-a") {
			_, reads := opByName(p, "READ")
			_, updates := opByName(p, "UPDATE")
			ratios[fmt.Sprintf("reads=%t updates=%t", reads, updates)] = true
		}
		Expect(ratios).To(HaveKey("reads=false updates=true"), "0:1 is writes only")
		Expect(ratios).To(HaveKey("reads=true updates=false"), "1:0 is reads only")
		Expect(ratios).To(HaveKey("reads=true updates=true"))

		By("kubectl kvbench reads them back from the cluster: seed tables from the runners' full results, plots, save")
		plugin := buildPlugin()
		out := run(plugin, "report", "seed-002-defaults", "-n", ns, "--table", "pulse")
		Expect(out).To(ContainSubstring("thread number"))
		// thread number, then per engine: time cost min~max, cpu %, MB read
		Expect(out).To(MatchRegexp(`(?m)^ +64 +[0-9.]+~[0-9.]+ +[0-9]+ +[0-9]+ +[0-9.]+~[0-9.]+ +[0-9]+ +[0-9]+$`),
			"min~max read seconds per round come from the runner logs' full results, not the status means")
		Expect(reportNotes(out)).To(BeEmpty())
		for _, e := range []string{"leveldb", "rocksdb"} {
			Expect(out).To(MatchRegexp(`(?m)^note: build: `+e+` \S+, assertions off, release build of Debian source package `),
				"the report says how each C++ engine was built")
		}
		out = run(plugin, "report", "seed-004-1kb", "-n", ns, "--table", "ycsb")
		Expect(out).To(ContainSubstring("R-QPS"))
		Expect(out).To(ContainSubstring("3:1"))
		dir := GinkgoT().TempDir()
		png := filepath.Join(dir, "pulse.png")
		run(plugin, "plot", "seed-002-tuned", "-n", ns, "--kind", "pulse", "-o", png)
		f, err := os.Open(png)
		Expect(err).NotTo(HaveOccurred())
		img, err := pngpkg.Decode(f)
		f.Close()
		Expect(err).NotTo(HaveOccurred())
		Expect(img.Bounds().Dx()).To(BeNumerically(">", 100))
		run(plugin, "save", "seed-001-dbbench", "-n", ns, "-d", dir)
		Expect(filepath.Join(dir, "seed-001-dbbench-rocksdb.result.json")).To(BeAnExistingFile())
		out = run(plugin, "compare", "-f", filepath.Join(dir, "seed-001-dbbench.yaml"), "seed-001-fillseq", "-n", ns)
		Expect(out).To(ContainSubstring("dbbench:fillseq vs fillseq"), "db_bench's fillseq (A: the first argument, the saved file) against the runner's")

		By("the operator archived every run's full result, so reports outlive the runner pods")
		for name := range byName {
			for _, r := range get(ns, name).Status.Runs {
				archivedResult(ns, name, r.Name)
			}
		}
		gone := client.MatchingLabels{"kvbench.io/benchmark": "seed-002-defaults"}
		Expect(k8s.DeleteAllOf(ctx, &batchv1.Job{}, client.InNamespace(ns), gone, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
		Eventually(func(g Gomega) {
			var pods corev1.PodList
			g.Expect(k8s.List(ctx, &pods, client.InNamespace(ns), gone)).To(Succeed())
			g.Expect(pods.Items).To(BeEmpty())
		}, 2*time.Minute).Should(Succeed())
		out = run(plugin, "report", "seed-002-defaults", "-n", ns, "--table", "pulse")
		Expect(out).To(MatchRegexp(`(?m)^ +64 +[0-9.]+~[0-9.]+ +[0-9]+ +[0-9]+ +[0-9.]+~[0-9.]+ +[0-9]+ +[0-9]+$`),
			"min~max per round from the archived full results, with the runner pods gone")
		Expect(reportNotes(out)).To(BeEmpty())
		AddReportEntry("kubectl kvbench report seed-004-1kb --table ycsb", run(plugin, "report", "seed-004-1kb", "-n", ns, "--table", "ycsb"))
	})

	It("records the measurement protocol (warm-up, settle, reset perPoint, cold-cache residency) in every phase", func() {
		expectMeasurementProtocol(ns)
	})

	It("repeats a sweep that writes on the database the load left: readrandom + fillrandom x3 varies like readrandom alone", func() {
		expectRepeatsMeasureTheSameDatabase(ns)
	})

	It("marks a rate-limited writer's missed target in status and in kubectl kvbench report, with its service time", func() {
		expectRateTargetInReport(ns)
	})

	It("compares with spec.baseline: Regressed=True against a faster run, False against a slower one, the change ratio in Prometheus", func() {
		baselineScenario(ns)
	})

	It("gives a verdict against a saved baseline (save, ConfigMap, spec.baseline), and none with repeat 1", func() {
		savedBaselineVerdict(ns)
	})

	It("keeps the phases that finished when the deadline stops a sweep, says DeadlineExceeded, and labels live series", func() {
		deadlineKeepsPhases(ns)
	})

	It("keeps the phases that finished before an OOM kill", func() {
		oomKeepsPhases(ns)
	})

	It("has every phase of a sweep that overflows the 4 KiB summary in Prometheus, equal to the archive", func() {
		bigSweepInPrometheus(ns)
	})

	It("has data for every query of the chart's dashboard", func() {
		dashboardHasData(ns, false)
	})

	It("records provenance (sha256 image digest, node fingerprint, seed) in status and archive; report --format tsv has a line per phase", func() {
		expectEvidence(ns)
	})

	It("runs a two-engine benchmark's engines one after another on one node by default, and at once with Parallel", func() {
		fairComparisons(ns)
	})

	It("hands a node from one exclusive run to the next within seconds, and keeps it for a comparison's second engine", func() {
		nodeHandover(ns)
	})

	It("gives the operator's service account no Leases outside its namespace and nothing it does not use (kubectl auth can-i)", func() {
		expectLeastPrivilege()
	})

	It("reports a forged archive ConfigMap instead of reading it", func() {
		expectForgedArchiveReported(ns)
	})

	It("serves the operator's metrics over HTTPS to Prometheus only with a token", func() {
		expectOperatorTargetUpOverHTTPS()
	})

	It("accepts a small valid spec of every engine on every medium", func() {
		expectEveryEngineAndMediumAccepted(ns)
	})

	It("a hostile runner image fails only its own run, with the limits it broke; the operator stays up, /metrics answers 200 and a benchmark alongside finishes", Label("hostile"), func() {
		hostileRunner()
	})

	It("runs RocksDB with an OPTIONS file from a ConfigMap, lists the typed override in status, and fails a run whose ConfigMap is missing", Label("optionsfrom"), func() {
		optionsFromConfigMap()
	})

	It("runs engines rocksdb and rocksjava on one node in turn, both in status, Prometheus and kubectl kvbench report", Label("rocksjava"), func() {
		rocksJavaBesideRocksDB(ns)
	})

	It("runs a KVBenchmarkSchedule every minute (and on kubectl kvbench trigger) and keeps the runs' history", func() {
		scheduleShort(ns)
	})

	It("reports one change point for a halved CPU limit in a schedule's template, alerts once in Prometheus, and clears it on ack", Label("schedule-long"), func() {
		scheduleChangePoint(ns)
	})

	It("helm uninstall leaves nothing behind but the CRD (resource-policy keep), which the suite deletes", func() {
		By("deleting the benchmarks while the operator runs (owner references remove their Jobs)")
		Expect(k8s.DeleteAllOf(ctx, &kvv1.KVBenchmark{}, client.InNamespace(ns))).To(Succeed())
		Eventually(func(g Gomega) {
			var jobs batchv1.JobList
			g.Expect(k8s.List(ctx, &jobs, client.InNamespace(ns))).To(Succeed())
			g.Expect(jobs.Items).To(BeEmpty())
			var l kvv1.KVBenchmarkList
			g.Expect(k8s.List(ctx, &l, client.InNamespace(ns))).To(Succeed())
			g.Expect(l.Items).To(BeEmpty())
			var archives corev1.ConfigMapList
			g.Expect(k8s.List(ctx, &archives, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/managed-by": "kvbench-operator"})).To(Succeed())
			g.Expect(archives.Items).To(BeEmpty(), "the archived results go with their benchmarks")
		}, 2*time.Minute).Should(Succeed())

		run(helm, "uninstall", release, "-n", releaseNS, "--wait", "--timeout", "2m")
		Eventually(func() string {
			out, _ := tryRun(kubectl, "get", "all,cm,secret,sa,role,rolebinding,lease,servicemonitor,podmonitor,prometheusrule",
				"-n", releaseNS, "-o", "name")
			left := []string{}
			for _, l := range strings.Fields(out) {
				if l != "configmap/kube-root-ca.crt" && l != "serviceaccount/default" {
					left = append(left, l)
				}
			}
			out, _ = tryRun(kubectl, "get", "clusterrole,clusterrolebinding,servicemonitor,podmonitor,prometheusrule", "-A",
				"-l", "app.kubernetes.io/instance="+release, "-o", "name")
			left = append(left, strings.Fields(out)...)
			out, _ = tryRun(kubectl, "get", "clusterrole,clusterrolebinding", "-o", "name")
			for _, l := range strings.Fields(out) {
				if strings.Contains(l, "kvbench-operator") || strings.Contains(l, "kvbenchmark") || strings.Contains(l, "/"+release+"-") {
					left = append(left, l)
				}
			}
			return strings.Join(left, " ")
		}, time.Minute).Should(BeEmpty())

		By("the CRDs stay after helm uninstall (helm.sh/resource-policy: keep); delete them explicitly")
		run(kubectl, "get", "crd", crdName, scheduleCRD)
		run(kubectl, "delete", "crd", crdName, scheduleCRD, "--wait=true", "--timeout=60s")
		out, _ := tryRun(kubectl, "get", "crd", "-o", "name")
		Expect(out).NotTo(ContainSubstring("kvbench.io"))
		out = run(kubectl, "get", "pods,jobs,pvc,configmaps", "-A", "-l", "app.kubernetes.io/managed-by=kvbench-operator", "-o", "name")
		Expect(strings.TrimSpace(out)).To(BeEmpty())
	})

	It("helm upgrade applies a CRD change: a release whose CRD lacks spec.runnerImage accepts it after the upgrade", func() {
		expectChartUpgradeAddsCRDField(ns)
	})

	It("installs from dist/install.yaml (make build-installer), runs a benchmark, and leaves nothing when deleted", func() {
		expectInstallerRoundTrip(ns)
	})
})

// opByName finds a mixed workload's operation with at least one op.
func opByName(p kvv1.PhaseSummary, name string) (kvv1.OperationSummary, bool) {
	for _, o := range p.Operations {
		if o.Name == name && o.Ops > 0 {
			return o, true
		}
	}
	return kvv1.OperationSummary{}, false
}

// buildPlugin builds kubectl-kvbench from this tree (the suite runs it as a user would).
func buildPlugin() string {
	GinkgoHelper()
	bin := filepath.Join(GinkgoT().TempDir(), "kubectl-kvbench")
	cmd := exec.Command("go", "build", "-o", bin, "../../cmd/kubectl-kvbench")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "go build kubectl-kvbench:\n%s", out)
	return bin
}
