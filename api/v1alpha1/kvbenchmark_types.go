package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StorageMedium is where a run's database lives.
// +kubebuilder:validation:Enum=tmpfs;localNVMe;persistentVolume
type StorageMedium string

const (
	// MediumTmpfs is an emptyDir with medium Memory; its pages are charged to the pod's memory limit.
	MediumTmpfs StorageMedium = "tmpfs"
	// MediumLocalNVMe is a generic ephemeral PVC from a local-volume StorageClass (WaitForFirstConsumer)
	// on a node that carries the operator's NVMe label.
	MediumLocalNVMe StorageMedium = "localNVMe"
	// MediumPersistentVolume is a generic ephemeral PVC from any StorageClass.
	MediumPersistentVolume StorageMedium = "persistentVolume"
)

// CleanupPolicy says what happens to a run's Job (pod and volume) after the run finished.
// +kubebuilder:validation:Enum=DeleteJobs;Keep
type CleanupPolicy string

const (
	// CleanupDeleteJobs deletes a finished run's Job, pod and volume ttlSecondsAfterFinished after it
	// finished. The KVBenchmark and the results in its status stay.
	CleanupDeleteJobs CleanupPolicy = "DeleteJobs"
	// CleanupKeep keeps Jobs until the KVBenchmark is deleted (owner references then remove them).
	CleanupKeep CleanupPolicy = "Keep"
)

// BenchmarkPhase is the lifecycle of a KVBenchmark.
// +kubebuilder:validation:Enum=Pending;Running;Succeeded;Failed
type BenchmarkPhase string

const (
	PhasePending   BenchmarkPhase = "Pending"
	PhaseRunning   BenchmarkPhase = "Running"
	PhaseSucceeded BenchmarkPhase = "Succeeded"
	PhaseFailed    BenchmarkPhase = "Failed"
)

// Condition types of a KVBenchmark.
const (
	// ConditionRunning is True while at least one run's Job exists and has not finished.
	ConditionRunning = "Running"
	// ConditionSucceeded is True when every run finished with results and no error.
	ConditionSucceeded = "Succeeded"
	// ConditionFailed is True as soon as one run failed; the benchmark ends Failed.
	ConditionFailed = "Failed"
	// ConditionRegressed is the verdict against spec.baseline once the benchmark has ended: True
	// with the worst regressed point, False when no point regressed, Unknown when there is no
	// comparison (baseline missing, not finished, different dataset or workloads).
	ConditionRegressed = "Regressed"
	// ConditionNoisy is True when a repeated point's ops/s vary more than 5% (CoV) over its repeats.
	ConditionNoisy = "Noisy"
)

// Run failure (and waiting) reasons, in status.runs[*].reason.
const (
	ReasonOOMKilled        = "OOMKilled"
	ReasonEvicted          = "Evicted"
	ReasonDeadlineExceeded = "DeadlineExceeded"
	ReasonImagePull        = "ImagePullFailed"
	ReasonRunnerError      = "RunnerError"
	ReasonResultMissing    = "ResultMissing"
	ReasonUnschedulable    = "Unschedulable"
	ReasonJobDeleted       = "JobDeleted"
	ReasonJobFailed        = "JobFailed"
	// ReasonWaitingForSlot: the operator's global concurrency limit holds the run back.
	ReasonWaitingForSlot = "WaitingForSlot"
	// ReasonContainerConfig: the kubelet cannot create the runner container (a missing Secret or
	// ConfigMap, ...): retried for a short window, then failed with the kubelet's message.
	ReasonContainerConfig = "CreateContainerConfigError"
	// ReasonJobRejected: the API server refused the run's Job for good (invalid, forbidden by an
	// admission policy); the message is the server's.
	ReasonJobRejected = "JobRejected"
	// ReasonJobCreateRetrying: creating the run's Job failed in a way that may heal (quota
	// exceeded, the API server unavailable); the operator keeps trying.
	ReasonJobCreateRetrying = "JobCreateRetrying"
	// ReasonWaitingForRun: placement.engines Sequential holds the run until the previous engine's
	// run on the same node has finished.
	ReasonWaitingForRun = "WaitingForRun"
)

