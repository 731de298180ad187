package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ResultSchemaVersion identifies the JSON result schema. Bump it on any incompatible change, and keep
// reading the earlier versions (KnownResultSchema): archives of earlier runs must still load.
// v2 adds provenance, engine statistics, device usage, the measurement protocol and phase indexes.
const ResultSchemaVersion = "kvbench.io/result/v2"

// TerminationMessageLimit is the kubelet's limit on a container's termination message; the
// runner's Summary must fit in it.
const TerminationMessageLimit = 4096

// Result is the runner's full, machine-readable result (kvbench-runner --json).
type Result struct {
	SchemaVersion string     `json:"schemaVersion"`
	Engine        EngineName `json:"engine"`
	// EngineVersion, e.g. "rocksdb 7.8.3".
	// +optional
	EngineVersion string      `json:"engineVersion,omitempty"`
	Dataset       DatasetInfo `json:"dataset"`
	StartTime     metav1.Time `json:"startTime"`
	// +optional
	EndTime *metav1.Time `json:"endTime,omitempty"`
	// Load is the dataset preparation, when the runner did one.
	// +optional
	Load *PhaseResult `json:"load,omitempty"`
	// Phases are the measured workloads in the order they ran.
	// +optional
	Phases []PhaseResult `json:"phases,omitempty"`
	// Error is set when the run stopped early; the phases before it are still reported.
	// +optional
	Error string `json:"error,omitempty"`
	// Provenance is what ran, where, with which seed and options (schema v2).
	// +optional
	Provenance *Provenance `json:"provenance,omitempty"`
	// EngineTotals are the engine's counters since it was opened and its state, at the end of the
	// run (after the last phase or pseudo-benchmark such as waitforcompaction): what db_bench's
	// final Compaction Stats and STATISTICS report, where Phases hold per-phase deltas.
	// +optional
	EngineTotals *EngineStats `json:"engineTotals,omitempty"`
}

// DatasetInfo is the dataset as the runner resolved it.
type DatasetInfo struct {
	Num          int64   `json:"num"`
	KeySize      int32   `json:"keySize"`
	ValueSizeAvg float64 `json:"valueSizeAvg"`
	// Bytes is num x (keySize + valueSizeAvg).
	Bytes int64 `json:"bytes"`
}

// PhaseResult is one workload at one thread count: the summary plus the time series.
type PhaseResult struct {
	PhaseSummary `json:",inline"`
	// Intervals is the throughput time series, one sample per report interval.
	// +optional
	Intervals []IntervalSample `json:"intervals,omitempty"`
	// PulseRounds are the pulse workload's rounds.
	// +optional
	PulseRounds []PulseRound `json:"pulseRounds,omitempty"`
	// Usage is what the runner process consumed during the phase.
	// +optional
	Usage *PhaseUsage `json:"usage,omitempty"`
	// EngineStats are the engine's own counters over the phase (schema v2).
	// +optional
	EngineStats *EngineStats `json:"engineStats,omitempty"`
	// EngineDumps are the engine's own text dumps at the end of the phase (RocksDB rocksdb.stats
	// and the Statistics string when enabled, Pebble's metrics table, LevelDB's leveldb.stats).
	// +optional
	EngineDumps []NamedText `json:"engineDumps,omitempty"`
	// Device is the data volume's block device over the phase; absent when the pod cannot see it
	// (Result.Provenance.Node.DeviceUnavailable says why).
	// +optional
	Device *DeviceUsage `json:"device,omitempty"`
	// Protocol is what was done around the measurement (warm-up, settle, reset, cache check).
	// +optional
	Protocol *MeasurementProtocol `json:"protocol,omitempty"`
	// EngineOps counts a YCSB phase's engine calls. Its Operations are YCSB's client calls
	// (READ, UPDATE, INSERT, SCAN, READ-MODIFY-WRITE), which on an embedded engine are: READ a
	// get; UPDATE a get and a put (updateMode merge, YCSB's RocksDB binding) or a put (overwrite);
	// INSERT a put; SCAN a seek and a next per record read; READ-MODIFY-WRITE a READ and an UPDATE,
	// each also counted under its own name, as YCSB counts them.
	// +optional
	EngineOps *EngineOps `json:"engineOps,omitempty"`
	// ReadWriteRatio is a YCSB phase's configured reads:writes as the spec gives it ("30:1"; a
	// readPercent or the letter's default mix reduced: 95 -> "19:1"), so that a result file read on
	// its own reports the mix asked for, not the sampled one. Unset for E with an override (its rest
	// is split between scans and inserts) and for results from before it was recorded.
	// +optional
	ReadWriteRatio string `json:"readWriteRatio,omitempty"`
	// LatencyHistogram is the phase's latency histogram (every operation LatencyMicros covers, in
	// nanoseconds, 1 ns to one hour at 3 significant digits) in HdrHistogram's portable encoding
	// (V2 compressed, base64; runner/hist Decode). The Go and Java runners write the same layout, so
	// histograms of any runs merge exactly. Not in the Summary.
	// +optional
	LatencyHistogram string `json:"latencyHistogram,omitempty"`
}

