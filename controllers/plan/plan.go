// Package plan expands a KVBenchmark into runs. It is pure: same spec, same runs.
//
// Granularity: one run per engine. The thread sweep and the repeat loop run inside the run's pod,
// so a 100 GB dataset is loaded once per engine rather than once per thread count.
package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

const (
	// DataDir is where the database volume is mounted in the runner container.
	DataDir = "/data"
	// DBPath is the database directory inside DataDir.
	DBPath = DataDir + "/db"
	// OptionsDir is where an engine's optionsFrom ConfigMap key is mounted read-only, as the file
	// OptionsFileName (one name for every engine: the loaders do not care, and the pod spec is the same).
	OptionsDir      = "/etc/kvbench/options"
	OptionsFileName = "OPTIONS"
	// MemoryOverheadBytes is what a runner needs besides caches, memtables and tmpfs data; the
	// memory model (and the CRD's CEL rule mirroring it) lives in api/v1alpha1/memory.go.
	MemoryOverheadBytes = kvv1.MemoryOverheadBytes
	// maxJobNameLen keeps Job names valid as label values (the job-name label) and pod name prefixes.
	maxJobNameLen = 63
)

// Run is one engine's runner Job.
type Run struct {
	// Name is the run's name in status (the engine name).
	Name string
	// JobName is deterministic, so a restarted operator finds the Job instead of creating another.
	JobName string
	Engine  kvv1.EngineSpec
	// Config is what the runner executes.
	Config kvv1.RunnerConfig
	// DatasetBytes is the logical dataset size (a metrics label and the tmpfs sizing input).
	DatasetBytes int64
	// Node pins the run to one node (spread EachNode, a later engine under Sequential, or the free
	// node the operator chose for an exclusive run); empty lets the scheduler choose.
	Node string
	// Picked: Node is the operator's choice (a free node for an exclusive run), not the plan's, so
	// another node may be chosen if the scheduler refuses this one before the run started.
	Picked bool
	// Avoid are nodes the scheduler must not use for an unpinned run (exclusive runs are there).
	Avoid []string
}

// Plan returns the runs of b in spec order (spread AnyNode; EachNode benchmarks need PlanOn).
func Plan(b *kvv1.KVBenchmark) []Run {
	return PlanOn(b, nil)
}

// PlanOn returns the runs of b. Under spread EachNode there is one run per node per engine, node by
// node (the given nodes, which the caller has matched against the selector, sorted and capped at
// maxNodes); otherwise nodes are ignored and there is one run per engine in spec order.
func PlanOn(b *kvv1.KVBenchmark, nodes []string) []Run {
	if b.Spec.Placement.Spread != kvv1.SpreadEachNode {
		return engineRuns(b, "")
	}
	var runs []Run
	for _, n := range nodes {
		runs = append(runs, engineRuns(b, n)...)
	}
	return runs
}

// EachNodeName is the run name of one engine on one node under spread EachNode. "@" cannot appear
// in engine or node names, so the name is unique and splits back.
func EachNodeName(engine, node string) string { return engine + "@" + node }

func engineRuns(b *kvv1.KVBenchmark, node string) []Run {
	runs := make([]Run, 0, len(b.Spec.Engines))
	for _, e := range b.Spec.Engines {
		cfg := kvv1.RunnerConfig{
			Engine:    *e.DeepCopy(),
			Dataset:   *b.Spec.Dataset.DeepCopy(),
			Threads:   append([]int32(nil), b.Spec.Threads...),
			CacheMode: b.Spec.CacheMode,
			Repeat:    b.Spec.Repeat,
			DBPath:    DBPath,
		}
		if e.OptionsFrom != nil {
			cfg.OptionsFile = OptionsDir + "/" + OptionsFileName
		}
		for _, w := range b.Spec.Workloads {
			cfg.Workloads = append(cfg.Workloads, *w.DeepCopy())
		}
		if b.Spec.ReportInterval != nil {
			cfg.ReportInterval = &metav1.Duration{Duration: b.Spec.ReportInterval.Duration}
		}
		cfg.Settle = b.Spec.Settle.DeepCopy()
		cfg.Reset = b.Spec.Reset
		if cfg.Reset == "" && kvv1.EffectiveReset(&b.Spec) == kvv1.ResetPerIteration {
			cfg.Reset = kvv1.ResetPerIteration // the default of a repeated sweep that writes
		}
		name, job := string(e.Name), JobName(b.Name, string(e.Name))
		if node != "" {
			// Node names are DNS subdomains; dots become dashes so the Job name stays a DNS label.
			name, job = EachNodeName(string(e.Name), node), JobName(b.Name, string(e.Name)+"-"+strings.ReplaceAll(node, ".", "-"))
		}
		runs = append(runs, Run{
			Name:         name,
			JobName:      job,
			Engine:       *e.DeepCopy(),
			Config:       cfg,
			DatasetBytes: DatasetBytes(b.Spec.Dataset),
			Node:         node,
		})
	}
	return runs
}