// KVBenchmarkSpec is one experiment: every engine runs the same dataset, workloads and thread sweep
// on the same kind of storage. The spec is immutable once created: results always describe the
// spec that produced them; change the experiment by creating a new KVBenchmark.
//
// +kubebuilder:validation:XValidation:rule="!has(self.dataset.size) || !has(self.storage.size) || quantity(string(self.storage.size)).compareTo(quantity(string(self.dataset.size))) >= 0",message="storage.size must be at least dataset.size"
// +kubebuilder:validation:XValidation:rule="self.engines.all(e, quantity(string(self.resources.memory)).asApproximateFloat() >= (has(e.options) && has(e.options.cacheSize) ? quantity(string(e.options.cacheSize)).asApproximateFloat() : 8388608.0) + (has(e.options) && has(e.options.optimizeForPointLookup) ? quantity(string(e.options.optimizeForPointLookup)).asApproximateFloat() : 0.0) + (has(e.options) && has(e.options.writeBufferSize) ? quantity(string(e.options.writeBufferSize)).asApproximateFloat() : (e.name == 'rocksdb' ? 67108864.0 : 4194304.0)) * (has(e.options) && has(e.options.maxWriteBufferNumber) ? double(e.options.maxWriteBufferNumber) : 2.0) + 268435456.0 + double([self.threads.max(), self.workloads.map(w, has(w.threads) && size(w.threads) > 0 ? w.threads.max() : 0).max()].max()) * (has(self.dataset.valueSizeRange) ? (self.dataset.valueSizeRange.max > 1048576 ? double(self.dataset.valueSizeRange.max) : 1048576.0) : (self.dataset.valueSize > 1048576 ? double(self.dataset.valueSize) : 1048576.0)) * 2.0 + (self.storage.medium != 'tmpfs' ? 0.0 : has(self.storage.size) ? quantity(string(self.storage.size)).asApproximateFloat() : (has(self.dataset.size) ? quantity(string(self.dataset.size)).asApproximateFloat() : has(self.dataset.num) ? double(self.dataset.num) * double(self.dataset.keySize + (has(self.dataset.valueSizeRange) ? (self.dataset.valueSizeRange.min + self.dataset.valueSizeRange.max) / 2 : self.dataset.valueSize)) : 0.0) * (has(self.reset) && self.reset == 'perPoint' ? 2.0 : 1.0)))",message="resources.memory is too small: it must hold, for every engine, its block cache (cacheSize, 8Mi when unset) + optimizeForPointLookup's cache + writeBufferSize x maxWriteBufferNumber (unset: rocksdb 64Mi x 2, leveldb and pebble 4Mi x 2) + 256Mi overhead, plus the runner's value buffers (2 x the largest thread count x max(1Mi, the largest value): one per thread, and Go's heap headroom), and on tmpfs also the data (storage.size, else the dataset, twice with reset perPoint for the checkpoint), because tmpfs pages are charged to the pod's memory limit",messageExpression="'resources.memory is too small: it must hold %dMi, the largest engine need (it is %dMi); that is, for every engine, its block cache (cacheSize, 8Mi when unset) + the optimizeForPointLookup cache + writeBufferSize x maxWriteBufferNumber (unset: rocksdb 64Mi x 2, leveldb and pebble 4Mi x 2) + 256Mi overhead, plus the runner value buffers (2 x the largest thread count x max(1Mi, the largest value): one per thread, and Go heap headroom), and on tmpfs also the data (storage.size, else the dataset, twice with reset perPoint for the checkpoint), because tmpfs pages are charged to the memory limit of the pod'.format([int((self.engines.map(e, (has(e.options) && has(e.options.cacheSize) ? quantity(string(e.options.cacheSize)).asApproximateFloat() : 8388608.0) + (has(e.options) && has(e.options.optimizeForPointLookup) ? quantity(string(e.options.optimizeForPointLookup)).asApproximateFloat() : 0.0) + (has(e.options) && has(e.options.writeBufferSize) ? quantity(string(e.options.writeBufferSize)).asApproximateFloat() : (e.name == 'rocksdb' ? 67108864.0 : 4194304.0)) * (has(e.options) && has(e.options.maxWriteBufferNumber) ? double(e.options.maxWriteBufferNumber) : 2.0) + 268435456.0 + double([self.threads.max(), self.workloads.map(w, has(w.threads) && size(w.threads) > 0 ? w.threads.max() : 0).max()].max()) * (has(self.dataset.valueSizeRange) ? (self.dataset.valueSizeRange.max > 1048576 ? double(self.dataset.valueSizeRange.max) : 1048576.0) : (self.dataset.valueSize > 1048576 ? double(self.dataset.valueSize) : 1048576.0)) * 2.0 + (self.storage.medium != 'tmpfs' ? 0.0 : has(self.storage.size) ? quantity(string(self.storage.size)).asApproximateFloat() : (has(self.dataset.size) ? quantity(string(self.dataset.size)).asApproximateFloat() : has(self.dataset.num) ? double(self.dataset.num) * double(self.dataset.keySize + (has(self.dataset.valueSizeRange) ? (self.dataset.valueSizeRange.min + self.dataset.valueSizeRange.max) / 2 : self.dataset.valueSize)) : 0.0) * (has(self.reset) && self.reset == 'perPoint' ? 2.0 : 1.0))).max() + 1048575.0) / 1048576.0), int(quantity(string(self.resources.memory)).asApproximateFloat() / 1048576.0)])"
// +kubebuilder:validation:XValidation:rule="!has(self.dataset.num) || !has(self.storage.size) || quantity(string(self.storage.size)).asApproximateFloat() >= double(self.dataset.num) * double(self.dataset.keySize + (has(self.dataset.valueSizeRange) ? (self.dataset.valueSizeRange.min + self.dataset.valueSizeRange.max) / 2 : self.dataset.valueSize))",message="storage.size must hold the dataset: num x (keySize + average value size) bytes"
// +kubebuilder:validation:XValidation:rule="!has(self.reset) || self.reset != 'perPoint' || !has(self.storage.size) || quantity(string(self.storage.size)).asApproximateFloat() >= 2.0 * (has(self.dataset.size) ? quantity(string(self.dataset.size)).asApproximateFloat() : has(self.dataset.num) ? double(self.dataset.num) * double(self.dataset.keySize + (has(self.dataset.valueSizeRange) ? (self.dataset.valueSizeRange.min + self.dataset.valueSizeRange.max) / 2 : self.dataset.valueSize)) : 0.0)",message="reset perPoint keeps the post-load checkpoint on the volume (hard links that hold every table file a point replaces): storage.size must hold the dataset twice"
// +kubebuilder:validation:XValidation:rule="self.cacheMode != 'direct' || self.storage.medium != 'tmpfs'",message="cacheMode direct (O_DIRECT) does not work on tmpfs: use warm or cold, or a localNVMe or persistentVolume medium"
// +kubebuilder:validation:XValidation:rule="!self.workloads.exists(w, w.name == 'dbbench') || self.engines.all(e, e.name == 'rocksdb')",message="a dbbench workload runs RocksDB's db_bench, so every engine must be rocksdb (other engines would report db_bench's RocksDB numbers under their name)"
// +kubebuilder:validation:XValidation:rule="self.workloads.all(w, w.name != 'dbbench' || ((has(w.threads) && size(w.threads) > 0) ? w.threads : self.threads) == [has(w.dbBenchArgs) && w.dbBenchArgs.exists(a, a.matches('^--?threads=[0-9]+$')) ? int(w.dbBenchArgs.filter(a, a.matches('^--?threads=[0-9]+$'))[0].split('=')[1]) : 1])",message="a dbbench workload runs db_bench once per thread count, and db_bench takes its thread count from --threads (default 1): give the workload one thread count (threads: [N]), equal to its --threads=N"
// +kubebuilder:validation:XValidation:rule="self.cacheMode != 'direct' || self.engines.all(e, e.name == 'rocksdb')",message="cacheMode direct (O_DIRECT) is supported by rocksdb only"
// +kubebuilder:validation:XValidation:rule="self.engines.all(e, !has(e.options) || !has(e.options.plainTable) || !e.options.plainTable || (has(self.dataset.prefixSize) && self.dataset.prefixSize > 0))",message="plainTable needs dataset.prefixSize > 0 (the prefix extractor length)"
type KVBenchmarkSpec struct {
	// Engines to compare; each gets its own runner pod (one run). Names are unique.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=3
	// +kubebuilder:validation:XValidation:rule="self.all(e, e.name != 'leveldb' || !has(e.options) || !(has(e.options.maxWriteBufferNumber) || has(e.options.level0FileNumCompactionTrigger) || has(e.options.level0SlowdownWritesTrigger) || has(e.options.level0StopWritesTrigger) || has(e.options.maxBytesForLevelBase) || has(e.options.maxBackgroundJobs) || has(e.options.disableWAL) || has(e.options.mmapRead) || has(e.options.plainTable) || has(e.options.optimizeForPointLookup) || has(e.options.increaseParallelism) || has(e.options.statistics) || has(e.options.numLevels) || has(e.options.maxBackgroundCompactions) || has(e.options.maxBackgroundFlushes) || has(e.options.minLevelToCompress) || has(e.options.cacheNumShardBits) || has(e.options.bloomLocality) || has(e.options.mmapWrite) || has(e.options.walDir)))",message="leveldb does not support the options maxWriteBufferNumber, level0FileNumCompactionTrigger, level0SlowdownWritesTrigger, level0StopWritesTrigger, maxBytesForLevelBase, maxBackgroundJobs, disableWAL, mmapRead, plainTable, optimizeForPointLookup, increaseParallelism, statistics, numLevels, maxBackgroundCompactions, maxBackgroundFlushes, minLevelToCompress, cacheNumShardBits, bloomLocality, mmapWrite, walDir"
	// +kubebuilder:validation:XValidation:rule="self.all(e, e.name != 'pebble' || !has(e.options) || !(has(e.options.mmapRead) || has(e.options.plainTable) || has(e.options.optimizeForPointLookup) || has(e.options.increaseParallelism) || has(e.options.statistics) || has(e.options.numLevels) || has(e.options.maxBackgroundCompactions) || has(e.options.maxBackgroundFlushes) || has(e.options.minLevelToCompress) || has(e.options.cacheNumShardBits) || has(e.options.bloomLocality) || has(e.options.mmapWrite)))",message="pebble does not support the options mmapRead, plainTable, optimizeForPointLookup, increaseParallelism, statistics, numLevels, maxBackgroundCompactions, maxBackgroundFlushes, minLevelToCompress, cacheNumShardBits, bloomLocality, mmapWrite"
	// +kubebuilder:validation:XValidation:rule="self.all(e, e.name != 'leveldb' || !has(e.options) || !has(e.options.compression) || !(e.options.compression in ['lz4', 'zstd']))",message="leveldb does not support compression lz4, zstd"
	// +kubebuilder:validation:XValidation:rule="self.all(e, e.name != 'pebble' || !has(e.options) || !has(e.options.compression) || !(e.options.compression in ['lz4']))",message="pebble does not support compression lz4"
	Engines []EngineSpec `json:"engines"`

	// Dataset is loaded once per run, before the workloads.
	// +kubebuilder:validation:XValidation:rule="has(self.size) != has(self.num)",message="dataset: set exactly one of size and num"
	// +kubebuilder:validation:XValidation:rule="!has(self.size) || quantity(string(self.size)).isGreaterThan(quantity('0'))",message="dataset.size must be greater than 0"
	// +kubebuilder:validation:XValidation:rule="!has(self.size) || (quantity(string(self.size)).asApproximateFloat() >= double(self.keySize + (has(self.valueSizeRange) ? (self.valueSizeRange.min + self.valueSizeRange.max) / 2 : self.valueSize)) && quantity(string(self.size)).asApproximateFloat() <= 1099511627776.0 * double(self.keySize + (has(self.valueSizeRange) ? (self.valueSizeRange.min + self.valueSizeRange.max) / 2 : self.valueSize)))",message="dataset.size must hold between one key-value pair (keySize + average value size bytes) and 2^40 keys (the runner's limit)"
	// +kubebuilder:validation:XValidation:rule="!has(self.valueSizeRange) || self.valueSizeRange.min <= self.valueSizeRange.max",message="dataset.valueSizeRange.min must not exceed max"
	// +kubebuilder:validation:XValidation:rule="!has(self.prefixSize) || self.prefixSize <= self.keySize",message="dataset.prefixSize must not exceed keySize"
	// +kubebuilder:validation:XValidation:rule="!has(self.keysPerPrefix) || self.keysPerPrefix == 0 || (has(self.prefixSize) && self.prefixSize > 0)",message="dataset.keysPerPrefix needs prefixSize > 0"
	// +kubebuilder:validation:XValidation:rule="!has(self.loadMode) || self.loadMode != 'existing'",message="dataset.loadMode existing is not supported by the operator: every run starts on a fresh volume"
	Dataset DatasetSpec `json:"dataset"`

	// Workloads are the measured phases, in order. Each runs once per thread count.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="self.all(w, w.name != 'readwhilewriting' || has(w.writesPerSecond))",message="readwhilewriting needs writesPerSecond (the writer's target rate; 0 means unlimited)"
	// +kubebuilder:validation:XValidation:rule="self.all(w, (w.name == 'ycsb') == has(w.ycsb))",message="a ycsb workload needs the ycsb block (workload letter A-F), and only ycsb workloads may set it"
	// +kubebuilder:validation:XValidation:rule="self.all(w, (w.name == 'pulse') == has(w.pulse))",message="a pulse workload needs the pulse block, and only pulse workloads may set it"
	// +kubebuilder:validation:XValidation:rule="self.all(w, (w.name == 'dbbench') == (has(w.dbBenchArgs) && size(w.dbBenchArgs) > 0))",message="a dbbench workload needs dbBenchArgs, and only dbbench workloads may set them"
	// +kubebuilder:validation:XValidation:rule="self.all(w, !has(w.dbBenchArgs) || w.dbBenchArgs.all(a, a.startsWith('-')))",message="dbBenchArgs must all be --flags (db_bench ignores anything else); in a YAML flow list quote a value with commas: [\"--benchmarks=fillseq,readrandom\"]"
	// +kubebuilder:validation:XValidation:rule="self.all(w, !has(w.threads) || w.threads.all(t, t >= 1 && t <= 1024))",message="workload threads must be between 1 and 1024"
	// +kubebuilder:validation:XValidation:rule="self.all(w, !has(w.duration) || duration(w.duration) > duration('0s'))",message="workload duration must be positive"
	// +kubebuilder:validation:XValidation:rule="self.all(w, !has(w.readWritePercent) || w.name == 'readrandomwriterandom')",message="readWritePercent applies to readrandomwriterandom only"
	// +kubebuilder:validation:XValidation:rule="self.all(w, !has(w.warmup) || !(w.name in ['pulse', 'dbbench']))",message="warmup does not apply to pulse (its rounds are the measurement) or dbbench (db_bench runs its own benchmarks)"
	// +kubebuilder:validation:XValidation:rule="self.all(w, !has(w.pulse) || duration(w.pulse.interval) > duration('0s'))",message="pulse.interval must be positive"
	Workloads []WorkloadSpec `json:"workloads"`

	// Threads is the sweep: every workload runs once per thread count, inside the run's pod, so the
	// dataset is loaded once.
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(t, t >= 1 && t <= 1024)",message="threads must be between 1 and 1024"
	Threads []int32 `json:"threads"`

	// Resources of each runner pod.
	Resources BenchmarkResources `json:"resources"`

	// Storage is where each run's database lives.
	Storage StorageSpec `json:"storage"`

	// Placement chooses nodes.
	// +kubebuilder:default={}
	// +optional
	Placement PlacementSpec `json:"placement,omitempty"`

	// CacheMode controls the page cache before each measured phase.
	// +kubebuilder:default=warm
	// +optional
	CacheMode CacheMode `json:"cacheMode,omitempty"`

	// Repeat runs the whole sweep this many times inside each run (results carry the iteration).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=1
	// +optional
	Repeat int32 `json:"repeat,omitempty"`

	// RunnerImage overrides the operator's default runner image. It needs a version tag or digest
	// (not latest), so that IfNotPresent never pulls a different build.
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.matches('^([A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?(\\\\.[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*(:[0-9]+)?/)?[a-z0-9]+((\\\\.|_|__|-+)[a-z0-9]+)*(/[a-z0-9]+((\\\\.|_|__|-+)[a-z0-9]+)*)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$')",message="runnerImage is not an image reference: [registry[:port]/]lower-case/path[:tag][@sha256:digest]"
	// +kubebuilder:validation:XValidation:rule="self.matches('^[^ ]+(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}|@sha256:[a-f0-9]{64})$') && !self.endsWith(':latest')",message="runnerImage needs a version tag or a sha256 digest, and not :latest"
	// +optional
	RunnerImage string `json:"runnerImage,omitempty"`

	// Deadline bounds each run's Job (activeDeadlineSeconds), from Job creation, including scheduling.
	// +kubebuilder:default="24h"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1m')",message="deadline must be at least 1m"
	// +optional
	Deadline *metav1.Duration `json:"deadline,omitempty"`

	// ReportInterval is the runner's time-series sampling interval.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('100ms')",message="reportInterval must be at least 100ms"
	// +optional
	ReportInterval *metav1.Duration `json:"reportInterval,omitempty"`

	// Cleanup of finished runs' Jobs.
	// +kubebuilder:default={}
	// +optional
	Cleanup CleanupSpec `json:"cleanup,omitempty"`

	// Settle waits, before each measured phase, until flushes and compactions are idle (RocksDB:
	// no pending compaction bytes, running compactions or flushes; Pebble: no compaction debt or
	// compaction in progress; LevelDB: no level over its compaction trigger), for at most
	// settle.timeout; the result records the wait and whether it timed out.
	// +optional
	Settle *SettleSpec `json:"settle,omitempty"`

	// Reset perPoint takes a checkpoint after the load and restores it before every sweep point
	// (workload x thread count x repeat), so a point does not inherit the earlier points' writes
	// and compactions. RocksDB and Pebble checkpoints hard-link the table files; LevelDB's are made
	// with the database closed. The checkpoint lives on the volume and keeps every table a point
	// replaces, so storage (storage.size, or on tmpfs the memory limit) must hold the dataset twice.
	// Default none.
	// +optional
	Reset ResetMode `json:"reset,omitempty"`
	// Baseline is what this benchmark is compared with when it ends: an earlier KVBenchmark of the
	// namespace or a saved one in a ConfigMap. The verdict is status.baseline and the Regressed
	// condition, with the same statistics as `kubectl kvbench compare --fail-on-regression`.
	// +optional
	Baseline *BaselineRef `json:"baseline,omitempty"`
}

