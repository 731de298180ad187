package v1alpha1

// Everything a runner pod writes (its log's phase and result lines, and so the archives made of
// them) is tenant input: spec.runnerImage is the benchmark author's choice. The operator and
// kubectl kvbench decode it only within these limits, checked while the JSON streams in
// (controllers/archive.Decoder), so no input can make a decoded result larger than they allow.
// They are generous for real results: a 52-phase sweep is about 100 KB with a few hundred list
// items; a 24-hour phase sampled every second is 86,400 intervals.

// ResultLimits bound one decoded runner output. Over a limit, decoding keeps what fits (the first
// items of a list, the start of a string) and says what it left out.
// +kubebuilder:object:generate=false
type ResultLimits struct {
	// Bytes bounds one JSON value read: a result line, a phase line, a decompressed archive.
	// Reading stops there; what was complete is kept.
	Bytes int64
	// Phases bounds the phases of one result, and the phase lines read from one log.
	Phases int
	// Items bounds the list items of one result (or of one log's phase lines) in all, phases
	// aside: the decoded size of the time series, pulse rounds, operations, ... together.
	Items int
	// Lists bounds one list by its JSON key; DefaultList bounds the others.
	Lists       map[string]int
	DefaultList int
	// Keys bounds the keys of one JSON object (a map such as provenance.libraries).
	Keys int
	// String bounds a string's bytes; Text those of a "text" (an engine's dump, its options file).
	String, Text int
	// Histogram bounds an encoded latency histogram (latencyHistogram); a longer one is left out
	// whole, as a cut one could not be decoded.
	Histogram int
	// Depth bounds nesting (the schema is 6 deep).
	Depth int
}

// DefaultResultLimits are the limits the operator and kubectl kvbench apply.
var DefaultResultLimits = ResultLimits{
	Bytes:  32 << 20,
	Phases: 10000,
	Items:  250000,
	Lists: map[string]int{
		"intervals":   100000, // a 24-hour phase at a 1 s report interval is 86,400
		"pulseRounds": 100000,
		"operations":  64, // a mixed workload has at most 8 operation types
		"engineDumps": 16,
		"levels":      64,
		"unavailable": 64,
	},
	DefaultList: 1000,
	Keys:        256,
	String:      4 << 10,
	Text:        1 << 20,
	Histogram:   256 << 10, // a phase's is 1-4 KB; the layout's worst case is ~390 KB
	Depth:       16,
}

// List is the bound of the list under key.
func (l ResultLimits) List(key string) int {
	if key == "phases" {
		return l.Phases
	}
	if n, ok := l.Lists[key]; ok {
		return n
	}
	return l.DefaultList
}