// JobName is "<benchmark>-<run>", shortened with a hash suffix if it would exceed 63 characters.
// The CRD limits benchmark names to 50 characters, so the hash is a safety net.
func JobName(benchmark, run string) string {
	name := benchmark + "-" + run
	if len(name) <= maxJobNameLen {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return name[:maxJobNameLen-11] + "-" + hex.EncodeToString(sum[:])[:10]
}

// SelectNodes is the node set of a spread EachNode benchmark: the schedulable candidates sorted by
// name, at most maxNodes of them.
func SelectNodes(candidates []string, maxNodes int32) []string {
	out := slices.Clone(candidates)
	slices.Sort(out)
	out = slices.Compact(out)
	if maxNodes > 0 && len(out) > int(maxNodes) {
		out = out[:maxNodes]
	}
	return out
}

// Start is a run that may have its Job created now, pinned to Node when Node is set.
type Start struct {
	Index int
	Node  string
	// After: an earlier run of its Sequential group has finished, so this run continues the
	// group on the node the group holds (see Hold).
	After bool
	// More: runs of its Sequential group follow it, so once it starts the group holds its node
	// and slot (see Hold).
	More bool
}

// Wait is a run held back by the engine order, with the reason's message for its status.
type Wait struct {
	Index   int
	Message string
}

// Hold is a Sequential group that has started and has runs left after its current one, or is
// between engines: it keeps its node (and one concurrency slot) from one engine to the next, so
// that no other benchmark runs between the engines of one comparison. Index is the group's current
// run (running, or the next to start); Node is "" while that run has no node yet.
type Hold struct {
	Index int
	Node  string
}

// Sequence decides which runs without a Job (missing: indices into runs whose status is Pending
// and that have no Job) may be created now. Parallel: all of them, each on its planned node.
// Sequential: per node group (the planned node under EachNode, one group otherwise) only the
// first run that has not finished, and only when it is missing; it is pinned to its planned node,
// else to the node an earlier run of the group used, so every engine of a comparison meets the
// same machine. statuses are the runs' current statuses, parallel to runs. Under Sequential it
// also returns the groups that hold their node between engines.
func Sequence(mode kvv1.EnginePlacement, runs []Run, statuses []kvv1.RunStatus, missing []int) ([]Start, []Wait, []Hold) {
	isMissing := map[int]bool{}
	for _, i := range missing {
		isMissing[i] = true
	}
	var starts []Start
	var waits []Wait
	if mode == kvv1.EnginesParallel {
		for _, i := range missing {
			starts = append(starts, Start{Index: i, Node: runs[i].Node})
		}
		return starts, waits, nil
	}
	type group struct {
		node     string // pin: planned node, or the first node a run of the group used
		blocker  int    // first unfinished run, -1 when none yet
		finished bool   // a run before the blocker has finished
		more     bool   // a run after the blocker is left
	}
	groups := map[string]*group{}
	var order []*group
	started := map[int]*group{} // by index in starts
	for i, r := range runs {
		g := groups[r.Node]
		if g == nil {
			g = &group{node: r.Node, blocker: -1}
			groups[r.Node] = g
			order = append(order, g)
		}
		st := statuses[i]
		finished := st.Phase == kvv1.RunSucceeded || st.Phase == kvv1.RunFailed
		if g.blocker < 0 && finished {
			if g.node == "" {
				g.node = st.NodeName
			}
			g.finished = true
			continue
		}
		if g.blocker < 0 {
			g.blocker = i
			if isMissing[i] {
				started[len(starts)] = g
				starts = append(starts, Start{Index: i, Node: g.node, After: g.finished})
			} else if g.node == "" {
				g.node = st.NodeName // for the waiting runs' message and the hold
			}
			continue
		}
		g.more = g.more || !finished
		if isMissing[i] {
			waits = append(waits, Wait{Index: i, Message: waitMessage(runs[g.blocker].Name, g.node)})
		}
	}
	for i, g := range started {
		starts[i].More = g.more
	}
	var holds []Hold
	for _, g := range order {
		// Between engines (a run finished, the next one has no Job yet), or a run with its Job and
		// more to follow. The last run's Job holds its node itself.
		if g.blocker >= 0 && ((g.finished && isMissing[g.blocker]) || (g.more && !isMissing[g.blocker])) {
			holds = append(holds, Hold{Index: g.blocker, Node: g.node})
		}
	}
	return starts, waits, holds
}

func waitMessage(blocker, node string) string {
	if node == "" {
		return fmt.Sprintf("placement.engines Sequential: runs after %s, on the node %s uses", blocker, blocker)
	}
	return fmt.Sprintf("placement.engines Sequential: runs after %s on node %s", blocker, node)
}

// DatasetBytes is the logical dataset size: size, or num x (keySize + average value size) (YCSB
// records: num x kvv1.YCSBEntryBytes).
func DatasetBytes(d kvv1.DatasetSpec) int64 {
	if d.Size != nil {
		return d.Size.Value()
	}
	if d.Num == nil {
		return 0
	}
	if d.YCSB != nil {
		return int64(float64(*d.Num) * kvv1.YCSBEntryBytes(d))
	}
	value := int64(d.ValueSize)
	if d.ValueSizeRange != nil {
		value = (int64(d.ValueSizeRange.Min) + int64(d.ValueSizeRange.Max)) / 2
	}
	return *d.Num * (int64(d.KeySize) + value)
}

// TmpfsBytes is the sizeLimit of a tmpfs run's emptyDir: storage.size if set, else everything the
// memory limit leaves after what the engine allocates (caches, memtables), the runner's buffers and
// the overhead, the same model as the CRD's memory rule (kvv1.MemoryNeed), which guarantees that this
// holds the engine's kvv1.VolumeNeed: the dataset's tables (twice with a reset's checkpoint, twice
// more when anything writes), its WALs and flushes, and metadata.
func TmpfsBytes(b *kvv1.KVBenchmark, e kvv1.EngineSpec) *resource.Quantity {
	if b.Spec.Storage.Size != nil {
		q := b.Spec.Storage.Size.DeepCopy()
		return &q
	}
	n := b.Spec.Resources.Memory.Value() - MemoryOverheadBytes - int64(math.Ceil(kvv1.EngineMemoryBytes(e)+kvv1.RunnerBufferBytes(&b.Spec)))
	return resource.NewQuantity(n, resource.BinarySI)
}
