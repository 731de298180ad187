package kvbenchmark

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

const (
	timeout  = 20 * time.Second
	interval = 100 * time.Millisecond
)

var ctx = context.Background()

func key(o client.Object) client.ObjectKey { return client.ObjectKeyFromObject(o) }

func getBench(k client.ObjectKey) *kvv1.KVBenchmark {
	var b kvv1.KVBenchmark
	Expect(k8s.Get(ctx, k, &b)).To(Succeed())
	return &b
}

func jobsIn(ns string) []batchv1.Job {
	var l batchv1.JobList
	Expect(k8s.List(ctx, &l, client.InNamespace(ns))).To(Succeed())
	return l.Items
}

// eventuallyJob waits for the Job and returns it.
func eventuallyJob(ns, name string) *batchv1.Job {
	var job batchv1.Job
	Eventually(func() error { return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &job) }, timeout, interval).Should(Succeed())
	return &job
}

// eventuallyRun waits until the run satisfies match and returns the benchmark.
func eventuallyRun(k client.ObjectKey, run string, match func(kvv1.RunStatus) bool) *kvv1.KVBenchmark {
	var out *kvv1.KVBenchmark
	Eventually(func(g Gomega) {
		b := &kvv1.KVBenchmark{}
		g.Expect(k8s.Get(ctx, k, b)).To(Succeed())
		var found bool
		for _, r := range b.Status.Runs {
			if r.Name == run {
				found = true
				g.Expect(match(r)).To(BeTrue(), "run %s: %+v", run, r)
			}
		}
		g.Expect(found).To(BeTrue(), "run %s not in status", run)
		out = b
	}, timeout, interval).Should(Succeed())
	return out
}

func eventuallyPhase(k client.ObjectKey, phase kvv1.BenchmarkPhase) *kvv1.KVBenchmark {
	var out *kvv1.KVBenchmark
	Eventually(func(g Gomega) {
		b := &kvv1.KVBenchmark{}
		g.Expect(k8s.Get(ctx, k, b)).To(Succeed())
		g.Expect(b.Status.Phase).To(Equal(phase), "status: %+v", b.Status)
		out = b
	}, timeout, interval).Should(Succeed())
	return out
}

// makePod plays the Job controller: a pod from the Job's template, bound to a node (the scheduler).
func makePod(job *batchv1.Job, node string) *corev1.Pod {
	labels := map[string]string{"batch.kubernetes.io/job-name": job.Name}
	for k, v := range job.Spec.Template.Labels {
		labels[k] = v
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: job.Name + "-x1", Namespace: job.Namespace, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID, Controller: ptr.To(true)}},
		},
		Spec: *job.Spec.Template.Spec.DeepCopy(),
	}
	pod.Spec.NodeName = node
	Expect(k8s.Create(ctx, pod)).To(Succeed())
	return pod
}

// setPodStatus plays the kubelet.
func setPodStatus(pod *corev1.Pod, status corev1.PodStatus) {
	Eventually(func() error {
		if err := k8s.Get(ctx, key(pod), pod); err != nil {
			return err
		}
		pod.Status = status
		return k8s.Status().Update(ctx, pod)
	}, timeout, interval).Should(Succeed())
}

func runningStatus(started time.Time) corev1.PodStatus {
	return corev1.PodStatus{
		Phase: corev1.PodRunning, StartTime: &metav1.Time{Time: started},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "runner", Image: "img", ImageID: "id", Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Time{Time: started}}}}},
	}
}

func terminatedStatus(phase corev1.PodPhase, started, finished time.Time, exit int32, reason, message string) corev1.PodStatus {
	return corev1.PodStatus{
		Phase: phase, StartTime: &metav1.Time{Time: started},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "runner", Image: "img", ImageID: "id",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: exit, Reason: reason, Message: message,
				StartedAt: metav1.Time{Time: started}, FinishedAt: metav1.Time{Time: finished},
			}}}},
	}
}

