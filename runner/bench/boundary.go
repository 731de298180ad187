package bench

import (
	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/runner/engine"
)

// boundary is what the runner reads at the start of a phase so that its end can report the
// phase's deltas: process usage, the engine's own counters and the data device's counters. It is
// read before the phase's threads start and after they stop, never during the timed loop.
type boundary struct {
	u    usage
	eng  *engine.StatsSnapshot
	disk *diskSample
	dev  dataDevice
}

func beginPhase(db engine.DB, dev dataDevice) boundary {
	b := boundary{dev: dev, eng: engineStats(db), disk: dev.sample()}
	b.u = readUsage() // last: the usage delta then covers the phase only
	return b
}

// end fills r's Usage, EngineStats, EngineDumps and Device.
func (b boundary) end(db engine.DB, r *api.PhaseResult) {
	r.Usage = readUsage().since(b.u)
	disk := b.dev.sample()
	r.Device = disk.usageSince(b.disk, b.dev.name)
	if after := engineStats(db); after != nil {
		r.EngineStats = engine.PhaseStats(b.eng, after)
		r.EngineDumps = after.Dumps
	}
}

// engineStats reads the engine's statistics, nil when the engine cannot give them. A failed
// read is not an error of the benchmark: the phase simply has no engine statistics.
func engineStats(db engine.DB) *engine.StatsSnapshot {
	sr, ok := db.(engine.StatsReader)
	if !ok || db == nil {
		return nil
	}
	s, err := sr.Stats()
	if err != nil {
		return nil
	}
	return s
}
