package kvbenchmark

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/controllers/plan"
	"github.com/kvbench/kvbench-operator/controllers/render"
	"github.com/kvbench/kvbench-operator/controllers/slots"
)

// The reconciler's side of controllers/slots: the ledger read from the cache (only Jobs a
// KVBenchmark controls, and their pods), the queue of benchmarks that want or hold slots and
// nodes, the nodes an exclusive run fits, and waking the benchmarks a freed slot or node lets
// start. All of it is guarded by slotMu, which also makes deciding and creating Jobs one step.

// createdJob is a Job this process created that the cache may not show yet.
type createdJob struct {
	at      time.Time
	runner  slots.Runner
	node    string
	mayLand []string // not pinned: the nodes the scheduler may put it on
}

// refusal is a node the scheduler refused for a run placed there by the operator.
type refusal struct {
	at      time.Time
	message string
}

// ledger is what holds slots and nodes now, from the cache plus the Jobs created but not cached yet:
// a runner Job holds a slot (and its node) until its pod has ended, which the Job controller may
// mark on the Job much later on a busy control plane.
func (r *KVBenchmarkReconciler) ledger(ctx context.Context, now time.Time) (slots.Ledger, error) {
	// Forget the created Jobs the cache has before listing it, never after: a Job that reaches the
	// cache between the list and the check would be in neither, and its slot given twice.
	r.mu.Lock()
	for k, c := range r.created {
		if r.cachedJob(ctx, k) || now.Sub(c.at) > time.Minute {
			delete(r.created, k)
		}
	}
	r.mu.Unlock()
	var jobs batchv1.JobList
	if err := r.List(ctx, &jobs, client.MatchingFields{activeIndex: "true"}, client.UnsafeDisableDeepCopy); err != nil {
		return slots.Ledger{}, err
	}
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.MatchingFields{activeIndex: "true"}, client.UnsafeDisableDeepCopy); err != nil {
		return slots.Ledger{}, err
	}
	l := slots.Ledger{Jobs: map[types.NamespacedName]bool{}, Nodes: map[string][]slots.Runner{}}
	byUID := map[types.UID]*batchv1.Job{}
	for i := range jobs.Items {
		byUID[jobs.Items[i].UID] = &jobs.Items[i]
	}
	bound := map[types.UID]bool{}
	boundTo := map[types.NamespacedName]string{}
	for i := range pods.Items {
		pod := &pods.Items[i]
		ref := metav1.GetControllerOf(pod)
		if ref == nil || ref.Kind != "Job" {
			continue
		}
		if j := byUID[ref.UID]; j != nil {
			l.Nodes[pod.Spec.NodeName] = append(l.Nodes[pod.Spec.NodeName], runnerOf(j))
			bound[j.UID] = true
			boundTo[types.NamespacedName{Namespace: j.Namespace, Name: j.Name}] = pod.Spec.NodeName
		} else if pod.DeletionTimestamp != nil && now.Before(pod.DeletionTimestamp.Add(podGoneGrace)) {
			// The pod of a deleted runner Job, still stopping: its node is not free yet.
			l.Nodes[pod.Spec.NodeName] = append(l.Nodes[pod.Spec.NodeName], slots.Runner{
				Benchmark: types.NamespacedName{Namespace: pod.Namespace, Name: pod.Labels[kvv1.LabelBenchmark]},
				Run:       pod.Labels[kvv1.LabelRun], Exclusive: pod.Labels[kvv1.LabelExclusive] == "true"})
		}
	}
	r.pinHolds(boundTo)
	var nodes *corev1.NodeList
	for _, j := range byUID {
		if !bound[j.UID] {
			ended, err := r.podEnded(ctx, j)
			if err != nil {
				return slots.Ledger{}, err
			}
			if ended {
				continue // its runner is done: the Job controller has not marked the Job yet
			}
		}
		l.Active++
		l.Jobs[types.NamespacedName{Namespace: j.Namespace, Name: j.Name}] = true
		if bound[j.UID] {
			continue // on its node already
		}
		ps := &j.Spec.Template.Spec
		if n := render.PinnedNode(ps); n != "" {
			l.Nodes[n] = append(l.Nodes[n], runnerOf(j))
			continue
		}
		if nodes == nil {
			nodes = &corev1.NodeList{}
			if err := r.List(ctx, nodes, client.UnsafeDisableDeepCopy); err != nil {
				return slots.Ledger{}, err
			}
		}
		l.Unplaced = append(l.Unplaced, slots.Unplaced{Runner: runnerOf(j), MayLand: fitting(nodes.Items, ps)})
	}
	// Jobs this process created that the cache had not shown before the list.
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, c := range r.created {
		if l.Jobs[k] {
			continue // listed after all (it reached the cache since)
		}
		l.Active++
		l.Jobs[k] = true
		if c.node != "" {
			l.Nodes[c.node] = append(l.Nodes[c.node], c.runner)
		} else {
			l.Unplaced = append(l.Unplaced, slots.Unplaced{Runner: c.runner, MayLand: c.mayLand})
		}
	}
	return l, nil
}

