package kvbenchmark

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/event"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/archive"
)

// logSnapshot is what one read of a runner pod's log found.
type logSnapshot struct {
	// Load and Phases are the finished phases the runner streamed (api.ResultPhaseLogPrefix lines).
	Load   *kvv1.PhaseSummary
	Phases []kvv1.PhaseSummary
	// Result is the full result, kept only from a read after the pod ended: the runner's result
	// line, else one assembled from its phase lines (a killed runner writes no result line).
	Result *kvv1.Result
	// Err is why the log could not be read; reads are retried after it. Bad is why what was read
	// cannot be used (a result line that is not a result), which no retry changes.
	Err, Bad error
	// Over says what the limits on runner output left out of what was kept (a *archive.LimitError).
	// It stays once a read found it: a later read that sees less of the log (rotated by the
	// kubelet, which then serves only the current file) cannot take it back.
	Over error
	// Incomplete, of a final read that found the log, says what the log lacks of the whole log a
	// runner that exited 0 writes (archive.Log.Incomplete): the run cannot be decided from it.
	Incomplete error
	// Final: read after the pod ended, so nothing more will come.
	Final bool
	// PodVersion is the pod's resourceVersion when the read started.
	PodVersion string
	// built is the archive made of Result (stamped, compressed), kept until the status naming
	// it is written: a retry stores the same bytes, which pass the digest check.
	built *builtArchive
}

// builtArchive is an archive ConfigMap ready to store.
type builtArchive struct {
	cm      *corev1.ConfigMap
	dropped []string
	res     *kvv1.Result // what cm holds when nothing was dropped
}

// LogReader reads runner pod logs off the reconcile path (on the real clock: its pacing is not
// part of a benchmark's timeline): Reconcile asks for a pod's latest
// snapshot, which starts a read in the background when the last one is stale; when a read ends,
// the benchmark is reconciled again (Events). A read never takes longer than Timeout, so a
// kubelet that does not answer cannot hang the operator.
type LogReader struct {
	Open LogOpener
	// Timeout bounds one read; Refresh is how often a running pod's log is read again.
	Timeout, Refresh time.Duration
	// Limits bound what one read decodes (the operator's memory bound).
	Limits kvv1.ResultLimits
	// Events gets one event per finished read, for the benchmark the pod belongs to; Final, for
	// the reads of ended pods (the pass that decides the run, ahead of the queue).
	Events, Final chan event.GenericEvent
	Clock         clock.PassiveClock
	// Ahead says whether the final read of an ended pod of benchmark owner goes ahead of the other
	// ended pods' (nil: none does): a Sequential comparison between its engines holds a slot and
	// a node nothing else may use until the read has decided the run and its next engine starts.
	Ahead func(owner types.NamespacedName) bool

	mu   sync.Mutex
	pods map[types.UID]*podLog
	// sweptAt is when pods nobody asked about for an hour were last forgotten (at most once a minute).
	sweptAt time.Time
	// At most maxLogReads reads run at once, of them at most maxRefreshes of running pods and
	// maxOverLimits of logs known to be over the limits; the others wait in queue as small
	// requests (a thousand runs' reads are a thousand entries here, not a thousand goroutines with pods).
	active, refreshing, overLimits int
	queue                          []logRead
}

// maxLogReads bounds concurrent log reads. Running pods' refreshes leave one reader to ended pods'
// reads, which decide runs and free slots: a tenant's huge logs, read again every Refresh while
// its pods run, cannot hold every reader.
const (
	maxLogReads  = 4
	maxRefreshes = maxLogReads - 1
	// A final read of a log over the limits decodes up to the whole budget (Limits.Bytes, 32 MiB)
	// for 6 s at scale: a hostile tenant's pods ending together held every reader and a budget
	// each, the operator's memory peak (issue 18's scale runs), while other runs waited to be decided.
	maxOverLimits = 1
)

// logRead is one requested read: what of the pod it needs, and whom to reconcile after.
type logRead struct {
	namespace, name, version string
	uid                      types.UID
	owner                    types.NamespacedName
	ended, ahead             bool
	overLimits               bool      // an earlier read of the pod found its log over the limits
	askedAt                  time.Time // when the read was asked for (its wait for a reader is logged)
}

type podLog struct {
	snap    *logSnapshot
	reading bool
	// finalWanted: the pod ended while a read of it (begun before) ran; the final read follows at once.
	finalWanted bool
	doneAt      time.Time // when the last read ended
	usedAt      time.Time // last Get, to forget pods nobody asks about
}

// NewLogReader returns a reader with its defaults.
func NewLogReader(open LogOpener) *LogReader {
	return &LogReader{Open: open, Timeout: 30 * time.Second, Refresh: 15 * time.Second, Limits: kvv1.DefaultResultLimits,
		Events: make(chan event.GenericEvent, 1024), Final: make(chan event.GenericEvent, 1024), Clock: clock.RealClock{}}
}

