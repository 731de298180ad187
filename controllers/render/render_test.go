package render

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/controllers/plan"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

func mustJob(t *testing.T, b *kvv1.KVBenchmark, opts Options) *batchv1.Job {
	t.Helper()
	runs := plan.Plan(b)
	job, err := Job(b, runs[0], opts)
	if err != nil {
		t.Fatalf("Job: %v", err)
	}
	return job
}

// TestJobTmpfs pins the whole Job of the common case.
func TestJobTmpfs(t *testing.T) {
	b := w.MakeKVBenchmark("bench", "ns").UID("uid-1").Obj()
	run := plan.Plan(b)[0]
	cfg, _ := json.Marshal(run.Config)
	labels := map[string]string{
		kvv1.LabelName: kvv1.RunnerAppName, kvv1.LabelManagedBy: kvv1.ManagerName, kvv1.LabelBenchmark: "bench",
		kvv1.LabelRun: "rocksdb", kvv1.LabelEngine: "rocksdb", kvv1.LabelMedium: "tmpfs",
	}
	podLabels := map[string]string{kvv1.LabelExclusive: "true"}
	for k, v := range labels {
		podLabels[k] = v
	}
	mem := corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}
	want := &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "bench-rocksdb", Namespace: "ns", Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "kvbench.io/v1alpha1", Kind: "KVBenchmark", Name: "bench",
				UID: "uid-1", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0), Parallelism: ptr.To[int32](1), Completions: ptr.To[int32](1),
			ActiveDeadlineSeconds: ptr.To[int64](86400),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
				Spec: corev1.PodSpec{
					RestartPolicy:                corev1.RestartPolicyNever,
					AutomountServiceAccountToken: ptr.To(false),
					EnableServiceLinks:           ptr.To(false),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532), RunAsGroup: ptr.To[int64](65532), FSGroup: ptr.To[int64](65532),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name: "runner", Image: "localhost/kvbench-runner:v0.1.0", ImagePullPolicy: corev1.PullIfNotPresent,
						Args: []string{"run", "--config-json=" + string(cfg), "--summary-file=/dev/termination-log",
							"--json=/data/result.json", "--metrics-addr=:8080"},
						Ports: []corev1.ContainerPort{{Name: "metrics", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
						// The runner's live series get namespace, benchmark and engine labels from these; NODE_NAME is for provenance.
						Env: []corev1.EnvVar{{Name: "KVBENCH_NAMESPACE", Value: "ns"}, {Name: "KVBENCH_BENCHMARK", Value: "bench"}, {Name: "KVBENCH_RUN", Value: "rocksdb"},
							{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}},
						Resources:                corev1.ResourceRequirements{Limits: mem, Requests: mem},
						VolumeMounts:             []corev1.VolumeMount{{Name: "data", MountPath: "/data"}, {Name: "tmp", MountPath: "/tmp"}},
						TerminationMessagePath:   "/dev/termination-log",
						TerminationMessagePolicy: corev1.TerminationMessageReadFile,
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true), RunAsNonRoot: ptr.To(true),
							Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
							SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
						},
					}},
					Volumes: []corev1.Volume{
						{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
							Medium: corev1.StorageMediumMemory, SizeLimit: ptr.To(resource.MustParse("624Mi"))}}},
						{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("64Mi"))}}},
					},
				},
			},
		},
	}
	got := mustJob(t, b, DefaultOptions())
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
		t.Errorf("Job mismatch (-want +got):\n%s", diff)
	}
}