// holding says whether benchmark k holds a slot or node for a Sequential comparison's next engine.
func (r *KVBenchmarkReconciler) holding(k types.NamespacedName) bool {
	r.slotMu.Lock()
	defer r.slotMu.Unlock()
	d := r.queue[k]
	return d != nil && len(d.Holds) > 0
}

// pinHolds gives the holds of Sequential groups the scheduler places (shared runs, no pinned node)
// the node their current Job's pod is bound to (slotMu held). The group's next engine runs there,
// so the node stays held from the moment that pod ends, not from the group's next pass, which may
// come seconds later: an exclusive run took the node in between at scale, and the comparison's
// next engine waited for it.
func (r *KVBenchmarkReconciler) pinHolds(boundTo map[types.NamespacedName]string) {
	for _, d := range r.queue {
		for i := range d.Holds {
			if h := &d.Holds[i]; h.Node == "" && boundTo[h.Job] != "" {
				h.Node = boundTo[h.Job]
			}
		}
	}
}

// podEnded: a pod of the Job has ended (succeeded or failed; a runner Job has one pod).
func (r *KVBenchmarkReconciler) podEnded(ctx context.Context, j *batchv1.Job) (bool, error) {
	if j.Status.Active == 0 && j.Status.Succeeded+j.Status.Failed > 0 {
		return true, nil
	}
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(j.Namespace), client.MatchingFields{ownerIndex: string(j.UID)}, client.UnsafeDisableDeepCopy); err != nil {
		return false, err
	}
	for i := range pods.Items {
		if ph := pods.Items[i].Status.Phase; ph == corev1.PodSucceeded || ph == corev1.PodFailed {
			return true, nil
		}
	}
	return false, nil
}

// cachedJob: the cache has the Job (it may have finished already).
func (r *KVBenchmarkReconciler) cachedJob(ctx context.Context, k types.NamespacedName) bool {
	return r.Get(ctx, k, &batchv1.Job{}) == nil
}

func runnerOf(j *batchv1.Job) slots.Runner {
	bench := ""
	if ref := metav1.GetControllerOf(j); ref != nil {
		bench = ref.Name
	}
	return slots.Runner{Benchmark: types.NamespacedName{Namespace: j.Namespace, Name: bench}, Run: j.Labels[kvv1.LabelRun],
		Exclusive: j.Spec.Template.Labels[kvv1.LabelExclusive] == "true"}
}

// expect remembers a Job this process created until the cache shows it.
func (r *KVBenchmarkReconciler) expect(job *batchv1.Job, runner slots.Runner, mayLand []string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.created == nil {
		r.created = map[types.NamespacedName]createdJob{}
	}
	r.created[types.NamespacedName{Namespace: job.Namespace, Name: job.Name}] = createdJob{at: now, runner: runner,
		node: render.PinnedNode(&job.Spec.Template.Spec), mayLand: mayLand}
}