// BenchmarkResources are a runner pod's limits; requests equal limits (Guaranteed QoS when cpu is set).
type BenchmarkResources struct {
	// Memory limit of the runner pod. It caps the page cache (the seeds' "eat the RAM" trick) and, for
	// tmpfs, also holds the database.
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).compareTo(quantity('256Mi')) >= 0",message="resources.memory must be at least 256Mi"
	Memory resource.Quantity `json:"memory"`
	// CPU limit of the runner pod; unset means no CPU limit.
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="resources.cpu must be greater than 0"
	// +optional
	CPU *resource.Quantity `json:"cpu,omitempty"`
}

// StorageSpec is the database volume of each run.
// +kubebuilder:validation:XValidation:rule="self.medium == 'tmpfs' || has(self.size)",message="storage.size is required for localNVMe and persistentVolume (the PVC request)"
// +kubebuilder:validation:XValidation:rule="self.medium != 'persistentVolume' || has(self.storageClassName)",message="storage.storageClassName is required for persistentVolume"
// +kubebuilder:validation:XValidation:rule="self.medium != 'tmpfs' || !has(self.storageClassName)",message="storage.storageClassName does not apply to tmpfs"
// +kubebuilder:validation:XValidation:rule="!has(self.size) || quantity(string(self.size)).isGreaterThan(quantity('0'))",message="storage.size must be greater than 0"
type StorageSpec struct {
	// Medium of the database volume.
	Medium StorageMedium `json:"medium"`
	// Size is the PVC request (localNVMe, persistentVolume) or the tmpfs sizeLimit (default: the
	// memory limit minus caches, memtables and overhead).
	// +optional
	Size *resource.Quantity `json:"size,omitempty"`
	// StorageClassName of the PVC. For localNVMe it defaults to the operator's --local-nvme-storage-class.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
}

