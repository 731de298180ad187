//go:build e2e

// Package e2e runs the operator, installed from a registry as a user would (images by digest, the chart as an
// OCI artifact: helm push, helm install oci://), on a real cluster with a real Prometheus. hack/e2e.sh (make
// test-e2e) brings up the local cluster (hack/cluster-up.sh, with its registry) and Prometheus, pushes the images
// and runs this suite in exactly the mode it would run against any other cluster; see docs/e2e.md.
// Flags (go test … -args -e2e.registry=…), each defaulting to the environment variable named:
//
//	KUBECONFIG             admin kubeconfig of the cluster (required)
//	-e2e.registry          E2E_REGISTRY: host[:port] the suite pushes its charts to (default: the images' registry)
//	-e2e.plain-http        E2E_PLAIN_HTTP=1: that registry speaks plain HTTP (the local cluster's does)
//	-e2e.operator-image    E2E_OPERATOR_IMAGE: REGISTRY/kvbench-operator@sha256:… (default: OPERATOR_IMAGE in
//	-e2e.runner-image      E2E_RUNNER_IMAGE:   REGISTRY/kvbench-runner@sha256:…   bin/images/pushed.env)
//	-e2e.java-runner-image E2E_JAVA_RUNNER_IMAGE: REGISTRY/kvbench-runner-java@sha256:… (default: RUNNER_JAVA_IMAGE
//	                       in bin/images/pushed.env)
//	-e2e.prometheus-url    E2E_PROMETHEUS_URL: http://… of a Prometheus that selects every ServiceMonitor and PodMonitor
//	                       (default: the Service monitoring/prometheus of hack/prometheus.sh, by its ClusterIP)
//	KUBECTL, HELM          binaries (default: kubectl, helm on PATH)
//	E2E_ARTIFACTS          directory for diagnostics of failed specs (default: a temp dir)
//	E2E_NODE               the node name (default: the only node)
//	NVME_LABEL             the chart's operator.nvmeNodeLabel (default NFD's storage-nonrotationaldisk=true)
//
// The cluster needs the local-NVMe fixture (StorageClass local-nvme, PVs, the node label: hack/local-nvme.sh).
package e2e

import (
	"context"
	"flag"
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
	release    = "kvb"
	releaseNS  = "kvbench-system"
	chartDir   = "../../charts/kvbench-operator"
	crdName    = "kvbenchmarks.kvbench.io"
	managerSel = "app.kubernetes.io/instance=" + release + ",app.kubernetes.io/component=manager"
	// scheduleCRD is the KVBenchmarkSchedule CRD, installed and deleted with the other.
	scheduleCRD = "kvbenchmarkschedules.kvbench.io"
)

var (
	k8s       client.Client
	kubectl   = envOr("KUBECTL", "kubectl")
	helm      = envOr("HELM", "helm")
	artifacts string
	nodeName  string
	nvmeLabel = envOr("NVME_LABEL", "feature.node.kubernetes.io/storage-nonrotationaldisk=true")

	registry      = flag.String("e2e.registry", os.Getenv("E2E_REGISTRY"), "registry host[:port] the suite pushes its charts to (default: the operator image's)")
	plainHTTP     = flag.Bool("e2e.plain-http", os.Getenv("E2E_PLAIN_HTTP") == "1", "the registry speaks plain HTTP")
	operatorImage = flag.String("e2e.operator-image", os.Getenv("E2E_OPERATOR_IMAGE"), "operator image by digest (default: OPERATOR_IMAGE in bin/images/pushed.env)")
	runnerImage   = flag.String("e2e.runner-image", os.Getenv("E2E_RUNNER_IMAGE"), "runner image by digest (default: RUNNER_IMAGE in bin/images/pushed.env)")
	javaImage     = flag.String("e2e.java-runner-image", os.Getenv("E2E_JAVA_RUNNER_IMAGE"), "Java runner image by digest (default: RUNNER_JAVA_IMAGE in bin/images/pushed.env)")
	promURLFlag   = flag.String("e2e.prometheus-url", os.Getenv("E2E_PROMETHEUS_URL"), "Prometheus base URL (default: the monitoring/prometheus Service)")
	promURL       string
	// chart is the pushed chart (oci://REGISTRY/charts/kvbench-operator) and its version.
	chart, chartVersion string
)

// digestRef is an image reference by digest, split into what the chart's image values take.
type digestRef struct{ repository, digest string }

var operatorRef, runnerRef, javaRef digestRef

func parseDigestRef(name, ref string) digestRef {
	GinkgoHelper()
	repo, digest, ok := strings.Cut(ref, "@")
	Expect(ok && regexp.MustCompile(`^sha256:[0-9a-f]{64}$`).MatchString(digest)).To(BeTrue(),
		"%s %q is not REPOSITORY@sha256:<digest> (make images-push REGISTRY=… writes bin/images/pushed.env)", name, ref)
	return digestRef{repo, digest}
}

