// Package render turns one planned run into the batch/v1 Job that executes it. It is pure: the
// reconciler compares and creates what these functions return.
package render

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/controllers/plan"
)

// Runner pod facts render alone uses (the labels and names kubectl kvbench reads are in api).
const (
	MetricsPortName = "metrics"
	MetricsPort     = 8080
	// RunnerUID is the runner image's non-root user.
	RunnerUID = 65532
)

// Options are the operator-wide settings render needs (manager flags).
type Options struct {
	// RunnerImage is the default runner image (spec.runnerImage overrides it).
	RunnerImage string
	// JavaRunnerImage is the Java runner's image (runner/java), which runs engine rocksjava; it takes
	// the same arguments as the Go runner's run subcommand.
	JavaRunnerImage string
	// NVMeNodeLabel is "key=value" (or "key" for any value) that localNVMe runs select nodes by.
	NVMeNodeLabel string
	// LocalNVMeStorageClass is the StorageClass of localNVMe PVCs when the spec names none.
	LocalNVMeStorageClass string
	// RunnerImagePullSecrets name Secrets that runner pods pull their image with; each must exist
	// in every benchmark's namespace (a pod can only reference its own namespace's Secrets).
	RunnerImagePullSecrets []string
	// RunnerServiceAccount is the runner pods' service account ("" is the namespace's default).
	// Its token is still not mounted: the runner never calls the API server.
	RunnerServiceAccount string
}

// DefaultOptions are the manager flags' defaults.
func DefaultOptions() Options {
	return Options{
		RunnerImage:           "localhost/kvbench-runner:v0.1.0",
		JavaRunnerImage:       "localhost/kvbench-runner-java:v0.1.0",
		NVMeNodeLabel:         "feature.node.kubernetes.io/storage-nonrotationaldisk=true",
		LocalNVMeStorageClass: "local-nvme",
	}
}

// Validate checks the operator-wide settings at startup, so a bad flag fails the manager rather
// than every localNVMe run.
func (o Options) Validate() error {
	if o.RunnerImage == "" {
		return fmt.Errorf("--runner-image must not be empty")
	}
	if o.JavaRunnerImage == "" {
		return fmt.Errorf("--java-runner-image must not be empty")
	}
	if key, _, ok := strings.Cut(o.NVMeNodeLabel, "="); !ok || key == "" {
		return fmt.Errorf("--nvme-node-label %q must be key=value", o.NVMeNodeLabel)
	}
	if o.LocalNVMeStorageClass == "" {
		return fmt.Errorf("--local-nvme-storage-class must not be empty")
	}
	for _, s := range o.RunnerImagePullSecrets {
		if errs := validation.IsDNS1123Subdomain(s); len(errs) > 0 {
			return fmt.Errorf("--runner-image-pull-secrets: %q is not a Secret name: %s", s, strings.Join(errs, "; "))
		}
	}
	if sa := o.RunnerServiceAccount; sa != "" {
		if errs := validation.IsDNS1123Subdomain(sa); len(errs) > 0 {
			return fmt.Errorf("--runner-service-account: %q is not a ServiceAccount name: %s", sa, strings.Join(errs, "; "))
		}
	}
	return nil
}

func pullSecrets(names []string) []corev1.LocalObjectReference {
	var refs []corev1.LocalObjectReference
	for _, n := range names {
		refs = append(refs, corev1.LocalObjectReference{Name: n})
	}
	return refs
}

// RunLabels select one run's Job and pods.
func RunLabels(b *kvv1.KVBenchmark, run plan.Run) map[string]string {
	return map[string]string{
		kvv1.LabelName:      kvv1.RunnerAppName,
		kvv1.LabelManagedBy: kvv1.ManagerName,
		kvv1.LabelBenchmark: b.Name,
		kvv1.LabelRun:       kvv1.RunLabelValue(run.Name, run.JobName),
		kvv1.LabelEngine:    string(run.Engine.Name),
		kvv1.LabelMedium:    string(b.Spec.Storage.Medium),
	}
}

// RunnerImage is the image that runs engine: the Java runner's for rocksjava, else the Go runner's
// (spec.runnerImage, which the CRD refuses beside rocksjava, or the operator's default). This is the
// one place an engine chooses its image.
func RunnerImage(b *kvv1.KVBenchmark, engine kvv1.EngineName, opts Options) string {
	if engine == kvv1.EngineRocksJava {
		return opts.JavaRunnerImage
	}
	if b.Spec.RunnerImage != "" {
		return b.Spec.RunnerImage
	}
	return opts.RunnerImage
}