// EnginePlacement says how a benchmark's engines share nodes.
// +kubebuilder:validation:Enum=Sequential;Parallel
type EnginePlacement string

const (
	// EnginesSequential runs the engines one after another in spec order on the node the scheduler
	// chose for the first one, so an engine comparison compares engines, not machines.
	EnginesSequential EnginePlacement = "Sequential"
	// EnginesParallel starts every engine at once on whichever nodes are free.
	EnginesParallel EnginePlacement = "Parallel"
)

// Spread says how many nodes a benchmark runs on.
// +kubebuilder:validation:Enum=AnyNode;EachNode
type Spread string

const (
	// SpreadAnyNode runs each engine once, on a node the scheduler picks.
	SpreadAnyNode Spread = "AnyNode"
	// SpreadEachNode runs the benchmark on every node matching the node selector (the NVMe label for
	// localNVMe), at most maxNodes of them in name order: fleet qualification.
	SpreadEachNode Spread = "EachNode"
)

// PlacementSpec chooses the nodes runner pods land on.
// +kubebuilder:validation:XValidation:rule="!has(self.spread) || self.spread != 'EachNode' || has(self.maxNodes)",message="spread EachNode needs maxNodes (the most nodes to run on, 1-100)"
// +kubebuilder:validation:XValidation:rule="!has(self.maxNodes) || (has(self.spread) && self.spread == 'EachNode')",message="maxNodes applies to spread EachNode only"
type PlacementSpec struct {
	// Engines: Sequential (default) runs the engines one after another on one node, the one the
	// scheduler picked for the first engine; Parallel starts them all at once.
	// +kubebuilder:default=Sequential
	// +optional
	Engines EnginePlacement `json:"engines,omitempty"`
	// Spread: AnyNode (default) runs once; EachNode runs on every matching node, one runner per node
	// per engine, with runs named "<engine>@<node>".
	// +kubebuilder:default=AnyNode
	// +optional
	Spread Spread `json:"spread,omitempty"`
	// MaxNodes bounds the fan-out of spread EachNode (required with it): the first maxNodes matching
	// nodes by name.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	MaxNodes *int32 `json:"maxNodes,omitempty"`
	// NodeSelector is merged with the NVMe node label for localNVMe.
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(self[k]) <= 63)",message="placement.nodeSelector values must be label values of at most 63 characters"
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 317 && k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$') && k.indexOf('/') <= 253)",message="placement.nodeSelector keys must be label keys: [prefix/]name, the name at most 63 of [A-Za-z0-9-_.] beginning and ending alphanumeric, the prefix a DNS subdomain"
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// Affinity of the runner pods; the operator adds its anti-affinity term when exclusive.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
	// Tolerations of the runner pods. Their structure is checked as the API server checks a pod's;
	// key and value syntax only when the Job is created (CEL regexes over unbounded strings exceed
	// the CRD's cost budget), which fails the run with the server's message.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="self.all(t, !has(t.effect) || t.effect in ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])",message="placement.tolerations effect must be NoSchedule, PreferNoSchedule or NoExecute (empty matches all)"
	// +kubebuilder:validation:XValidation:rule="self.all(t, !has(t.operator) || t.operator in ['Exists', 'Equal'])",message="placement.tolerations operator must be Exists or Equal"
	// +kubebuilder:validation:XValidation:rule="self.all(t, !has(t.operator) || t.operator != 'Exists' || !has(t.value) || t.value == '')",message="placement.tolerations: operator Exists takes no value"
	// +kubebuilder:validation:XValidation:rule="self.all(t, has(t.key) && t.key != '' || has(t.operator) && t.operator == 'Exists')",message="placement.tolerations: an empty key needs operator Exists (it matches every taint)"
	// +kubebuilder:validation:XValidation:rule="self.all(t, !has(t.tolerationSeconds) || has(t.effect) && t.effect == 'NoExecute')",message="placement.tolerations tolerationSeconds applies to effect NoExecute only"
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// Exclusive keeps other runners off a node while this one runs (required pod anti-affinity), so
	// numbers are not polluted by a neighbour.
	// +kubebuilder:default=true
	// +optional
	Exclusive *bool `json:"exclusive,omitempty"`
}