// fitting are the nodes a pod spec fits (its node affinity includes the nodes it avoids).
func fitting(nodes []corev1.Node, ps *corev1.PodSpec) []string {
	pod := &corev1.Pod{Spec: *ps}
	affinity := nodeaffinity.GetRequiredNodeAffinity(pod)
	var out []string
	for i := range nodes {
		if unfit(&nodes[i], pod, affinity, requestsOf(ps)) == "" {
			out = append(out, nodes[i].Name)
		}
	}
	return out
}

func requestsOf(ps *corev1.PodSpec) corev1.ResourceList {
	if len(ps.Containers) == 0 {
		return nil
	}
	return ps.Containers[0].Resources.Requests
}

// candidates are the nodes a runner pod fits (sorted by name), without the nodes the scheduler
// refused it on; when none, why not, node by node in counts. Busy or not: slots.Admit knows who
// uses a node. The fit is what the operator can see: node selector and required node affinity,
// taints, cordon, readiness and allocatable memory and CPU; the scheduler still checks the rest
// (other pods' usage, volumes, pod affinity), and a node it refuses is not chosen again for a while.
func (r *KVBenchmarkReconciler) candidates(ctx context.Context, job *batchv1.Job, refused map[string]refusal) ([]string, string, error) {
	var nodes corev1.NodeList
	if err := r.List(ctx, &nodes, client.UnsafeDisableDeepCopy); err != nil {
		return nil, "", err
	}
	pod := &corev1.Pod{Spec: job.Spec.Template.Spec}
	affinity := nodeaffinity.GetRequiredNodeAffinity(pod)
	requests := requestsOf(&pod.Spec)
	var out []string
	counts := map[string]int{}
	var lastRefusal string
	for i := range nodes.Items {
		n := &nodes.Items[i]
		why := unfit(n, pod, affinity, requests)
		if why == "" && refused[n.Name].message != "" {
			why, lastRefusal = "refused by the scheduler", n.Name+": "+refused[n.Name].message
		}
		if why != "" {
			counts[why]++
			continue
		}
		out = append(out, n.Name)
	}
	slices.Sort(out)
	if len(out) > 0 {
		return out, "", nil
	}
	var parts []string
	for why, n := range counts {
		parts = append(parts, fmt.Sprintf("%d %s", n, why))
	}
	slices.Sort(parts)
	msg := fmt.Sprintf("no node fits the runner pod: of %d node(s), %s", len(nodes.Items), strings.Join(parts, ", "))
	if len(nodes.Items) == 0 {
		msg = "no node fits the runner pod: the cluster has no nodes"
	}
	if lastRefusal != "" {
		msg += " (" + lastRefusal + ")"
	}
	return nil, truncate(msg), nil
}

// unfit says why the pod does not fit the node ("" when it does).
func unfit(n *corev1.Node, pod *corev1.Pod, affinity nodeaffinity.RequiredNodeAffinity, requests corev1.ResourceList) string {
	if n.Spec.Unschedulable {
		return "cordoned"
	}
	if !nodeReady(n) {
		return "not Ready"
	}
	if ok, _ := affinity.Match(n); !ok {
		return "do not match its node affinity/selector"
	}
	noSchedule := func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}
	if _, untolerated := corev1helpers.FindMatchingUntoleratedTaint(n.Spec.Taints, pod.Spec.Tolerations, noSchedule); untolerated {
		return "have a taint it does not tolerate"
	}
	for name, q := range requests {
		if have, ok := n.Status.Allocatable[name]; ok && have.Cmp(q) < 0 {
			return fmt.Sprintf("have less %s allocatable than its %s", name, q.String())
		}
	}
	return ""
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// rotate starts nodes at a place derived from key.
func rotate(nodes []string, key string) []string {
	h := fnv.New32a()
	h.Write([]byte(key))
	i := int(h.Sum32() % uint32(len(nodes)))
	return append(nodes[i:len(nodes):len(nodes)], nodes[:i]...)
}

