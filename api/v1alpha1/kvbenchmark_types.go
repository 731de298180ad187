package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StorageMedium is where a run's database lives.
// +kubebuilder:validation:MaxLength=32
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
// +kubebuilder:validation:MaxLength=32
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
	// verdict (baseline missing, not finished, different dataset or workloads, or fewer repeats
	// than the U test needs: reason TooFewRepeats).
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
	// ReasonWaitingForNode: every node the run fits is used by another runner (exclusive runs),
	// or its pinned node is; the message names the run or benchmark in the way.
	ReasonWaitingForNode = "WaitingForNode"
	// ReasonNodeUnavailable: the node the run is pinned to (EachNode, or the node the earlier
	// engines of a Sequential benchmark ran on) was deleted or cordoned.
	ReasonNodeUnavailable = "NodeUnavailable"
	// ReasonPodRejected: the Job exists but the API server refuses its pod (a ResourceQuota, an
	// admission policy): retried for a short window, then failed with the refusal's message.
	ReasonPodRejected = "PodRejected"
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
	// ReasonResultOverLimits: the runner's output (its log's phase and result lines) was over the
	// operator's limits on runner output (ResultLimits); what fit is kept, the message says what not.
	ReasonResultOverLimits = "ResultOverLimits"
	// ReasonResultIncomplete: the runner exited 0, but the operator could not read its whole log:
	// the result line (written last) or phase lines are missing, as when the kubelet rotated the
	// log (containerLogMaxSize) and serves only the current file, or the log could not be read
	// at all; the message says what was missing. The phases known are kept.
	ReasonResultIncomplete = "ResultIncomplete"
	// ReasonOptionsFileMissing: an engine's optionsFrom names a ConfigMap or key that does not
	// exist, so its run cannot start (the pod would wait for the volume forever).
	ReasonOptionsFileMissing = "OptionsFileMissing"
)

