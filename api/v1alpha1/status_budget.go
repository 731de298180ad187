package v1alpha1

// A KVBenchmark's status must fit in etcd (1.5 MiB per object, spec and metadata included), or
// every status write fails and the benchmark never ends. The operator keeps the whole status
// within StatusBudgetBytes of JSON, shrinking the summaries of every run alike (the archives keep
// everything), and the CRD refuses a spec whose plan cannot fit even when each phase is reduced
// to its compact summary: StatusNeed, mirrored by the CEL rule on KVBenchmarkSpec (a test checks
// that the two agree).
const (
	// StatusBudgetBytes bounds the JSON of a benchmark's status.
	StatusBudgetBytes = 1 << 20
	// StatusReserveBytes is what a status holds besides its runs (conditions, baseline, headline).
	StatusReserveBytes = 32 << 10
	// StatusRunBytes is what a run's status holds besides its phases (names, times, reason and
	// message, load, provenance, archive).
	StatusRunBytes = 4 << 10
	// StatusPhaseBytes is a phase's compact summary (index, workload, threads, iteration, ops,
	// seconds, ops/s, micros/op): about 150 bytes, 226 with every number at its longest.
	StatusPhaseBytes = 256
)

// PlannedRuns is how many runs the spec makes at most: one per engine, per node under spread
// EachNode (at most maxNodes).
func PlannedRuns(s *KVBenchmarkSpec) int64 {
	runs := int64(len(s.Engines))
	if s.Placement.Spread == SpreadEachNode && s.Placement.MaxNodes != nil {
		runs *= int64(*s.Placement.MaxNodes)
	}
	return runs
}

// PlannedPhasesPerRun is how many measured phases one run makes: each workload at each of its
// thread counts (its own, else the sweep), per repeat.
func PlannedPhasesPerRun(s *KVBenchmarkSpec) int64 {
	var n int64
	for _, w := range s.Workloads {
		if len(w.Threads) > 0 {
			n += int64(len(w.Threads))
		} else {
			n += int64(len(s.Threads))
		}
	}
	return n * max(1, int64(s.Repeat))
}

// StatusNeed is the least status the spec's plan needs: the reserve, and per run its own part
// and every phase's compact summary.
func StatusNeed(s *KVBenchmarkSpec) int64 {
	return StatusReserveBytes + PlannedRuns(s)*(StatusRunBytes+PlannedPhasesPerRun(s)*StatusPhaseBytes)
}