// CleanupSpec says when finished runs' Jobs go away.
type CleanupSpec struct {
	// Policy for finished runs' Jobs.
	// +kubebuilder:default=DeleteJobs
	// +optional
	Policy CleanupPolicy `json:"policy,omitempty"`
	// TTLSecondsAfterFinished is how long a finished run's Job (pod, logs, volume) is kept under DeleteJobs.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=600
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}

// RunPhase is the lifecycle of one run (one engine's runner Job).
// +kubebuilder:validation:Enum=Pending;Running;Succeeded;Failed
type RunPhase string

const (
	RunPending   RunPhase = "Pending"
	RunRunning   RunPhase = "Running"
	RunSucceeded RunPhase = "Succeeded"
	RunFailed    RunPhase = "Failed"
)

// RunStatus is one run: one engine's runner Job, with the runner's results.
type RunStatus struct {
	// Name of the run: the engine name, or "<engine>@<node>" under spread EachNode.
	Name   string     `json:"name"`
	Engine EngineName `json:"engine"`
	// JobName is the run's deterministic Job name.
	JobName string   `json:"jobName"`
	Phase   RunPhase `json:"phase"`
	// Reason is a CamelCase reason for a failed or waiting run (OOMKilled, Evicted, DeadlineExceeded,
	// ImagePullFailed, RunnerError, ResultMissing, Unschedulable, JobDeleted, JobFailed, WaitingForSlot,
	// WaitingForRun).
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message is human readable detail: the runner's error text or the scheduler's message.
	// +optional
	Message string `json:"message,omitempty"`
	// NodeName the runner pod ran on.
	// +optional
	NodeName string `json:"nodeName,omitempty"`
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// EngineVersion the runner reported, e.g. "rocksdb 7.8.3".
	// +optional
	EngineVersion string `json:"engineVersion,omitempty"`
	// Dataset as the runner resolved it.
	// +optional
	Dataset *DatasetInfo `json:"dataset,omitempty"`
	// Load is the dataset preparation.
	// +optional
	Load *PhaseSummary `json:"load,omitempty"`
	// Results are the measured phases (workload x thread count x iteration), in the order they ran.
	// A failed run keeps the phases that completed.
	// +optional
	Results []PhaseSummary `json:"results,omitempty"`
	// Truncated counts phases the runner left out of its bounded summary (see its result.json).
	// +optional
	Truncated int32 `json:"truncated,omitempty"`
	// FullResult is where the runner's full result (every phase, time series, pulse rounds) was
	// kept when the run ended, so reports outlive the runner pod and its log.
	// +optional
	FullResult *ResultArchive `json:"fullResult,omitempty"`
	// Provenance in brief: image digest, runner revision, seed, spec hash, node fingerprint.
	// +optional
	Provenance *ProvenanceSummary `json:"provenance,omitempty"`
	// Points summarise each sweep point over its repeats (median, CI, CoV).
	// +optional
	Points []PointStats `json:"points,omitempty"`
}