// KVBenchmarkSpec is one experiment: every engine runs the same dataset, workloads and thread sweep
// on the same kind of storage. The spec is immutable once created: results always describe the
// spec that produced them; change the experiment by creating a new KVBenchmark.
//
// +kubebuilder:validation:XValidation:rule="!((type(self.resources.memory) == int || isQuantity(self.resources.memory)) && (!has(self.dataset.size) || (type(self.dataset.size) == int || isQuantity(self.dataset.size))) && (!has(self.storage.size) || (type(self.storage.size) == int || isQuantity(self.storage.size))) && self.engines.all(e, !has(e.options) || (!has(e.options.cacheSize) || (type(e.options.cacheSize) == int || isQuantity(e.options.cacheSize))) && (!has(e.options.writeBufferSize) || (type(e.options.writeBufferSize) == int || isQuantity(e.options.writeBufferSize))) && (!has(e.options.optimizeForPointLookup) || (type(e.options.optimizeForPointLookup) == int || isQuantity(e.options.optimizeForPointLookup))))) || (type(self.resources.memory) == int ? double(self.resources.memory) : quantity(self.resources.memory).asApproximateFloat()) >= self.engines.map(e, (has(e.options) && has(e.options.cacheSize) ? (type(e.options.cacheSize) == int ? double(e.options.cacheSize) : quantity(e.options.cacheSize).asApproximateFloat()) : 8388608.0) + (has(e.options) && has(e.options.optimizeForPointLookup) ? (type(e.options.optimizeForPointLookup) == int ? double(e.options.optimizeForPointLookup) : quantity(e.options.optimizeForPointLookup).asApproximateFloat()) : 0.0) + (has(e.options) && has(e.options.writeBufferSize) ? (type(e.options.writeBufferSize) == int ? double(e.options.writeBufferSize) : quantity(e.options.writeBufferSize).asApproximateFloat()) : (e.name in ['rocksdb', 'rocksjava'] ? 67108864.0 : 4194304.0)) * ((has(e.options) && has(e.options.maxWriteBufferNumber) ? double(e.options.maxWriteBufferNumber) : 2.0) + (self.storage.medium == 'tmpfs' && !has(self.storage.size) ? 1.1 * ((has(e.options) && has(e.options.maxWriteBufferNumber) ? double(e.options.maxWriteBufferNumber) : 2.0) + (e.name == 'pebble' ? 2.0 : 0.0) + ((self.workloads.exists(w, w.name in ['fillseq', 'fillrandom', 'filluniquerandom', 'overwrite', 'fillsync', 'readwhilewriting', 'deleteseq', 'deleterandom', 'updaterandom'] || w.name == 'readrandomwriterandom' && !(has(w.readWritePercent) && w.readWritePercent == 100) || w.name == 'pulse' && (!has(w.pulse) || w.pulse.writes + w.pulse.deletes > 0) || w.name == 'ycsb' && (!has(w.ycsb) || w.ycsb.workload == 'E' || !(has(w.ycsb.readPercent) ? w.ycsb.readPercent == 100 : has(w.ycsb.readWriteRatio) && size(w.ycsb.readWriteRatio) > 0 ? w.ycsb.readWriteRatio.matches('^0*[1-9][0-9]*:0+$') : w.ycsb.workload == 'C'))) || has(self.dataset.loadMode) && self.dataset.loadMode in ['fillseq', 'fillrandom']) ? (has(e.options) && has(e.options.maxWriteBufferNumber) ? double(e.options.maxWriteBufferNumber) : 2.0) : 0.0)) : 0.0)) + (self.storage.medium == 'tmpfs' && !has(self.storage.size) ? 8388608.0 : 0.0)).max() + (268435456.0 + double([self.threads.max(), self.workloads.map(w, has(w.threads) && size(w.threads) > 0 ? w.threads.max() : 0).max()].max()) * (has(self.dataset.valueSizeRange) ? (self.dataset.valueSizeRange.max > 1048576 ? double(self.dataset.valueSizeRange.max) : 1048576.0) : (self.dataset.valueSize > 1048576 ? double(self.dataset.valueSize) : 1048576.0)) * 2.0 + (self.storage.medium != 'tmpfs' ? 0.0 : has(self.storage.size) ? (type(self.storage.size) == int ? double(self.storage.size) : quantity(self.storage.size).asApproximateFloat()) : (has(self.dataset.size) ? (type(self.dataset.size) == int ? double(self.dataset.size) : quantity(self.dataset.size).asApproximateFloat()) : has(self.dataset.num) ? double(self.dataset.num) * (has(self.dataset.ycsb) ? 23.0 + double((has(self.dataset.ycsb.fieldCount) ? self.dataset.ycsb.fieldCount : 10) * (14 + (has(self.dataset.ycsb.fieldLength) ? self.dataset.ycsb.fieldLength : 100)) + [0, (has(self.dataset.ycsb.fieldCount) ? self.dataset.ycsb.fieldCount : 10) - 10].max() + [0, (has(self.dataset.ycsb.fieldCount) ? self.dataset.ycsb.fieldCount : 10) - 100].max()) : double(self.dataset.keySize + (has(self.dataset.valueSizeRange) ? (self.dataset.valueSizeRange.min + self.dataset.valueSizeRange.max) / 2 : self.dataset.valueSize))) : 0.0) * (1.1 * (1.0 + ((has(self.reset) ? self.reset != 'none' : self.repeat > 1 && self.workloads.exists(w, w.name in ['fillseq', 'fillrandom', 'filluniquerandom', 'overwrite', 'fillsync', 'readwhilewriting', 'deleteseq', 'deleterandom', 'updaterandom'] || w.name == 'readrandomwriterandom' && !(has(w.readWritePercent) && w.readWritePercent == 100) || w.name == 'pulse' && (!has(w.pulse) || w.pulse.writes + w.pulse.deletes > 0) || w.name == 'ycsb' && (!has(w.ycsb) || w.ycsb.workload == 'E' || !(has(w.ycsb.readPercent) ? w.ycsb.readPercent == 100 : has(w.ycsb.readWriteRatio) && size(w.ycsb.readWriteRatio) > 0 ? w.ycsb.readWriteRatio.matches('^0*[1-9][0-9]*:0+$') : w.ycsb.workload == 'C')))) ? 1.0 : 0.0) + ((self.workloads.exists(w, w.name in ['fillseq', 'fillrandom', 'filluniquerandom', 'overwrite', 'fillsync', 'readwhilewriting', 'deleteseq', 'deleterandom', 'updaterandom'] || w.name == 'readrandomwriterandom' && !(has(w.readWritePercent) && w.readWritePercent == 100) || w.name == 'pulse' && (!has(w.pulse) || w.pulse.writes + w.pulse.deletes > 0) || w.name == 'ycsb' && (!has(w.ycsb) || w.ycsb.workload == 'E' || !(has(w.ycsb.readPercent) ? w.ycsb.readPercent == 100 : has(w.ycsb.readWriteRatio) && size(w.ycsb.readWriteRatio) > 0 ? w.ycsb.readWriteRatio.matches('^0*[1-9][0-9]*:0+$') : w.ycsb.workload == 'C'))) || has(self.dataset.loadMode) && self.dataset.loadMode in ['fillseq', 'fillrandom']) ? 2.0 : 0.0)))))",message="resources.memory is too small for the largest engine: it must hold, for every engine, its block cache (cacheSize, 8Mi when unset) + the optimizeForPointLookup cache + writeBufferSize x maxWriteBufferNumber (unset: rocksdb 64Mi x 2, leveldb and pebble 4Mi x 2) + 256Mi overhead + the runner value buffers (2 x the largest thread count x max(1Mi, the largest value)), and on tmpfs the database volume, because tmpfs pages are charged to the memory limit of the pod: storage.size, else the dataset x 1.1 (table overhead) x (1, +1 for the checkpoint of reset perPoint or perIteration, the default when a repeated sweep writes, +2 when the sweep or the load writes: new versions and compaction output beside the old tables) + the write-ahead logs and flushes (1.1 x writeBufferSize per memtable, twice when anything writes, pebble 2 more) + 8Mi of metadata",messageExpression="'resources.memory: need %dMi or more, have %dMi. The need is that of the largest engine: for every engine, its block cache (cacheSize, 8Mi when unset) + the optimizeForPointLookup cache + writeBufferSize x maxWriteBufferNumber (unset: rocksdb 64Mi x 2, leveldb and pebble 4Mi x 2) + 256Mi overhead + the runner value buffers (2 x the largest thread count x max(1Mi, the largest value)), and on tmpfs the database volume, because tmpfs pages are charged to the memory limit of the pod: storage.size, else the dataset x 1.1 (table overhead) x (1, +1 for the checkpoint of reset perPoint or perIteration, the default when a repeated sweep writes, +2 when the sweep or the load writes: new versions and compaction output beside the old tables) + the write-ahead logs and flushes (1.1 x writeBufferSize per memtable, twice when anything writes, pebble 2 more) + 8Mi of metadata'.format([int((self.engines.map(e, (has(e.options) && has(e.options.cacheSize) ? (type(e.options.cacheSize) == int ? double(e.options.cacheSize) : quantity(e.options.cacheSize).asApproximateFloat()) : 8388608.0) + (has(e.options) && has(e.options.optimizeForPointLookup) ? (type(e.options.optimizeForPointLookup) == int ? double(e.options.optimizeForPointLookup) : quantity(e.options.optimizeForPointLookup).asApproximateFloat()) : 0.0) + (has(e.options) && has(e.options.writeBufferSize) ? (type(e.options.writeBufferSize) == int ? double(e.options.writeBufferSize) : quantity(e.options.writeBufferSize).asApproximateFloat()) : (e.name in ['rocksdb', 'rocksjava'] ? 67108864.0 : 4194304.0)) * ((has(e.options) && has(e.options.maxWriteBufferNumber) ? double(e.options.maxWriteBufferNumber) : 2.0) + (self.storage.medium == 'tmpfs' && !has(self.storage.size) ? 1.1 * ((has(e.options) && has(e.options.maxWriteBufferNumber) ? double(e.options.maxWriteBufferNumber) : 2.0) + (e.name == 'pebble' ? 2.0 : 0.0) + ((self.workloads.exists(w, w.name in ['fillseq', 'fillrandom', 'filluniquerandom', 'overwrite', 'fillsync', 'readwhilewriting', 'deleteseq', 'deleterandom', 'updaterandom'] || w.name == 'readrandomwriterandom' && !(has(w.readWritePercent) && w.readWritePercent == 100) || w.name == 'pulse' && (!has(w.pulse) || w.pulse.writes + w.pulse.deletes > 0) || w.name == 'ycsb' && (!has(w.ycsb) || w.ycsb.workload == 'E' || !(has(w.ycsb.readPercent) ? w.ycsb.readPercent == 100 : has(w.ycsb.readWriteRatio) && size(w.ycsb.readWriteRatio) > 0 ? w.ycsb.readWriteRatio.matches('^0*[1-9][0-9]*:0+$') : w.ycsb.workload == 'C'))) || has(self.dataset.loadMode) && self.dataset.loadMode in ['fillseq', 'fillrandom']) ? (has(e.options) && has(e.options.maxWriteBufferNumber) ? double(e.options.maxWriteBufferNumber) : 2.0) : 0.0)) : 0.0)) + (self.storage.medium == 'tmpfs' && !has(self.storage.size) ? 8388608.0 : 0.0)).max() + (268435456.0 + double([self.threads.max(), self.workloads.map(w, has(w.threads) && size(w.threads) > 0 ? w.threads.max() : 0).max()].max()) * (has(self.dataset.valueSizeRange) ? (self.dataset.valueSizeRange.max > 1048576 ? double(self.dataset.valueSizeRange.max) : 1048576.0) : (self.dataset.valueSize > 1048576 ? double(self.dataset.valueSize) : 1048576.0)) * 2.0 + (self.storage.medium != 'tmpfs' ? 0.0 : has(self.storage.size) ? (type(self.storage.size) == int ? double(self.storage.size) : quantity(self.storage.size).asApproximateFloat()) : (has(self.dataset.size) ? (type(self.dataset.size) == int ? double(self.dataset.size) : quantity(self.dataset.size).asApproximateFloat()) : has(self.dataset.num) ? double(self.dataset.num) * (has(self.dataset.ycsb) ? 23.0 + double((has(self.dataset.ycsb.fieldCount) ? self.dataset.ycsb.fieldCount : 10) * (14 + (has(self.dataset.ycsb.fieldLength) ? self.dataset.ycsb.fieldLength : 100)) + [0, (has(self.dataset.ycsb.fieldCount) ? self.dataset.ycsb.fieldCount : 10) - 10].max() + [0, (has(self.dataset.ycsb.fieldCount) ? self.dataset.ycsb.fieldCount : 10) - 100].max()) : double(self.dataset.keySize + (has(self.dataset.valueSizeRange) ? (self.dataset.valueSizeRange.min + self.dataset.valueSizeRange.max) / 2 : self.dataset.valueSize))) : 0.0) * (1.1 * (1.0 + ((has(self.reset) ? self.reset != 'none' : self.repeat > 1 && self.workloads.exists(w, w.name in ['fillseq', 'fillrandom', 'filluniquerandom', 'overwrite', 'fillsync', 'readwhilewriting', 'deleteseq', 'deleterandom', 'updaterandom'] || w.name == 'readrandomwriterandom' && !(has(w.readWritePercent) && w.readWritePercent == 100) || w.name == 'pulse' && (!has(w.pulse) || w.pulse.writes + w.pulse.deletes > 0) || w.name == 'ycsb' && (!has(w.ycsb) || w.ycsb.workload == 'E' || !(has(w.ycsb.readPercent) ? w.ycsb.readPercent == 100 : has(w.ycsb.readWriteRatio) && size(w.ycsb.readWriteRatio) > 0 ? w.ycsb.readWriteRatio.matches('^0*[1-9][0-9]*:0+$') : w.ycsb.workload == 'C')))) ? 1.0 : 0.0) + ((self.workloads.exists(w, w.name in ['fillseq', 'fillrandom', 'filluniquerandom', 'overwrite', 'fillsync', 'readwhilewriting', 'deleteseq', 'deleterandom', 'updaterandom'] || w.name == 'readrandomwriterandom' && !(has(w.readWritePercent) && w.readWritePercent == 100) || w.name == 'pulse' && (!has(w.pulse) || w.pulse.writes + w.pulse.deletes > 0) || w.name == 'ycsb' && (!has(w.ycsb) || w.ycsb.workload == 'E' || !(has(w.ycsb.readPercent) ? w.ycsb.readPercent == 100 : has(w.ycsb.readWriteRatio) && size(w.ycsb.readWriteRatio) > 0 ? w.ycsb.readWriteRatio.matches('^0*[1-9][0-9]*:0+$') : w.ycsb.workload == 'C'))) || has(self.dataset.loadMode) && self.dataset.loadMode in ['fillseq', 'fillrandom']) ? 2.0 : 0.0))))) + 1048575.0) / 1048576.0), int((type(self.resources.memory) == int ? double(self.resources.memory) : quantity(self.resources.memory).asApproximateFloat()) / 1048576.0)])"
// +kubebuilder:validation:XValidation:rule="!has(self.storage.size) || !((type(self.resources.memory) == int || isQuantity(self.resources.memory)) && (!has(self.dataset.size) || (type(self.dataset.size) == int || isQuantity(self.dataset.size))) && (!has(self.storage.size) || (type(self.storage.size) == int || isQuantity(self.storage.size))) && self.engines.all(e, !has(e.options) || (!has(e.options.cacheSize) || (type(e.options.cacheSize) == int || isQuantity(e.options.cacheSize))) && (!has(e.options.writeBufferSize) || (type(e.options.writeBufferSize) == int || isQuantity(e.options.writeBufferSize))) && (!has(e.options.optimizeForPointLookup) || (type(e.options.optimizeForPointLookup) == int || isQuantity(e.options.optimizeForPointLookup))))) || (type(self.storage.size) == int ? double(self.storage.size) : quantity(self.storage.size).asApproximateFloat()) >= (has(self.dataset.size) ? (type(self.dataset.size) == int ? double(self.dataset.size) : quantity(self.dataset.size).asApproximateFloat()) : has(self.dataset.num) ? double(self.dataset.num) * (has(self.dataset.ycsb) ? 23.0 + double((has(self.dataset.ycsb.fieldCount) ? self.dataset.ycsb.fieldCount : 10) * (14 + (has(self.dataset.ycsb.fieldLength) ? self.dataset.ycsb.fieldLength : 100)) + [0, (has(self.dataset.ycsb.fieldCount) ? self.dataset.ycsb.fieldCount : 10) - 10].max() + [0, (has(self.dataset.ycsb.fieldCount) ? self.dataset.ycsb.fieldCount : 10) - 100].max()) : double(self.dataset.keySize + (has(self.dataset.valueSizeRange) ? (self.dataset.valueSizeRange.min + self.dataset.valueSizeRange.max) / 2 : self.dataset.valueSize))) : 0.0) * (1.1 * (1.0 + ((has(self.reset) ? self.reset != 'none' : self.repeat > 1 && self.workloads.exists(w, w.name in ['fillseq', 'fillrandom', 'filluniquerandom', 'overwrite', 'fillsync', 'readwhilewriting', 'deleteseq', 'deleterandom', 'updaterandom'] || w.name == 'readrandomwriterandom' && !(has(w.readWritePercent) && w.readWritePercent == 100) || w.name == 'pulse' && (!has(w.pulse) || w.pulse.writes + w.pulse.deletes > 0) || w.name == 'ycsb' && (!has(w.ycsb) || w.ycsb.workload == 'E' || !(has(w.ycsb.readPercent) ? w.ycsb.readPercent == 100 : has(w.ycsb.readWriteRatio) && size(w.ycsb.readWriteRatio) > 0 ? w.ycsb.readWriteRatio.matches('^0*[1-9][0-9]*:0+$') : w.ycsb.workload == 'C')))) ? 1.0 : 0.0))) + self.engines.map(e, 1.1 * (has(e.options) && has(e.options.writeBufferSize) ? (type(e.options.writeBufferSize) == int ? double(e.options.writeBufferSize) : quantity(e.options.writeBufferSize).asApproximateFloat()) : (e.name in ['rocksdb', 'rocksjava'] ? 67108864.0 : 4194304.0)) * ((has(e.options) && has(e.options.maxWriteBufferNumber) ? double(e.options.maxWriteBufferNumber) : 2.0) + (e.name == 'pebble' ? 2.0 : 0.0) + ((self.workloads.exists(w, w.name in ['fillseq', 'fillrandom', 'filluniquerandom', 'overwrite', 'fillsync', 'readwhilewriting', 'deleteseq', 'deleterandom', 'updaterandom'] || w.name == 'readrandomwriterandom' && !(has(w.readWritePercent) && w.readWritePercent == 100) || w.name == 'pulse' && (!has(w.pulse) || w.pulse.writes + w.pulse.deletes > 0) || w.name == 'ycsb' && (!has(w.ycsb) || w.ycsb.workload == 'E' || !(has(w.ycsb.readPercent) ? w.ycsb.readPercent == 100 : has(w.ycsb.readWriteRatio) && size(w.ycsb.readWriteRatio) > 0 ? w.ycsb.readWriteRatio.matches('^0*[1-9][0-9]*:0+$') : w.ycsb.workload == 'C'))) || has(self.dataset.loadMode) && self.dataset.loadMode in ['fillseq', 'fillrandom']) ? (has(e.options) && has(e.options.maxWriteBufferNumber) ? double(e.options.maxWriteBufferNumber) : 2.0) : 0.0)) + 8388608.0).max()",message="storage.size is too small for the database volume: it must hold the dataset x 1.1 (table overhead; twice with the checkpoint of reset perPoint or perIteration, the default when a repeated sweep writes) + the write-ahead logs and flushes of the engine (1.1 x writeBufferSize per memtable, twice when anything writes, pebble 2 more) + 8Mi of metadata; a sweep that writes may need up to twice the dataset more while compaction catches up (without storage.size, tmpfs reserves it)",messageExpression="'storage.size: %dMi is too small; the database volume of the largest engine needs storage.size: %dMi or more: the dataset x 1.1 (table overhead; twice with the checkpoint of reset perPoint or perIteration, the default when a repeated sweep writes) + the write-ahead logs and flushes of the engine (1.1 x writeBufferSize per memtable, twice when anything writes, pebble 2 more) + 8Mi of metadata; a sweep that writes may need up to twice the dataset more while compaction catches up (without storage.size, tmpfs reserves it)'.format([int((type(self.storage.size) == int ? double(self.storage.size) : quantity(self.storage.size).asApproximateFloat()) / 1048576.0), int(((has(self.dataset.size) ? (type(self.dataset.size) == int ? double(self.dataset.size) : quantity(self.dataset.size).asApproximateFloat()) : has(self.dataset.num) ? double(self.dataset.num) * (has(self.dataset.ycsb) ? 23.0 + double((has(self.dataset.ycsb.fieldCount) ? self.dataset.ycsb.fieldCount : 10) * (14 + (has(self.dataset.ycsb.fieldLength) ? self.dataset.ycsb.fieldLength : 100)) + [0, (has(self.dataset.ycsb.fieldCount) ? self.dataset.ycsb.fieldCount : 10) - 10].max() + [0, (has(self.dataset.ycsb.fieldCount) ? self.dataset.ycsb.fieldCount : 10) - 100].max()) : double(self.dataset.keySize + (has(self.dataset.valueSizeRange) ? (self.dataset.valueSizeRange.min + self.dataset.valueSizeRange.max) / 2 : self.dataset.valueSize))) : 0.0) * (1.1 * (1.0 + ((has(self.reset) ? self.reset != 'none' : self.repeat > 1 && self.workloads.exists(w, w.name in ['fillseq', 'fillrandom', 'filluniquerandom', 'overwrite', 'fillsync', 'readwhilewriting', 'deleteseq', 'deleterandom', 'updaterandom'] || w.name == 'readrandomwriterandom' && !(has(w.readWritePercent) && w.readWritePercent == 100) || w.name == 'pulse' && (!has(w.pulse) || w.pulse.writes + w.pulse.deletes > 0) || w.name == 'ycsb' && (!has(w.ycsb) || w.ycsb.workload == 'E' || !(has(w.ycsb.readPercent) ? w.ycsb.readPercent == 100 : has(w.ycsb.readWriteRatio) && size(w.ycsb.readWriteRatio) > 0 ? w.ycsb.readWriteRatio.matches('^0*[1-9][0-9]*:0+$') : w.ycsb.workload == 'C')))) ? 1.0 : 0.0))) + self.engines.map(e, 1.1 * (has(e.options) && has(e.options.writeBufferSize) ? (type(e.options.writeBufferSize) == int ? double(e.options.writeBufferSize) : quantity(e.options.writeBufferSize).asApproximateFloat()) : (e.name in ['rocksdb', 'rocksjava'] ? 67108864.0 : 4194304.0)) * ((has(e.options) && has(e.options.maxWriteBufferNumber) ? double(e.options.maxWriteBufferNumber) : 2.0) + (e.name == 'pebble' ? 2.0 : 0.0) + ((self.workloads.exists(w, w.name in ['fillseq', 'fillrandom', 'filluniquerandom', 'overwrite', 'fillsync', 'readwhilewriting', 'deleteseq', 'deleterandom', 'updaterandom'] || w.name == 'readrandomwriterandom' && !(has(w.readWritePercent) && w.readWritePercent == 100) || w.name == 'pulse' && (!has(w.pulse) || w.pulse.writes + w.pulse.deletes > 0) || w.name == 'ycsb' && (!has(w.ycsb) || w.ycsb.workload == 'E' || !(has(w.ycsb.readPercent) ? w.ycsb.readPercent == 100 : has(w.ycsb.readWriteRatio) && size(w.ycsb.readWriteRatio) > 0 ? w.ycsb.readWriteRatio.matches('^0*[1-9][0-9]*:0+$') : w.ycsb.workload == 'C'))) || has(self.dataset.loadMode) && self.dataset.loadMode in ['fillseq', 'fillrandom']) ? (has(e.options) && has(e.options.maxWriteBufferNumber) ? double(e.options.maxWriteBufferNumber) : 2.0) : 0.0)) + 8388608.0).max() + 1048575.0) / 1048576.0)])"
// +kubebuilder:validation:XValidation:rule="!self.workloads.exists(w, w.name == 'ycsb') || has(self.dataset.ycsb)",message="ycsb workloads need dataset.ycsb: YCSB's records (user + hash keys, fieldCount x fieldLength fields); `ycsb: {}` gives YCSB's defaults"
// +kubebuilder:validation:XValidation:rule="!has(self.dataset.ycsb) || self.workloads.all(w, w.name in ['ycsb', 'stats', 'levelstats', 'waitforcompaction'])",message="dataset.ycsb holds YCSB records, which only ycsb workloads (and stats, levelstats, waitforcompaction) use: db_bench workloads, pulse and dbbench need db_bench's keys"
// +kubebuilder:validation:XValidation:rule="self.cacheMode != 'direct' || self.storage.medium != 'tmpfs'",message="cacheMode direct (O_DIRECT) does not work on tmpfs: use warm or cold, or a localNVMe or persistentVolume medium"
// +kubebuilder:validation:XValidation:rule="!self.workloads.exists(w, w.name == 'dbbench') || self.engines.all(e, e.name == 'rocksdb')",message="a dbbench workload runs RocksDB's db_bench, so every engine must be rocksdb (other engines would report db_bench's RocksDB numbers under their name)"
// +kubebuilder:validation:XValidation:rule="self.workloads.all(w, w.name != 'dbbench' || ((has(w.threads) && size(w.threads) > 0) ? w.threads : self.threads) == [has(w.dbBenchArgs) && w.dbBenchArgs.exists(a, a.matches('^--?threads=[0-9]+$')) ? int(w.dbBenchArgs.filter(a, a.matches('^--?threads=[0-9]+$'))[0].split('=')[1]) : 1])",message="a dbbench workload runs db_bench once per thread count, and db_bench takes its thread count from --threads (default 1): give the workload one thread count (threads: [N]), equal to its --threads=N"
// +kubebuilder:validation:XValidation:rule="self.engines.all(e, e.name != 'rocksjava' || !has(e.options) || !(has(e.options.mmapRead) || has(e.options.plainTable) || has(e.options.optimizeForPointLookup) || has(e.options.increaseParallelism) || has(e.options.maxBackgroundCompactions) || has(e.options.maxBackgroundFlushes) || has(e.options.minLevelToCompress) || has(e.options.bloomLocality) || has(e.options.mmapWrite) || has(e.options.walDir)))",message="rocksjava does not support the options mmapRead, plainTable, optimizeForPointLookup, increaseParallelism, maxBackgroundCompactions, maxBackgroundFlushes, minLevelToCompress, bloomLocality, mmapWrite, walDir (the Java runner does not set them yet): remove them from the rocksjava engine, or use engine rocksdb"
// +kubebuilder:validation:XValidation:rule="self.engines.all(e, !has(e.version) || e.name == 'rocksjava')",message="engines[].version selects a rocksdbjni release and applies to engine rocksjava only: the other engines are the runner image's builds (rocksdb 7.8.3, leveldb 1.23, pebble of go.mod)"
// +kubebuilder:validation:XValidation:rule="self.engines.all(e, e.name != 'rocksjava' || !has(e.optionsFrom) || !has(e.options) || !(has(e.options.cacheSize) || has(e.options.cacheNumShardBits) || has(e.options.bloomBits) || has(e.options.blockSize)))",message="engine rocksjava with optionsFrom: the options cacheSize, cacheNumShardBits, bloomBits and blockSize are BlockBasedTable options, which the Java runner cannot set over the OPTIONS file's table factory (RocksJava replaces the whole factory): put them in the file's [TableOptions/BlockBasedTable \"default\"] section (e.g. block_size=16384, filter_policy=bloomfilter:10:false, block_cache=64M), or use engine rocksdb"
// +kubebuilder:validation:XValidation:rule="!self.engines.exists(e, e.name == 'rocksjava') || self.workloads.all(w, w.name in ['fillseq', 'fillrandom', 'overwrite', 'readrandom', 'readseq', 'readwhilewriting', 'seekrandom', 'ycsb', 'stats', 'waitforcompaction'])",message="engine rocksjava runs the workloads fillseq, fillrandom, overwrite, readrandom, readseq, readwhilewriting, seekrandom, ycsb, stats and waitforcompaction only (the Java runner has no other yet): remove the other workloads, or run them in a benchmark without rocksjava"
// +kubebuilder:validation:XValidation:rule="!self.engines.exists(e, e.name == 'rocksjava') || self.workloads.all(w, w.name != 'ycsb' || !has(w.ycsb) || !has(w.ycsb.requestDistribution) || w.ycsb.requestDistribution != 'permutedZipfian')",message="engine rocksjava draws with YCSB core's own generators, which have no permutedZipfian (the Go runner's own distribution): use zipfian, uniform or latest, or run it in a benchmark without rocksjava"
// +kubebuilder:validation:XValidation:rule="!self.engines.exists(e, e.name == 'rocksjava') || (!has(self.dataset.valueSizeRange) && (!has(self.dataset.prefixSize) || self.dataset.prefixSize == 0) && (!has(self.dataset.keysPerPrefix) || self.dataset.keysPerPrefix == 0))",message="engine rocksjava needs db_bench's plain keys and fixed-size values, or YCSB records (dataset.ycsb): dataset.valueSizeRange, prefixSize and keysPerPrefix are not supported by the Java runner yet"
// +kubebuilder:validation:XValidation:rule="!self.engines.exists(e, e.name == 'rocksjava') || !has(self.cacheMode) || self.cacheMode == 'warm'",message="cacheMode cold and direct are not supported by engine rocksjava (the Java runner cannot evict the page cache or use O_DIRECT yet): use cacheMode warm"
// +kubebuilder:validation:XValidation:rule="!self.engines.exists(e, e.name == 'rocksjava') || !has(self.reportInterval)",message="reportInterval: engine rocksjava records no time series yet (the Java runner measures whole phases): remove reportInterval"
// +kubebuilder:validation:XValidation:rule="!self.engines.exists(e, e.name == 'rocksjava') || !has(self.runnerImage)",message="runnerImage replaces the Go runner's image, which does not run rocksjava: the operator runs engine rocksjava in its Java runner image (its --java-runner-image); remove runnerImage or the rocksjava engine"
// +kubebuilder:validation:XValidation:rule="self.cacheMode != 'direct' || self.engines.all(e, e.name == 'rocksdb')",message="cacheMode direct (O_DIRECT) is supported by rocksdb only"
// +kubebuilder:validation:XValidation:rule="!self.engines.exists(e, has(e.optionsFrom)) || self.workloads.all(w, !has(w.dbBenchArgs) || !w.dbBenchArgs.exists(a, a.matches('^--?options_file(=|$)')))",message="dbBenchArgs --options_file: with engines[].optionsFrom the runner passes db_bench --options_file itself (the mounted file); remove --options_file from dbBenchArgs"
// +kubebuilder:validation:XValidation:rule="self.engines.all(e, !has(e.options) || !has(e.options.plainTable) || !e.options.plainTable || (has(self.dataset.prefixSize) && self.dataset.prefixSize > 0))",message="plainTable needs dataset.prefixSize > 0 (the prefix extractor length)"
// +kubebuilder:validation:XValidation:rule="(32768 + (size(self.engines) * (has(self.placement) && has(self.placement.spread) && self.placement.spread == 'EachNode' && has(self.placement.maxNodes) ? self.placement.maxNodes : 1)) * (4096 + (self.workloads.map(w, has(w.threads) && size(w.threads) > 0 ? size(w.threads) : size(self.threads)).sum() * (has(self.repeat) ? self.repeat : 1)) * 256)) <= 1048576",message="the plan is too large for status: runs x (4096 + phases per run x 256) + 32768 bytes must stay within the 1048576-byte status budget (StatusNeed in status_budget.go); fewer engines, nodes (maxNodes), workloads, thread counts or repeats make it fit",messageExpression="'the plan needs %d bytes of status at the least (%d run(s) x (4096 + %d phase(s) x 256) + 32768), over the 1048576-byte budget by %d bytes: fewer engines, nodes (maxNodes), workloads, thread counts or repeats make it fit (every phase stays in the archive and kubectl kvbench report, but status keeps at least a compact summary of each)'.format([(32768 + (size(self.engines) * (has(self.placement) && has(self.placement.spread) && self.placement.spread == 'EachNode' && has(self.placement.maxNodes) ? self.placement.maxNodes : 1)) * (4096 + (self.workloads.map(w, has(w.threads) && size(w.threads) > 0 ? size(w.threads) : size(self.threads)).sum() * (has(self.repeat) ? self.repeat : 1)) * 256)), (size(self.engines) * (has(self.placement) && has(self.placement.spread) && self.placement.spread == 'EachNode' && has(self.placement.maxNodes) ? self.placement.maxNodes : 1)), (self.workloads.map(w, has(w.threads) && size(w.threads) > 0 ? size(w.threads) : size(self.threads)).sum() * (has(self.repeat) ? self.repeat : 1)), (32768 + (size(self.engines) * (has(self.placement) && has(self.placement.spread) && self.placement.spread == 'EachNode' && has(self.placement.maxNodes) ? self.placement.maxNodes : 1)) * (4096 + (self.workloads.map(w, has(w.threads) && size(w.threads) > 0 ? size(w.threads) : size(self.threads)).sum() * (has(self.repeat) ? self.repeat : 1)) * 256)) - 1048576])"
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
	// +kubebuilder:validation:XValidation:rule="self.all(e, e.name != 'leveldb' || !has(e.optionsFrom))",message="engines[].optionsFrom: leveldb has no OPTIONS file (its options are Open arguments only): remove optionsFrom from the leveldb engine and use engines[].options, e.g. options: {writeBufferSize: 4Mi}"
	// +kubebuilder:validation:XValidation:rule="self.all(e, !has(e.optionsFrom) || !has(e.options) || !(has(e.options.optimizeForPointLookup) || has(e.options.increaseParallelism)))",message="engines[].options.optimizeForPointLookup and increaseParallelism are presets that rewrite many options, which cannot be listed as overrides of an OPTIONS file: with optionsFrom, put their result in the file (e.g. max_background_jobs=16)"
	Engines []EngineSpec `json:"engines"`

	// Dataset is loaded once per run, before the workloads.
	// +kubebuilder:validation:XValidation:rule="has(self.size) != has(self.num)",message="dataset: set exactly one of size and num"
	// +kubebuilder:validation:XValidation:rule="!has(self.size) || !isQuantity(string(self.size)) || quantity(string(self.size)).isGreaterThan(quantity('0'))",message="dataset.size must be greater than 0"
	// +kubebuilder:validation:XValidation:rule="!has(self.size) || !isQuantity(string(self.size)) || (quantity(string(self.size)).asApproximateFloat() >= (has(self.ycsb) ? 23.0 + double((has(self.ycsb.fieldCount) ? self.ycsb.fieldCount : 10) * (14 + (has(self.ycsb.fieldLength) ? self.ycsb.fieldLength : 100)) + [0, (has(self.ycsb.fieldCount) ? self.ycsb.fieldCount : 10) - 10].max() + [0, (has(self.ycsb.fieldCount) ? self.ycsb.fieldCount : 10) - 100].max()) : double(self.keySize + (has(self.valueSizeRange) ? (self.valueSizeRange.min + self.valueSizeRange.max) / 2 : self.valueSize))) && quantity(string(self.size)).asApproximateFloat() <= 1099511627776.0 * (has(self.ycsb) ? 23.0 + double((has(self.ycsb.fieldCount) ? self.ycsb.fieldCount : 10) * (14 + (has(self.ycsb.fieldLength) ? self.ycsb.fieldLength : 100)) + [0, (has(self.ycsb.fieldCount) ? self.ycsb.fieldCount : 10) - 10].max() + [0, (has(self.ycsb.fieldCount) ? self.ycsb.fieldCount : 10) - 100].max()) : double(self.keySize + (has(self.valueSizeRange) ? (self.valueSizeRange.min + self.valueSizeRange.max) / 2 : self.valueSize))))",message="dataset.size must hold between one key-value pair (keySize + average value size bytes) and 2^40 keys (the runner's limit)"
	// +kubebuilder:validation:XValidation:rule="!has(self.valueSizeRange) || self.valueSizeRange.min <= self.valueSizeRange.max",message="dataset.valueSizeRange.min must not exceed max"
	// +kubebuilder:validation:XValidation:rule="!has(self.prefixSize) || self.prefixSize <= self.keySize",message="dataset.prefixSize must not exceed keySize"
	// +kubebuilder:validation:XValidation:rule="!has(self.keysPerPrefix) || self.keysPerPrefix == 0 || (has(self.prefixSize) && self.prefixSize > 0)",message="dataset.keysPerPrefix needs prefixSize > 0"
	// +kubebuilder:validation:XValidation:rule="!has(self.loadMode) || self.loadMode != 'existing'",message="dataset.loadMode existing is not supported by the operator: every run starts on a fresh volume"
	// +kubebuilder:validation:XValidation:rule="!has(self.ycsb) || (self.keySize == 16 && self.valueSize == 100 && !has(self.valueSizeRange) && (!has(self.prefixSize) || self.prefixSize == 0) && (!has(self.keysPerPrefix) || self.keysPerPrefix == 0))",message="dataset.ycsb: YCSB records are sized by ycsb.fieldCount and ycsb.fieldLength (keys are user + hash); keySize, valueSize, valueSizeRange, prefixSize and keysPerPrefix do not apply"
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
	// +kubebuilder:validation:XValidation:rule="self.all(w, !has(w.readWritePercent) || w.name == 'readrandomwriterandom')",message="readWritePercent applies to readrandomwriterandom only"
	// +kubebuilder:validation:XValidation:rule="self.all(w, !has(w.warmup) || !(w.name in ['pulse', 'dbbench']))",message="warmup does not apply to pulse (its rounds are the measurement) or dbbench (db_bench runs its own benchmarks)"
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
	// +kubebuilder:validation:XValidation:rule="self in ['warm', 'cold', 'direct']",messageExpression="'cacheMode \"' + self + '\" is not supported: use warm, cold or direct'"
	CacheMode CacheMode `json:"cacheMode,omitempty"`

	// Repeat runs the whole sweep this many times inside each run (results carry the iteration).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=1
	// +optional
	Repeat int32 `json:"repeat,omitempty"`

	// RunnerImage overrides the operator's default (Go) runner image; not with engine rocksjava, which
	// runs in the operator's Java runner image. It needs a version tag or digest
	// (not latest), so that IfNotPresent never pulls a different build.
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.matches('^([A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?(\\\\.[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*(:[0-9]+)?/)?[a-z0-9]+((\\\\.|_|__|-+)[a-z0-9]+)*(/[a-z0-9]+((\\\\.|_|__|-+)[a-z0-9]+)*)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$')",message="runnerImage is not an image reference: [registry[:port]/]lower-case/path[:tag][@sha256:digest]"
	// +kubebuilder:validation:XValidation:rule="self.matches('^[^ ]+(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}|@sha256:[a-f0-9]{64})$') && !self.endsWith(':latest')",message="runnerImage needs a version tag or a sha256 digest, and not :latest"
	// +optional
	RunnerImage string `json:"runnerImage,omitempty"`

	// Deadline bounds each run's Job (activeDeadlineSeconds), from Job creation, including scheduling.
	// +kubebuilder:default="24h"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') || (duration(self) >= duration('1m'))",message="deadline must be at least 1m"
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$')",messageExpression="'deadline \"' + self + '\" is not a duration: write a number with a unit, e.g. 24h or 90m (units h, m, s, ms, us, ns; no spaces, no d)'"
	Deadline *metav1.Duration `json:"deadline,omitempty"`

	// ReportInterval is the runner's time-series sampling interval.
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') || (duration(self) >= duration('100ms'))",message="reportInterval must be at least 100ms"
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$')",messageExpression="'reportInterval \"' + self + '\" is not a duration: write a number with a unit, e.g. 1s or 500ms (units h, m, s, ms, us, ns; no spaces, no d)'"
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
	// and compactions; perIteration restores it before every iteration of the repeat loop after the
	// first, so each iteration runs the sweep in order on the loaded database; none shares one
	// database throughout. RocksDB and Pebble checkpoints hard-link the table files; LevelDB's are
	// made with the database closed. The checkpoint lives on the volume and keeps every table a point
	// replaces, so the volume model counts the dataset once more. Unset: perIteration when repeat > 1
	// and a workload writes (EffectiveReset), else none.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self in ['none', 'perPoint', 'perIteration']",messageExpression="'reset \"' + self + '\" is not supported: use none, perPoint or perIteration'"
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
	// +kubebuilder:validation:XValidation:rule="!isQuantity(string(self)) || (quantity(string(self)).compareTo(quantity('256Mi')) >= 0)",message="resources.memory must be at least 256Mi"
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="isQuantity(string(self))",messageExpression="'resources.memory \"' + string(self) + '\" is not a quantity: write a number with a suffix, e.g. 1Gi (Ki, Mi, Gi, Ti are powers of 1024; k, M, G, T powers of 1000; no B, and m means milli)'"
	Memory resource.Quantity `json:"memory"`
	// CPU limit of the runner pod; unset means no CPU limit.
	// +kubebuilder:validation:XValidation:rule="!isQuantity(string(self)) || (quantity(string(self)).isGreaterThan(quantity('0')))",message="resources.cpu must be greater than 0"
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="isQuantity(string(self))",messageExpression="'resources.cpu \"' + string(self) + '\" is not a quantity: write a number with a suffix, e.g. 2 or 500m (Ki, Mi, Gi, Ti are powers of 1024; k, M, G, T powers of 1000; no B, and m means milli)'"
	CPU *resource.Quantity `json:"cpu,omitempty"`
}