// EngineOps are engine calls over a phase.
type EngineOps struct {
	Gets  int64 `json:"gets"`
	Puts  int64 `json:"puts"`
	Seeks int64 `json:"seeks"`
	// Nexts are the records scans read after their seeks.
	Nexts int64 `json:"nexts"`
}

// PhaseUsage is the runner process's resource use over a phase (all threads, including the engine's
// background flushes and compactions): it tells a CPU-bound phase from an I/O-bound one.
type PhaseUsage struct {
	CPUSeconds float64 `json:"cpuSeconds"`
	// UserCPUSeconds and SystemCPUSeconds split CPUSeconds (benchmark.sh's u_cpu and s_cpu).
	// +optional
	UserCPUSeconds float64 `json:"userCPUSeconds,omitempty"`
	// +optional
	SystemCPUSeconds float64 `json:"systemCPUSeconds,omitempty"`
	// MaxRSSBytes is the process's peak resident set size so far (benchmark.sh's rss).
	// +optional
	MaxRSSBytes int64 `json:"maxRSSBytes,omitempty"`
	// CPUPercent is CPU seconds per wall second x 100 (200 = two cores busy).
	CPUPercent float64 `json:"cpuPercent"`
	// ReadBytes and WriteBytes are storage I/O (/proc/self/io): page-cache misses, not cached reads.
	ReadBytes  int64 `json:"readBytes"`
	WriteBytes int64 `json:"writeBytes"`
	// MajorFaults are page faults that waited for storage (mmap reads).
	MajorFaults int64 `json:"majorFaults"`
}

// PhaseSummary is the compact result of one workload at one thread count. It is what the runner's
// termination message carries and what the operator copies into status.
type PhaseSummary struct {
	// Index is the phase's position in the run (Result.Phases), from 0; it survives truncation of
	// the summary and tells apart two phases of the same workload and thread count (omitted when 0;
	// schema v1 results have none: their position is their index).
	// +optional
	Index int32 `json:"index,omitempty"`
	// Workload is the workload name ("ycsb-a" for YCSB letter A, "load" for the preparation).
	Workload string `json:"workload"`
	Threads  int32  `json:"threads"`
	// Iteration of the repeat loop, from 0.
	// +optional
	Iteration int32 `json:"iteration,omitempty"`
	Ops       int64 `json:"ops"`
	// Seconds is the phase's elapsed wall time.
	Seconds     float64 `json:"seconds"`
	OpsPerSec   float64 `json:"opsPerSec"`
	MicrosPerOp float64 `json:"microsPerOp"`
	// +optional
	MBPerSec float64 `json:"mbPerSec,omitempty"`
	// Found is the number of reads that found their key ("N of M found"); M is Ops (reads).
	// +optional
	Found *int64 `json:"found,omitempty"`
	// LatencyMicros are percentiles over all threads' merged histograms.
	// +optional
	LatencyMicros *Percentiles `json:"latencyMicros,omitempty"`
	// WriteRate is the write rate actually reached, in writes/s (readwhilewriting, pulse).
	// +optional
	WriteRate *float64 `json:"writeRate,omitempty"`
	// TargetOpsPerSec is a rate-limited writer's target (writes/s) and TargetMissed says WriteRate
	// fell more than 5% short of it: latency from the schedule then includes a backlog, and
	// ServiceP99Micros (the writes' p99 from their actual start) is the engine's own write time.
	// Copies of Protocol's fields that survive into status (the termination message).
	// +optional
	TargetOpsPerSec *float64 `json:"targetOpsPerSec,omitempty"`
	// +optional
	TargetMissed bool `json:"targetMissed,omitempty"`
	// +optional
	ServiceP99Micros *float64 `json:"serviceP99Micros,omitempty"`
	// Pulse summarises the pulse rounds.
	// +optional
	Pulse *PulseSummary `json:"pulse,omitempty"`
	// Operations breaks a mixed workload (YCSB, readrandomwriterandom) down by operation type.
	// +optional
	Operations []OperationSummary `json:"operations,omitempty"`
}