// nodeUnavailable says why a run cannot be pinned to node ("" when it can): the node was deleted
// or is cordoned. A node the cache does not know is looked up on the API server before it is
// declared gone (a node listed a moment ago for spread EachNode may not be cached yet).
func (r *KVBenchmarkReconciler) nodeUnavailable(ctx context.Context, name string) (string, error) {
	var n corev1.Node
	err := r.Get(ctx, client.ObjectKey{Name: name}, &n)
	if apierrors.IsNotFound(err) {
		err = r.APIReader.Get(ctx, client.ObjectKey{Name: name}, &n)
	}
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Sprintf("node %s no longer exists", name), nil
	case err != nil:
		return "", fmt.Errorf("get node %s: %w", name, err)
	case n.Spec.Unschedulable:
		return fmt.Sprintf("node %s is cordoned", name), nil
	}
	return "", nil
}

// unexpect drops the reservation of a Job that was not created.
func (r *KVBenchmarkReconciler) unexpect(job *batchv1.Job) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.created, types.NamespacedName{Namespace: job.Namespace, Name: job.Name})
}

// refusedNodes are the nodes the scheduler refused for a run the operator placed, within the
// unschedulable timeout (after that a node may be tried again).
func (r *KVBenchmarkReconciler) refusedNodes(run string, now time.Time) map[string]refusal {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]refusal{}
	for node, f := range r.refused[run] {
		if now.Sub(f.at) < r.Config.UnschedulableTimeout {
			out[node] = f
		}
	}
	return out
}

func (r *KVBenchmarkReconciler) refuse(run, node, message string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refused == nil {
		r.refused = map[string]map[string]refusal{}
	}
	if r.refused[run] == nil {
		r.refused[run] = map[string]refusal{}
	}
	r.refused[run][node] = refusal{at: now, message: message}
}

// forgetPlacement drops what the reconciler keeps about a benchmark that is gone.
func (r *KVBenchmarkReconciler) forgetPlacement(ctx context.Context, key types.NamespacedName) {
	r.slotMu.Lock()
	if d := r.queue[key]; d != nil {
		delete(r.queue, key)
		if len(d.Holds) > 0 { // what it held between engines is free now
			if err := r.wakeGranted(ctx, r.Clock.Now(), r.wakeUp); err != nil {
				logf.FromContext(ctx).Error(err, "read the ledger of slots and nodes")
			}
		}
	}
	r.slotMu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	for k := range r.refused {
		if strings.HasPrefix(k, key.String()+"/") {
			delete(r.refused, k)
		}
	}
	delete(r.unsent, key)
}

func refusalKey(b *kvv1.KVBenchmark, run string) string {
	return b.Namespace + "/" + b.Name + "/" + run
}

