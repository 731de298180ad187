package envtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAssetsDirFailsClearlyWhenBinariesAreMissing(t *testing.T) {
	t.Setenv("KUBEBUILDER_ASSETS", t.TempDir())
	_, err := AssetsDir()
	if err == nil || !strings.Contains(err.Error(), "make envtest-assets") {
		t.Fatalf("AssetsDir() error = %v, want one naming `make envtest-assets`", err)
	}
}

func TestAssetsDirDefaultsToTheCache(t *testing.T) {
	cache := t.TempDir()
	bin := filepath.Join(cache, "k8s-"+K8sVersion, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if err := os.WriteFile(filepath.Join(bin, b), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("KUBEBUILDER_ASSETS", "")
	t.Setenv("KVBENCH_CACHE", cache)
	got, err := AssetsDir()
	if err != nil || got != bin {
		t.Fatalf("AssetsDir() = %q, %v; want %q", got, err, bin)
	}
}