// Job returns the Job of one run. It fails only on an operator misconfiguration (a bad NVMe label).
func Job(b *kvv1.KVBenchmark, run plan.Run, opts Options) (*batchv1.Job, error) {
	cfg, err := json.Marshal(run.Config)
	if err != nil {
		return nil, fmt.Errorf("encode runner config: %w", err)
	}
	image := RunnerImage(b, run.Engine.Name, opts)
	labels := RunLabels(b, run)
	podLabels := maps.Clone(labels)
	if Exclusive(b) {
		podLabels[kvv1.LabelExclusive] = "true"
	}
	nodeSelector, err := NodeSelector(b, opts)
	if err != nil {
		return nil, err
	}

	memory := b.Spec.Resources.Memory.DeepCopy()
	res := corev1.ResourceList{corev1.ResourceMemory: memory}
	if b.Spec.Resources.CPU != nil {
		res[corev1.ResourceCPU] = b.Spec.Resources.CPU.DeepCopy()
	}

	job := &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      run.JobName,
			Namespace: b.Namespace,
			Labels:    labels,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: kvv1.GroupVersion.String(), Kind: "KVBenchmark", Name: b.Name, UID: b.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: batchv1.JobSpec{
			// A benchmark run is not retried: a retry would measure a different (warm, half-loaded) system.
			BackoffLimit: ptr.To[int32](0),
			Parallelism:  ptr.To[int32](1),
			Completions:  ptr.To[int32](1),
			// The operator deletes finished Jobs itself, after it has copied the results into status.
			TTLSecondsAfterFinished: nil,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
				Spec: corev1.PodSpec{
					RestartPolicy:                corev1.RestartPolicyNever,
					ServiceAccountName:           opts.RunnerServiceAccount,
					ImagePullSecrets:             pullSecrets(opts.RunnerImagePullSecrets),
					AutomountServiceAccountToken: ptr.To(false),
					EnableServiceLinks:           ptr.To(false),
					NodeSelector:                 nodeSelector,
					Affinity:                     avoiding(pinned(affinity(b), run.Node), run.Avoid),
					Tolerations:                  append([]corev1.Toleration(nil), b.Spec.Placement.Tolerations...),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						RunAsUser:      ptr.To[int64](RunnerUID),
						RunAsGroup:     ptr.To[int64](RunnerUID),
						FSGroup:        ptr.To[int64](RunnerUID),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:  kvv1.ContainerName,
						Image: image,
						// Referenced by digest (or a version tag): nothing to re-pull once on the node.
						ImagePullPolicy: corev1.PullIfNotPresent,
						// The image's entrypoint is kvbench-runner (the Java runner's takes the same run
						// arguments).
						Args: []string{
							"run",
							"--config-json=" + string(cfg),
							"--summary-file=/dev/termination-log",
							"--json=" + plan.DataDir + "/result.json",
							fmt.Sprintf("--metrics-addr=:%d", MetricsPort),
						},
						Ports: []corev1.ContainerPort{{Name: MetricsPortName, ContainerPort: MetricsPort, Protocol: corev1.ProtocolTCP}},
						// The runner's live series carry these as labels (namespace, benchmark, engine);
						// NODE_NAME (the downward API) is for the run's provenance: a pod cannot read its Node.
						Env: []corev1.EnvVar{
							{Name: kvv1.EnvNamespace, Value: b.Namespace},
							{Name: kvv1.EnvBenchmark, Value: b.Name},
							{Name: kvv1.EnvRun, Value: run.Name},
							{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
						},
						Resources: corev1.ResourceRequirements{
							Limits:   res,
							Requests: res.DeepCopy(),
						},
						VolumeMounts:             volumeMounts(run),
						TerminationMessagePath:   corev1.TerminationMessagePathDefault,
						TerminationMessagePolicy: corev1.TerminationMessageReadFile,
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ptr.To(false),
							ReadOnlyRootFilesystem:   ptr.To(true),
							RunAsNonRoot:             ptr.To(true),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
							SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
						},
					}},
					Volumes: volumes(b, run, opts, labels),
				},
			},
		},
	}
	if run.Picked && run.Node != "" {
		job.Annotations = map[string]string{kvv1.AnnotationPickedNode: run.Node}
	}
	if b.Spec.Deadline != nil {
		job.Spec.ActiveDeadlineSeconds = ptr.To(int64(b.Spec.Deadline.Seconds()))
	}
	return job, nil
}

// optionsVolume is the name of the volume that carries an engine's optionsFrom file.
const optionsVolume = "options"

func volumeMounts(run plan.Run) []corev1.VolumeMount {
	m := []corev1.VolumeMount{
		{Name: "data", MountPath: plan.DataDir},
		{Name: "tmp", MountPath: "/tmp"},
	}
	if run.Engine.OptionsFrom != nil {
		m = append(m, corev1.VolumeMount{Name: optionsVolume, MountPath: plan.OptionsDir, ReadOnly: true})
	}
	return m
}

func volumes(b *kvv1.KVBenchmark, run plan.Run, opts Options, labels map[string]string) []corev1.Volume {
	v := []corev1.Volume{
		dataVolume(b, run, opts, labels),
		{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("64Mi"))}}},
	}
	if from := run.Engine.OptionsFrom; from != nil {
		// Only the one key, under a fixed name; not optional: the operator checks it exists first
		// (a pod with a missing ConfigMap volume would wait for it, not fail).
		v = append(v, corev1.Volume{Name: optionsVolume, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: from.ConfigMapKeyRef.Name},
			Items:                []corev1.KeyToPath{{Key: from.ConfigMapKeyRef.Key, Path: plan.OptionsFileName}},
			DefaultMode:          ptr.To[int32](0o444),
			Optional:             ptr.To(false),
		}}})
	}
	return v
}