// demand is what pass p wants (runs that may start as far as the benchmark itself is concerned)
// and holds (Sequential groups between engines). Runs that cannot start at all are failed or
// given their reason in p's statuses: a pinned node that is gone or cordoned, an operator
// misconfiguration, no node that fits.
func (r *KVBenchmarkReconciler) demand(ctx context.Context, p *pass) (*slots.Demand, map[string]*batchv1.Job, error) {
	b := p.b
	exclusive := render.Exclusive(b)
	starts, waits, holds := plan.Sequence(b.Spec.Placement.Engines, p.runs, p.statuses, p.missing)
	for _, w := range waits {
		p.statuses[w.Index].Reason, p.statuses[w.Index].Message = kvv1.ReasonWaitingForRun, w.Message
	}
	d := &slots.Demand{Benchmark: p.key(), Created: b.CreationTimestamp.Time}
	jobs := map[string]*batchv1.Job{}
	for _, s := range starts {
		run, st := &p.runs[s.Index], &p.statuses[s.Index]
		run.Node, st.NodeName = s.Node, s.Node
		if s.Node != "" {
			why, err := r.nodeUnavailable(ctx, s.Node)
			if err != nil {
				return nil, nil, err
			}
			if why != "" {
				what := "the node of this EachNode run"
				if s.After {
					what = "the node the earlier engines ran on; the comparison cannot go on on another machine (create the benchmark anew)"
				}
				p.fail(s.Index, kvv1.ReasonNodeUnavailable, fmt.Sprintf("%s (%s)", why, what))
				continue
			}
		}
		job, err := render.Job(b, *run, r.Config.Render)
		if err != nil {
			p.fail(s.Index, "InvalidOperatorConfig", err.Error())
			continue
		}
		w := slots.Want{Run: run.Name, Exclusive: exclusive, Node: s.Node, After: s.After, More: s.More}
		if s.Node == "" {
			cands, why, err := r.candidates(ctx, job, r.refusedNodes(refusalKey(b, run.Name), p.now))
			if err != nil {
				return nil, nil, err
			}
			if len(cands) == 0 {
				p.waitBounded(s.Index, kvv1.ReasonUnschedulable, why, r.Config.UnschedulableTimeout)
				p.want(r.slotRetry()) // a node may be labelled, uncordoned or added
				continue
			}
			if exclusive {
				// Spread exclusive runs over the fleet rather than pile them onto the first nodes by name
				// (which may be the few that other benchmarks need, such as the NVMe ones).
				cands = rotate(cands, refusalKey(b, run.Name))
			}
			w.Candidates = cands
		}
		jobs[run.Name] = job
		d.Wants = append(d.Wants, w)
	}
	for _, h := range holds {
		d.Holds = append(d.Holds, slots.Hold{Node: h.Node, Exclusive: exclusive,
			Job: types.NamespacedName{Namespace: b.Namespace, Name: p.runs[h.Index].JobName}})
	}
	return d, jobs, nil
}

// start is a run admitted to start now, with the Job to create.
type start struct {
	index int
	job   *batchv1.Job
}

