//go:build e2e

// Package e2e runs the operator, installed by its Helm chart, on a real cluster (hack/cluster-up.sh) with a
// real Prometheus (hack/prometheus.sh). hack/e2e.sh (make test-e2e) brings all of that up, runs this suite
// and tears the cluster down; see docs/e2e.md. Environment:
//
//	KUBECONFIG       admin kubeconfig of the cluster (required)
//	KUBECTL, HELM    binaries (default: kubectl, helm on PATH)
//	E2E_ARTIFACTS    directory for diagnostics of failed specs (default: a temp dir)
//	E2E_NODE         the node name (default: the only node)
//	NVME_LABEL       the chart's operator.nvmeNodeLabel (default NFD's storage-nonrotationaldisk=true)
package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

const (
	release   = "kvb"
	releaseNS = "kvbench-system"
	chartPath = "../../charts/kvbench-operator"
	crdName   = "kvbenchmarks.kvbench.io"
	// scheduleCRD is the KVBenchmarkSchedule CRD, installed and deleted with the other.
	scheduleCRD = "kvbenchmarkschedules.kvbench.io"
	imageTag    = "v0.1.0"
	managerSel  = "app.kubernetes.io/instance=" + release + ",app.kubernetes.io/component=manager"
)

var (
	k8s       client.Client
	kubectl   = envOr("KUBECTL", "kubectl")
	helm      = envOr("HELM", "helm")
	artifacts string
	nodeName  string
	nvmeLabel = envOr("NVME_LABEL", "feature.node.kubernetes.io/storage-nonrotationaldisk=true")
	promURL   string
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyPollingInterval(time.Second)
	RunSpecs(t, "kvbench e2e")
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// run runs a command and returns its combined output; it fails the spec when the command fails.
func run(name string, args ...string) string {
	GinkgoHelper()
	out, err := exec.Command(name, args...).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "%s %s:\n%s", name, strings.Join(args, " "), out)
	return string(out)
}

// tryRun runs a command and returns its output and error.
func tryRun(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	return string(out), err
}

var _ = BeforeSuite(func() {
	Expect(os.Getenv("KUBECONFIG")).NotTo(BeEmpty(), "KUBECONFIG must point at the e2e cluster (make test-e2e sets it)")
	artifacts = os.Getenv("E2E_ARTIFACTS")
	if artifacts == "" {
		artifacts = GinkgoT().TempDir()
	}
	Expect(os.MkdirAll(artifacts, 0o755)).To(Succeed())

	scheme := runtime.NewScheme()
	Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	Expect(kvv1.AddToScheme(scheme)).To(Succeed())
	cfg, err := config.GetConfig()
	Expect(err).NotTo(HaveOccurred())
	k8s, err = client.New(cfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())

	nodeName = os.Getenv("E2E_NODE")
	if nodeName == "" {
		var nodes corev1.NodeList
		Expect(k8s.List(context.Background(), &nodes)).To(Succeed())
		Expect(nodes.Items).To(HaveLen(1), "the suite expects the single-node cluster of hack/cluster-up.sh")
		nodeName = nodes.Items[0].Name
	}

	var svc corev1.Service
	Expect(k8s.Get(context.Background(), client.ObjectKey{Namespace: "monitoring", Name: "prometheus"}, &svc)).
		To(Succeed(), "Prometheus is not installed (hack/prometheus.sh install)")
	promURL = fmt.Sprintf("http://%s:9090", svc.Spec.ClusterIP)

	By("installing the chart; the CRD is applied first, as for an upgrade (Helm installs crds/ only when missing)")
	run(kubectl, "apply", "--server-side", "--force-conflicts", "-f", chartPath+"/crds")
	run(helm, "upgrade", "--install", release, chartPath, "-n", releaseNS, "--create-namespace",
		"--set", "image.tag="+imageTag, "--set", "runner.image=localhost/kvbench-runner:"+imageTag,
		"--set", "operator.nvmeNodeLabel="+nvmeLabel, "--wait", "--timeout", "3m")
	Eventually(func() error {
		_, err := tryRun(kubectl, "get", "crd", crdName)
		return err
	}, 30*time.Second).Should(Succeed())
})

// Diagnostics of a failed spec, collected before the next spec changes the cluster.
var _ = JustAfterEach(func() {
	if !CurrentSpecReport().Failed() {
		return
	}
	dir := filepath.Join(artifacts, regexp.MustCompile(`[^A-Za-z0-9_.-]+`).ReplaceAllString(CurrentSpecReport().FullText(), "_"))
	_ = os.MkdirAll(dir, 0o755)
	dump := func(file string, args ...string) {
		out, _ := tryRun(kubectl, args...)
		_ = os.WriteFile(filepath.Join(dir, file), []byte(out), 0o644)
	}
	dump("kvbenchmarks.yaml", "get", "kvbenchmarks", "-A", "-o", "yaml")
	dump("kvb-wide.txt", "get", "kvbenchmarks", "-A", "-o", "wide")
	dump("jobs-pods.txt", "get", "jobs,pods,pvc", "-A", "-o", "wide")
	dump("pv.txt", "get", "pv", "-o", "wide")
	dump("events.txt", "get", "events", "-A", "--sort-by=.lastTimestamp")
	dump("describe-pods.txt", "describe", "pods", "-A")
	dump("describe-node.txt", "describe", "node", nodeName)
	dump("operator.log", "logs", "-n", releaseNS, "-l", managerSel, "--tail=-1", "--prefix")
	dump("operator-previous.log", "logs", "-n", releaseNS, "-l", managerSel, "--tail=-1", "--prefix", "--previous")
	if out, err := tryRun("curl", "-fsS", "--max-time", "10", promURL+"/api/v1/targets?state=active"); err == nil {
		_ = os.WriteFile(filepath.Join(dir, "prometheus-targets.json"), []byte(out), 0o644)
	}
	GinkgoWriter.Printf("diagnostics in %s\n", dir)
})
