package kvbenchmark

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// finishRunSeeded is finishRun with the runner's provenance: the seed the run resolved to, as
// the runner records it when the spec leaves the seed unset.
func finishRunSeeded(ns, job string, engine kvv1.EngineName, seed int64, phases []kvv1.PhaseSummary) {
	s := kvv1.Summary{SchemaVersion: kvv1.ResultSchemaVersion, Engine: engine, EngineVersion: string(engine) + " 1.0",
		Dataset:    &kvv1.DatasetInfo{Num: 1000, KeySize: 16, ValueSizeAvg: 100, Bytes: 116000},
		Provenance: &kvv1.ProvenanceSummary{Seed: seed}, Phases: phases}
	raw, err := json.Marshal(s)
	Expect(err).NotTo(HaveOccurred())
	j := eventuallyJob(ns, job)
	startJob(j, t0)
	pod := makePod(j, "node-a")
	setPodStatus(pod, terminatedStatus(corev1.PodSucceeded, t0.Add(time.Second), t0.Add(time.Hour), 0, "Completed", string(raw)))
	setJobStatus(j, true, "", "", t0, t0.Add(time.Hour))
}

// plugin builds kubectl-kvbench from this tree and returns a kubeconfig for the test API server.
func plugin() (bin, kubeconfig string) {
	GinkgoHelper()
	dir := GinkgoT().TempDir()
	bin = filepath.Join(dir, "kubectl-kvbench")
	// With this test binary's build settings (not the release's CGO_ENABLED=0), so that the
	// packages it shares with the operator come from the build cache.
	out, err := exec.Command("go", "build", "-o", bin, "../../cmd/kubectl-kvbench").CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "go build kubectl-kvbench:\n%s", out)
	user, err := testEnv.AddUser(ctrlenvtest.User{Name: "plugin", Groups: []string{"system:masters"}}, nil)
	Expect(err).NotTo(HaveOccurred())
	data, err := user.KubeConfig()
	Expect(err).NotTo(HaveOccurred())
	kubeconfig = filepath.Join(dir, "kubeconfig")
	Expect(os.WriteFile(kubeconfig, data, 0o600)).To(Succeed())
	return bin, kubeconfig
}

// savedBaselinePath walks the saved-baseline path of docs/report.md: kubectl kvbench save pins the
// seed the runs resolved; tonight's benchmark, the spec as written, leaves it unset. That is one
// seed, not a BaselineMismatch. (A spec of "spec.baseline": the change-ratio gauge there sees every
// benchmark of the API server, so the specs that leave verdicts behind run in one order.)
func savedBaselinePath() {
	ns := newNamespace()
	ref := benchmarkSpec("nightly", ns).Obj()
	Expect(ref.Spec.Dataset.Seed).To(BeZero())
	Expect(k8s.Create(ctx, ref)).To(Succeed())
	finishRunSeeded(ns, "nightly-pebble", kvv1.EnginePebble, 301, repeats(100000, 10))
	eventuallyPhase(key(ref), kvv1.PhaseSucceeded)

	By("kubectl kvbench save nightly -d baseline/")
	bin, kubeconfig := plugin()
	dir := GinkgoT().TempDir()
	out, err := exec.Command(bin, "save", "nightly", "-d", dir, "--kubeconfig", kubeconfig, "-n", ns).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "%s", out)
	saved, err := os.ReadFile(filepath.Join(dir, "nightly.yaml"))
	Expect(err).NotTo(HaveOccurred())
	Expect(string(saved)).To(ContainSubstring("seed: 301"), "save pins the resolved seed")

	By("kubectl create configmap nightly-baseline --from-file=benchmark.yaml=baseline/nightly.yaml")
	Expect(k8s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "nightly-baseline", Namespace: ns},
		Data: map[string]string{BaselineConfigMapKey: string(saved)}})).To(Succeed())

	By("tonight's benchmark, the same spec as written, half as fast")
	cur := benchmarkSpec("nightly-2026-11-23", ns).EditSpec(func(s *kvv1.KVBenchmarkSpec) {
		s.Baseline = &kvv1.BaselineRef{ConfigMap: "nightly-baseline"}
	}).Obj()
	Expect(k8s.Create(ctx, cur)).To(Succeed())
	finishRunSeeded(ns, "nightly-2026-11-23-pebble", kvv1.EnginePebble, 301, repeats(50000, 20))
	got := eventuallyRegressed(key(cur), metav1.ConditionTrue, ReasonRegression)
	Expect(meta.FindStatusCondition(got.Status.Conditions, kvv1.ConditionRegressed).Message).
		To(HavePrefix("against configmap/nightly-baseline: regressed: pebble readrandom threads=1 "))
}