// ResultArchive is a run's full result copied from the runner's log into a ConfigMap in the
// benchmark's namespace, owned by the benchmark.
type ResultArchive struct {
	// ConfigMap holding the result as gzip-compressed JSON under the key result.json.gz.
	// +optional
	ConfigMap string `json:"configMap,omitempty"`
	// SHA256 is the hex sha256 of the stored (compressed) archive bytes: readers trust the ConfigMap
	// only if this KVBenchmark is its controller and its content has this digest.
	// +optional
	SHA256 string `json:"sha256,omitempty"`
	// Dropped names the parts left out so the ConfigMap stays within the API server's object
	// size limit (intervals: the throughput time series; engineDumps: the engines' text dumps).
	// +optional
	Dropped []string `json:"dropped,omitempty"`
	// Error says why there is no archive (no result in the runner's log, the log unreadable).
	// +optional
	Error string `json:"error,omitempty"`
}

// Headline is the result shown by kubectl get: the last measured phase of the last run with results.
type Headline struct {
	Engine   EngineName `json:"engine"`
	Workload string     `json:"workload"`
	Threads  int32      `json:"threads"`
	// OpsPerSec rounded to an integer for display.
	OpsPerSec int64 `json:"opsPerSec"`
	// +optional
	P99Micros *float64 `json:"p99Micros,omitempty"`
}

