package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/test/envtest"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func httpGet(url string) (int, string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// TestManager runs main's manager against a real API server: flags, leader election, probes, the
// metrics endpoint on controller-runtime's registry, and the controller creating a runner Job.
func TestManager(t *testing.T) {
	g := NewWithT(t)
	env, err := envtest.New()
	g.Expect(err).NotTo(HaveOccurred(), "envtest assets are required; this test fails rather than skips")
	cfg, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = env.Stop() }()

	metricsAddr, probeAddr := freeAddr(t), freeAddr(t)
	opts, _, err := parseFlags(flag.NewFlagSet("test", flag.ContinueOnError), []string{
		"--metrics-bind-address=" + metricsAddr, "--health-probe-bind-address=" + probeAddr,
		"--leader-election-namespace=default", "--runner-image=localhost/kvbench-runner:v9.9.9",
	})
	g.Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, opts) }()
	defer func() {
		cancel()
		g.Eventually(done, 30*time.Second).Should(Receive(BeNil()))
	}()

	scheme := runtime.NewScheme()
	g.Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	g.Expect(kvv1.AddToScheme(scheme)).To(Succeed())
	k8s, err := client.New(cfg, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(k8s.Create(ctx, w.MakeKVBenchmark("main-smoke", "default").Obj())).To(Succeed())
	t.Run("config manifests are accepted by the API server", func(t *testing.T) { checkConfigManifests(t, k8s) })

	var job batchv1.Job
	g.Eventually(func() error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: "default", Name: "main-smoke-rocksdb"}, &job)
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Expect(job.Spec.Template.Spec.Containers[0].Image).To(Equal("localhost/kvbench-runner:v9.9.9"))

	for _, path := range []string{"/healthz", "/readyz"} {
		g.Eventually(func() (int, error) {
			code, _, err := httpGet(fmt.Sprintf("http://%s%s", probeAddr, path))
			return code, err
		}, 10*time.Second, 100*time.Millisecond).Should(Equal(http.StatusOK), path)
	}
	var scraped string
	g.Eventually(func() (string, error) {
		_, body, err := httpGet("http://" + metricsAddr + "/metrics")
		scraped = body
		return body, err
	}, 10*time.Second, 100*time.Millisecond).Should(And(
		ContainSubstring(`kvbench_benchmark_phase{benchmark="main-smoke",namespace="default",phase="Pending"} 1`),
		ContainSubstring(`kvbench_run_jobs_created_total{benchmark="main-smoke",engine="rocksdb",namespace="default"} 1`),
		ContainSubstring(`controller_runtime_reconcile_total{controller="kvbenchmark"`),
		ContainSubstring(`workqueue_depth{controller="kvbenchmark"`),
	))
	// Every metric and label the chart's dashboard uses is one the operator (this process) or the
	// runner registers.
	t.Run("dashboard queries use registered series", func(t *testing.T) { checkDashboard(t, scraped) })
}

// checkConfigManifests dry-run creates every object under config/ whose kind the API server knows
// (the prometheus-operator kinds are only parsed).
func checkConfigManifests(t *testing.T, k8s client.Client) {
	g := NewWithT(t)
	ctx := context.Background()
	g.Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kvbench-system"}}))).To(Succeed())
	files, err := filepath.Glob(filepath.Join(envtest.RepoRoot(), "config", "*", "*.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	var checked int
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		raw, err := os.ReadFile(f)
		g.Expect(err).NotTo(HaveOccurred())
		for _, doc := range strings.Split(string(raw), "\n---") {
			u := &unstructured.Unstructured{}
			g.Expect(yaml.Unmarshal([]byte(doc), &u.Object)).To(Succeed(), f)
			if len(u.Object) == 0 || u.GetAPIVersion() == "monitoring.coreos.com/v1" {
				continue
			}
			if u.GetKind() == "KVBenchmark" {
				u.SetNamespace("default")
			}
			err := k8s.Create(ctx, u, client.DryRunAll)
			if u.GetKind() == "CustomResourceDefinition" || u.GetKind() == "Namespace" {
				err = client.IgnoreAlreadyExists(err)
			}
			g.Expect(err).NotTo(HaveOccurred(), "%s: %s %s", f, u.GetKind(), u.GetName())
			checked++
		}
	}
	g.Expect(checked).To(BeNumerically(">=", 12))
}

func TestParseFlagsRejectsBadValues(t *testing.T) {
	for _, args := range [][]string{
		{"--nvme-node-label=nolabel"}, {"--runner-image="}, {"--unschedulable-timeout=0s"}, {"--max-concurrent-runs=-1"},
	} {
		if _, _, err := parseFlags(flag.NewFlagSet("test", flag.ContinueOnError), args); err == nil {
			t.Errorf("parseFlags(%v) = nil error, want one", args)
		}
	}
}
