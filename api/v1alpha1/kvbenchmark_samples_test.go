package v1alpha1_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/test/envtest"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

var _ = Describe("config/samples", func() {
	It("are all accepted by the API server", func() {
		files, err := filepath.Glob(filepath.Join(envtest.RepoRoot(), "config", "samples", "kvbench_*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(len(files)).To(BeNumerically(">=", 4))
		for _, f := range files {
			raw, err := os.ReadFile(f)
			Expect(err).NotTo(HaveOccurred())
			u := &unstructured.Unstructured{}
			Expect(yaml.Unmarshal(raw, &u.Object)).To(Succeed(), f)
			u.SetNamespace(ns)
			Expect(k8s.Create(context.Background(), u, client.DryRunAll)).To(Succeed(), f)
		}
	})
})

var _ = Describe("kubectl get kvb columns", func() {
	It("show engines, dataset, medium, phase, progress, the waiting or failure reason, the verdict and the labelled headline; ops/s and more with -o wide", func() {
		ctx := context.Background()
		b := w.MakeKVBenchmark("columns", ns).EngineNames(kvv1.EngineRocksDB, kvv1.EnginePebble).DatasetSize("100Mi").Obj()
		Expect(k8s.Create(ctx, b)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx, b))).To(Succeed()) })
		b.Status = kvv1.KVBenchmarkStatus{Phase: kvv1.PhaseRunning, Progress: "1/2", PhaseProgress: "2/4", Engines: "rocksdb,pebble", Dataset: "100Mi",
			Reason: "WaitingForRun", Verdict: "Regressed,Noisy",
			Headline: &kvv1.Headline{Engine: kvv1.EnginePebble, Workload: "readrandom", Threads: 4, OpsPerSec: 130339, P99Micros: ptr.To(12.5),
				Label: "pebble readrandom threads=4: 130339 ops/s"}}
		Expect(k8s.Status().Update(ctx, b)).To(Succeed())

		table := getTable("kvbenchmarks", "columns")
		cells := map[string]any{}
		var defaults, wide []string
		for i, c := range table.ColumnDefinitions {
			cells[c.Name] = table.Rows[0].Cells[i]
			if c.Priority == 0 {
				defaults = append(defaults, c.Name)
			} else {
				wide = append(wide, c.Name)
			}
		}
		Expect(defaults).To(Equal([]string{"Name", "Engines", "Dataset", "Medium", "Phase", "Progress", "Reason", "Verdict", "Result", "Age"}))
		Expect(wide).To(Equal([]string{"Nodes", "Ops/s", "P99(us)", "Runs", "Memory", "CPU", "Cache"}))
		Expect(cells).To(HaveKeyWithValue("Engines", "rocksdb,pebble"))
		Expect(cells).To(HaveKeyWithValue("Dataset", "100Mi"))
		Expect(cells).To(HaveKeyWithValue("Medium", "tmpfs"))
		Expect(cells).To(HaveKeyWithValue("Phase", "Running"))
		Expect(cells).To(HaveKeyWithValue("Progress", "2/4"))
		Expect(cells).To(HaveKeyWithValue("Reason", "WaitingForRun"))
		Expect(cells).To(HaveKeyWithValue("Verdict", "Regressed,Noisy"))
		Expect(cells).To(HaveKeyWithValue("Result", "pebble readrandom threads=4: 130339 ops/s"))
		Expect(cells).To(HaveKey("Age"))
		Expect(cells).To(HaveKeyWithValue("Ops/s", BeNumerically("==", 130339)))
		Expect(cells).To(HaveKeyWithValue("P99(us)", BeNumerically("==", 12.5)))
		Expect(cells).To(HaveKeyWithValue("Runs", "1/2"))
	})
})

// Issue 34: kvbs's RUNS was blank before the first run, and -o wide had no NEXT.
var _ = Describe("kubectl get kvbs columns", func() {
	It("show RUNS 0 before the first run, and NEXT with -o wide", func() {
		ctx := context.Background()
		s := sched("@hourly")
		s.Name = "before-first-run"
		Expect(k8s.Create(ctx, s)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx, s))).To(Succeed()) })
		next := metav1.Now()
		s.Status = kvv1.KVBenchmarkScheduleStatus{NextScheduleTime: &next} // what the operator writes before the first run
		Expect(k8s.Status().Update(ctx, s)).To(Succeed())

		table := getTable("kvbenchmarkschedules", "before-first-run")
		cells, wide := map[string]any{}, []string{}
		for i, c := range table.ColumnDefinitions {
			cells[c.Name] = table.Rows[0].Cells[i]
			if c.Priority > 0 {
				wide = append(wide, c.Name)
			}
		}
		Expect(cells).To(HaveKeyWithValue("Runs", BeNumerically("==", 0)))
		Expect(wide).To(Equal([]string{"Next"}))
		Expect(cells["Next"]).NotTo(BeNil())
	})
})

// getTable is what kubectl get shows of one object: the API server's Table of its printer columns.
func getTable(resource, name string) metav1.Table {
	GinkgoHelper()
	hc, err := rest.HTTPClientFor(testEnv.Config)
	Expect(err).NotTo(HaveOccurred())
	url := strings.TrimSuffix(testEnv.Config.Host, "/") + "/apis/kvbench.io/v1alpha1/namespaces/" + ns + "/" + resource + "/" + name
	req, err := http.NewRequest(http.MethodGet, url, nil)
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := hc.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	Expect(resp.StatusCode).To(Equal(http.StatusOK), url+": "+string(body))
	var table metav1.Table
	Expect(json.Unmarshal(body, &table)).To(Succeed())
	return table
}
