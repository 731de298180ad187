package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Labels and annotations the operator writes and kubectl kvbench reads: defined here, where both
// (and the runner) import them.

// Labels on runner Jobs, pods and archives.
const (
	LabelName      = "app.kubernetes.io/name"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	LabelBenchmark = "kvbench.io/benchmark"
	LabelRun       = "kvbench.io/run"
	LabelEngine    = "kvbench.io/engine"
	LabelMedium    = "kvbench.io/medium"
	LabelExclusive = "kvbench.io/exclusive"
	// AnnotationPickedNode on a runner Job: the operator chose this node for the exclusive run
	// (and may choose another if the scheduler refuses it before the run started).
	AnnotationPickedNode = "kvbench.io/picked-node"
	RunnerAppName        = "kvbench-runner"
	ManagerName          = "kvbench-operator"
	// ContainerName is the runner container's name in a runner pod.
	ContainerName = "runner"
)

// Annotations on a KVBenchmarkSchedule that kubectl kvbench writes and the operator acts on.
const (
	// AnnotationTrigger on a schedule asks for a run now; any new value is one more run
	// (kubectl kvbench trigger writes the time).
	AnnotationTrigger = "kvbench.io/trigger"
	// AnnotationAck on a schedule acknowledges change points: "<run>@<token>" acknowledges those
	// at that KVBenchmark, "*@<token>" all (kubectl kvbench ack writes it).
	AnnotationAck = "kvbench.io/ack"
)

// RunLabelValue is the kvbench.io/run label of a run: its name, or its Job name when the name is
// not a valid label value (EachNode's "<engine>@<node>").
func RunLabelValue(name, jobName string) string {
	if len(validation.IsValidLabelValue(name)) == 0 {
		return name
	}
	return jobName
}

// ChildName names a schedule's run: "<schedule>-<minutes since 1970>" for a scheduled time (as a
// CronJob names its Jobs), "<schedule>-t<hash>" for a trigger and "<schedule>-c<hash>" for a
// confirmation, from the trigger's annotation value or the suspected run's name, so that a retried
// reconcile finds the run it created instead of creating another.
func ChildName(schedule string, cause RunCause, at time.Time, token string) string {
	switch cause {
	case CauseTrigger:
		return schedule + "-t" + shortHash(token)
	case CauseConfirm:
		return schedule + "-c" + shortHash(token)
	}
	return fmt.Sprintf("%s-%d", schedule, at.Unix()/60)
}

func shortHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:4])
}