func TestJobVariants(t *testing.T) {
	qty := cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })
	tol := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "bench", Effect: corev1.TaintEffectNoSchedule}
	userAff := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}}}}}
	cases := map[string]struct {
		in    *kvv1.KVBenchmark
		opts  func(*Options)
		check func(t *testing.T, j *batchv1.Job)
	}{
		"localNVMe: NVMe label merged into the node selector, ephemeral PVC of the default class": {
			in: w.MakeKVBenchmark("b", "ns").Storage(kvv1.MediumLocalNVMe, "200Gi", "").DatasetSize("100Gi").Memory("16Gi").
				EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.Placement.NodeSelector = map[string]string{"pool": "bench"} }).Obj(),
			check: func(t *testing.T, j *batchv1.Job) {
				ps := j.Spec.Template.Spec
				if diff := cmp.Diff(map[string]string{"pool": "bench", "feature.node.kubernetes.io/storage-nonrotationaldisk": "true"}, ps.NodeSelector); diff != "" {
					t.Errorf("nodeSelector (-want +got):\n%s", diff)
				}
				want := &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
					ObjectMeta: metav1.ObjectMeta{Labels: j.Labels},
					Spec: corev1.PersistentVolumeClaimSpec{
						AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, StorageClassName: ptr.To("local-nvme"),
						Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("200Gi")}},
					}}}
				if diff := cmp.Diff(want, ps.Volumes[0].Ephemeral, qty); diff != "" {
					t.Errorf("data volume (-want +got):\n%s", diff)
				}
				if ps.Volumes[0].EmptyDir != nil || ps.Volumes[0].HostPath != nil {
					t.Errorf("localNVMe must use only the ephemeral PVC: %+v", ps.Volumes[0])
				}
			},
		},
		"localNVMe with a custom label flag and an explicit class": {
			in:   w.MakeKVBenchmark("b", "ns").Storage(kvv1.MediumLocalNVMe, "10Gi", "topolvm").Obj(),
			opts: func(o *Options) { o.NVMeNodeLabel = "disk=nvme" },
			check: func(t *testing.T, j *batchv1.Job) {
				ps := j.Spec.Template.Spec
				if diff := cmp.Diff(map[string]string{"disk": "nvme"}, ps.NodeSelector); diff != "" {
					t.Errorf("nodeSelector (-want +got):\n%s", diff)
				}
				if got := *ps.Volumes[0].Ephemeral.VolumeClaimTemplate.Spec.StorageClassName; got != "topolvm" {
					t.Errorf("storage class = %q, want topolvm", got)
				}
			},
		},
		"persistentVolume: no NVMe label": {
			in: w.MakeKVBenchmark("b", "ns").Storage(kvv1.MediumPersistentVolume, "10Gi", "standard").Obj(),
			check: func(t *testing.T, j *batchv1.Job) {
				if j.Spec.Template.Spec.NodeSelector != nil {
					t.Errorf("nodeSelector = %v, want none", j.Spec.Template.Spec.NodeSelector)
				}
				if got := *j.Spec.Template.Spec.Volumes[0].Ephemeral.VolumeClaimTemplate.Spec.StorageClassName; got != "standard" {
					t.Errorf("storage class = %q", got)
				}
			},
		},
		"tmpfs with storage.size and a cache: sizeLimit is storage.size, memory limit unchanged": {
			in: w.MakeKVBenchmark("b", "ns").Storage(kvv1.MediumTmpfs, "4Gi", "").Memory("6Gi").Obj(),
			check: func(t *testing.T, j *batchv1.Job) {
				if diff := cmp.Diff(ptr.To(resource.MustParse("4Gi")), j.Spec.Template.Spec.Volumes[0].EmptyDir.SizeLimit, qty); diff != "" {
					t.Errorf("sizeLimit (-want +got):\n%s", diff)
				}
			},
		},
		"cpu limit, requests equal limits (Guaranteed)": {
			in: w.MakeKVBenchmark("b", "ns").CPU("4").Obj(),
			check: func(t *testing.T, j *batchv1.Job) {
				r := j.Spec.Template.Spec.Containers[0].Resources
				want := corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi"), corev1.ResourceCPU: resource.MustParse("4")}
				if diff := cmp.Diff(corev1.ResourceRequirements{Limits: want, Requests: want}, r, qty); diff != "" {
					t.Errorf("resources (-want +got):\n%s", diff)
				}
			},
		},
		"not exclusive: user affinity kept as is, no exclusive label": {
			in: w.MakeKVBenchmark("b", "ns").Exclusive(false).EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.Placement.Affinity = userAff }).Obj(),
			check: func(t *testing.T, j *batchv1.Job) {
				if diff := cmp.Diff(userAff, j.Spec.Template.Spec.Affinity); diff != "" {
					t.Errorf("affinity (-want +got):\n%s", diff)
				}
				if _, ok := j.Spec.Template.Labels[kvv1.LabelExclusive]; ok {
					t.Errorf("exclusive label set on a non-exclusive run")
				}
			},
		},
		"exclusive: user affinity as is (the operator, not a pod anti-affinity, keeps the node to itself); tolerations copied": {
			in: w.MakeKVBenchmark("b", "ns").EditSpec(func(s *kvv1.KVBenchmarkSpec) {
				s.Placement.Affinity = userAff
				s.Placement.Tolerations = []corev1.Toleration{tol}
			}).Obj(),
			check: func(t *testing.T, j *batchv1.Job) {
				if diff := cmp.Diff(userAff, j.Spec.Template.Spec.Affinity); diff != "" {
					t.Errorf("affinity (-want +got):\n%s", diff)
				}
				if j.Spec.Template.Labels[kvv1.LabelExclusive] != "true" {
					t.Errorf("pod labels %v", j.Spec.Template.Labels)
				}
				if diff := cmp.Diff([]corev1.Toleration{tol}, j.Spec.Template.Spec.Tolerations); diff != "" {
					t.Errorf("tolerations (-want +got):\n%s", diff)
				}
			},
		},
		"runner image override and deadline": {
			in: w.MakeKVBenchmark("b", "ns").EditSpec(func(s *kvv1.KVBenchmarkSpec) {
				s.RunnerImage = "localhost/kvbench-runner:v0.2.0"
				s.Deadline = &metav1.Duration{Duration: 90 * 60e9}
			}).Obj(),
			check: func(t *testing.T, j *batchv1.Job) {
				if got := j.Spec.Template.Spec.Containers[0].Image; got != "localhost/kvbench-runner:v0.2.0" {
					t.Errorf("image = %q", got)
				}
				if got := *j.Spec.ActiveDeadlineSeconds; got != 5400 {
					t.Errorf("activeDeadlineSeconds = %d, want 5400", got)
				}
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			opts := DefaultOptions()
			if tc.opts != nil {
				tc.opts(&opts)
			}
			tc.check(t, mustJob(t, tc.in, opts))
		})
	}
}