// Get returns the pod's latest snapshot (nil before the first read has ended) and starts a new
// read when that one is stale: the pod changed (it ended, or is being deleted), Refresh passed
// while it runs, or a read after it ended failed.
func (l *LogReader) Get(pod *corev1.Pod, owner types.NamespacedName, ended bool) *logSnapshot {
	ahead := ended && l.Ahead != nil && l.Ahead(owner) // before l.mu: Ahead takes the reconciler's locks
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.Clock.Now()
	if l.pods == nil {
		l.pods = map[types.UID]*podLog{}
	}
	if now.Sub(l.sweptAt) > time.Minute {
		for uid, p := range l.pods {
			if !p.reading && now.Sub(p.usedAt) > time.Hour {
				delete(l.pods, uid)
			}
		}
		l.sweptAt = now
	}
	p := l.pods[pod.UID]
	if p == nil {
		p = &podLog{}
		l.pods[pod.UID] = p
	}
	p.usedAt = now
	// A failed read is tried again on the next pass that comes a second after it (the reconciler
	// paces those), a running pod's log every Refresh and whenever the pod changed.
	since := now.Sub(p.doneAt)
	// A running pod whose log was over the limits is not read again until it ends: its run ends
	// ResultOverLimits anyway, and re-reading a tenant's huge log every Refresh (35 MiB through the
	// API server) held up every other tenant's requests.
	stale := p.snap == nil ||
		(ended && !p.snap.Final) ||
		(p.snap.Err != nil && since >= time.Second) ||
		(!p.snap.Final && p.snap.Over == nil && (since >= l.Refresh || p.snap.PodVersion != pod.ResourceVersion && since >= time.Second))
	if ended && p.reading && (p.snap == nil || !p.snap.Final) {
		l.wantFinal(pod.UID, p, ahead)
	}
	if stale && !p.reading {
		p.reading = true
		req := logRead{namespace: pod.Namespace, name: pod.Name, version: pod.ResourceVersion, uid: pod.UID, owner: owner, ended: ended, ahead: ahead,
			overLimits: p.snap != nil && p.snap.Over != nil, askedAt: time.Now()}
		switch {
		case l.active < maxLogReads && l.startable(req):
			l.active++
			l.begin(req)
			go l.readAll(req)
		case ended:
			l.queueFinal(req)
		default:
			l.queue = append(l.queue, req)
		}
	}
	return p.snap
}

// queueFinal queues an ended pod's read, which decides its run and frees its slot, ahead of the
// running pods' refreshes, and a read that goes ahead (Ahead) ahead of the other ended pods' (l.mu held).
func (l *LogReader) queueFinal(req logRead) {
	i := 0
	for i < len(l.queue) && l.queue[i].ended && (l.queue[i].ahead || !req.ahead) {
		i++
	}
	l.queue = slices.Insert(l.queue, i, req)
}

// wantFinal makes the read of pod uid that is queued or running when the pod ends a final one:
// a queued refresh becomes the final read (moved ahead), a running one is followed by it (l.mu held).
func (l *LogReader) wantFinal(uid types.UID, p *podLog, ahead bool) {
	for i, q := range l.queue {
		if q.uid == uid {
			if !q.ended {
				l.queue = slices.Delete(l.queue, i, i+1)
				q.ended, q.ahead = true, ahead
				l.queueFinal(q)
			}
			return
		}
	}
	p.finalWanted = true
}

// startable says whether req may start now, with a reader free (l.mu held).
func (l *LogReader) startable(req logRead) bool {
	return (req.ended || l.refreshing < maxRefreshes) && (!req.overLimits || l.overLimits < maxOverLimits)
}

// begin counts req as running, end as done (l.mu held).
func (l *LogReader) begin(req logRead) { l.count(req, 1) }
func (l *LogReader) end(req logRead)   { l.count(req, -1) }

func (l *LogReader) count(req logRead, d int) {
	if !req.ended {
		l.refreshing += d
	}
	if req.overLimits {
		l.overLimits += d
	}
}

// take removes and returns the first queued read that may start now (l.mu held).
func (l *LogReader) take() (logRead, bool) {
	for i, req := range l.queue {
		if l.startable(req) {
			l.queue = slices.Delete(l.queue, i, i+1)
			return req, true
		}
	}
	return logRead{}, false
}

// FinalPending says whether the read of ended pod uid that gives its final snapshot is queued or
// running: its end reconciles the pod's benchmark.
func (l *LogReader) FinalPending(uid types.UID) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.pods[uid]
	return p != nil && p.reading && (p.snap == nil || !p.snap.Final)
}

// keepBuilt remembers the archive built from the pod's final snapshot.
func (l *LogReader) keepBuilt(uid types.UID, a *builtArchive) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p := l.pods[uid]; p != nil && p.snap != nil {
		p.snap.built = a
	}
}

