package kvbenchmark

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

// Issue 19: a pod whose ConfigMap volume is missing waits for it (ContainerCreating) instead of
// failing, so the operator fails the run itself, before its Job exists, and says what to create.
var _ = Describe("engines[].optionsFrom", func() {
	var op *operator
	AfterEach(func() {
		if op != nil {
			op.Stop()
			op = nil
		}
		deleteRunnerJobs()
	})
	withFile := func(name, ns, cm, key string) *kvv1.KVBenchmark {
		return w.MakeKVBenchmark(name, ns).Engines(kvv1.EngineSpec{Name: kvv1.EngineRocksDB,
			OptionsFrom: &kvv1.OptionsFromSource{ConfigMapKeyRef: kvv1.ConfigMapKeyRef{Name: cm, Key: key}}}).Obj()
	}

	It("fails the run early when the ConfigMap or its key is missing, and creates the Job when both exist", func() {
		ns := newNamespace()
		deleteBenchmarksAfter(ns)
		Expect(k8s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "opts", Namespace: ns},
			Data: map[string]string{"OPTIONS": "[DBOptions]\n"}})).To(Succeed())
		op = startOperator(operatorOpts{})

		noMap := withFile("no-map", ns, "absent", "OPTIONS")
		Expect(k8s.Create(ctx, noMap)).To(Succeed())
		got := eventuallyPhase(key(noMap), kvv1.PhaseFailed)
		r := got.Status.Runs[0]
		Expect(r.Reason).To(Equal(kvv1.ReasonOptionsFileMissing))
		Expect(r.Message).To(Equal(`engines[].optionsFrom: ConfigMap ` + ns + `/absent does not exist: create it with the OPTIONS file under key "OPTIONS" (kubectl create configmap absent --from-file=OPTIONS=<file>)`))

		noKey := withFile("no-key", ns, "opts", "OPTIONS-000007")
		Expect(k8s.Create(ctx, noKey)).To(Succeed())
		got = eventuallyPhase(key(noKey), kvv1.PhaseFailed)
		Expect(got.Status.Runs[0].Reason).To(Equal(kvv1.ReasonOptionsFileMissing))
		Expect(got.Status.Runs[0].Message).To(Equal(`engines[].optionsFrom: ConfigMap ` + ns + `/opts has no key "OPTIONS-000007" (it has: OPTIONS)`))
		Expect(jobsIn(ns)).To(BeEmpty())

		ok := withFile("ok", ns, "opts", "OPTIONS")
		Expect(k8s.Create(ctx, ok)).To(Succeed())
		Eventually(func() int { return len(jobsIn(ns)) }, timeout, interval).Should(Equal(1))
		job := jobsIn(ns)[0]
		var vol *corev1.Volume
		for i, v := range job.Spec.Template.Spec.Volumes {
			if v.ConfigMap != nil {
				vol = &job.Spec.Template.Spec.Volumes[i]
			}
		}
		Expect(vol).NotTo(BeNil())
		Expect(vol.ConfigMap.Name).To(Equal("opts"))
	})
})