// Percentiles of a latency distribution, in microseconds.
type Percentiles struct {
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P75   float64 `json:"p75,omitempty"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p999"`
	P9999 float64 `json:"p9999,omitempty"`
	Max   float64 `json:"max"`
}

// OperationSummary is one operation type of a mixed workload (Pegasus tables: R-QPS, R-AVG, R-P99 ...).
type OperationSummary struct {
	// Name: read, write, delete, seek (db_bench workloads); YCSB's READ, UPDATE, INSERT, SCAN,
	// READ-MODIFY-WRITE (results from before the runner's YCSB records say read, update, insert,
	// scan, readmodifywrite).
	Name      string  `json:"name"`
	Ops       int64   `json:"ops"`
	OpsPerSec float64 `json:"opsPerSec"`
	// +optional
	LatencyMicros *Percentiles `json:"latencyMicros,omitempty"`
}

// PulseSummary aggregates pulse rounds.
type PulseSummary struct {
	Rounds           int32   `json:"rounds"`
	MeanRoundSeconds float64 `json:"meanRoundSeconds"`
	MaxRoundSeconds  float64 `json:"maxRoundSeconds"`
	// Overruns counts rounds that took longer than the interval.
	// +optional
	Overruns int32 `json:"overruns,omitempty"`
}

// PulseRound is one pulse round.
type PulseRound struct {
	Round         int32   `json:"round"`
	ReadSeconds   float64 `json:"readSeconds"`
	WriteSeconds  float64 `json:"writeSeconds"`
	DeleteSeconds float64 `json:"deleteSeconds"`
	TotalSeconds  float64 `json:"totalSeconds"`
	// +optional
	Found int64 `json:"found,omitempty"`
	// ReadUsage is the runner's resource use during the round's reads.
	// +optional
	ReadUsage *PhaseUsage `json:"readUsage,omitempty"`
}

// IntervalSample is throughput over one report interval.
type IntervalSample struct {
	// OffsetSeconds from the phase start to the end of the interval.
	OffsetSeconds float64 `json:"t"`
	OpsPerSec     float64 `json:"opsPerSec"`
	// +optional
	P99Micros float64 `json:"p99Micros,omitempty"`
}

// Summary is the runner's bounded result: it always marshals to at most TerminationMessageLimit
// bytes (the runner drops detail, then phases, and counts what it dropped in Truncated).
type Summary struct {
	SchemaVersion string     `json:"schemaVersion"`
	Engine        EngineName `json:"engine"`
	// +optional
	EngineVersion string `json:"engineVersion,omitempty"`
	// +optional
	Dataset *DatasetInfo `json:"dataset,omitempty"`
	// +optional
	Load *PhaseSummary `json:"load,omitempty"`
	// +optional
	Phases []PhaseSummary `json:"phases,omitempty"`
	// Truncated is the number of phases left out to stay within the limit.
	// +optional
	Truncated int32 `json:"truncated,omitempty"`
	// +optional
	Error string `json:"error,omitempty"`
	// Provenance in brief (schema v2); the full block is in the Result.
	// +optional
	Provenance *ProvenanceSummary `json:"provenance,omitempty"`
}

// ResultLogPrefix starts the one stdout line on which `kvbench-runner run` prints its full Result as
// JSON when it ends (also when it fails, with the phases that completed), so that the result
// outlives the pod's volume for as long as the pod's log does (kubectl kvbench save/report read it).
const ResultLogPrefix = "kvbench-result: "
