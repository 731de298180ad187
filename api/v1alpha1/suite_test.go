package v1alpha1_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kvbench/kvbench-operator/test/envtest"
)

// The CRD's validation (OpenAPI + CEL) runs only in a real API server, so these tests use one.
var (
	testEnv *ctrlenvtest.Environment
	k8s     client.Client
)

func TestAPI(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "KVBenchmark API validation (envtest)")
}

var _ = BeforeSuite(func() {
	s, err := envtest.Start()
	Expect(err).NotTo(HaveOccurred(), "envtest assets are required; this suite fails rather than skips")
	testEnv, k8s = s.Env, s.Client
})

var _ = AfterSuite(func() {
	if testEnv != nil {
		Expect(testEnv.Stop()).To(Succeed())
	}
})