// KVBenchmarkStatus is observed state; the operator writes it once per reconcile.
type KVBenchmarkStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	Phase BenchmarkPhase `json:"phase,omitempty"`
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Runs, one per engine, in spec order.
	// +listType=map
	// +listMapKey=name
	// +optional
	Runs []RunStatus `json:"runs,omitempty"`
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// +optional
	Headline *Headline `json:"headline,omitempty"`
	// Engines lists the engines, comma separated, for kubectl get (a printer column cannot join a list).
	// +optional
	Engines string `json:"engines,omitempty"`
	// Progress is "finished/total" runs.
	// +optional
	Progress string `json:"progress,omitempty"`
	// PhaseProgress is "finished/planned" measured phases over all runs (a db_bench passthrough
	// workload counts as one planned phase), updated while runs go.
	// +optional
	PhaseProgress string `json:"phaseProgress,omitempty"`
	// Nodes is how many distinct nodes the runs use (or are pinned to), for kubectl get.
	// +optional
	Nodes int32 `json:"nodes,omitempty"`
	// Dataset is spec.dataset.size, or the key count ("1000000 keys") for a dataset sized by
	// num, for kubectl get.
	// +optional
	Dataset string `json:"dataset,omitempty"`
	// Baseline is the comparison with spec.baseline, once the benchmark has finished.
	// +optional
	Baseline *BaselineComparison `json:"baseline,omitempty"`
}

