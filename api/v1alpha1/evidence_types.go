package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Second-wave result schema ("evidence"): why a number is what it is (the engine's own counters,
// process and device usage), what exactly ran (provenance), and whether it differs from another
// (statistics over repeats, baseline comparison). Field names are lowerCamel in base units (bytes,
// seconds, ratios); the report maps them to RocksDB's benchmark.sh report.tsv columns in one place.
//
// Absent (nil) always means "this engine or this pod cannot say", never zero.

// ResultSchemaVersionV1 is the first result schema: no provenance, engine statistics or phase
// index. Readers keep accepting it, so archives of earlier runs still load.
const ResultSchemaVersionV1 = "kvbench.io/result/v1"

// KnownResultSchema reports whether this build can read a result or summary of schema v.
func KnownResultSchema(v string) bool {
	return v == ResultSchemaVersion || v == ResultSchemaVersionV1
}

// ResultPhaseLogPrefix starts the stdout line on which `kvbench-runner run` prints each finished
// phase (a PhaseResult with its Index) as JSON the moment it completes, so that a run which later
// dies (deadline, OOM kill, deleted pod) keeps every phase that finished.
const ResultPhaseLogPrefix = "kvbench-phase: "

// Environment variables the operator sets on runner containers; the runner puts them on its live
// metrics as the labels namespace, benchmark and engine, so runner series join the operator's.
const (
	EnvNamespace = "KVBENCH_NAMESPACE"
	EnvBenchmark = "KVBENCH_BENCHMARK"
	EnvRun       = "KVBENCH_RUN"
)

// Provenance is what a run needs to be rerun and to explain a difference between two runs. The
// runner fills what it can see from inside the pod; the operator adds the image digest and the
// node's labels (Kubernetes API facts a pod cannot read).
type Provenance struct {
	// RunnerVersion is the runner's module version, RunnerRevision its VCS revision (from the
	// build info; "+dirty" when built from a modified tree).
	// +optional
	RunnerVersion string `json:"runnerVersion,omitempty"`
	// +optional
	RunnerRevision string `json:"runnerRevision,omitempty"`
	// +optional
	GoVersion string `json:"goVersion,omitempty"`
	// Libraries are the engine libraries linked in, e.g. {"rocksdb": "7.8.3", "leveldb": "1.23",
	// "pebble": "v2.0.6", "grocksdb": "v1.7.15"}.
	// +optional
	Libraries map[string]string `json:"libraries,omitempty"`
	// LibraryBuilds say how each C++ engine library linked in was built (the image build and
	// `make runner` record it; absent when the runner was built by a plain go build): a release
	// build or a Debian package, with assertions on or off. Debian's packages have them on.
	// +optional
	LibraryBuilds map[string]LibraryBuild `json:"libraryBuilds,omitempty"`
	// ImageDigest is the runner image the pod actually ran ("sha256:..."), from the pod's imageID.
	// +optional
	ImageDigest string `json:"imageDigest,omitempty"`
	// Seed is the resolved random seed: a default seed is written down as the number it became.
	Seed int64 `json:"seed"`
	// SpecHash is "sha256:<hex>" of the runner configuration (the benchmark spec as one run saw it).
	// +optional
	SpecHash string `json:"specHash,omitempty"`
	// OptionsFile is the engine's effective options as the engine wrote them (RocksDB's and
	// Pebble's OPTIONS-* file, LevelDB's options as set), copied before the volume goes.
	// +optional
	OptionsFile *NamedText `json:"optionsFile,omitempty"`
	// OptionsOverrides are the keys of the user's OPTIONS file (engines[].optionsFrom) that a typed
	// option or the runner replaced, in file order; empty when nothing was overridden.
	// +optional
	OptionsOverrides []OptionOverride `json:"optionsOverrides,omitempty"`
	// Node is where the run ran, as the pod saw it.
	// +optional
	Node *NodeFingerprint `json:"node,omitempty"`
}

// LibraryBuild is how an engine library was compiled (hack/engine-build.sh writes it).
type LibraryBuild struct {
	Version string `json:"version"`
	// Source is where it came from, e.g. "release build of Debian source package rocksdb 7.8.3-2 (amd64)".
	Source string `json:"source"`
	// Assertions is "on" when the library's code calls assert() (compiled without NDEBUG), else "off";
	// AssertCalls counts the archive's objects that call glibc's __assert_fail.
	Assertions string `json:"assertions"`
	// +optional
	AssertCalls int `json:"assertCalls,omitempty"`
	// +optional
	Compiler string `json:"compiler,omitempty"`
	// +optional
	Flags string `json:"flags,omitempty"`
	// Digest is "sha256:<hex>" of the static library linked in.
	// +optional
	Digest string `json:"digest,omitempty"`
}

// String is the build on one line: "7.8.3, assertions off, release build of …".
func (b LibraryBuild) String() string {
	return b.Version + ", assertions " + b.Assertions + ", " + b.Source
}

// OptionOverride is one key of the user's OPTIONS file that did not take effect as written.
type OptionOverride struct {
	// Key is the file's section and key, e.g. "CFOptions \"default\"/write_buffer_size".
	Key string `json:"key"`
	// File is the value the file gives, Effective the value the engine ran with (from the options
	// file the engine wrote), By what replaced it: "engines[].options.<field>" or "runner: <why>".
	File      string `json:"file"`
	Effective string `json:"effective"`
	By        string `json:"by"`
}

// String is the override on one line: `key: file -> effective (by)`.
func (o OptionOverride) String() string {
	return o.Key + ": " + o.File + " -> " + o.Effective + " (" + o.By + ")"
}

// NamedText is a text with the name it had (a file name, a property name).
type NamedText struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

// NodeFingerprint describes the machine and storage a run measured.
type NodeFingerprint struct {
	// NodeName (from the downward API) and the node's instance-type and zone labels (added by the operator).
	// +optional
	NodeName string `json:"nodeName,omitempty"`
	// +optional
	InstanceType string `json:"instanceType,omitempty"`
	// +optional
	Zone string `json:"zone,omitempty"`
	// +optional
	CPUModel string `json:"cpuModel,omitempty"`
	// CPUs online on the node; CPUMHz the current (or nominal) frequency of the first CPU.
	// +optional
	CPUs int32 `json:"cpus,omitempty"`
	// +optional
	CPUMHz float64 `json:"cpuMHz,omitempty"`
	// +optional
	Kernel string `json:"kernel,omitempty"`
	// MemoryBytes is the node's MemTotal.
	// +optional
	MemoryBytes int64 `json:"memoryBytes,omitempty"`
	// CgroupMemoryLimitBytes and CgroupCPULimit (cores) are the limits the runner's cgroup sees.
	// +optional
	CgroupMemoryLimitBytes *int64 `json:"cgroupMemoryLimitBytes,omitempty"`
	// +optional
	CgroupCPULimit *float64 `json:"cgroupCPULimit,omitempty"`
	// DataFilesystem and DataMountOptions describe the database directory's mount.
	// +optional
	DataFilesystem string `json:"dataFilesystem,omitempty"`
	// +optional
	DataMountOptions string `json:"dataMountOptions,omitempty"`
	// Device is the data directory's block device, when the pod can see it.
	// +optional
	Device *BlockDevice `json:"device,omitempty"`
	// DeviceUnavailable says why Device is absent (e.g. "tmpfs has no block device").
	// +optional
	DeviceUnavailable string `json:"deviceUnavailable,omitempty"`
}

// BlockDevice is a block device's identity and settings.
type BlockDevice struct {
	// Name is the kernel name, e.g. "nvme0n1" or "vda".
	Name string `json:"name"`
	// +optional
	Model string `json:"model,omitempty"`
	// +optional
	Rotational *bool `json:"rotational,omitempty"`
	// Scheduler is the active I/O scheduler, e.g. "none" or "mq-deadline".
	// +optional
	Scheduler string `json:"scheduler,omitempty"`
}

// EngineStats is what the engine itself says about a phase. Counters are deltas over the phase;
// sizes and shapes (LSM bytes, levels, pending compaction, memtable) are the state at the end of
// the phase, which is what the measurement saw. Every field is optional: nil means the engine
// cannot say (LevelDB has no stall counters, for instance), never zero.
type EngineStats struct {
	// UserBytesWritten is what the workload asked the engine to write (keys + values).
	// +optional
	UserBytesWritten *int64 `json:"userBytesWritten,omitempty"`
	// FlushBytesWritten are memtable flushes to L0.
	// +optional
	FlushBytesWritten *int64 `json:"flushBytesWritten,omitempty"`
	// +optional
	CompactionBytesRead *int64 `json:"compactionBytesRead,omitempty"`
	// +optional
	CompactionBytesWritten *int64 `json:"compactionBytesWritten,omitempty"`
	// WriteAmplification is (flush + compaction bytes written) / flush bytes written, as RocksDB's
	// Compaction Stats "W-Amp" column and benchmark.sh's w_amp compute it.
	// +optional
	WriteAmplification *float64 `json:"writeAmplification,omitempty"`
	// CompactionSeconds is wall time spent in compactions (c_wsecs), CompactionCPUSeconds their CPU (c_csecs).
	// +optional
	CompactionSeconds *float64 `json:"compactionSeconds,omitempty"`
	// +optional
	CompactionCPUSeconds *float64 `json:"compactionCPUSeconds,omitempty"`
	// +optional
	FlushCount *int64 `json:"flushCount,omitempty"`
	// +optional
	CompactionCount *int64 `json:"compactionCount,omitempty"`
	// StallSeconds and StallCount are write stalls and slowdowns over the phase.
	// +optional
	StallSeconds *float64 `json:"stallSeconds,omitempty"`
	// +optional
	StallCount *int64 `json:"stallCount,omitempty"`
	// LSMBytes is the live table bytes at the end of the phase (lsm_sz); BlobBytes blob files (blob_sz).
	// +optional
	LSMBytes *int64 `json:"lsmBytes,omitempty"`
	// +optional
	BlobBytes *int64 `json:"blobBytes,omitempty"`
	// +optional
	PendingCompactionBytes *int64 `json:"pendingCompactionBytes,omitempty"`
	// +optional
	MemtableBytes *int64 `json:"memtableBytes,omitempty"`
	// +optional
	BlockCacheHits *int64 `json:"blockCacheHits,omitempty"`
	// +optional
	BlockCacheMisses *int64 `json:"blockCacheMisses,omitempty"`
	// +optional
	BloomUseful *int64 `json:"bloomUseful,omitempty"`
	// +optional
	BloomChecked *int64 `json:"bloomChecked,omitempty"`
	// ReadAmplification is the number of sorted runs a point read may visit (Pebble's r-amp).
	// +optional
	ReadAmplification *float64 `json:"readAmplification,omitempty"`
	// Levels is the LSM's shape at the end of the phase (a bulk-loaded single sorted run shows here).
	// +optional
	Levels []LevelStats `json:"levels,omitempty"`
	// Unavailable names the fields above this engine cannot give, with why, e.g.
	// "stallSeconds: LevelDB 1.23 exposes no stall counters".
	// +optional
	Unavailable []string `json:"unavailable,omitempty"`
}

// LevelStats is one LSM level at the end of a phase.
type LevelStats struct {
	Level int32 `json:"level"`
	Files int64 `json:"files"`
	Bytes int64 `json:"bytes"`
	// CompactionBytesRead and CompactionBytesWritten into this level over the phase.
	// +optional
	CompactionBytesRead *int64 `json:"compactionBytesRead,omitempty"`
	// +optional
	CompactionBytesWritten *int64 `json:"compactionBytesWritten,omitempty"`
}

// DeviceUsage is the data volume's block device over a phase (/proc/diskstats deltas).
type DeviceUsage struct {
	Device     string `json:"device"`
	ReadBytes  int64  `json:"readBytes"`
	WriteBytes int64  `json:"writeBytes"`
	ReadIOs    int64  `json:"readIOs"`
	WriteIOs   int64  `json:"writeIOs"`
	// Utilization is the share of the phase the device was busy (0..1, from io_ticks).
	Utilization float64 `json:"utilization"`
	// AwaitSeconds is the mean time an I/O took (queue + service), as iostat's await.
	AwaitSeconds float64 `json:"awaitSeconds"`
}

// MeasurementProtocol records what was done around a measured phase, so a reviewer can tell a
// flattering number from a fair one.
type MeasurementProtocol struct {
	// WarmupOps and WarmupSeconds were run and discarded before measuring.
	// +optional
	WarmupOps int64 `json:"warmupOps,omitempty"`
	// +optional
	WarmupSeconds float64 `json:"warmupSeconds,omitempty"`
	// SettleSeconds is how long the runner waited for flushes and compactions to go idle before
	// measuring; SettleTimedOut says the wait hit its bound and measuring started anyway.
	// +optional
	SettleSeconds *float64 `json:"settleSeconds,omitempty"`
	// +optional
	SettleTimedOut bool `json:"settleTimedOut,omitempty"`
	// Reset says the database was restored from the post-load checkpoint before this phase
	// (reset: perPoint; with perIteration, on the first phase of each iteration after the first),
	// and how long that took.
	// +optional
	ResetSeconds *float64 `json:"resetSeconds,omitempty"`
	// CacheResidentFraction is the share of the database files' pages resident in the page cache
	// after cold-cache eviction (mincore), 0..1; checked only under cacheMode cold.
	// +optional
	CacheResidentFraction *float64 `json:"cacheResidentFraction,omitempty"`
	// TargetOpsPerSec is a rate-limited phase's target; TargetMissed says the reached rate fell
	// more than 5% short, so latency from the schedule includes a backlog (see ServiceLatencyMicros).
	// +optional
	TargetOpsPerSec *float64 `json:"targetOpsPerSec,omitempty"`
	// +optional
	TargetMissed bool `json:"targetMissed,omitempty"`
	// ServiceLatencyMicros is the rate-limited operations' latency from their actual start (the
	// engine's service time), next to LatencyMicros measured from the schedule.
	// +optional
	ServiceLatencyMicros *Percentiles `json:"serviceLatencyMicros,omitempty"`
}

// SampleStats summarise one metric over the repeats of one sweep point.
type SampleStats struct {
	N      int32   `json:"n"`
	Median float64 `json:"median"`
	Mean   float64 `json:"mean"`
	StdDev float64 `json:"stdDev"`
	// CoV is the coefficient of variation, stdDev / mean (0.05 = 5%).
	CoV float64 `json:"coV"`
	Min float64 `json:"min"`
	Max float64 `json:"max"`
	// CILow and CIHigh bound the median with 95% confidence (benchmath's order-statistics interval).
	CILow  float64 `json:"ciLow"`
	CIHigh float64 `json:"ciHigh"`
	// CIConfidence is the interval's actual confidence level (at least 0.95); 0 when there are
	// too few repeats for a finite 95% interval (fewer than 6), and CILow, CIHigh are then 0.
	// +optional
	CIConfidence float64 `json:"ciConfidence,omitempty"`
}

// PointStats is one sweep point (engine x workload x threads) over its repeats.
type PointStats struct {
	Workload  string      `json:"workload"`
	Threads   int32       `json:"threads"`
	OpsPerSec SampleStats `json:"opsPerSec"`
	// +optional
	P99Micros *SampleStats `json:"p99Micros,omitempty"`
	// Noisy: the CoV of ops/s exceeds the threshold (5%).
	// +optional
	Noisy bool `json:"noisy,omitempty"`
}

// BaselineRef names what a benchmark is compared with when it ends.
// +kubebuilder:validation:XValidation:rule="has(self.name) != has(self.configMap)",message="baseline: set exactly one of name (a KVBenchmark) and configMap (a saved result)"
type BaselineRef struct {
	// Name of an earlier KVBenchmark in the same namespace.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Name string `json:"name,omitempty"`
	// ConfigMap in the same namespace holding a saved benchmark (`kubectl kvbench save`) under key
	// benchmark.yaml.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ConfigMap string `json:"configMap,omitempty"`
	// Threshold is the relative change (percent) a significant difference must exceed to count as
	// a regression; default 5.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	ThresholdPercent *int32 `json:"thresholdPercent,omitempty"`
	// Alpha is the significance level: a change is significant when the Mann-Whitney U test's
	// p < alpha; default 0.05. Lower it to gate only on clearer differences (with enough repeats:
	// 5 repeats a side give at best p = 0.0079).
	// +kubebuilder:validation:ExclusiveMinimum=true
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=0.5
	// +optional
	Alpha *float64 `json:"alpha,omitempty"`
	// Metrics are what is compared and gated on, as `kubectl kvbench compare --metrics` names them;
	// default all four. A gate on a noisy machine may keep to ops/s.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=4
	// +listType=set
	// +optional
	// +kubebuilder:validation:XValidation:rule="self.all(m, m in ['ops', 'p50', 'p99', 'p999'])",messageExpression="'baseline.metrics \"' + self.filter(m, !(m in ['ops', 'p50', 'p99', 'p999']))[0] + '\" is not a metric: use ops, p50, p99 or p999'"
	Metrics []BaselineMetric `json:"metrics,omitempty"`
}

// BaselineMetric is a compared metric: ops/s or a latency percentile of the whole phase.
// +kubebuilder:validation:MaxLength=8
type BaselineMetric string

const (
	BaselineOpsPerSec BaselineMetric = "ops"
	BaselineP50       BaselineMetric = "p50"
	BaselineP99       BaselineMetric = "p99"
	BaselineP999      BaselineMetric = "p999"
)

// PointChange is one sweep point compared with the baseline.
type PointChange struct {
	Engine   EngineName `json:"engine"`
	Workload string     `json:"workload"`
	Threads  int32      `json:"threads"`
	// Metric is "opsPerSec" or a latency percentile ("p99Micros").
	Metric string  `json:"metric"`
	Old    float64 `json:"old"`
	New    float64 `json:"new"`
	// Ratio is new / old.
	Ratio float64 `json:"ratio"`
	// P is the significance test's p-value; Significant says p < alpha (spec.baseline.alpha,
	// default 0.05) with enough samples.
	// +optional
	P *float64 `json:"p,omitempty"`
	// +optional
	Significant bool `json:"significant,omitempty"`
	// Regressed: significant, beyond the threshold, in the bad direction.
	// +optional
	Regressed bool `json:"regressed,omitempty"`
}

// BaselineComparison is the verdict against spec.baseline.
type BaselineComparison struct {
	// Baseline is what was compared with ("kvbenchmark/NAME" or "configmap/NAME").
	Baseline string `json:"baseline"`
	// +optional
	ComparedAt *metav1.Time `json:"comparedAt,omitempty"`
	// Changes, one per matching point and metric (bounded; worst first).
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Changes []PointChange `json:"changes,omitempty"`
	// Error says why there is no comparison (baseline missing, not finished, different workloads).
	// +optional
	Error string `json:"error,omitempty"`
}

// ProvenanceSummary is the part of a run's provenance kept in status (the rest is in the archive).
type ProvenanceSummary struct {
	// +optional
	ImageDigest string `json:"imageDigest,omitempty"`
	// +optional
	RunnerRevision string `json:"runnerRevision,omitempty"`
	// +optional
	Seed int64 `json:"seed,omitempty"`
	// +optional
	SpecHash string `json:"specHash,omitempty"`
	// Node is a one-line fingerprint: "cpu model x N @ MHz, kernel, fs (device, rotational)".
	// +optional
	Node string `json:"node,omitempty"`
	// OptionsOverrides are the OPTIONS file's overridden keys, one line each (the first
	// MaxSummaryOverrides; a last line counts the rest, which the archive's provenance has).
	// +kubebuilder:validation:MaxItems=9
	// +optional
	OptionsOverrides []string `json:"optionsOverrides,omitempty"`
	// Builds are the linked C++ engine libraries' builds, one line each:
	// "rocksdb: 7.8.3, assertions off, release build of Debian source package rocksdb 7.8.3-2 (amd64)".
	// +kubebuilder:validation:MaxItems=4
	// +optional
	Builds []string `json:"builds,omitempty"`
}

// MaxSummaryOverrides bounds the OPTIONS file overrides kept in status.
const MaxSummaryOverrides = 8

// MaxSummaryBuilds bounds ProvenanceSummary.Builds (its MaxItems).
const MaxSummaryBuilds = 4
