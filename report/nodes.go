package report

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// DefaultTolerance is how far (a fraction of the median) a node's ops/s may be from the fleet's
// median before the spread table names it.
const DefaultTolerance = 0.10

// runNode is the node a run used: its status's nodeName, else the node in an EachNode run name.
func runNode(r run) string {
	if r.status != nil && r.status.NodeName != "" {
		return r.status.NodeName
	}
	_, node, _ := strings.Cut(r.name, "@")
	return node
}

// runFingerprint is the run's node fingerprint from its provenance ("" when unknown).
func runFingerprint(r run) string {
	if r.status != nil && r.status.Provenance != nil {
		return r.status.Provenance.Node
	}
	return ""
}

// eachNode is true for a spread EachNode benchmark, whose runs are meant to differ by node.
func (b *Benchmark) eachNode() bool {
	if b.Spec.Placement.Spread == api.SpreadEachNode {
		return true
	}
	return slices.ContainsFunc(b.Status.Runs, func(s api.RunStatus) bool { return strings.Contains(s.Name, "@") })
}

// PlacementNotes warn when the runs of a comparison ran on different nodes, or on nodes with
// different fingerprints: the numbers then compare machines as well as engines. Runs with no known
// node are left out. A spread EachNode benchmark is per node on purpose and gets no warning.
func PlacementNotes(bs ...*Benchmark) []string {
	var nodes, prints []string
	byNode, byPrint := map[string][]string{}, map[string][]string{}
	multi := len(bs) > 1
	for _, b := range bs {
		if b.eachNode() {
			return nil
		}
		for _, r := range b.runs() {
			name := r.name
			if multi {
				name = b.Title() + "/" + r.name
			}
			if n := runNode(r); n != "" {
				if _, ok := byNode[n]; !ok {
					nodes = append(nodes, n)
				}
				byNode[n] = append(byNode[n], name)
			}
			if f := runFingerprint(r); f != "" {
				if _, ok := byPrint[f]; !ok {
					prints = append(prints, f)
				}
				byPrint[f] = append(byPrint[f], name)
			}
		}
	}
	var notes []string
	if len(nodes) > 1 {
		var parts []string
		for _, n := range nodes {
			parts = append(parts, fmt.Sprintf("%s on %s", strings.Join(byNode[n], ", "), n))
		}
		notes = append(notes, "warning: the runs ran on different nodes ("+strings.Join(parts, "; ")+"), so the comparison is also one of machines")
	}
	if len(prints) > 1 {
		var parts []string
		for _, f := range prints {
			parts = append(parts, fmt.Sprintf("%s: %s", strings.Join(byPrint[f], ", "), f))
		}
		notes = append(notes, "warning: the runs' node fingerprints differ ("+strings.Join(parts, "; ")+")")
	}
	return notes
}

// nodeResult is one node's figure for one engine, workload and thread count (the median over
// repeats).
type nodeResult struct {
	node string
	ops  float64
	p99  float64 // 0 when unknown
}

type spreadKey struct {
	engine   api.EngineName
	workload string
	threads  int32
}

// byNode groups the measured phases (not the load) by engine, workload and threads, one figure per
// node: the median over the node's repeats.
func byNode(b *Benchmark) (map[spreadKey][]nodeResult, []spreadKey) {
	nodeOf := map[string]string{}
	for _, r := range b.runs() {
		nodeOf[r.name] = runNode(r)
	}
	type acc struct{ ops, p99 []float64 }
	groups := map[spreadKey]map[string]*acc{}
	var keys []spreadKey
	for _, p := range b.Phases(false) {
		node := nodeOf[p.Run]
		if node == "" {
			node = "(unknown: " + p.Run + ")"
		}
		k := spreadKey{p.Engine, p.Name(), p.Threads}
		if groups[k] == nil {
			groups[k] = map[string]*acc{}
			keys = append(keys, k)
		}
		a := groups[k][node]
		if a == nil {
			a = &acc{}
			groups[k][node] = a
		}
		a.ops = append(a.ops, p.OpsPerSec)
		if p.LatencyMicros != nil {
			a.p99 = append(a.p99, p.LatencyMicros.P99)
		}
	}
	out := map[spreadKey][]nodeResult{}
	for k, nodes := range groups {
		for n, a := range nodes {
			r := nodeResult{node: n, ops: median(a.ops)}
			if len(a.p99) > 0 {
				r.p99 = median(a.p99)
			}
			out[k] = append(out[k], r)
		}
		sort.Slice(out[k], func(i, j int) bool { return out[k][i].node < out[k][j].node })
	}
	return out, keys
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// NodeTables are the hardware-qualification tables of a benchmark run on several nodes (spread
// EachNode): every node's ops/s and p99 with its distance from the median node, and the spread
// per engine, workload and thread count (min, median, max, and the nodes further than tolerance
// from the median).
func NodeTables(b *Benchmark, tolerance float64) []*Table {
	results, keys := byNode(b)
	per := &Table{Title: "Per node", Headers: []string{"Node", "Engine", "Workload", "Threads", "ops/s", "vs median", "p99 (us)"}}
	spread := &Table{Title: fmt.Sprintf("Spread across nodes (outside: more than %s from the median ops/s)", pct(tolerance)),
		Headers: []string{"Engine", "Workload", "Threads", "Nodes", "min ops/s", "median ops/s", "max ops/s", "spread", "outside"}}
	for _, k := range keys {
		rs := results[k]
		var all []float64
		for _, r := range rs {
			all = append(all, r.ops)
		}
		med := median(all)
		var outside []string
		for _, r := range rs {
			d := (r.ops - med) / med
			p := Empty
			if r.p99 > 0 {
				p = micros(r.p99)
			}
			per.add(r.node, string(k.engine), k.workload, strconv.Itoa(int(k.threads)), ops(r.ops), signedPct(d), p)
			if math.Abs(d) > tolerance {
				outside = append(outside, fmt.Sprintf("%s (%s)", r.node, signedPct(d)))
			}
		}
		lo, hi := slices.Min(all), slices.Max(all)
		out := Empty
		if len(outside) > 0 {
			out = strings.Join(outside, ", ")
		}
		spread.add(string(k.engine), k.workload, strconv.Itoa(int(k.threads)), strconv.Itoa(len(rs)), ops(lo), ops(med), ops(hi), pct((hi-lo)/med), out)
	}
	per.Notes = []string{"vs median = (node - median node) / median node, ops/s; repeats are reduced to their median per node"}
	spread.Notes = []string{"spread = (max - min) / median"}
	return []*Table{per, spread}
}

func pct(f float64) string { return strconv.FormatFloat(math.Round(f*1000)/10, 'f', 1, 64) + "%" }

func signedPct(f float64) string {
	s := pct(f)
	if f >= 0 {
		s = "+" + s
	}
	return s
}

// WriteByNode prints the per-node and spread tables of each benchmark.
func WriteByNode(w io.Writer, bs []*Benchmark, format string, tolerance float64) error {
	if !slices.Contains(Formats, format) {
		return fmt.Errorf("unknown format %q (one of %s)", format, strings.Join(Formats, ", "))
	}
	if tolerance < 0 || math.IsNaN(tolerance) {
		return fmt.Errorf("tolerance must not be negative, got %v", tolerance)
	}
	var out bytes.Buffer
	for i, b := range bs {
		if err := writeHeading(&out, b, i, format, fmt.Sprintf("KVBenchmark %s by node: %s", b.Title(), describe(b)),
			false, b.Notes()); err != nil {
			return err
		}
		writeTables(&out, format, NodeTables(b, tolerance))
	}
	_, err := out.WriteTo(w)
	return err
}