// KVBenchmark runs key-value storage-engine benchmarks as Jobs and records their results.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=kvb,categories=kvbench
// +kubebuilder:printcolumn:name="Engines",type=string,JSONPath=`.status.engines`
// +kubebuilder:printcolumn:name="Dataset",type=string,JSONPath=`.status.dataset`
// +kubebuilder:printcolumn:name="Medium",type=string,JSONPath=`.spec.storage.medium`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Nodes",type=integer,JSONPath=`.status.nodes`
// +kubebuilder:printcolumn:name="Ops/s",type=integer,JSONPath=`.status.headline.opsPerSec`
// +kubebuilder:printcolumn:name="P99(us)",type=number,JSONPath=`.status.headline.p99Micros`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Result-Engine",type=string,JSONPath=`.status.headline.engine`,priority=1
// +kubebuilder:printcolumn:name="Workload",type=string,JSONPath=`.status.headline.workload`,priority=1
// +kubebuilder:printcolumn:name="Threads",type=integer,JSONPath=`.status.headline.threads`,priority=1
// +kubebuilder:printcolumn:name="Runs",type=string,JSONPath=`.status.progress`,priority=1
// +kubebuilder:printcolumn:name="Phases",type=string,JSONPath=`.status.phaseProgress`,priority=1
// +kubebuilder:printcolumn:name="Memory",type=string,JSONPath=`.spec.resources.memory`,priority=1
// +kubebuilder:printcolumn:name="Cache",type=string,JSONPath=`.spec.cacheMode`,priority=1
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 50",message="metadata.name must be at most 50 characters (it prefixes Job names and label values)"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.baseline) || !has(self.spec.baseline.name) || self.spec.baseline.name != self.metadata.name",message="spec.baseline.name must name another KVBenchmark, not this one"
type KVBenchmark struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// KVBenchmarkSpec is one experiment: every engine runs the same dataset, workloads and thread sweep
	// on the same kind of storage. The spec is immutable once created: results always describe the
	// spec that produced them; change the experiment by creating a new KVBenchmark.
	// (The rule is on this field, not on the type, so that a schedule's template can change.)
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable: results must describe the spec that produced them; create a new KVBenchmark to change the experiment"
	Spec KVBenchmarkSpec `json:"spec"`
	// +optional
	Status KVBenchmarkStatus `json:"status,omitempty"`
}

// KVBenchmarkList is a list of KVBenchmarks.
//
// +kubebuilder:object:root=true
type KVBenchmarkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KVBenchmark `json:"items"`
}

func init() {
	SchemeBuilder.Register(&KVBenchmark{}, &KVBenchmarkList{})
}
