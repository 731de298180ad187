package v1alpha1_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/resource"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/cmd/kubectl-kvbench/scale"
	"github.com/kvbench/kvbench-operator/test/envtest"
	"github.com/kvbench/kvbench-operator/test/examples"
)

// readExamples decodes every KVBenchmark document of examples/*.yaml (strictly: a misspelt field fails).
func readExamples() map[string][]*kvv1.KVBenchmark {
	files, err := filepath.Glob(filepath.Join(envtest.RepoRoot(), "examples", "seed-*.yaml"))
	Expect(err).NotTo(HaveOccurred())
	Expect(files).To(HaveLen(5), "one example per seed document")
	out := map[string][]*kvv1.KVBenchmark{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		Expect(err).NotTo(HaveOccurred())
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
		for {
			b := &kvv1.KVBenchmark{}
			if err := dec.Decode(b); errors.Is(err, io.EOF) {
				break
			} else {
				Expect(err).NotTo(HaveOccurred(), f)
			}
			Expect(b.Kind).To(Equal("KVBenchmark"), f)
			out[filepath.Base(f)] = append(out[filepath.Base(f)], b)
		}
	}
	return out
}

var _ = Describe("examples (one per seed document)", func() {
	It("are accepted by the API server at full size, at their e2e size and scaled down by their one size field", func() {
		ctx := context.Background()
		all := readExamples()
		Expect(all).To(HaveLen(len(examples.Scale)), "every example has an e2e size in test/examples.Scale")
		for file, bs := range all {
			Expect(examples.Scale).To(HaveKey(file))
			for _, b := range bs {
				b.Namespace = ns
				Expect(k8s.Create(ctx, b.DeepCopy(), client.DryRunAll)).To(Succeed(), "%s %s at full size", file, b.Name)
				targets := []scale.Target{examples.Scale[file], {Size: ptr.To(resource.MustParse("64Mi"))}, {Size: ptr.To(resource.MustParse("1Gi"))}}
				if b.Spec.Dataset.Num != nil {
					targets = append(targets, scale.Target{Num: ptr.To[int64](100_000)})
				}
				// kubectl kvbench scale --medium, onto each medium.
				for _, m := range []kvv1.StorageMedium{kvv1.MediumTmpfs, kvv1.MediumLocalNVMe, kvv1.MediumPersistentVolume} {
					targets = append(targets, scale.Target{Size: ptr.To(resource.MustParse("64Mi")), Medium: m, StorageClassName: map[bool]string{true: "standard"}[m == kvv1.MediumPersistentVolume]})
				}
				for _, t := range targets {
					small, err := scale.Benchmark(b, t)
					Expect(err).NotTo(HaveOccurred(), "%s %s", file, b.Name)
					Expect(k8s.Create(ctx, small, client.DryRunAll)).To(Succeed(), "%s %s scaled to %+v", file, b.Name, t)
					Expect(kvv1.MemoryFits(&small.Spec)).To(BeTrue(), "%s %s scaled to %+v: memory below MemoryNeed", file, b.Name, t)
				}
			}
		}
	})
})
