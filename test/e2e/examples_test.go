//go:build e2e

package e2e

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/cmd/kubectl-kvbench/scale"
	"github.com/kvbench/kvbench-operator/test/examples"
)

// exampleScale is the small size each seed example runs at in this suite (shared with the API
// tests, which check that these scaled specs are accepted).
var exampleScale = examples.Scale

// readExample decodes the KVBenchmarks of one examples/ file.
func readExample(file string) []*kvv1.KVBenchmark {
	GinkgoHelper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "examples", file))
	Expect(err).NotTo(HaveOccurred())
	var out []*kvv1.KVBenchmark
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		b := &kvv1.KVBenchmark{}
		err := dec.Decode(b)
		if errors.Is(err, io.EOF) {
			return out
		}
		Expect(err).NotTo(HaveOccurred(), file)
		out = append(out, b)
	}
}

// availableLocalNVMe counts the local-nvme fixture's PersistentVolumes that can still be bound.
func availableLocalNVMe() int {
	GinkgoHelper()
	var pvs corev1.PersistentVolumeList
	Expect(k8s.List(ctx, &pvs, client.MatchingLabels{"kvbench.io/local-nvme": "true"})).To(Succeed())
	n := 0
	for _, pv := range pvs.Items {
		if pv.Status.Phase == corev1.VolumeAvailable {
			n++
		}
	}
	return n
}

// runExamples applies every seed example, scaled down by its one size field, and expects each to succeed
// with complete results. Runs share the node (exclusive off) so the whole set takes minutes, not an hour.
func runExamples(ns string) []*kvv1.KVBenchmark {
	GinkgoHelper()
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "seed-*.yaml"))
	Expect(err).NotTo(HaveOccurred())
	Expect(files).To(HaveLen(len(exampleScale)), "every example has a size in exampleScale")
	var smalls []*kvv1.KVBenchmark
	nvmeRuns := 0
	for _, f := range files {
		target, ok := exampleScale[filepath.Base(f)]
		Expect(ok).To(BeTrue(), "no e2e size for %s", f)
		for _, b := range readExample(filepath.Base(f)) {
			small, err := scale.Benchmark(b, target)
			Expect(err).NotTo(HaveOccurred())
			small.Namespace = ns
			small.Spec.Placement.Exclusive = ptr.To(false)
			smalls = append(smalls, small)
			if small.Spec.Storage.Medium == kvv1.MediumLocalNVMe {
				nvmeRuns += len(small.Spec.Engines)
			}
		}
	}
	// All runs start at once and each localNVMe run claims its own static PV until its Job is cleaned up,
	// so too few volumes would show up only as a 15-minute wait on a Pending pod.
	Expect(availableLocalNVMe()).To(BeNumerically(">=", nvmeRuns),
		"Available local-nvme PVs for the examples' %d localNVMe runs (hack/e2e-env.sh: local-nvme.sh up N)", nvmeRuns)
	var created []*kvv1.KVBenchmark
	for _, small := range smalls {
		created = append(created, create(small))
	}
	var done []*kvv1.KVBenchmark
	for _, b := range created {
		got := waitFinished(ns, b.Name, 15*time.Minute)
		Expect(got.Status.Phase).To(Equal(kvv1.PhaseSucceeded), "%s: %s", b.Name, runsSummary(got))
		done = append(done, got)
	}
	return done
}
