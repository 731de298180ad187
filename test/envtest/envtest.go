// Package envtest starts a real kube-apiserver and etcd for integration tests, from the binaries
// hack/k8s-binaries.sh builds (no download).
package envtest

import (
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// K8sVersion is the version of the cached binaries; keep in sync with the Makefile's K8S_VERSION.
const K8sVersion = "v1.33.13"

// AssetsDir returns the directory with kube-apiserver and etcd: $KUBEBUILDER_ASSETS, else the
// hack/k8s-binaries.sh cache ($KVBENCH_CACHE or ~/.cache/kvbench)/k8s-<version>/bin. It returns an
// error (tests must fail, not skip) when the binaries are missing.
func AssetsDir() (string, error) {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		cache := os.Getenv("KVBENCH_CACHE")
		if cache == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("envtest assets: KUBEBUILDER_ASSETS unset and no home directory: %w", err)
			}
			cache = filepath.Join(home, ".cache", "kvbench")
		}
		dir = filepath.Join(cache, "k8s-"+K8sVersion, "bin")
	}
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return "", fmt.Errorf("envtest assets: %s not found in %s; run `make envtest-assets` (hack/k8s-binaries.sh) or set KUBEBUILDER_ASSETS", b, dir)
		}
	}
	return dir, nil
}

// RepoRoot is the module root, found from this file's location.
func RepoRoot() string {
	_, file, _, _ := goruntime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// New returns an envtest environment with the project's CRDs; Start it yourself.
func New() (*envtest.Environment, error) {
	dir, err := AssetsDir()
	if err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: dir,
		CRDDirectoryPaths:     []string{filepath.Join(RepoRoot(), "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	// As on OpenShift and the local e2e cluster: setting blockOwnerDeletion needs `update` on the
	// owner's finalizers subresource, which only a client without system:masters ever notices.
	env.ControlPlane.GetAPIServer().Configure().Set("enable-admission-plugins", AdmissionPlugins)
	return env, nil
}

// AdmissionPlugins are enabled on top of the API server's defaults, here and in hack/cluster-up.sh.
const AdmissionPlugins = "OwnerReferencesPermissionEnforcement"

// Started is a running environment and a client with the built-in kinds and the project's.
type Started struct {
	Env    *envtest.Environment
	Config *rest.Config
	Client client.Client
	Scheme *runtime.Scheme
}

// Start starts New's environment and makes its client; Stop the Env when done.
func Start() (*Started, error) {
	env, err := New()
	if err != nil {
		return nil, err
	}
	cfg, err := env.Start()
	if err != nil {
		// A control plane that came up before the failure (CRDs the API server refuses) is
		// stopped, not left running after the suite fails.
		_ = env.Stop()
		return nil, err
	}
	s := &Started{Env: env, Config: cfg, Scheme: runtime.NewScheme()}
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, kvv1.AddToScheme} {
		if err := add(s.Scheme); err != nil {
			_ = env.Stop()
			return nil, err
		}
	}
	if s.Client, err = client.New(cfg, client.Options{Scheme: s.Scheme}); err != nil {
		_ = env.Stop()
		return nil, err
	}
	return s, nil
}
