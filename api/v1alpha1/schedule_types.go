package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConcurrencyPolicy says what a schedule does when a run is due while an earlier one still runs.
// +kubebuilder:validation:Enum=Forbid;Allow;Replace
type ConcurrencyPolicy string

const (
	// ForbidConcurrent skips the due run (recorded with a reason and an event): two benchmarks at
	// once measure each other.
	ForbidConcurrent ConcurrencyPolicy = "Forbid"
	// AllowConcurrent starts the due run anyway.
	AllowConcurrent ConcurrencyPolicy = "Allow"
	// ReplaceConcurrent deletes the running benchmark and starts the due one.
	ReplaceConcurrent ConcurrencyPolicy = "Replace"
)

// ConfirmPolicy says whether a suspected change point needs one more run before it is reported.
// +kubebuilder:validation:Enum=None;NextRun;Rerun
type ConfirmPolicy string

const (
	// ConfirmNone reports a change point as soon as it is found.
	ConfirmNone ConfirmPolicy = "None"
	// ConfirmNextRun reports a change point only if the next run finds it again, at the same run.
	ConfirmNextRun ConfirmPolicy = "NextRun"
	// ConfirmRerun starts that next run at once, on the node of the run that raised the suspicion.
	ConfirmRerun ConfirmPolicy = "Rerun"
)

// HistoryMetric is a number kept per series in a schedule's history.
// +kubebuilder:validation:Enum=opsPerSec;p50Micros;p99Micros;p999Micros;writeAmplification;stallPercent
type HistoryMetric string

const (
	MetricOpsPerSec          HistoryMetric = "opsPerSec"
	MetricP50Micros          HistoryMetric = "p50Micros"
	MetricP99Micros          HistoryMetric = "p99Micros"
	MetricP999Micros         HistoryMetric = "p999Micros"
	MetricWriteAmplification HistoryMetric = "writeAmplification"
	// MetricStallPercent is the share of a phase's time the engine stalled writes, in percent.
	MetricStallPercent HistoryMetric = "stallPercent"
)

// KVBenchmarkTemplate is what each scheduled run is made from.
type KVBenchmarkTemplate struct {
	// Metadata: labels and annotations given to every KVBenchmark the schedule creates.
	// +optional
	Metadata TemplateMetadata `json:"metadata,omitempty"`
	// Spec of every run. It may be changed: later runs use the new spec (each run's spec is
	// immutable), and the history records the template's generation for every run.
	Spec KVBenchmarkSpec `json:"spec"`
}