// pushedEnv reads KEY=VALUE lines of bin/images/pushed.env (make images-push), if it exists.
func pushedEnv() map[string]string {
	m := map[string]string{}
	raw, err := os.ReadFile("../../bin/images/pushed.env")
	if err != nil {
		return m
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), "="); ok {
			m[k] = v
		}
	}
	return m
}

// pushChart packages a chart directory and pushes it to the registry (hack/chart-push.sh, as a release would),
// returning the oci:// reference and the version.
func pushChart(dir, version string) (string, string) {
	GinkgoHelper()
	cmd := exec.Command("../../hack/chart-push.sh")
	cmd.Env = append(os.Environ(), "REGISTRY="+*registry, "CHART_DIR="+dir, "CHART_VERSION="+version, "HELM="+helm)
	if *plainHTTP {
		cmd.Env = append(cmd.Env, "PLAIN_HTTP=1")
	}
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "chart-push.sh:\n%s", out)
	kv := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			kv[k] = v
		}
	}
	Expect(kv["CHART"]).To(HavePrefix("oci://"), "chart-push.sh:\n%s", out)
	Expect(kv["CHART_DIGEST"]).To(HavePrefix("sha256:"))
	return kv["CHART"], kv["CHART_VERSION"]
}

// helmFromRegistry runs a helm install/upgrade of the pushed chart with the images by digest.
func helmFromRegistry(verb, name, ns, ref, version string, extra ...string) string {
	GinkgoHelper()
	args := []string{verb, name, ref, "--version", version, "-n", ns, "--create-namespace",
		"--set", "image.repository=" + operatorRef.repository, "--set", "image.digest=" + operatorRef.digest,
		"--set", "runner.repository=" + runnerRef.repository, "--set", "runner.digest=" + runnerRef.digest,
		"--set", "javaRunner.repository=" + javaRef.repository, "--set", "javaRunner.digest=" + javaRef.digest,
		"--set", "operator.nvmeNodeLabel=" + nvmeLabel,
		// Runner pods live tens of seconds here: scrape them faster than the chart's 15s.
		"--set", "monitoring.podMonitor.interval=5s",
		// The cluster's Prometheus has kube-prometheus-stack's ClusterRole (get on /metrics only): the
		// chart binds its metrics reader (/metrics/results too) to Prometheus' service account, as a user would.
		"--set", "monitoring.serviceMonitor.prometheusServiceAccount.name=prometheus",
		"--set", "monitoring.serviceMonitor.prometheusServiceAccount.namespace=monitoring",
		"--wait", "--timeout", "3m"}
	if *plainHTTP {
		args = append(args, "--plain-http")
	}
	return run(helm, append(args, extra...)...)
}

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

	pushed := pushedEnv()
	if *operatorImage == "" {
		*operatorImage = pushed["OPERATOR_IMAGE"]
	}
	if *runnerImage == "" {
		*runnerImage = pushed["RUNNER_IMAGE"]
	}
	if *javaImage == "" {
		*javaImage = pushed["RUNNER_JAVA_IMAGE"]
	}
	operatorRef, runnerRef = parseDigestRef("operator image", *operatorImage), parseDigestRef("runner image", *runnerImage)
	javaRef = parseDigestRef("Java runner image", *javaImage)
	if *registry == "" {
		*registry, _, _ = strings.Cut(operatorRef.repository, "/")
	}

	promURL = *promURLFlag
	if promURL == "" {
		var svc corev1.Service
		Expect(k8s.Get(context.Background(), client.ObjectKey{Namespace: "monitoring", Name: "prometheus"}, &svc)).
			To(Succeed(), "no -e2e.prometheus-url and no Service monitoring/prometheus (hack/prometheus.sh install)")
		promURL = fmt.Sprintf("http://%s:9090", svc.Spec.ClusterIP)
	}

	By("pushing the chart to " + *registry + " and installing it from there (helm install oci://…, images by digest)")
	chart, chartVersion = pushChart(chartDir, "")
	helmFromRegistry("upgrade", release, releaseNS, chart, chartVersion, "--install")
	Eventually(func() error {
		_, err := tryRun(kubectl, "get", "crd", crdName)
		return err
	}, 30*time.Second).Should(Succeed())
	By("the operator's image was pulled from the registry by digest")
	var pods corev1.PodList
	Expect(k8s.List(context.Background(), &pods, client.InNamespace(releaseNS), client.MatchingLabels{
		"app.kubernetes.io/instance": release, "app.kubernetes.io/component": "manager"})).To(Succeed())
	Expect(pods.Items).NotTo(BeEmpty())
	for _, p := range pods.Items {
		Expect(p.Spec.Containers[0].Image).To(Equal(*operatorImage))
		for _, cs := range p.Status.ContainerStatuses {
			Expect(cs.ImageID).To(HaveSuffix(operatorRef.digest), "pod %s", p.Name)
		}
	}
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
