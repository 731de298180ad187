package main

import (
	"context"
	"crypto/tls"
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
	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
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
		"--runner-image-pull-secrets=regcred,mirror-cred", "--runner-service-account=kvbench-runner",
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
	// A Ready node: the operator places the (exclusive) run on a free one.
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "main-node"}}
	g.Expect(k8s.Create(ctx, node)).To(Succeed())
	node.Spec.Taints = nil // admission's not-ready taint, which the node lifecycle controller (absent) lifts
	g.Expect(k8s.Update(ctx, node)).To(Succeed())
	node.Status = corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Gi")},
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}
	g.Expect(k8s.Status().Update(ctx, node)).To(Succeed())
	g.Expect(k8s.Create(ctx, w.MakeKVBenchmark("main-smoke", "default").Obj())).To(Succeed())
	t.Run("config manifests are accepted by the API server", func(t *testing.T) { checkConfigManifests(t, k8s) })

	var job batchv1.Job
	g.Eventually(func() error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: "default", Name: "main-smoke-rocksdb"}, &job)
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Expect(job.Spec.Template.Spec.Containers[0].Image).To(Equal("localhost/kvbench-runner:v9.9.9"))
	g.Expect(job.Spec.Template.Spec.ImagePullSecrets).To(Equal([]corev1.LocalObjectReference{{Name: "regcred"}, {Name: "mirror-cred"}}))
	g.Expect(job.Spec.Template.Spec.ServiceAccountName).To(Equal("kvbench-runner"))

	for _, path := range []string{"/healthz", "/readyz"} {
		g.Eventually(func() (int, error) {
			code, _, err := httpGet(fmt.Sprintf("http://%s%s", probeAddr, path))
			return code, err
		}, 10*time.Second, 100*time.Millisecond).Should(Equal(http.StatusOK), path)
	}
	token := metricsToken(t, ctx, cfg, k8s, "scraper", true)
	var scraped string
	g.Eventually(func() (string, error) {
		_, body, err := httpsGet("https://"+metricsAddr+"/metrics", token)
		if err != nil {
			return "", err
		}
		// The result series are served on their own path (ResultsPath), to the same callers.
		_, results, err := httpsGet("https://"+metricsAddr+ResultsPath, token)
		scraped = body + results
		return scraped, err
	}, 10*time.Second, 100*time.Millisecond).Should(And(
		ContainSubstring(`kvbench_benchmark_phase{benchmark="main-smoke",namespace="default",phase="Pending"} 1`),
		ContainSubstring(`kvbench_run_jobs_created_total{benchmark="main-smoke",engine="rocksdb",namespace="default"} 1`),
		ContainSubstring(`controller_runtime_reconcile_total{controller="kvbenchmark"`),
		ContainSubstring(`workqueue_depth{controller="kvbenchmark"`),
		ContainSubstring(`controller_runtime_reconcile_total{controller="kvbenchmarkschedule"`),
	))
	// Every metric and label the chart's dashboard uses is one the operator (this process) or the
	// runner registers.
	t.Run("dashboard queries use registered series", func(t *testing.T) { checkDashboard(t, scraped) })
	t.Run("metrics need authentication and authorization", func(t *testing.T) { checkMetricsAuth(t, ctx, cfg, k8s, metricsAddr) })
}

// The metrics endpoints serve only authenticated callers allowed `get` on them.
func checkMetricsAuth(t *testing.T, ctx context.Context, cfg *rest.Config, k8s client.Client, metricsAddr string) {
	for _, path := range []string{"/metrics", ResultsPath} {
		t.Run(path, func(t *testing.T) { checkPathAuth(t, ctx, cfg, k8s, metricsAddr, path) })
	}
}

func checkPathAuth(t *testing.T, ctx context.Context, cfg *rest.Config, k8s client.Client, metricsAddr, path string) {
	g := NewWithT(t)
	url := "https://" + metricsAddr + path
	code, _, err := httpsGet(url, "")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(code).To(Equal(http.StatusUnauthorized), "no token")
	// controller-runtime's filter answers 500 when the TokenReview of a malformed token fails, 401 when it
	// does not authenticate; either way no metrics.
	code, body, err := httpsGet(url, "not-a-token")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(code).To(BeNumerically(">=", 400), "a token the API server does not know")
	g.Expect(body).NotTo(ContainSubstring("kvbench_"))
	code, _, err = httpsGet(url, metricsToken(t, ctx, cfg, k8s, "nosy-"+strings.Trim(strings.ReplaceAll(path, "/", "-"), "-"), false))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(code).To(Equal(http.StatusForbidden), "a service account without get on "+path)
	resp, err := http.Get("http://" + metricsAddr + path)
	g.Expect(err).NotTo(HaveOccurred())
	resp.Body.Close()
	g.Expect(resp.StatusCode).To(Equal(http.StatusBadRequest), "plain HTTP is not served")
}

// metricsToken returns a token of service account name in default, bound to the metrics-reader
// ClusterRole of config/rbac when allowed.
func metricsToken(t *testing.T, ctx context.Context, cfg *rest.Config, k8s client.Client, name string, allowed bool) string {
	g := NewWithT(t)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	g.Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, sa))).To(Succeed())
	if allowed {
		raw, err := os.ReadFile(filepath.Join(envtest.RepoRoot(), "config", "rbac", "metrics_reader_role.yaml"))
		g.Expect(err).NotTo(HaveOccurred())
		role := &rbacv1.ClusterRole{}
		g.Expect(yaml.Unmarshal(raw, role)).To(Succeed())
		g.Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, role))).To(Succeed())
		g.Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-metrics-reader"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: "default"}},
		}))).To(Succeed())
	}
	cs, err := kubernetes.NewForConfig(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	tr, err := cs.CoreV1().ServiceAccounts("default").CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	return tr.Status.Token
}

// httpsGet gets url with a bearer token, trusting the manager's self-signed certificate.
func httpsGet(url, token string) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
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
			if u.GetKind() == "KVBenchmark" || u.GetKind() == "KVBenchmarkSchedule" {
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
		{"--runner-image-pull-secrets=regcred,"}, {"--runner-image-pull-secrets=Reg_Cred"}, {"--runner-service-account=a b"},
	} {
		if _, _, err := parseFlags(flag.NewFlagSet("test", flag.ContinueOnError), args); err == nil {
			t.Errorf("parseFlags(%v) = nil error, want one", args)
		}
	}
}

// Runner logs are read over HTTP/1.1 connections of their own, not the manager's HTTP/2 one.
func TestLogsConfigIsHTTP1(t *testing.T) {
	cfg := &rest.Config{Host: "https://127.0.0.1:6443"}
	if got := logsConfig(cfg).NextProtos; len(got) != 1 || got[0] != "http/1.1" {
		t.Errorf("NextProtos %v, want [http/1.1]", got)
	}
	if cfg.NextProtos != nil {
		t.Errorf("the manager's config was changed: %v", cfg.NextProtos)
	}
}