// TemplateMetadata are the labels and annotations of the runs.
type TemplateMetadata struct {
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// DetectionSpec tunes change-point detection on the history.
type DetectionSpec struct {
	// Metrics watched for change points, each with its smallest change worth reporting. Default:
	// opsPerSec (2%) and p99Micros (5%). Every metric is kept in the history whether watched or not;
	// each watched series is another chance of a false alarm, so watch what you act on.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=6
	// +optional
	Metrics []DetectionMetric `json:"metrics,omitempty"`
	// MaxP is the t-test's p-value a change point must be below (default 0.0001: with a check after
	// every run, Otava's 0.001 gave 3 false alarms per 1,000 runs; see docs/operator.md).
	// +kubebuilder:validation:Minimum=0.0000001
	// +kubebuilder:validation:Maximum=0.05
	// +optional
	MaxP *float64 `json:"maxP,omitempty"`
	// Window is how many points E-divisive looks at at once (default 50).
	// +kubebuilder:validation:Minimum=6
	// +kubebuilder:validation:Maximum=200
	// +optional
	Window *int32 `json:"window,omitempty"`
	// Confirm: NextRun (default) reports a change point only when the next run finds it again at
	// the same run (with the noise of real repeats this halves the false alarms, for one run more
	// until the alarm; see docs/operator.md); Rerun starts that run at once, on the node of the
	// suspected run; None reports a change point as soon as it is found.
	// +kubebuilder:default=NextRun
	// +optional
	Confirm ConfirmPolicy `json:"confirm,omitempty"`
}

// DetectionMetric is one watched metric.
type DetectionMetric struct {
	Name HistoryMetric `json:"name"`
	// MinChangePercent is the smallest change of the mean worth reporting, in percent of the old
	// mean; for stallPercent in percentage points. Default: opsPerSec 2, p50Micros 3, p99Micros 5,
	// p999Micros 10, writeAmplification 5, stallPercent 1.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +optional
	MinChangePercent *float64 `json:"minChangePercent,omitempty"`
}

// KVBenchmarkScheduleSpec runs a KVBenchmark on a cron schedule and keeps the history of its results.
type KVBenchmarkScheduleSpec struct {
	// Schedule in cron format: five fields separated by spaces (minute hour day-of-month month
	// day-of-week, with numbers, ranges a-b, steps */n and a-b/n, lists, month and weekday names), or
	// one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly. The API server checks
	// the fields' syntax and ranges; a range that runs backwards (5-3) is reported by the operator
	// (condition Scheduled False): comparing numbers in CEL exceeds the cost budget.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="!self.matches('(?i)^\\\\s*(CRON_)?TZ=')",message="schedule: give the time zone in timeZone, not as TZ= or CRON_TZ= in the schedule"
	// +kubebuilder:validation:XValidation:rule="self.matches('^ *@(yearly|annually|monthly|weekly|daily|midnight|hourly) *$') || self.matches('^ *(\\\\*|[0-5]?[0-9](-[0-5]?[0-9])?)(/[1-9][0-9]?)?(,(\\\\*|[0-5]?[0-9](-[0-5]?[0-9])?)(/[1-9][0-9]?)?)* +(\\\\*|([01]?[0-9]|2[0-3])(-([01]?[0-9]|2[0-3]))?)(/[1-9][0-9]?)?(,(\\\\*|([01]?[0-9]|2[0-3])(-([01]?[0-9]|2[0-3]))?)(/[1-9][0-9]?)?)* +(\\\\?|\\\\*|(0?[1-9]|[12][0-9]|3[01])(-(0?[1-9]|[12][0-9]|3[01]))?)(/[1-9][0-9]?)?(,(\\\\?|\\\\*|(0?[1-9]|[12][0-9]|3[01])(-(0?[1-9]|[12][0-9]|3[01]))?)(/[1-9][0-9]?)?)* +(\\\\*|(0?[1-9]|1[0-2]|(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))(-(0?[1-9]|1[0-2]|(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)))?)(/[1-9][0-9]?)?(,(\\\\*|(0?[1-9]|1[0-2]|(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))(-(0?[1-9]|1[0-2]|(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)))?)(/[1-9][0-9]?)?)* +(\\\\?|\\\\*|([0-6]|(?i:sun|mon|tue|wed|thu|fri|sat))(-([0-6]|(?i:sun|mon|tue|wed|thu|fri|sat)))?)(/[1-9][0-9]?)?(,(\\\\?|\\\\*|([0-6]|(?i:sun|mon|tue|wed|thu|fri|sat))(-([0-6]|(?i:sun|mon|tue|wed|thu|fri|sat)))?)(/[1-9][0-9]?)?)* *$')",message="schedule is not a cron schedule: give five fields (minute 0-59, hour 0-23, day of month 1-31, month 1-12 or jan-dec, day of week 0-6 or sun-sat; each *, n, a-b, */n, a-b/n or a comma list of them) or one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly"
	Schedule string `json:"schedule"`

	// TimeZone of the schedule, an IANA name such as Europe/Berlin (default UTC).
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$')",message="timeZone must be an IANA time zone name such as UTC or Europe/Berlin"
	// +optional
	TimeZone *string `json:"timeZone,omitempty"`

	// ConcurrencyPolicy: Forbid (default) skips a due run while an earlier one runs, and records
	// the skip with a reason and an event; Allow runs both; Replace deletes the running one.
	// +kubebuilder:default=Forbid
	// +optional
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`

	// StartingDeadlineSeconds: a run more than this late (the operator was down, the schedule was
	// suspended) is dropped and recorded as missed. Missed runs are never caught up in a burst: at
	// most the most recent due run starts. Default: no deadline.
	// +kubebuilder:validation:Minimum=0
	// +optional
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`

	// Suspend stops new runs (running ones go on). Runs due while suspended are not started later.
	// +kubebuilder:default=false
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// RunOnCreate starts a first run when the schedule is created, not only at the first cron time.
	// +kubebuilder:default=false
	// +optional
	RunOnCreate bool `json:"runOnCreate,omitempty"`

	// SuccessfulRunsHistoryLimit is how many succeeded KVBenchmarks are kept (default 3); older
	// ones are deleted once their results are in the history.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=3
	// +optional
	SuccessfulRunsHistoryLimit *int32 `json:"successfulRunsHistoryLimit,omitempty"`

	// FailedRunsHistoryLimit is how many failed KVBenchmarks are kept (default 1).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=1
	// +optional
	FailedRunsHistoryLimit *int32 `json:"failedRunsHistoryLimit,omitempty"`

	// HistoryLimit is how many runs the history keeps (default 100, at most 1000; see the
	// history's size bound in docs/operator.md).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +kubebuilder:default=100
	// +optional
	HistoryLimit *int32 `json:"historyLimit,omitempty"`

	// Detection tunes change-point detection.
	// +kubebuilder:default={}
	// +optional
	Detection DetectionSpec `json:"detection,omitempty"`

	// Template is the KVBenchmark each run creates, validated like a KVBenchmark.
	Template KVBenchmarkTemplate `json:"template"`
}

// RunCause says why a scheduled KVBenchmark was created.
type RunCause string

const (
	CauseSchedule RunCause = "Schedule"
	CauseCreate   RunCause = "RunOnCreate"
	CauseTrigger  RunCause = "Trigger"
	CauseConfirm  RunCause = "Confirm"
)

// SkippedRun is a due run that did not start.
type SkippedRun struct {
	// ScheduledTime is when the run was due.
	ScheduledTime metav1.Time `json:"scheduledTime"`
	// Reason: ConcurrentRun (Forbid and a run still going) or MissedDeadline (later than
	// startingDeadlineSeconds).
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`
}

// ScheduleHistoryStatus says where the history is and how big it is.
type ScheduleHistoryStatus struct {
	// ConfigMap holding the history (gzip-compressed JSON under history.json.gz), owned by the schedule.
	ConfigMap string `json:"configMap,omitempty"`
	// Runs and Series kept, and the compressed size in bytes. Runs is written as 0 before the
	// first run (the RUNS column is not blank); optional in the schema, so that an older
	// operator's status (without it) is still accepted.
	// +optional
	Runs   int32 `json:"runs"`
	Series int32 `json:"series,omitempty"`
	Bytes  int32 `json:"bytes,omitempty"`
	// LastRecorded is the newest run in the history, LastRecordedTime its scheduled time: runs
	// are recorded in the order they were scheduled.
	LastRecorded string `json:"lastRecorded,omitempty"`
	// +optional
	LastRecordedTime *metav1.Time `json:"lastRecordedTime,omitempty"`
	// DroppedSeries counts series left out because a run had more than the series limit.
	DroppedSeries int32 `json:"droppedSeries,omitempty"`
	// Error says why the history could not be read or written.
	Error string `json:"error,omitempty"`
}

// SegmentStats describe the runs on one side of a change point.
type SegmentStats struct {
	// N runs, from First to Last (KVBenchmark names).
	N     int32  `json:"n"`
	First string `json:"first,omitempty"`
	Last  string `json:"last,omitempty"`
	// Mean of the runs' medians, with its 95% confidence interval.
	Mean   float64 `json:"mean"`
	CILow  float64 `json:"ciLow"`
	CIHigh float64 `json:"ciHigh"`
}

// Direction of a change point.
type Direction string

const (
	Regressed Direction = "Regressed"
	Improved  Direction = "Improved"
)

// ScheduleChangePoint is a change of one series' mean, found in the history and reported once.
type ScheduleChangePoint struct {
	// Series is "<run> <workload> threads=<n> <metric>", e.g. "rocksdb readrandom threads=4 opsPerSec".
	Series   string        `json:"series"`
	Run      string        `json:"run"`
	Engine   EngineName    `json:"engine"`
	Node     string        `json:"node,omitempty"`
	Workload string        `json:"workload"`
	Threads  int32         `json:"threads"`
	Metric   HistoryMetric `json:"metric"`
	// Child is the first run (KVBenchmark) of the new level, Time its scheduled time.
	Child string      `json:"child"`
	Time  metav1.Time `json:"time"`
	// Direction: Regressed (throughput down, latency up) or Improved.
	Direction Direction    `json:"direction"`
	Before    SegmentStats `json:"before"`
	After     SegmentStats `json:"after"`
	// ChangePercent is the change of the mean in percent (-50 is half the throughput).
	ChangePercent float64 `json:"changePercent"`
	// P is the t-test's p-value between the two sides.
	P float64 `json:"p"`
	// Cause names a provenance change at this run (image digest, engine version, node, storage
	// class, or the template's generation), the likely cause; empty when none changed.
	// +optional
	Cause string `json:"cause,omitempty"`
	// Scope, for a schedule spread over nodes: whether the change is on every node's series
	// (a software change) or on some (node drift).
	// +optional
	Scope string `json:"scope,omitempty"`
	// DetectedAt is when the operator reported it.
	DetectedAt metav1.Time `json:"detectedAt"`
	// Confirmed: the confirmation run found it again.
	// +optional
	Confirmed bool `json:"confirmed,omitempty"`
	// AcknowledgedAt is when `kubectl kvbench ack` marked it expected; it then no longer sets the
	// Regressed or Improved condition nor the alert gauge.
	// +optional
	AcknowledgedAt *metav1.Time `json:"acknowledgedAt,omitempty"`
}

// SuspectChangePoint is a regression waiting for its confirmation run.
type SuspectChangePoint struct {
	Series string `json:"series"`
	// Child is the first run of the suspected new level.
	Child string `json:"child"`
	// Node the suspicious run ran on, where a Rerun confirmation runs.
	// +optional
	Node string `json:"node,omitempty"`
}

// KVBenchmarkScheduleStatus is observed state.
type KVBenchmarkScheduleStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Scheduled (the cron text and time zone parse), Regressed and Improved (an
	// unacknowledged change point in that direction, named in the message).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Active are the schedule's KVBenchmarks still running.
	// +optional
	Active []string `json:"active,omitempty"`
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`
	// +optional
	NextScheduleTime *metav1.Time `json:"nextScheduleTime,omitempty"`
	// +optional
	LastSuccessfulTime *metav1.Time `json:"lastSuccessfulTime,omitempty"`
	// LastTrigger and LastAck are the kvbench.io/trigger and kvbench.io/ack annotation values
	// already acted on.
	// +optional
	LastTrigger string `json:"lastTrigger,omitempty"`
	// +optional
	LastAck string `json:"lastAck,omitempty"`
	// SkippedRuns counts due runs that did not start; Skipped lists the latest ten.
	// +optional
	SkippedRuns int32 `json:"skippedRuns,omitempty"`
	// +optional
	Skipped []SkippedRun `json:"skipped,omitempty"`
	// History is the schedule's history of results.
	// +optional
	History ScheduleHistoryStatus `json:"history,omitempty"`
	// ChangePoints reported, oldest first (the latest 50).
	// +optional
	ChangePoints []ScheduleChangePoint `json:"changePoints,omitempty"`
	// Suspects wait for a confirmation run (detection.confirm).
	// +optional
	Suspects []SuspectChangePoint `json:"suspects,omitempty"`
}

// KVBenchmarkSchedule runs a KVBenchmark on a cron schedule, keeps a history of every run's
// results, and reports change points in it.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=kvbs,categories=kvbench
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule`
// +kubebuilder:printcolumn:name="Suspend",type=boolean,JSONPath=`.spec.suspend`
// +kubebuilder:printcolumn:name="Last",type=date,JSONPath=`.status.lastScheduleTime`
// +kubebuilder:printcolumn:name="Runs",type=integer,JSONPath=`.status.history.runs`
// +kubebuilder:printcolumn:name="Regressed",type=string,JSONPath=`.status.conditions[?(@.type=="Regressed")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Next",type=date,JSONPath=`.status.nextScheduleTime`,priority=1
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 40",message="metadata.name must be at most 40 characters (runs are named <schedule>-<suffix of up to 10 characters>, at most 50)"
type KVBenchmarkSchedule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec KVBenchmarkScheduleSpec `json:"spec"`
	// +optional
	Status KVBenchmarkScheduleStatus `json:"status,omitempty"`
}

// KVBenchmarkScheduleList is a list of KVBenchmarkSchedules.
//
// +kubebuilder:object:root=true
type KVBenchmarkScheduleList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KVBenchmarkSchedule `json:"items"`
}

func init() {
	SchemeBuilder.Register(&KVBenchmarkSchedule{}, &KVBenchmarkScheduleList{})
}
