// Package slots decides which waiting runs may start now: the operator's own bookkeeping of the
// global concurrency slots and of exclusive nodes. The operator, not the scheduler, decides
// which node is free for an exclusive run, from the runner Jobs and pods it owns (the scheduler's
// pod anti-affinity matched a label any pod in any namespace could carry), and pins the run
// there. It is pure: the reconciler reads the ledger from its cache.
//
// Waiting benchmarks are served in a fair order (Order): round robin over namespaces, first come
// first served within one. Concurrency slots go strictly in that order. A node goes to the first
// benchmark in that order that can use it; a Sequential comparison keeps its node (and its slot)
// from one engine to the next (Hold), so no other run lands between the halves of a comparison.
package slots

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// Runner is one run's Job as the ledger knows it.
type Runner struct {
	Benchmark types.NamespacedName
	Run       string
	Exclusive bool
}

func (r Runner) String() string { return fmt.Sprintf("run %s of %s", r.Run, r.Benchmark) }

// Unplaced is a runner Job whose pod is on no node yet and that is not pinned: the scheduler may
// put it on any of MayLand (the nodes it fits, less those it avoids).
type Unplaced struct {
	Runner
	MayLand []string
}

// Ledger is what holds slots and nodes now.
type Ledger struct {
	// Active runner Jobs: each holds a concurrency slot.
	Active int
	// Jobs are the active runner Jobs by namespace/name (a Hold's current Job may be one).
	Jobs map[types.NamespacedName]bool
	// Nodes lists the runners on each node (pods bound there) or pinned to it (pods not bound yet).
	Nodes map[string][]Runner
	// Unplaced runners may still land on a node.
	Unplaced []Unplaced
}

// Want is a run that may start as far as its own benchmark is concerned.
type Want struct {
	Run       string
	Exclusive bool
	// Node pins the run (EachNode, or a later engine under Sequential); "" lets the operator
	// choose among Candidates (exclusive) or the scheduler choose (not exclusive).
	Node string
	// Candidates are the nodes an unpinned run fits on, busy or not, in preference order.
	Candidates []string
	// After: the next engine of a Sequential group, which starts on the group's Hold.
	After bool
	// More: engines of its Sequential group follow it; once it starts, its group holds the slot
	// and node (the caller adds the Hold to the queued demand as it reserves the Job).
	More bool
}

// Hold is a Sequential group that has runs left: it keeps Node from one engine to the next (for
// exclusive runs: no one else's run goes there) and a slot between engines (while its current Job
// is active, that Job holds the slot).
type Hold struct {
	Node      string
	Exclusive bool
	Job       types.NamespacedName
}

// Demand is what one benchmark wants and holds.
type Demand struct {
	Benchmark types.NamespacedName
	Created   time.Time
	Wants     []Want
	Holds     []Hold
}

// Grant lets a run start.
type Grant struct {
	Run string
	// Node pins the run's Job ("" lets the scheduler choose).
	Node string
	// Avoid are the nodes a non-exclusive unpinned run fits but must not be scheduled to
	// (exclusive runs use or hold them).
	Avoid []string
}

// Wait says why a run may not start yet.
type Wait struct {
	Run string
	// Reason is kvv1.ReasonWaitingForSlot or kvv1.ReasonWaitingForNode.
	Reason  string
	Message string
	// Ahead counts the benchmarks before this one that also wait for a slot (WaitingForSlot).
	Ahead int
}

// Decision is Admit's answer: the grants of every demand, the waits of the one it explains.
type Decision struct {
	Grants map[types.NamespacedName][]Grant
	Waits  map[types.NamespacedName][]Wait
}

// Order is the fair order of demands: the first of every namespace (oldest first), then the
// second of every namespace, and so on; ties by creation time, namespace and name.
func Order(ds []*Demand) []*Demand {
	out := slices.Clone(ds)
	older := func(a, b *Demand) bool {
		if !a.Created.Equal(b.Created) {
			return a.Created.Before(b.Created)
		}
		if a.Benchmark.Namespace != b.Benchmark.Namespace {
			return a.Benchmark.Namespace < b.Benchmark.Namespace
		}
		return a.Benchmark.Name < b.Benchmark.Name
	}
	sort.SliceStable(out, func(i, j int) bool { return older(out[i], out[j]) })
	rank := make(map[*Demand]int, len(out))
	seen := map[string]int{}
	for _, d := range out {
		rank[d] = seen[d.Benchmark.Namespace]
		seen[d.Benchmark.Namespace]++
	}
	sort.SliceStable(out, func(i, j int) bool { return rank[out[i]] < rank[out[j]] })
	return out
}