// setJobStatus plays the Job controller, with the condition sequence the 1.33 API server requires.
func setJobStatus(job *batchv1.Job, succeeded bool, reason, message string, started, finished time.Time) {
	Eventually(func() error {
		if err := k8s.Get(ctx, key(job), job); err != nil {
			return err
		}
		st := batchv1.JobStatus{StartTime: &metav1.Time{Time: started}}
		now := metav1.Time{Time: finished}
		if succeeded {
			st.Succeeded = 1
			st.CompletionTime = &now
			st.Conditions = []batchv1.JobCondition{
				{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: now, LastProbeTime: now},
				{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: now, LastProbeTime: now},
			}
		} else {
			st.Failed = 1
			st.Conditions = []batchv1.JobCondition{
				{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: reason, Message: message, LastTransitionTime: now, LastProbeTime: now},
				{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: reason, Message: message, LastTransitionTime: now, LastProbeTime: now},
			}
		}
		job.Status = st
		return k8s.Status().Update(ctx, job)
	}, timeout, interval).Should(Succeed())
}

func startJob(job *batchv1.Job, started time.Time) {
	Eventually(func() error {
		if err := k8s.Get(ctx, key(job), job); err != nil {
			return err
		}
		job.Status.StartTime = &metav1.Time{Time: started}
		job.Status.Active = 1
		return k8s.Status().Update(ctx, job)
	}, timeout, interval).Should(Succeed())
}

// poke makes the operator look again (after a fake clock step) by touching an annotation.
func poke(k client.ObjectKey) {
	Eventually(func() error {
		b := &kvv1.KVBenchmark{}
		if err := k8s.Get(ctx, k, b); err != nil {
			return err
		}
		if b.Annotations == nil {
			b.Annotations = map[string]string{}
		}
		b.Annotations["test/poke"] = fmt.Sprint(time.Now().UnixNano())
		return k8s.Update(ctx, b)
	}, timeout, interval).Should(Succeed())
}

func summary(engine kvv1.EngineName, errText string, phases ...kvv1.PhaseSummary) string {
	s := kvv1.Summary{SchemaVersion: kvv1.ResultSchemaVersion, Engine: engine, EngineVersion: string(engine) + " 1.0",
		Dataset: &kvv1.DatasetInfo{Num: 1000, KeySize: 16, ValueSizeAvg: 100, Bytes: 116000},
		Load:    &kvv1.PhaseSummary{Workload: "load", Threads: 1, Ops: 1000, Seconds: 1, OpsPerSec: 1000, MicrosPerOp: 1000},
		Phases:  phases, Error: errText}
	raw, err := json.Marshal(s)
	Expect(err).NotTo(HaveOccurred())
	Expect(len(raw)).To(BeNumerically("<=", kvv1.TerminationMessageLimit))
	return string(raw)
}

func phase(workload string, threads int32, ops float64, p99 float64) kvv1.PhaseSummary {
	return kvv1.PhaseSummary{Workload: workload, Threads: threads, Ops: 100000, Seconds: 100000 / ops, OpsPerSec: ops,
		MicrosPerOp: 1e6 / ops, MBPerSec: 14.4, Found: ptr.To[int64](100000),
		LatencyMicros: &kvv1.Percentiles{Mean: 5, P50: 4, P99: p99, P999: p99 * 2, Max: p99 * 10}}
}

func eventsFor(ns, name string) []corev1.Event {
	var l corev1.EventList
	Expect(k8s.List(ctx, &l, client.InNamespace(ns))).To(Succeed())
	var out []corev1.Event
	for _, e := range l.Items {
		if e.InvolvedObject.Name == name {
			out = append(out, e)
		}
	}
	return out
}

// deleteRunnerJobs removes the operator's runner Jobs after a test: envtest has no garbage
// collector, and a Job left behind would hold a concurrency slot in later tests.
func deleteRunnerJobs() {
	var jobs batchv1.JobList
	Expect(k8s.List(ctx, &jobs, client.MatchingLabels{"app.kubernetes.io/managed-by": "kvbench-operator"})).To(Succeed())
	for i := range jobs.Items {
		Expect(client.IgnoreNotFound(k8s.Delete(ctx, &jobs.Items[i]))).To(Succeed())
	}
}
