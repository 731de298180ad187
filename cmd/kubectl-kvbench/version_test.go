package main

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	ctrlenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kvbench/kvbench-operator/test/envtest"
)

func TestVersionClient(t *testing.T) {
	version, commit = "v0.3.0", "0123abc"
	defer func() { version, commit = "", "" }()
	out := mustRun(t, "version", "--client", "--kubeconfig", "/nonexistent")
	want := "kubectl-kvbench v0.3.0 (commit 0123abc, " + runtime.Version() + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")\n"
	if out != want {
		t.Errorf("version --client printed %q, want %q", out, want)
	}
}

// Without a cluster the plugin's version is still printed, the reason on stderr, exit 0.
func TestVersionWithoutCluster(t *testing.T) {
	out, errOut, code := kvbench(t, "version", "--kubeconfig", filepath.Join(t.TempDir(), "none"))
	if code != 0 || !strings.HasPrefix(out, "kubectl-kvbench dev (commit ") || !strings.Contains(errOut, "operator: kubeconfig: ") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// Against a real API server: the operator's Deployment, found in whichever namespace it is, with
// its image by digest, version label and readiness; another Deployment is not listed.
func TestVersionReadsTheOperatorDeployment(t *testing.T) {
	env, err := envtest.New()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()

	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	user, err := env.ControlPlane.AddUser(ctrlenvtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		t.Fatal(err)
	}

	// None installed yet.
	out, errOut, code := kvbench(t, "version", "--kubeconfig", kubeconfig)
	if code != 0 || strings.Count(out, "\n") != 1 || !strings.Contains(errOut, "no Deployment labelled app.kubernetes.io/name=kvbench-operator") {
		t.Fatalf("no operator: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	image := "registry.example:5000/kvbench-operator@sha256:" + strings.Repeat("ab", 32)
	for _, d := range []struct{ ns, name, app, image string }{
		{"kvbench-system", "kvb-kvbench-operator", "kvbench-operator", image},
		{"other", "web", "web", "nginx:1"},
	} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: d.ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		labels := map[string]string{"app.kubernetes.io/name": d.app}
		dep := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: d.name, Namespace: d.ns, Labels: map[string]string{"app.kubernetes.io/name": d.app, "app.kubernetes.io/version": "0.1.0"}},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](1),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: d.image}}},
				},
			},
		}
		if _, err := cs.AppsV1().Deployments(d.ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The namespace flag does not narrow the search: the operator runs in its own namespace.
	out, errOut, code = kvbench(t, "version", "--kubeconfig", kubeconfig, "-n", "other")
	want := "operator kvbench-system/kvb-kvbench-operator: image " + image + ", version 0.1.0, 0/1 ready\n"
	if code != 0 || errOut != "" || !strings.HasSuffix(out, want) || strings.Count(out, "\n") != 2 {
		t.Errorf("exit %d, stderr %q, stdout %q; want the plugin's line and %q", code, errOut, out, want)
	}
}