// Forget drops what is kept of a pod (its full result, once the status naming its archive is written).
func (l *LogReader) Forget(uid types.UID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p := l.pods[uid]; p != nil && !p.reading {
		delete(l.pods, uid)
	}
}

// readAll does req, then the queued reads, until the queue is empty.
func (l *LogReader) readAll(req logRead) {
	for {
		began := time.Now()
		snap := l.readOnce(req)
		logf.Log.WithName("logreader").V(1).Info("read", "pod", req.namespace+"/"+req.name, "final", req.ended,
			"waited", began.Sub(req.askedAt).Seconds(), "took", time.Since(began).Seconds(), "err", snap.Err, "over", snap.Over != nil)
		l.mu.Lock()
		news := true
		if p := l.pods[req.uid]; p != nil {
			news = req.ended || shown(snap) != shown(p.snap)
			// A failed read keeps the phases an earlier read found.
			if (snap.Err != nil || snap.Bad != nil) && p.snap != nil {
				keep := *p.snap
				keep.Err, keep.Bad, keep.Final, keep.PodVersion, keep.Incomplete = snap.Err, snap.Bad, snap.Final, snap.PodVersion, snap.Incomplete
				if snap.Over != nil {
					keep.Over = snap.Over
				}
				snap = &keep
			}
			if snap.Over == nil && p.snap != nil && p.snap.Over != nil {
				snap.Over = p.snap.Over
			}
			p.snap, p.reading, p.doneAt = snap, false, l.Clock.Now()
			if p.finalWanted && !req.ended {
				p.reading = true
				final := req
				final.ended, final.overLimits, final.askedAt = true, snap.Over != nil, time.Now()
				l.queueFinal(final)
			}
			p.finalWanted = false // asked for, or this read was the final one
		}
		l.end(req)
		// Ended pods' reads are queued first; a refresh waits for a refresh's reader, a log over
		// the limits for that reader.
		next, more := l.take()
		if more {
			l.begin(next)
		} else {
			l.active--
		}
		l.mu.Unlock()
		// A refresh that found what the last read found needs no pass (a thousand running pods'
		// refreshes were a quarter of the work queue); the running pod's periodic pass reads again.
		if news {
			b := &kvv1.KVBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: req.owner.Namespace, Name: req.owner.Name}}
			events := l.Events
			if req.ended && l.Final != nil {
				events = l.Final
			}
			select {
			case events <- event.GenericEvent{Object: b}:
			default: // full: the benchmark's periodic requeue picks the snapshot up
			}
		}
		if !more {
			return
		}
		req = next
	}
}

// snapshotShows is what a pass takes from a snapshot into status: a refresh that changes none of it
// changes nothing a pass would write.
type snapshotShows struct {
	final, err, bad, over, load bool
	phases                      int
}

func shown(s *logSnapshot) snapshotShows {
	if s == nil {
		return snapshotShows{}
	}
	return snapshotShows{final: s.Final, err: s.Err != nil, bad: s.Bad != nil, over: s.Over != nil, load: s.Load != nil, phases: len(s.Phases)}
}

func (l *LogReader) readOnce(req logRead) *logSnapshot {
	ended := req.ended
	snap := &logSnapshot{Final: ended, PodVersion: req.version}
	ctx, cancel := context.WithTimeout(context.Background(), l.Timeout)
	defer cancel()
	rc, err := l.Open(ctx, req.namespace, req.name, kvv1.ContainerName)
	if err != nil {
		snap.Err = fmt.Errorf("reading the log of pod %s: %w", req.name, err)
		return snap
	}
	defer rc.Close()
	// While the pod runs, only the finished phases' summaries (the periodic read); once it ended,
	// the phases in full and the result line, for the archive.
	lg, err := archive.ReadLog(rc, l.Limits, ended)
	switch {
	case err != nil:
		snap.Err = fmt.Errorf("reading the log of pod %s: %w", req.name, err)
		return snap
	case lg.ResultErr != nil:
		snap.Bad = lg.ResultErr
		return snap
	}
	snap.Over = lg.Over
	if lg.Load != nil {
		snap.Load = &lg.Load.PhaseSummary
	}
	if len(lg.Phases) > 0 {
		snap.Phases = make([]kvv1.PhaseSummary, len(lg.Phases)) // exact: a hostile log has 10,000
		for i := range lg.Phases {
			snap.Phases[i] = lg.Phases[i].PhaseSummary
		}
	}
	if ended {
		snap.Incomplete = lg.Incomplete()
		res := lg.Result
		if res == nil && (lg.Load != nil || len(lg.Phases) > 0) {
			res = &kvv1.Result{SchemaVersion: kvv1.ResultSchemaVersion, Load: lg.Load, Phases: lg.Phases,
				Error: "the runner ended without its result line (killed?); this result holds the phases it logged as they finished"}
		}
		snap.Result = res
	}
	return snap
}