// admitted decides under slotMu with every other benchmark in the queue which of d's wants may
// start, and reserves their slots and nodes in the ledger (expect) before it lets go of the lock,
// so the Jobs are created without holding it. It sets the waits' reasons in p and wakes the other
// benchmarks the decision lets start.
func (r *KVBenchmarkReconciler) admitted(ctx context.Context, p *pass, d *slots.Demand, jobs map[string]*batchv1.Job) ([]start, error) {
	r.slotMu.Lock()
	defer r.slotMu.Unlock()
	if err := r.seedQueue(ctx, p.now); err != nil {
		return nil, err
	}
	old := r.queue[d.Benchmark]
	if len(d.Wants) == 0 && len(d.Holds) == 0 {
		delete(r.queue, d.Benchmark)
	} else {
		r.queue[d.Benchmark] = d
	}
	if len(d.Wants) == 0 {
		if old != nil && len(old.Holds) > len(d.Holds) {
			// A comparison let go of a node or slot it held: whoever waits for it may start.
			return nil, r.wakeGranted(ctx, p.now, r.wakeUp)
		}
		return nil, nil
	}
	l, err := r.ledger(ctx, p.now)
	if err != nil {
		return nil, err
	}
	queued := r.queued()
	dec := slots.Admit(r.Config.MaxConcurrentRuns, l, queued, d.Benchmark)
	for _, w := range dec.Waits[d.Benchmark] {
		i := p.index(w.Run)
		if prev := p.prev[w.Run]; w.Reason == kvv1.ReasonWaitingForSlot && prev != nil && prev.Reason == w.Reason {
			w.Message = prev.Message // the queue position when it began waiting: no status write per move
		}
		p.waitBounded(i, w.Reason, w.Message, deadline(p.b))
		p.want(r.waitRetry(len(queued)))
	}
	var starts []start
	for _, g := range dec.Grants[d.Benchmark] {
		i := p.index(g.Run)
		run, st := &p.runs[i], &p.statuses[i]
		job := jobs[g.Run]
		want := wantOf(d, g.Run)
		if g.Node != run.Node || len(g.Avoid) > 0 {
			// The free node the operator chose for an exclusive run, or the nodes a shared run avoids.
			run.Picked = run.Node == "" && g.Node != ""
			run.Node, run.Avoid, st.NodeName = g.Node, g.Avoid, g.Node
			if job, err = render.Job(p.b, *run, r.Config.Render); err != nil {
				p.fail(i, "InvalidOperatorConfig", err.Error())
				continue
			}
		}
		st.Reason, st.Message, st.WaitingSince = "", "", nil
		var mayLand []string
		if run.Node == "" {
			mayLand = slices.DeleteFunc(slices.Clone(want.Candidates), func(n string) bool { return slices.Contains(g.Avoid, n) })
		}
		r.expect(job, slots.Runner{Benchmark: d.Benchmark, Run: run.Name, Exclusive: want.Exclusive}, mayLand, p.now)
		d.Wants = slices.DeleteFunc(d.Wants, func(w slots.Want) bool { return w.Run == g.Run })
		jobKey := types.NamespacedName{Namespace: job.Namespace, Name: job.Name}
		if want.More && !slices.ContainsFunc(d.Holds, func(h slots.Hold) bool { return h.Job == jobKey }) {
			// The group holds its slot and node from now on, not from its next pass: that pass may
			// come only when this Job's pod has ended, and the slot its end frees must not go to
			// another benchmark meanwhile.
			d.Holds = append(d.Holds, slots.Hold{Node: g.Node, Exclusive: want.Exclusive, Job: jobKey})
		}
		starts = append(starts, start{index: i, job: job})
	}
	for k, gs := range dec.Grants {
		if k != d.Benchmark && len(gs) > 0 {
			r.wakeUp(k)
		}
	}
	return starts, nil
}

// wantOf is the want of the run named run in d.
func wantOf(d *slots.Demand, run string) slots.Want {
	for _, w := range d.Wants {
		if w.Run == run {
			return w
		}
	}
	return slots.Want{}
}

func (r *KVBenchmarkReconciler) queued() []*slots.Demand {
	out := make([]*slots.Demand, 0, len(r.queue))
	for _, d := range r.queue {
		out = append(out, d)
	}
	return out
}

// seedQueue fills the queue once per process from the cached benchmarks, so that after a restart
// a benchmark reconciled early does not take the slot or node of one reconciled later (a
// Sequential comparison between its engines, or an older waiting benchmark).
func (r *KVBenchmarkReconciler) seedQueue(ctx context.Context, now time.Time) error {
	if r.queue != nil {
		return nil
	}
	r.queue = map[types.NamespacedName]*slots.Demand{}
	var list kvv1.KVBenchmarkList
	if err := r.List(ctx, &list); err != nil {
		return err
	}
	for i := range list.Items {
		b := &list.Items[i]
		if b.Status.Phase == kvv1.PhaseSucceeded || b.Status.Phase == kvv1.PhaseFailed || len(b.Status.Runs) == 0 || !b.DeletionTimestamp.IsZero() {
			continue
		}
		p, err := r.passFromStatus(ctx, b, now)
		if err != nil {
			return err
		}
		d, _, err := r.demand(ctx, p)
		if err != nil {
			return err
		}
		if len(d.Wants) > 0 || len(d.Holds) > 0 {
			r.queue[d.Benchmark] = d
		}
	}
	return nil
}

