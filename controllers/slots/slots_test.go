package slots

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func key(ns, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: ns, Name: name}
}

func demand(ns, name string, age int, wants ...Want) *Demand {
	return &Demand{Benchmark: key(ns, name), Created: t0.Add(time.Duration(age) * time.Second), Wants: wants}
}

func names(ds []*Demand) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Benchmark.String())
	}
	return out
}

func TestOrderIsFIFOWithinANamespaceAndRoundRobinAcross(t *testing.T) {
	q := []*Demand{
		demand("a", "a3", 3), demand("b", "b1", 9), demand("a", "a1", 1), demand("a", "a2", 2),
		demand("c", "c2", 8), demand("c", "c1", 5),
	}
	want := []string{"a/a1", "c/c1", "b/b1", "a/a2", "c/c2", "a/a3"}
	if diff := cmp.Diff(want, names(Order(q))); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

// admit is Admit explaining every benchmark's waits (its grants do not depend on whom it explains).
func admit(limit int, l Ledger, q []*Demand) Decision {
	dec := Admit(limit, l, q, types.NamespacedName{})
	for _, d := range q {
		other := Admit(limit, l, q, d.Benchmark)
		if !cmp.Equal(other.Grants, dec.Grants) {
			panic("the grants depend on whom Admit explains")
		}
		if w := other.Waits[d.Benchmark]; w != nil {
			dec.Waits[d.Benchmark] = w
		}
	}
	return dec
}

func grantedRuns(d Decision, k types.NamespacedName) []string {
	var out []string
	for _, g := range d.Grants[k] {
		out = append(out, g.Run+"@"+g.Node)
	}
	return out
}

func TestAdmitGivesSlotsInOrder(t *testing.T) {
	// Created in reverse order of arrival in the queue: the oldest gets the slots.
	shared := func(run string) Want { return Want{Run: run, Candidates: []string{"n1", "n2"}} }
	q := []*Demand{
		demand("ns", "young", 30, shared("rocksdb")),
		demand("ns", "old", 10, shared("rocksdb"), shared("pebble")),
		demand("ns", "middle", 20, shared("rocksdb")),
	}
	d := admit(3, Ledger{Active: 1}, q)
	if got := grantedRuns(d, key("ns", "old")); !cmp.Equal(got, []string{"rocksdb@", "pebble@"}) {
		t.Fatalf("old got %v", got)
	}
	for _, n := range []string{"middle", "young"} {
		if len(d.Grants[key("ns", n)]) != 0 {
			t.Fatalf("%s got a slot before the older benchmark", n)
		}
	}
	mw, yw := d.Waits[key("ns", "middle")], d.Waits[key("ns", "young")]
	if len(mw) != 1 || mw[0].Reason != kvv1.ReasonWaitingForSlot || mw[0].Ahead != 0 || yw[0].Ahead != 1 {
		t.Fatalf("waits: middle %+v young %+v", mw, yw)
	}
	if !strings.Contains(yw[0].Message, "1 benchmark(s) ahead") {
		t.Fatalf("message %q", yw[0].Message)
	}
	if admit(0, Ledger{Active: 100}, q).Waits[key("ns", "young")] != nil {
		t.Fatal("limit 0 is no limit")
	}
}

func TestAdmitPicksAFreeNodeForExclusiveRuns(t *testing.T) {
	other := Runner{Benchmark: key("x", "other"), Run: "rocksdb", Exclusive: true}
	shared := Runner{Benchmark: key("x", "shared"), Run: "pebble"}
	l := Ledger{Active: 2, Nodes: map[string][]Runner{"n1": {other}, "n2": {shared}}}
	q := []*Demand{
		demand("ns", "a", 1, Want{Run: "rocksdb", Exclusive: true, Candidates: []string{"n1", "n2", "n3", "n4"}},
			Want{Run: "pebble", Exclusive: true, Candidates: []string{"n1", "n2", "n3", "n4"}}),
		demand("ns", "b", 2, Want{Run: "rocksdb", Exclusive: true, Candidates: []string{"n1", "n2", "n3"}}),
		demand("ns", "c", 3, Want{Run: "rocksdb", Exclusive: true, Node: "n1"}),
	}
	d := admit(0, l, q)
	if got := grantedRuns(d, key("ns", "a")); !cmp.Equal(got, []string{"rocksdb@n3", "pebble@n4"}) {
		t.Fatalf("a got %v (a node with any runner is not free for an exclusive run)", got)
	}
	bw := d.Waits[key("ns", "b")]
	if len(bw) != 1 || bw[0].Reason != kvv1.ReasonWaitingForNode ||
		!strings.Contains(bw[0].Message, "n1 used by run rocksdb of x/other") || !strings.Contains(bw[0].Message, "n3 used by run rocksdb of ns/a") {
		t.Fatalf("b waits %+v", bw)
	}
	cw := d.Waits[key("ns", "c")]
	if len(cw) != 1 || cw[0].Message != "node n1 is used by run rocksdb of x/other" {
		t.Fatalf("c waits %+v", cw)
	}
}

func TestAdmitKeepsASequentialComparisonTogether(t *testing.T) {
	// seq's rocksdb ended on n1 (its Job is no longer active); seq holds n1 and a slot for pebble.
	// older (created first) would like n1 and the slot too.
	seq := &Demand{Benchmark: key("ns", "seq"), Created: t0.Add(time.Minute),
		Wants: []Want{{Run: "pebble", Exclusive: true, Node: "n1", After: true}},
		Holds: []Hold{{Node: "n1", Exclusive: true, Job: key("ns", "seq-pebble")}}}
	older := demand("ns", "older", 0, Want{Run: "rocksdb", Exclusive: true, Candidates: []string{"n1"}})
	d := admit(1, Ledger{}, []*Demand{older, seq})
	if got := grantedRuns(d, key("ns", "seq")); !cmp.Equal(got, []string{"pebble@n1"}) {
		t.Fatalf("seq got %v, waits %+v", got, d.Waits[key("ns", "seq")])
	}
	ow := d.Waits[key("ns", "older")]
	if len(ow) != 1 || ow[0].Reason != kvv1.ReasonWaitingForSlot {
		t.Fatalf("older waits %+v: the held slot is not free", ow)
	}
	// Without a slot limit, older waits for the node and is told who holds it.
	d = admit(0, Ledger{}, []*Demand{older, seq})
	if ow := d.Waits[key("ns", "older")]; len(ow) != 1 || !strings.Contains(ow[0].Message, "held by ns/seq between its engines") {
		t.Fatalf("older waits %+v", ow)
	}
	// While the group's current Job is active, the Job holds the slot (no double count), and the
	// node stays held even when its pod has ended before the Job is marked (not in Nodes).
	seq.Wants = nil
	seq.Holds[0].Job = key("ns", "seq-rocksdb")
	l := Ledger{Active: 1, Jobs: map[types.NamespacedName]bool{key("ns", "seq-rocksdb"): true}}
	d = admit(2, l, []*Demand{older, seq})
	if ow := d.Waits[key("ns", "older")]; len(ow) != 1 || ow[0].Reason != kvv1.ReasonWaitingForNode || !strings.Contains(ow[0].Message, "held by ns/seq") {
		t.Fatalf("older waits %+v", ow)
	}
	other := demand("ns", "other", 5, Want{Run: "rocksdb", Exclusive: true, Candidates: []string{"n2"}})
	if got := grantedRuns(admit(2, l, []*Demand{older, seq, other}), key("ns", "other")); !cmp.Equal(got, []string{"rocksdb@n2"}) {
		t.Fatalf("other got %v: one slot of two is in use", got)
	}
}

func TestAdmitKeepsExclusiveRunsAwayFromUnplacedRunners(t *testing.T) {
	l := Ledger{Active: 1, Unplaced: []Unplaced{{Runner: Runner{Benchmark: key("x", "shared"), Run: "rocksdb"}, MayLand: []string{"n2", "n3"}}}}
	q := []*Demand{
		demand("ns", "excl", 1, Want{Run: "rocksdb", Exclusive: true, Candidates: []string{"n1", "n2"}}),
		demand("ns", "excl2", 2, Want{Run: "rocksdb", Exclusive: true, Candidates: []string{"n2", "n3"}}),
	}
	d := admit(0, l, q)
	if got := grantedRuns(d, key("ns", "excl")); !cmp.Equal(got, []string{"rocksdb@n1"}) {
		t.Fatalf("excl got %v", got)
	}
	if w := d.Waits[key("ns", "excl2")]; len(w) != 1 || !strings.Contains(w[0].Message, "run rocksdb of x/shared may still be scheduled there") {
		t.Fatalf("excl2 waits %+v", w)
	}
}

func TestAdmitSendsSharedRunsAroundExclusiveOnes(t *testing.T) {
	excl := Runner{Benchmark: key("x", "e"), Run: "rocksdb", Exclusive: true}
	l := Ledger{Active: 1, Nodes: map[string][]Runner{"n2": {excl}, "n1": {{Benchmark: key("x", "s"), Run: "pebble"}}}}
	q := []*Demand{
		demand("ns", "shared", 1, Want{Run: "rocksdb", Candidates: []string{"n1", "n2", "n3"}}, Want{Run: "pebble", Node: "n2"}, Want{Run: "leveldb", Node: "n1"},
			// Fits only the node the exclusive run uses: it waits rather than wait unschedulable.
			Want{Run: "nvme", Candidates: []string{"n2"}}),
		// Granted after the unpinned shared run: that run may land on n1 or n3.
		demand("ns", "excl", 2, Want{Run: "rocksdb", Exclusive: true, Candidates: []string{"n3"}}),
		demand("ns", "excl2", 3, Want{Run: "rocksdb", Exclusive: true, Candidates: []string{"n4"}}),
	}
	d := admit(0, l, q)
	want := []Grant{{Run: "rocksdb", Avoid: []string{"n2"}}, {Run: "leveldb", Node: "n1"}}
	if diff := cmp.Diff(want, d.Grants[key("ns", "shared")]); diff != "" {
		t.Fatalf("shared grants (-want +got):\n%s", diff)
	}
	w := d.Waits[key("ns", "shared")]
	if len(w) != 2 || w[0].Message != "node n2 is used by run rocksdb of x/e, which is exclusive" ||
		w[1].Message != "every node it fits (1) is taken by exclusive runs: n2 used by run rocksdb of x/e, which is exclusive" {
		t.Fatalf("shared waits %+v", w)
	}
	if w := d.Waits[key("ns", "excl")]; len(w) != 1 || !strings.Contains(w[0].Message, "run rocksdb of ns/shared may still be scheduled there") {
		t.Fatalf("excl waits %+v", w)
	}
	if got := grantedRuns(d, key("ns", "excl2")); !cmp.Equal(got, []string{"rocksdb@n4"}) {
		t.Fatalf("excl2 got %v: the shared run cannot land on n4, which it does not fit", got)
	}
}

// BenchmarkAdmit is one decision at the scale of `make test-scale`: 1,000 benchmarks in the queue,
// 100 nodes, 100 slots of which 50 are free, 50 unplaced runners. "order" is the reference: the
// sort of the queue alone, which every decision needs.
func BenchmarkAdmit(b *testing.B) {
	var nodes []string
	for i := range 100 {
		nodes = append(nodes, fmt.Sprintf("n%03d", i))
	}
	l := Ledger{Active: 50, Nodes: map[string][]Runner{}}
	for i := range 50 {
		r := Runner{Benchmark: key("ns", fmt.Sprintf("run%d", i)), Run: "rocksdb", Exclusive: i%10 == 0}
		l.Nodes[nodes[i]] = []Runner{r}
		l.Unplaced = append(l.Unplaced, Unplaced{Runner: Runner{Benchmark: key("ns", fmt.Sprintf("new%d", i)), Run: "rocksdb"}, MayLand: nodes})
	}
	var q []*Demand
	for i := range 1000 {
		w := Want{Run: "rocksdb", Candidates: nodes, Exclusive: i%10 == 0}
		q = append(q, demand(fmt.Sprintf("ns%d", i%7), fmt.Sprintf("b%04d", i), i, w, Want{Run: "pebble", Candidates: nodes}))
	}
	b.Run("order", func(b *testing.B) {
		for b.Loop() {
			Order(q)
		}
	})
	b.Run("admit", func(b *testing.B) {
		for b.Loop() {
			Admit(100, l, q, key("ns3", "b0500"))
		}
	})
}

// Between a Sequential group's engines its hold is known to the queue only from the group's next
// pass; a slot freed by the first engine's end may be given to another run before that. The next
// engine then waits for a slot instead of taking the limit over (issue 18's scale run saw 107 Jobs
// on 100 slots), and gets the next one first.
func TestAdmitNeverGoesOverTheLimitForAHeldSlot(t *testing.T) {
	seq := &Demand{Benchmark: key("ns", "seq"), Created: t0.Add(time.Minute),
		Wants: []Want{{Run: "pebble", Exclusive: true, Node: "n1", After: true}},
		Holds: []Hold{{Node: "n1", Exclusive: true, Job: key("ns", "seq-pebble")}}}
	other := demand("ns", "other", 0, Want{Run: "rocksdb", Candidates: []string{"n2"}})
	// Both slots are in use: one by the run that took seq's, one by another.
	l := Ledger{Active: 2, Jobs: map[types.NamespacedName]bool{key("ns", "a"): true, key("ns", "b"): true}}
	d := admit(2, l, []*Demand{other, seq})
	if got := grantedRuns(d, key("ns", "seq")); len(got) != 0 {
		t.Fatalf("seq got %v with both slots in use", got)
	}
	if w := d.Waits[key("ns", "seq")]; len(w) != 1 || w[0].Reason != kvv1.ReasonWaitingForSlot {
		t.Fatalf("seq waits %+v", w)
	}
	// One Job ends: seq's hold still counts, so the freed slot is seq's, not other's (older).
	l = Ledger{Active: 1, Jobs: map[types.NamespacedName]bool{key("ns", "a"): true}}
	d = admit(2, l, []*Demand{other, seq})
	if got := grantedRuns(d, key("ns", "seq")); !cmp.Equal(got, []string{"pebble@n1"}) {
		t.Fatalf("seq got %v, waits %+v", got, d.Waits[key("ns", "seq")])
	}
	if got := grantedRuns(d, key("ns", "other")); len(got) != 0 {
		t.Fatalf("other got %v: the freed slot is seq's", got)
	}
}