// StorageSpec is the database volume of each run.
// +kubebuilder:validation:XValidation:rule="!(self.medium in ['localNVMe', 'persistentVolume']) || has(self.size)",message="storage.size is required for localNVMe and persistentVolume (the PVC request)"
// +kubebuilder:validation:XValidation:rule="self.medium != 'persistentVolume' || has(self.storageClassName)",message="storage.storageClassName is required for persistentVolume"
// +kubebuilder:validation:XValidation:rule="self.medium != 'tmpfs' || !has(self.storageClassName)",message="storage.storageClassName does not apply to tmpfs"
// +kubebuilder:validation:XValidation:rule="!has(self.size) || !isQuantity(string(self.size)) || quantity(string(self.size)).isGreaterThan(quantity('0'))",message="storage.size must be greater than 0"
type StorageSpec struct {
	// Medium of the database volume.
	// +kubebuilder:validation:XValidation:rule="self in ['tmpfs', 'localNVMe', 'persistentVolume']",messageExpression="'storage.medium \"' + self + '\" is not supported: use tmpfs, localNVMe or persistentVolume'"
	Medium StorageMedium `json:"medium"`
	// Size is the PVC request (localNVMe, persistentVolume) or the tmpfs sizeLimit (default: the
	// memory limit minus caches, memtables and overhead).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="isQuantity(string(self))",messageExpression="'storage.size \"' + string(self) + '\" is not a quantity: write a number with a suffix, e.g. 10Gi (Ki, Mi, Gi, Ti are powers of 1024; k, M, G, T powers of 1000; no B, and m means milli)'"
	Size *resource.Quantity `json:"size,omitempty"`
	// StorageClassName of the PVC. For localNVMe it defaults to the operator's --local-nvme-storage-class.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
}