// nodeState is who uses, holds or may still get one node.
type nodeState struct {
	users     []Runner             // runners on or pinned to it, and runs granted it here
	exclusive *Runner              // the first exclusive one of users
	heldBy    types.NamespacedName // a Sequential group holds it between its engines
	heldExcl  bool
	landing   *Runner // an unplaced runner that may be scheduled here, for messages
	landingN  int     // unplaced runners that may be scheduled here
	landingEx int     // of them exclusive
}

func (n *nodeState) use(r Runner) {
	n.users = append(n.users, r)
	if r.Exclusive && n.exclusive == nil {
		n.exclusive = &r
	}
}

func (n *nodeState) mayGet(r Runner) {
	if n.landing == nil {
		n.landing = &r
	}
	n.landingN++
	if r.Exclusive {
		n.landingEx++
	}
}

// Admit decides, in Order, which wanted runs may start: limit is the global concurrency limit
// (0: none). A want of explain (a benchmark, or none) that cannot start gets a Wait saying what it
// waits for. It is linear in the demands plus, per run it lets start, the nodes it may go to.
func Admit(limit int, l Ledger, queue []*Demand, explain types.NamespacedName) Decision {
	dec := Decision{Grants: map[types.NamespacedName][]Grant{}, Waits: map[types.NamespacedName][]Wait{}}
	nodes := map[string]*nodeState{}
	node := func(name string) *nodeState {
		n := nodes[name]
		if n == nil {
			n = &nodeState{}
			nodes[name] = n
		}
		return n
	}
	for name, rs := range l.Nodes {
		for _, r := range rs {
			node(name).use(r)
		}
	}
	for _, u := range l.Unplaced {
		for _, name := range u.MayLand {
			node(name).mayGet(u.Runner)
		}
	}
	order := Order(queue)
	// Holds first: whatever the order, a started comparison keeps its node and slot.
	used := l.Active
	heldSlots := map[types.NamespacedName]map[string]int{}
	for _, d := range order {
		for _, h := range d.Holds {
			if h.Node != "" {
				// Also while its Job is active: the Job's pod may have ended before the Job is marked.
				n := node(h.Node)
				n.heldBy, n.heldExcl = d.Benchmark, h.Exclusive
			}
			if l.Jobs[h.Job] {
				continue // its Job holds the slot
			}
			used++
			if heldSlots[d.Benchmark] == nil {
				heldSlots[d.Benchmark] = map[string]int{}
			}
			heldSlots[d.Benchmark][h.Node]++
		}
	}
	// exclusiveFree says whether an exclusive run of b may take the node; why says who is in the way.
	exclusiveFree := func(b types.NamespacedName, name string, why bool) (bool, string) {
		n := node(name)
		switch {
		case len(n.users) > 0:
			return false, explained(why, func() string { return "used by " + n.users[0].String() })
		case n.heldBy != (types.NamespacedName{}) && n.heldBy != b:
			return false, explained(why, func() string {
				return fmt.Sprintf("held by %s between its engines (placement.engines Sequential)", n.heldBy)
			})
		case n.landingN > 0:
			return false, explained(why, func() string { return fmt.Sprintf("%s may still be scheduled there", n.landing) })
		}
		return true, ""
	}
	// sharedFree says whether a non-exclusive run of b may go to the node.
	sharedFree := func(b types.NamespacedName, name string, why bool) (bool, string) {
		n := node(name)
		switch {
		case n.exclusive != nil:
			return false, explained(why, func() string { return "used by " + n.exclusive.String() + ", which is exclusive" })
		case n.heldBy != (types.NamespacedName{}) && n.heldBy != b && n.heldExcl:
			return false, explained(why, func() string {
				return fmt.Sprintf("held by %s between its engines (placement.engines Sequential, exclusive)", n.heldBy)
			})
		case n.landingEx > 0:
			return false, explained(why, func() string { return fmt.Sprintf("an exclusive run (%s) may still be scheduled there", n.landing) })
		}
		return true, ""
	}
	// busyList is the message of a run whose every candidate is busy.
	busyList := func(what string, cands []string, busy []string) string {
		if len(cands) == 0 {
			return "no node fits it"
		}
		msg := fmt.Sprintf("every node it fits (%d) is %s: %s", len(cands), what, strings.Join(busy, "; "))
		if len(cands) > len(busy) {
			msg += fmt.Sprintf("; and %d more", len(cands)-len(busy))
		}
		return msg
	}
	slotWaiters := 0
	for _, d := range order {
		waitedSlot, why := false, d.Benchmark == explain
		for _, w := range d.Wants {
			held := w.After && heldSlots[d.Benchmark][w.Node] > 0
			// A held slot is already counted in used; it is still over the limit when the slot was
			// given to another run between the group's engines (its hold is only known to the queue
			// from the group's next pass): the next engine then waits for the next slot to free, and
			// gets it first, since its hold keeps counting.
			if limit > 0 && (held && used > limit || !held && used >= limit) {
				waitedSlot = true
				if why {
					dec.Waits[d.Benchmark] = append(dec.Waits[d.Benchmark], Wait{Run: w.Run, Reason: kvv1.ReasonWaitingForSlot, Ahead: slotWaiters,
						Message: fmt.Sprintf("all %d concurrency slots are in use (--max-concurrent-runs); %d benchmark(s) ahead in the queue", limit, slotWaiters)})
				}
				continue
			}
			me := Runner{Benchmark: d.Benchmark, Run: w.Run, Exclusive: w.Exclusive}
			g := Grant{Run: w.Run, Node: w.Node}
			var mayLand []string
			var ok bool
			var msg string
			switch {
			case w.Exclusive && w.Node != "":
				if ok, msg = exclusiveFree(d.Benchmark, w.Node, why); msg != "" {
					msg = fmt.Sprintf("node %s is %s", w.Node, msg)
				}
			case w.Node != "":
				if ok, msg = sharedFree(d.Benchmark, w.Node, why); msg != "" {
					msg = fmt.Sprintf("node %s is %s", w.Node, msg)
				}
			case w.Exclusive:
				var busy []string
				for _, c := range w.Candidates {
					free, who := exclusiveFree(d.Benchmark, c, why && len(busy) < 3)
					if free {
						g.Node, ok = c, true
						break
					}
					if who != "" {
						busy = append(busy, c+" "+who)
					}
				}
				if !ok && why {
					msg = busyList("busy", w.Candidates, busy)
				}
			default:
				// The scheduler chooses among the candidates no exclusive run uses or holds.
				var busy []string
				for _, c := range w.Candidates {
					if free, who := sharedFree(d.Benchmark, c, why && len(busy) < 3); free {
						mayLand = append(mayLand, c)
					} else {
						g.Avoid = append(g.Avoid, c)
						if who != "" {
							busy = append(busy, c+" "+who)
						}
					}
				}
				ok = len(mayLand) > 0
				if !ok && why {
					msg = busyList("taken by exclusive runs", w.Candidates, busy)
				}
			}
			if !ok {
				if why {
					dec.Waits[d.Benchmark] = append(dec.Waits[d.Benchmark], Wait{Run: w.Run, Reason: kvv1.ReasonWaitingForNode, Message: msg})
				}
				continue
			}
			if held {
				heldSlots[d.Benchmark][w.Node]--
			} else {
				used++
			}
			if g.Node != "" {
				node(g.Node).use(me)
			}
			for _, c := range mayLand {
				node(c).mayGet(me)
			}
			dec.Grants[d.Benchmark] = append(dec.Grants[d.Benchmark], g)
		}
		if waitedSlot {
			slotWaiters++
		}
	}
	return dec
}

// explained is msg() when why, else "".
func explained(why bool, msg func() string) string {
	if !why {
		return ""
	}
	return msg()
}