func dataVolume(b *kvv1.KVBenchmark, run plan.Run, opts Options, labels map[string]string) corev1.Volume {
	v := corev1.Volume{Name: "data"}
	switch b.Spec.Storage.Medium {
	case kvv1.MediumTmpfs:
		v.EmptyDir = &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: plan.TmpfsBytes(b, run.Engine)}
	default:
		class := ""
		if b.Spec.Storage.StorageClassName != nil {
			class = *b.Spec.Storage.StorageClassName
		} else if b.Spec.Storage.Medium == kvv1.MediumLocalNVMe {
			class = opts.LocalNVMeStorageClass
		}
		size := resource.Quantity{}
		if b.Spec.Storage.Size != nil {
			size = b.Spec.Storage.Size.DeepCopy()
		}
		// A generic ephemeral volume: the PVC belongs to the pod and goes with it, and it is allowed
		// under Pod Security "restricted" (unlike hostPath).
		v.Ephemeral = &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
			ObjectMeta: metav1.ObjectMeta{Labels: maps.Clone(labels)},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				StorageClassName: &class,
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
			},
		}}
	}
	return v
}

// NodeSelector is the runner pods' node selector: the spec's, plus the NVMe label for localNVMe.
func NodeSelector(b *kvv1.KVBenchmark, opts Options) (map[string]string, error) {
	sel := maps.Clone(b.Spec.Placement.NodeSelector)
	if b.Spec.Storage.Medium != kvv1.MediumLocalNVMe {
		return sel, nil
	}
	key, value, ok := strings.Cut(opts.NVMeNodeLabel, "=")
	if !ok || key == "" {
		return nil, fmt.Errorf("operator flag --nvme-node-label %q must be key=value; localNVMe runs select nodes by it", opts.NVMeNodeLabel)
	}
	if sel == nil {
		sel = map[string]string{}
	}
	sel[key] = value
	return sel, nil
}

// Exclusive: b's runners want a node to themselves (placement.exclusive, default true).
func Exclusive(b *kvv1.KVBenchmark) bool {
	return b.Spec.Placement.Exclusive == nil || *b.Spec.Placement.Exclusive
}

// affinity is the user's affinity. Exclusivity is not the scheduler's job: the operator pins an
// exclusive run to a node no other runner uses (controllers/slots), and keeps other runners off
// it. A pod anti-affinity against runner pods would match a label any pod can carry.
func affinity(b *kvv1.KVBenchmark) *corev1.Affinity {
	if b.Spec.Placement.Affinity == nil {
		return nil
	}
	return b.Spec.Placement.Affinity.DeepCopy()
}

// PinnedNode is the node a pod spec is pinned to by pinned ("" when none).
func PinnedNode(ps *corev1.PodSpec) string {
	a := ps.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range t.MatchFields {
			if f.Key == "metadata.name" && f.Operator == corev1.NodeSelectorOpIn && len(f.Values) == 1 {
				return f.Values[0]
			}
		}
	}
	return ""
}

// AvoidedNodes are the nodes a pod spec keeps away from by avoiding (nil when none).
func AvoidedNodes(ps *corev1.PodSpec) []string {
	a := ps.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return nil
	}
	var out []string
	for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range t.MatchFields {
			if f.Key == "metadata.name" && f.Operator == corev1.NodeSelectorOpNotIn {
				out = append(out, f.Values...)
			}
		}
		return out // every term has the same ones
	}
	return nil
}

// pinned adds a required node affinity on the node's name to every term of a, so the pod lands on
// node (when set) and the scheduler still checks its resources, taints and the user's terms.
// (metadata.name rather than the hostname label, which need not equal the node name.)
func pinned(a *corev1.Affinity, node string) *corev1.Affinity {
	if node == "" {
		return a
	}
	return withNameRequirement(a, corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}})
}

// avoiding keeps the pod off nodes (when any): a NotIn on the node's name per node (a field
// selector takes one value) in every term of a.
func avoiding(a *corev1.Affinity, nodes []string) *corev1.Affinity {
	for _, n := range nodes {
		a = withNameRequirement(a, corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{n}})
	}
	return a
}

// withNameRequirement ANDs req into every required node affinity term of a (a new term when none).
func withNameRequirement(a *corev1.Affinity, r corev1.NodeSelectorRequirement) *corev1.Affinity {
	if a == nil {
		a = &corev1.Affinity{}
	}
	if a.NodeAffinity == nil {
		a.NodeAffinity = &corev1.NodeAffinity{}
	}
	req := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if req == nil {
		req = &corev1.NodeSelector{}
		a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = req
	}
	if len(req.NodeSelectorTerms) == 0 {
		req.NodeSelectorTerms = []corev1.NodeSelectorTerm{{}}
	}
	// Terms are ORed, requirements within a term ANDed: the requirement goes into every term.
	for i := range req.NodeSelectorTerms {
		req.NodeSelectorTerms[i].MatchFields = append(req.NodeSelectorTerms[i].MatchFields, *r.DeepCopy())
	}
	return a
}
