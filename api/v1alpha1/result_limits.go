package v1alpha1

import "fmt"

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

// Bounds on what any engine can do. A runner's numbers outside them are refused when decoded,
// like output over the limits (issue 29: a runner's 1e308 ops/s reached status and the RESULT
// column printed it clamped into an int64). They are far above any real engine: an in-memory
// hash map does tens of millions of operations per second on one thread, not 10^9.
const (
	MaxOpsPerSecPerThread = 1e9
	// MaxPhaseSeconds bounds a phase's (and a pulse round's) duration: 116 days.
	MaxPhaseSeconds = 1e7
	// MaxLatencyMicros bounds a latency (116 days).
	MaxLatencyMicros = MaxPhaseSeconds * 1e6
	// maxPlausibleThreads caps the thread count that MaxOpsPerSecPerThread is multiplied by.
	maxPlausibleThreads = 1 << 16
)

// Implausible says why p's numbers are beyond what any engine can do, naming the phase ("" when
// they are not): negative counts, durations or latencies, operations in no time, rates over
// MaxOpsPerSecPerThread per thread.
func (p *PhaseSummary) Implausible() string {
	why := p.implausible()
	if why == "" {
		return ""
	}
	name := p.Workload
	if len(name) > 64 {
		name = name[:64] + "…"
	}
	return fmt.Sprintf("phase %d (%q threads=%d): %s", p.Index, name, p.Threads, why)
}

func (p *PhaseSummary) implausible() string {
	maxRate := MaxOpsPerSecPerThread * float64(min(max(p.Threads, 1), maxPlausibleThreads))
	switch {
	case p.Threads < 0:
		return fmt.Sprintf("threads %d", p.Threads)
	case p.Ops < 0:
		return fmt.Sprintf("ops %d", p.Ops)
	case p.Seconds < 0 || p.Seconds > MaxPhaseSeconds:
		return fmt.Sprintf("seconds %g is outside 0-%g", p.Seconds, float64(MaxPhaseSeconds))
	case p.Ops > 0 && p.Seconds == 0:
		return fmt.Sprintf("%d ops in 0 seconds", p.Ops)
	case p.Found != nil && *p.Found < 0:
		return fmt.Sprintf("found %d", *p.Found)
	}
	if why := rate("ops/s", p.OpsPerSec, maxRate); why != "" {
		return why
	}
	for _, r := range []struct {
		what string
		v    *float64
	}{{"write rate", p.WriteRate}, {"target ops/s", p.TargetOpsPerSec}} {
		if r.v != nil {
			if why := rate(r.what, *r.v, maxRate); why != "" {
				return why
			}
		}
	}
	if why := latency("micros/op", p.MicrosPerOp); why != "" {
		return why
	}
	if p.ServiceP99Micros != nil {
		if why := latency("service p99", *p.ServiceP99Micros); why != "" {
			return why
		}
	}
	if why := percentiles("", p.LatencyMicros); why != "" {
		return why
	}
	if p.MBPerSec < 0 {
		return fmt.Sprintf("MB/s %g", p.MBPerSec)
	}
	if s := p.Pulse; s != nil {
		for _, v := range []float64{s.MeanRoundSeconds, s.MaxRoundSeconds} {
			if v < 0 || v > MaxPhaseSeconds {
				return fmt.Sprintf("pulse round seconds %g is outside 0-%g", v, float64(MaxPhaseSeconds))
			}
		}
	}
	for _, o := range p.Operations {
		if o.Ops < 0 {
			return fmt.Sprintf("operation %.32q: ops %d", o.Name, o.Ops)
		}
		if why := rate(fmt.Sprintf("operation %.32q: ops/s", o.Name), o.OpsPerSec, maxRate); why != "" {
			return why
		}
		if why := percentiles(fmt.Sprintf("operation %.32q: ", o.Name), o.LatencyMicros); why != "" {
			return why
		}
	}
	return ""
}

func rate(what string, v, most float64) string {
	if v < 0 || v > most {
		return fmt.Sprintf("%s %g is outside 0-%g (at most %g per thread)", what, v, most, float64(MaxOpsPerSecPerThread))
	}
	return ""
}

func latency(what string, v float64) string {
	if v < 0 || v > MaxLatencyMicros {
		return fmt.Sprintf("%s %g is outside 0-%g µs", what, v, float64(MaxLatencyMicros))
	}
	return ""
}

func percentiles(prefix string, l *Percentiles) string {
	if l == nil {
		return ""
	}
	for _, q := range []struct {
		name string
		v    float64
	}{{"mean", l.Mean}, {"p50", l.P50}, {"p75", l.P75}, {"p99", l.P99}, {"p99.9", l.P999}, {"p99.99", l.P9999}, {"max", l.Max}} {
		if why := latency(prefix+"latency "+q.name, q.v); why != "" {
			return why
		}
	}
	return ""
}