// passFromStatus is a pass over b's persisted status and cached Jobs, without reading pods: enough
// to know what b wants and holds.
func (r *KVBenchmarkReconciler) passFromStatus(ctx context.Context, b *kvv1.KVBenchmark, now time.Time) (*pass, error) {
	runs, err := r.planRuns(ctx, b)
	if err != nil {
		return nil, err
	}
	p := &pass{b: b, now: now, runs: runs, prev: map[string]*kvv1.RunStatus{}}
	var jobs batchv1.JobList
	if err := r.List(ctx, &jobs, client.InNamespace(b.Namespace), client.MatchingFields{ownerIndex: string(b.UID)}); err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, j := range jobs.Items {
		have[j.Name] = true
	}
	for i := range b.Status.Runs {
		p.prev[b.Status.Runs[i].Name] = &b.Status.Runs[i]
	}
	p.statuses = make([]kvv1.RunStatus, len(runs))
	for i, run := range runs {
		p.statuses[i] = kvv1.RunStatus{Name: run.Name, Phase: kvv1.RunPending}
		if prev := p.prev[run.Name]; prev != nil {
			p.statuses[i] = *prev.DeepCopy()
		}
		if !have[run.JobName] && p.statuses[i].Phase == kvv1.RunPending {
			p.missing = append(p.missing, i)
		}
	}
	return p, nil
}

// wakeUp reconciles a benchmark the queue lets start now.
func (r *KVBenchmarkReconciler) wakeUp(k types.NamespacedName) {
	b := &kvv1.KVBenchmark{}
	b.Namespace, b.Name = k.Namespace, k.Name
	select {
	case r.wake <- event.GenericEvent{Object: b}:
	default: // full: the safety-net requeue will do
	}
}

// freed is the event handler of runner Jobs and pods: when one stops holding a slot or a node
// (a Job finished or went, a pod ended or went), the benchmarks the queue lets start now are
// reconciled, first come first served, instead of every waiting benchmark.
func (r *KVBenchmarkReconciler) freed() handler.Funcs {
	wake := func(ctx context.Context, o client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		r.slotMu.Lock()
		defer r.slotMu.Unlock()
		if pod, ok := o.(*corev1.Pod); ok && pod.Spec.NodeName != "" {
			if ref := metav1.GetControllerOf(pod); ref != nil && ref.Kind == "Job" {
				r.pinHolds(map[types.NamespacedName]string{{Namespace: pod.Namespace, Name: ref.Name}: pod.Spec.NodeName})
			}
		}
		if err := r.wakeGranted(ctx, r.Clock.Now(), func(k types.NamespacedName) { addUrgent(q, reconcile.Request{NamespacedName: k}) }); err != nil {
			logf.FromContext(ctx).Error(err, "read the ledger of slots and nodes")
		}
	}
	return handler.Funcs{
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if len(activeOf(e.ObjectOld)) > 0 && len(activeOf(e.ObjectNew)) == 0 {
				wake(ctx, e.ObjectNew, q)
			}
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			wake(ctx, e.Object, q)
		},
	}
}

// wakeGranted wakes the queued benchmarks that may start something now (slotMu held).
func (r *KVBenchmarkReconciler) wakeGranted(ctx context.Context, now time.Time, wake func(types.NamespacedName)) error {
	if len(r.queue) == 0 {
		return nil
	}
	l, err := r.ledger(ctx, now)
	if err != nil {
		return err
	}
	for k, gs := range slots.Admit(r.Config.MaxConcurrentRuns, l, r.queued(), types.NamespacedName{}).Grants {
		if len(gs) > 0 {
			wake(k)
		}
	}
	return nil
}

// deadline bounds each wait of a run before its Job exists (spec.deadline, 24h by default).
func deadline(b *kvv1.KVBenchmark) time.Duration {
	if b.Spec.Deadline != nil && b.Spec.Deadline.Duration > 0 {
		return b.Spec.Deadline.Duration
	}
	return 24 * time.Hour
}
