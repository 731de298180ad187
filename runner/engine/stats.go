package engine

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// StatsReader is implemented by engines that can say what they did: their own counters (flush
// and compaction bytes, stalls, cache hits) and shape (LSM bytes, levels). It is read at phase
// boundaries only, never per operation, so it costs the measurement nothing.
type StatsReader interface {
	// Stats returns the engine's counters since open and its state now, plus its text dumps.
	Stats() (*StatsSnapshot, error)
}

var (
	libMu     sync.Mutex
	libraries = map[string]func() string{}
)

// RegisterLibrary records how to ask a linked engine library its version (adapters call it from
// init), so that a run's provenance names every library in the binary, not only the one it used.
func RegisterLibrary(name string, version func() string) {
	libMu.Lock()
	defer libMu.Unlock()
	libraries[name] = version
}

// LibraryVersions are the registered libraries' versions as the loaded libraries report them.
func LibraryVersions() map[string]string {
	libMu.Lock()
	defer libMu.Unlock()
	out := map[string]string{}
	for name, v := range libraries {
		out[name] = v()
	}
	return out
}

// CompactionWaiter is implemented by engines that can say when background work is done
// (db_bench's waitforcompaction).
type CompactionWaiter interface {
	WaitForCompaction(ctx context.Context) error
}

// OptionsRenderer is implemented by engines that write no options file of their own (LevelDB):
// it renders the options as the adapter set them, for the run's provenance.
type OptionsRenderer interface {
	RenderOptions() *api.NamedText
}

// StatsSnapshot is the engine at one instant. Counters in Cumulative are totals since the
// database was opened; sizes (LSMBytes, BlobBytes, PendingCompactionBytes, MemtableBytes,
// ReadAmplification, Levels' Files and Bytes) are the state now. WriteAmplification is left
// nil: PhaseStats computes it from the phase's deltas. Unavailable lists what the engine cannot say.
type StatsSnapshot struct {
	Cumulative api.EngineStats
	Dumps      []api.NamedText
}

// PhaseStats is the phase's EngineStats: counter deltas from before to after, the state at
// after, and write amplification over the phase ((flush + compaction written) / flushed, as
// RocksDB's Compaction Stats W-Amp and benchmark.sh's w_amp).
func PhaseStats(before, after *StatsSnapshot) *api.EngineStats {
	if after == nil {
		return nil
	}
	a := after.Cumulative
	var b api.EngineStats
	if before != nil {
		b = before.Cumulative
	}
	out := api.EngineStats{
		UserBytesWritten:       deltaI(b.UserBytesWritten, a.UserBytesWritten, before != nil),
		FlushBytesWritten:      deltaI(b.FlushBytesWritten, a.FlushBytesWritten, before != nil),
		CompactionBytesRead:    deltaI(b.CompactionBytesRead, a.CompactionBytesRead, before != nil),
		CompactionBytesWritten: deltaI(b.CompactionBytesWritten, a.CompactionBytesWritten, before != nil),
		CompactionSeconds:      deltaF(b.CompactionSeconds, a.CompactionSeconds, before != nil),
		CompactionCPUSeconds:   deltaF(b.CompactionCPUSeconds, a.CompactionCPUSeconds, before != nil),
		FlushCount:             deltaI(b.FlushCount, a.FlushCount, before != nil),
		CompactionCount:        deltaI(b.CompactionCount, a.CompactionCount, before != nil),
		StallSeconds:           deltaF(b.StallSeconds, a.StallSeconds, before != nil),
		StallCount:             deltaI(b.StallCount, a.StallCount, before != nil),
		BlockCacheHits:         deltaI(b.BlockCacheHits, a.BlockCacheHits, before != nil),
		BlockCacheMisses:       deltaI(b.BlockCacheMisses, a.BlockCacheMisses, before != nil),
		BloomUseful:            deltaI(b.BloomUseful, a.BloomUseful, before != nil),
		BloomChecked:           deltaI(b.BloomChecked, a.BloomChecked, before != nil),
		LSMBytes:               a.LSMBytes,
		BlobBytes:              a.BlobBytes,
		PendingCompactionBytes: a.PendingCompactionBytes,
		MemtableBytes:          a.MemtableBytes,
		ReadAmplification:      a.ReadAmplification,
		Unavailable:            a.Unavailable,
	}
	if f, c := out.FlushBytesWritten, out.CompactionBytesWritten; f != nil && c != nil && *f > 0 {
		w := round3(float64(*f+*c) / float64(*f))
		out.WriteAmplification = &w
	}
	prev := map[int32]api.LevelStats{}
	for _, l := range b.Levels {
		prev[l.Level] = l
	}
	for _, l := range a.Levels {
		p, had := prev[l.Level]
		l.CompactionBytesRead = deltaI(p.CompactionBytesRead, l.CompactionBytesRead, before != nil && had)
		l.CompactionBytesWritten = deltaI(p.CompactionBytesWritten, l.CompactionBytesWritten, before != nil && had)
		out.Levels = append(out.Levels, l)
	}
	sort.Slice(out.Levels, func(i, j int) bool { return out.Levels[i].Level < out.Levels[j].Level })
	return &out
}

// deltaI is after-before; with no before (first read failed) the total since open stands.
func deltaI(b, a *int64, haveBefore bool) *int64 {
	if a == nil {
		return nil
	}
	d := *a
	if haveBefore && b != nil {
		d -= *b
	}
	return &d
}

func deltaF(b, a *float64, haveBefore bool) *float64 {
	if a == nil {
		return nil
	}
	d := *a
	if haveBefore && b != nil {
		d -= *b
	}
	d = round6(d)
	return &d
}

// I64 and F64 make optional counters.
func I64(v int64) *int64     { return &v }
func F64(v float64) *float64 { return &v }

func round3(x float64) float64 { return float64(int64(x*1e3+0.5)) / 1e3 }
func round6(x float64) float64 { return float64(int64(x*1e6+0.5)) / 1e6 }

// linkedBuilds is hack/engine-build.sh's build.json (base64) for the C++ libraries this binary links,
// set with -ldflags -X by the image build and `make runner`; empty in a plain go build.
var linkedBuilds string

// LibraryBuilds are how the linked C++ engine libraries were built, or nil when the build did not say.
func LibraryBuilds() (map[string]api.LibraryBuild, error) {
	if linkedBuilds == "" {
		return nil, nil
	}
	raw, err := base64.StdEncoding.DecodeString(linkedBuilds)
	if err != nil {
		return nil, fmt.Errorf("engine library builds: %w", err)
	}
	var out map[string]api.LibraryBuild
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("engine library builds: %w", err)
	}
	return out, nil
}