// EnginePlacement says how a benchmark's engines share nodes.
// +kubebuilder:validation:MaxLength=32
type EnginePlacement string

const (
	// EnginesSequential runs the engines one after another in spec order on the node the scheduler
	// chose for the first one, so an engine comparison compares engines, not machines.
	EnginesSequential EnginePlacement = "Sequential"
	// EnginesParallel starts every engine at once on whichever nodes are free.
	EnginesParallel EnginePlacement = "Parallel"
)

// Spread says how many nodes a benchmark runs on.
// +kubebuilder:validation:MaxLength=32
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
	// +kubebuilder:validation:XValidation:rule="self in ['Sequential', 'Parallel']",messageExpression="'placement.engines \"' + self + '\" is not supported: use Sequential or Parallel'"
	Engines EnginePlacement `json:"engines,omitempty"`
	// Spread: AnyNode (default) runs once; EachNode runs on every matching node, one runner per node
	// per engine, with runs named "<engine>@<node>".
	// +kubebuilder:default=AnyNode
	// +optional
	// +kubebuilder:validation:XValidation:rule="self in ['AnyNode', 'EachNode']",messageExpression="'placement.spread \"' + self + '\" is not supported: use AnyNode or EachNode'"
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
	// +kubebuilder:validation:XValidation:rule="self in ['DeleteJobs', 'Keep']",messageExpression="'cleanup.policy \"' + self + '\" is not supported: use DeleteJobs or Keep'"
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
	// WaitingForNode, WaitingForRun, NodeUnavailable, PodRejected, ...).
	// +optional
	Reason string `json:"reason,omitempty"`
	// WaitingSince is when a Pending run began waiting for its current reason; the bound of that
	// wait counts from it.
	// +optional
	WaitingSince *metav1.Time `json:"waitingSince,omitempty"`
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
	// Label is the headline with what it measured, for the Result column: "pebble readrandom
	// threads=4: 108420 ops/s". One phase of one engine; not comparable across benchmarks that
	// end with different workloads.
	// +optional
	Label string `json:"label,omitempty"`
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
	// PhaseProgress is "finished/planned" measured phases over all runs, updated while runs go:
	// each workload once per thread count and iteration; a dbbench workload once per benchmark of
	// its --benchmarks that reports a result (N times for name[XN]); stats, levelstats and
	// waitforcompaction none.
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
	// Reason says why nothing runs, for kubectl get: while no run is running, the first waiting
	// run's reason (WaitingForRun, WaitingForSlot, Unschedulable, ...); once Failed, the failed
	// runs' reasons (OOMKilled, RunnerError, ...). Empty while runs run and once Succeeded.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Verdict is what the conditions concluded, for kubectl get: Regressed or NoRegression (or
	// why there is no verdict, e.g. BaselineMismatch) against spec.baseline, and Noisy, or
	// StateDrift when the repeats of a sweep that writes share one database (reset none).
	// +optional
	Verdict string `json:"verdict,omitempty"`
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
// +kubebuilder:printcolumn:name="Progress",type=string,JSONPath=`.status.phaseProgress`,description="measured phases finished / planned, over all runs"
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.reason`,description="why nothing runs (a waiting run's reason) or why it failed"
// +kubebuilder:printcolumn:name="Verdict",type=string,JSONPath=`.status.verdict`,description="Regressed / NoRegression against spec.baseline, Noisy or StateDrift over the repeats"
// +kubebuilder:printcolumn:name="Result",type=string,JSONPath=`.status.headline.label`,description="the last measured point of the last engine, with its engine, workload and threads: the median of its repeats when repeated"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Nodes",type=integer,JSONPath=`.status.nodes`,priority=1
// +kubebuilder:printcolumn:name="Ops/s",type=integer,JSONPath=`.status.headline.opsPerSec`,priority=1
// +kubebuilder:printcolumn:name="P99(us)",type=number,JSONPath=`.status.headline.p99Micros`,priority=1
// +kubebuilder:printcolumn:name="Runs",type=string,JSONPath=`.status.progress`,priority=1
// +kubebuilder:printcolumn:name="Memory",type=string,JSONPath=`.spec.resources.memory`,priority=1
// +kubebuilder:printcolumn:name="CPU",type=string,JSONPath=`.spec.resources.cpu`,priority=1
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