// The runner reads --config-json; it must decode to exactly the planned config.
func TestJobCarriesTheRunnerConfig(t *testing.T) {
	b := w.MakeKVBenchmark("b", "ns").EngineNames(kvv1.EnginePebble, kvv1.EngineLevelDB).Obj()
	for _, run := range plan.Plan(b) {
		job, err := Job(b, run, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		var got kvv1.RunnerConfig
		for _, a := range job.Spec.Template.Spec.Containers[0].Args {
			if v, ok := strings.CutPrefix(a, "--config-json="); ok {
				if err := json.Unmarshal([]byte(v), &got); err != nil {
					t.Fatal(err)
				}
			}
		}
		if diff := cmp.Diff(run.Config, got, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
			t.Errorf("%s: config (-want +got):\n%s", run.Name, diff)
		}
	}
}

// The engine chooses the image: rocksjava runs in the Java runner's image with the same arguments,
// every other engine in the Go runner's (spec.runnerImage or the operator's default).
func TestJobImageByEngine(t *testing.T) {
	opts := DefaultOptions()
	opts.RunnerImage, opts.JavaRunnerImage = "reg/kvbench-runner@sha256:aa", "reg/kvbench-runner-java@sha256:bb"
	for name, c := range map[string]struct {
		specImage string
		want      map[string]string
	}{
		"defaults": {want: map[string]string{"rocksdb": opts.RunnerImage, "pebble": opts.RunnerImage, "rocksjava": opts.JavaRunnerImage}},
		"spec.runnerImage is the Go runner's": {specImage: "reg/mine:v2",
			want: map[string]string{"rocksdb": "reg/mine:v2", "pebble": "reg/mine:v2", "rocksjava": opts.JavaRunnerImage}},
	} {
		b := w.MakeKVBenchmark("b", "ns").EngineNames(kvv1.EngineRocksDB, kvv1.EngineRocksJava, kvv1.EnginePebble).
			EditSpec(func(s *kvv1.KVBenchmarkSpec) { s.RunnerImage = c.specImage }).Obj()
		var goArgs []string
		for _, run := range plan.Plan(b) {
			job, err := Job(b, run, opts)
			if err != nil {
				t.Fatal(err)
			}
			ctr := job.Spec.Template.Spec.Containers[0]
			if ctr.Image != c.want[run.Name] {
				t.Errorf("%s: %s runs in %s, want %s", name, run.Name, ctr.Image, c.want[run.Name])
			}
			// Both images take the run subcommand's arguments; only the config differs by engine.
			var args []string
			for _, a := range ctr.Args {
				if !strings.HasPrefix(a, "--config-json=") {
					args = append(args, a)
				}
			}
			if goArgs == nil {
				goArgs = args
			} else if !slices.Equal(args, goArgs) {
				t.Errorf("%s: %s args %q, want %q", name, run.Name, args, goArgs)
			}
		}
	}
}

func TestJobRejectsABadNVMeLabelFlag(t *testing.T) {
	b := w.MakeKVBenchmark("b", "ns").Storage(kvv1.MediumLocalNVMe, "10Gi", "").Obj()
	for _, label := range []string{"", "justakey", "=x"} {
		opts := DefaultOptions()
		opts.NVMeNodeLabel = label
		if _, err := Job(b, plan.Plan(b)[0], opts); err == nil || !strings.Contains(err.Error(), "--nvme-node-label") {
			t.Errorf("label %q: err = %v, want a --nvme-node-label error", label, err)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	if err := DefaultOptions().Validate(); err != nil {
		t.Errorf("defaults invalid: %v", err)
	}
	for name, mut := range map[string]func(*Options){
		"no image":      func(o *Options) { o.RunnerImage = "" },
		"no Java image": func(o *Options) { o.JavaRunnerImage = "" },
		"label no =":    func(o *Options) { o.NVMeNodeLabel = "disk" },
		"label no key":  func(o *Options) { o.NVMeNodeLabel = "=nvme" },
		"no NVMe class": func(o *Options) { o.LocalNVMeStorageClass = "" },
		"bad secret":    func(o *Options) { o.RunnerImagePullSecrets = []string{"regcred", "Not_A_Name"} },
		"empty secret":  func(o *Options) { o.RunnerImagePullSecrets = []string{""} },
		"bad SA":        func(o *Options) { o.RunnerServiceAccount = "runner sa" },
	} {
		o := DefaultOptions()
		mut(&o)
		if err := o.Validate(); err == nil {
			t.Errorf("%s: Validate() = nil, want an error", name)
		}
	}
}

// A pinned run (Sequential's later engines, EachNode) requires its node by name in every term of
// the user's node affinity, and leaves the spec's affinity untouched.
// Pull secrets and a service account for runner pods (--runner-image-pull-secrets,
// --runner-service-account), for private registries; the token stays unmounted either way.
func TestJobRunnerPullSecretsAndServiceAccount(t *testing.T) {
	b := w.MakeKVBenchmark("b", "ns").Obj()
	for name, c := range map[string]struct {
		secrets []string
		sa      string
		want    []corev1.LocalObjectReference
	}{
		"defaults: none, the namespace's default service account": {},
		"one secret":            {secrets: []string{"regcred"}, want: []corev1.LocalObjectReference{{Name: "regcred"}}},
		"two secrets, in order": {secrets: []string{"b-cred", "a-cred"}, want: []corev1.LocalObjectReference{{Name: "b-cred"}, {Name: "a-cred"}}},
		"service account":       {sa: "kvbench-runner"},
		"both":                  {secrets: []string{"regcred"}, sa: "kvbench-runner", want: []corev1.LocalObjectReference{{Name: "regcred"}}},
	} {
		opts := DefaultOptions()
		opts.RunnerImagePullSecrets, opts.RunnerServiceAccount = c.secrets, c.sa
		if err := opts.Validate(); err != nil {
			t.Fatalf("%s: Validate: %v", name, err)
		}
		ps := mustJob(t, b, opts).Spec.Template.Spec
		if diff := cmp.Diff(c.want, ps.ImagePullSecrets); diff != "" {
			t.Errorf("%s: imagePullSecrets (-want +got):\n%s", name, diff)
		}
		if ps.ServiceAccountName != c.sa {
			t.Errorf("%s: serviceAccountName = %q, want %q", name, ps.ServiceAccountName, c.sa)
		}
		if ps.AutomountServiceAccountToken == nil || *ps.AutomountServiceAccountToken {
			t.Errorf("%s: the runner's service account token is mounted", name)
		}
	}
}

func TestJobPinnedToNode(t *testing.T) {
	pin := corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"node-a"}}
	zone := func(z string) corev1.NodeSelectorTerm {
		return corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{z}}}}
	}
	b := w.MakeKVBenchmark("b", "ns").EditSpec(func(s *kvv1.KVBenchmarkSpec) {
		s.Placement.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{zone("a"), zone("b")}}}}
	}).Obj()
	orig := b.Spec.Placement.Affinity.DeepCopy()
	run := plan.Plan(b)[0]
	run.Node = "node-a"
	j, err := Job(b, run, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	withPin := func(term corev1.NodeSelectorTerm) corev1.NodeSelectorTerm {
		term.MatchFields = []corev1.NodeSelectorRequirement{pin}
		return term
	}
	want := []corev1.NodeSelectorTerm{withPin(zone("a")), withPin(zone("b"))}
	if diff := cmp.Diff(want, j.Spec.Template.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms); diff != "" {
		t.Errorf("terms (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(orig, b.Spec.Placement.Affinity); diff != "" {
		t.Errorf("spec affinity changed:\n%s", diff)
	}
	if j.Spec.Template.Spec.NodeName != "" {
		t.Error("nodeName set: the scheduler must still place (and check) the pod")
	}
	if got := PinnedNode(&j.Spec.Template.Spec); got != "node-a" {
		t.Errorf("PinnedNode = %q", got)
	}

	if j.Annotations[kvv1.AnnotationPickedNode] != "" {
		t.Error("a planned pin is marked as the operator's pick")
	}

	// No user affinity: one term with the pin; the operator's pick is marked as such.
	b = w.MakeKVBenchmark("b", "ns").Obj()
	run.Picked = true
	j, err = Job(b, run, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	a := j.Spec.Template.Spec.Affinity
	if diff := cmp.Diff([]corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{pin}}}, a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms); diff != "" {
		t.Errorf("terms (-want +got):\n%s", diff)
	}
	if a.PodAntiAffinity != nil {
		t.Errorf("pod anti-affinity %+v: exclusivity is the operator's", a.PodAntiAffinity)
	}
	if got := j.Annotations[kvv1.AnnotationPickedNode]; got != "node-a" {
		t.Errorf("picked annotation %q", got)
	}

	// Unpinned: no affinity at all.
	run.Node, run.Picked = "", false
	j, _ = Job(b, run, DefaultOptions())
	if j.Spec.Template.Spec.Affinity != nil {
		t.Errorf("unpinned run has affinity %+v", j.Spec.Template.Spec.Affinity)
	}
	if got := PinnedNode(&j.Spec.Template.Spec); got != "" {
		t.Errorf("PinnedNode of an unpinned run = %q", got)
	}

	// Avoiding nodes (a shared run kept off exclusive ones): NotIn in every term, read back.
	b = w.MakeKVBenchmark("b", "ns").Exclusive(false).EditSpec(func(s *kvv1.KVBenchmarkSpec) {
		s.Placement.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{zone("a"), zone("b")}}}}
	}).Obj()
	run.Avoid = []string{"n1", "n2"}
	j, _ = Job(b, run, DefaultOptions())
	notIn := func(n string) corev1.NodeSelectorRequirement {
		return corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{n}}
	}
	withNotIn := func(term corev1.NodeSelectorTerm) corev1.NodeSelectorTerm {
		term.MatchFields = []corev1.NodeSelectorRequirement{notIn("n1"), notIn("n2")} // one value per field selector
		return term
	}
	if diff := cmp.Diff([]corev1.NodeSelectorTerm{withNotIn(zone("a")), withNotIn(zone("b"))}, j.Spec.Template.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms); diff != "" {
		t.Errorf("terms (-want +got):\n%s", diff)
	}
	if got := AvoidedNodes(&j.Spec.Template.Spec); !cmp.Equal(got, []string{"n1", "n2"}) {
		t.Errorf("AvoidedNodes = %v", got)
	}
	if PinnedNode(&j.Spec.Template.Spec) != "" {
		t.Error("an avoiding run reads as pinned")
	}
}
