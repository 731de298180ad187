package kvbenchmark

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/event"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

func phaseLine(t *testing.T, p kvv1.PhaseResult) string {
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return kvv1.ResultPhaseLogPrefix + string(b) + "\n"
}

// readSnapshot reads one log through a LogReader as the reconciler does and returns the snapshot.
func readSnapshot(t *testing.T, log string, ended bool) *logSnapshot {
	t.Helper()
	l := NewLogReader(func(context.Context, string, string, string) (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(log)), nil
	})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u1", ResourceVersion: "1"}}
	owner := types.NamespacedName{Namespace: "ns", Name: "b"}
	l.Get(pod, owner, ended)
	select {
	case <-l.Events:
	case <-l.Final:
	case <-time.After(time.Minute):
		t.Fatal("no event after the read")
	}
	return l.Get(pod, owner, ended)
}

func TestLogSnapshot(t *testing.T) {
	load := kvv1.PhaseResult{PhaseSummary: kvv1.PhaseSummary{Workload: "load", Threads: 1, Ops: 10, Seconds: 1}}
	p0 := kvv1.PhaseResult{PhaseSummary: kvv1.PhaseSummary{Workload: "readrandom", Threads: 1, OpsPerSec: 5},
		Intervals: []kvv1.IntervalSample{{OffsetSeconds: 1, OpsPerSec: 5}}}
	p1 := kvv1.PhaseResult{PhaseSummary: kvv1.PhaseSummary{Index: 1, Workload: "readrandom", Threads: 2, OpsPerSec: 9}}
	log := "Engine: x\n" + phaseLine(t, load) + " " + kvv1.ResultPhaseLogPrefix + "{not the runner's}\n" +
		phaseLine(t, p0) + kvv1.ResultPhaseLogPrefix + "{truncated\n" + phaseLine(t, p1)
	s := readSnapshot(t, log, false)
	if s.Err != nil || s.Bad != nil || s.Over != nil || s.Load == nil || s.Load.Ops != 10 || len(s.Phases) != 2 || s.Phases[1].Index != 1 || s.Result != nil {
		t.Fatalf("while running: %+v", s)
	}
	// Ended without a result line (killed): the result is made of the phase lines, in full.
	s = readSnapshot(t, log, true)
	if s.Result == nil || len(s.Result.Phases) != 2 || len(s.Result.Phases[0].Intervals) != 1 || !strings.Contains(s.Result.Error, "without its result line") {
		t.Fatalf("ended without a result line: %+v", s.Result)
	}
	full, _ := json.Marshal(&kvv1.Result{SchemaVersion: kvv1.ResultSchemaVersion, Engine: "pebble", Phases: []kvv1.PhaseResult{p0, p1}})
	withResult := log + kvv1.ResultLogPrefix + string(full) + "\n"
	if s := readSnapshot(t, withResult, true); s.Result == nil || s.Result.Engine != "pebble" || len(s.Result.Phases) != 2 {
		t.Fatalf("with a result line: %+v", s)
	}
	// A running runner's result lines are not decoded: the periodic read is of summaries.
	if s := readSnapshot(t, withResult, false); s.Result != nil || len(s.Phases) != 2 {
		t.Fatalf("a result line while running: %+v", s)
	}
	if s := readSnapshot(t, log+kvv1.ResultLogPrefix+`{"schemaVersion":"other"}`+"\n", true); s.Bad == nil {
		t.Errorf("a result of another schema: %+v", s)
	}
}

// liveHeap is the heap in use after a collection, in MiB.
func liveHeap() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

// Issue 18: a ~31 MiB result line of "{}," decoded to 10.8 million phases (3.2 GiB live), and
// 10 MiB of tiny phase lines to 238,000 phases, again on every read while the pod ran. Within
// the limits both keep the first phases, say what they left out, and stay small.
func TestLogSnapshotOfHostileLogs(t *testing.T) {
	lim := kvv1.DefaultResultLimits
	giant := kvv1.ResultLogPrefix + `{"schemaVersion":"` + kvv1.ResultSchemaVersion + `","engine":"rocksdb","phases":[` +
		strings.Repeat("{},", 31<<20/3) + `{}],"error":"after the phases"}` + "\n"
	var flood strings.Builder
	for flood.Len() < 10<<20 {
		flood.WriteString(kvv1.ResultPhaseLogPrefix + `{"workload":"x","threads":1}` + "\n")
	}
	for _, c := range []struct {
		name, log string
		ended     bool
		want      string
	}{
		{"a giant result line", giant, true, fmt.Sprintf("phases item(s) over the limit of %d", lim.Phases)},
		{"a flood of phase lines, read while running", flood.String(), false, fmt.Sprintf("phase line(s) over the limit of %d", lim.Phases)},
		{"a flood of phase lines, read after the end", flood.String(), true, fmt.Sprintf("phase line(s) over the limit of %d", lim.Phases)},
	} {
		before := liveHeap()
		s := readSnapshot(t, c.log, c.ended)
		grew := liveHeap() - before
		t.Logf("%s: %d phases, %d in the result, live heap +%.1f MiB with the snapshot", c.name, len(s.Phases), phasesOf(s.Result), grew)
		if s.Err != nil || s.Bad != nil || s.Over == nil || !strings.Contains(s.Over.Error(), c.want) {
			t.Errorf("%s: err %v, bad %v, over %v; want over with %q", c.name, s.Err, s.Bad, s.Over, c.want)
		}
		if len(s.Phases) > lim.Phases || phasesOf(s.Result) > lim.Phases {
			t.Errorf("%s: %d phases kept, %d in the result; the limit is %d", c.name, len(s.Phases), phasesOf(s.Result), lim.Phases)
		}
		if c.log == giant && (s.Result == nil || s.Result.Error != "after the phases") {
			t.Errorf("%s: what came after the phases is lost: %+v", c.name, s.Result)
		}
		if grew > 64 {
			t.Errorf("%s: the snapshot holds %.0f MiB", c.name, grew)
		}
		runtime.KeepAlive(s)
	}
}

func phasesOf(r *kvv1.Result) int {
	if r == nil {
		return 0
	}
	return len(r.Phases)
}

// A read that hangs (a kubelet that never answers) ends at the timeout, off the caller's path:
// Get returns at once, and the snapshot says why, with the phases of the earlier read kept.
func TestLogReaderTimesOutAndReportsBack(t *testing.T) {
	p0 := kvv1.PhaseResult{PhaseSummary: kvv1.PhaseSummary{Workload: "readrandom", Threads: 1, OpsPerSec: 5}}
	hang := make(chan struct{})
	defer close(hang)
	calls := 0
	open := func(ctx context.Context, _, _, _ string) (io.ReadCloser, error) {
		calls++
		if calls == 1 {
			return io.NopCloser(strings.NewReader(phaseLine(t, p0))), nil
		}
		select { // the second read hangs until its context ends
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-hang:
			return nil, errors.New("unreachable")
		}
	}
	l := NewLogReader(open)
	l.Timeout, l.Refresh = 200*time.Millisecond, time.Hour
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u1", ResourceVersion: "1"}}
	owner := types.NamespacedName{Namespace: "ns", Name: "b"}
	wait := func() {
		select {
		case ev := <-anyRead(l):
			if ev.Object.GetName() != "b" || ev.Object.GetNamespace() != "ns" {
				t.Fatalf("event for %s/%s", ev.Object.GetNamespace(), ev.Object.GetName())
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no event after the read")
		}
	}
	if s := l.Get(pod, owner, false); s != nil {
		t.Fatalf("a snapshot before any read: %+v", s)
	}
	wait()
	s := l.Get(pod, owner, false)
	if s == nil || len(s.Phases) != 1 || s.Final || s.Err != nil {
		t.Fatalf("first read: %+v", s)
	}
	// The pod ended: a final read starts; it hangs and times out. Get does not wait for it (a
	// Get that did would return the read's final snapshot).
	if s := l.Get(pod, owner, true); s == nil || s.Final {
		t.Fatalf("Get waited for the read or returned a final snapshot: %+v", s)
	}
	wait()
	s = l.Get(pod, owner, true)
	if s == nil || !s.Final || !errors.Is(s.Err, context.DeadlineExceeded) || len(s.Phases) != 1 {
		t.Fatalf("after the timeout: %+v", s)
	}
}

// A thousand pods asking at once get at most maxLogReads reads at a time, and every one is read.
func TestLogReaderBoundsConcurrentReads(t *testing.T) {
	p0 := kvv1.PhaseResult{PhaseSummary: kvv1.PhaseSummary{Workload: "readrandom", Threads: 1, OpsPerSec: 5}}
	var mu sync.Mutex
	running, most := 0, 0
	open := func(_ context.Context, _, _, _ string) (io.ReadCloser, error) {
		mu.Lock()
		running++
		most = max(most, running)
		mu.Unlock()
		time.Sleep(time.Millisecond)
		mu.Lock()
		running--
		mu.Unlock()
		return io.NopCloser(strings.NewReader(phaseLine(t, p0))), nil
	}
	l := NewLogReader(open)
	l.Events, l.Final = make(chan event.GenericEvent, 2000), make(chan event.GenericEvent, 2000)
	const n = 1000
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		pods[i] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("p%d", i), UID: types.UID(fmt.Sprint(i)), ResourceVersion: "1"}}
		l.Get(pods[i], types.NamespacedName{Namespace: "ns", Name: "b"}, true)
	}
	for i := 0; i < n; i++ {
		select {
		case <-l.Final: // the reads of ended pods
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of %d reads reported back", i, n)
		}
	}
	for _, p := range pods {
		if s := l.Get(p, types.NamespacedName{Namespace: "ns", Name: "b"}, true); s == nil || !s.Final || len(s.Phases) != 1 {
			t.Fatalf("pod %s: %+v", p.Name, s)
		}
	}
	if most > maxLogReads || most == 0 {
		t.Errorf("%d reads ran at once, want 1..%d", most, maxLogReads)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.active != 0 || len(l.queue) != 0 {
		t.Errorf("after all reads: %d active, %d queued", l.active, len(l.queue))
	}
}

// A pod nobody asked about for an hour is forgotten by the next sweep (at most one a minute);
// one asked about is kept.
func TestLogReaderForgetsUnusedPods(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(t0)
	l := NewLogReader(func(context.Context, string, string, string) (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader("")), nil
	})
	l.Clock = clk
	owner := types.NamespacedName{Namespace: "ns", Name: "b"}
	known := func(uid types.UID) bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		_, ok := l.pods[uid]
		return ok
	}
	old, cur := runnerPod("old"), runnerPod("cur")
	l.Get(old, owner, true)
	<-l.Final
	clk.SetTime(t0.Add(59 * time.Minute))
	l.Get(cur, owner, true)
	<-l.Final
	if !known(old.UID) || !known(cur.UID) {
		t.Fatal("a pod was forgotten within the hour")
	}
	clk.SetTime(t0.Add(61 * time.Minute))
	l.Get(cur, owner, true)
	if known(old.UID) || !known(cur.UID) {
		t.Errorf("after an hour: old kept %v, cur kept %v; want false, true", known(old.UID), known(cur.UID))
	}
}

// anyRead delivers the next event of a finished read, of a running pod's log or an ended one's.
func anyRead(l *LogReader) <-chan event.GenericEvent {
	out := make(chan event.GenericEvent, 1)
	go func() {
		select {
		case ev := <-l.Events:
			out <- ev
		case ev := <-l.Final:
			out <- ev
		}
	}()
	return out
}

// The read of an ended pod, which decides its run and frees its slot, goes ahead of the queued
// refreshes of running pods' logs (issue 18: at scale the refreshes of 100 running runners
// queue behind 4 reads).
func TestLogReaderReadsEndedPodsFirst(t *testing.T) {
	release := make(chan struct{})
	l := NewLogReader(func(context.Context, string, string, string) (io.ReadCloser, error) {
		<-release
		return io.NopCloser(strings.NewReader("")), nil
	})
	owner := types.NamespacedName{Namespace: "ns", Name: "b"}
	for i := range maxLogReads + 2 {
		l.Get(runnerPod(fmt.Sprint("running-", i)), owner, false)
	}
	l.Get(runnerPod("ended-0"), owner, true)
	l.Get(runnerPod("ended-1"), owner, true)
	l.mu.Lock()
	var order []string
	for _, r := range l.queue {
		order = append(order, r.name)
	}
	l.mu.Unlock()
	close(release)
	// maxRefreshes refreshes and ended-0 hold the readers.
	if want := []string{"ended-1", "running-3", "running-4", "running-5"}; !slices.Equal(order, want) {
		t.Errorf("queued reads %v, want %v", order, want)
	}
}

// A pod that ends while a refresh of its log runs gets its final read right after, without
// waiting for another pass to ask (that pass waited in the queue behind every other benchmark's).
func TestLogReaderFollowsARunningReadWithTheFinalOne(t *testing.T) {
	release := make(chan struct{})
	var opened atomic.Int32
	l := NewLogReader(func(context.Context, string, string, string) (io.ReadCloser, error) {
		if opened.Add(1) == 1 {
			<-release
		}
		return io.NopCloser(strings.NewReader("")), nil
	})
	owner := types.NamespacedName{Namespace: "ns", Name: "b"}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u", ResourceVersion: "1"}}
	l.Get(pod, owner, false)
	for opened.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	ended := pod.DeepCopy()
	ended.ResourceVersion = "2"
	l.Get(ended, owner, true) // the refresh still runs
	close(release)
	select {
	case <-l.Final:
	case <-time.After(10 * time.Second):
		t.Fatal("no final read after the refresh")
	}
	l.mu.Lock()
	snap := l.pods["u"].snap
	l.mu.Unlock()
	if snap == nil || !snap.Final || opened.Load() != 2 {
		t.Fatalf("after the final read: %+v, %d reads", snap, opened.Load())
	}
}

// Running pods' refreshes never hold every reader: with more refreshes asked for than readers (a
// tenant's huge logs, read again while its pods run), an ended pod's read still starts at once,
// and every queued refresh is read after.
func TestLogReaderKeepsAReaderForEndedPods(t *testing.T) {
	release := make(chan struct{})
	line := phaseLine(t, kvv1.PhaseResult{PhaseSummary: kvv1.PhaseSummary{Workload: "readrandom", Threads: 1, OpsPerSec: 5}})
	l := NewLogReader(func(_ context.Context, _, name, _ string) (io.ReadCloser, error) {
		if strings.HasPrefix(name, "running-") {
			<-release
			return io.NopCloser(strings.NewReader(line)), nil // a new phase: the read reports back
		}
		return io.NopCloser(strings.NewReader("")), nil
	})
	owner := types.NamespacedName{Namespace: "ns", Name: "b"}
	for i := range maxLogReads + 2 {
		l.Get(runnerPod(fmt.Sprint("running-", i)), owner, false)
	}
	l.Get(runnerPod("ended"), owner, true)
	select {
	case <-l.Final:
	case <-time.After(10 * time.Second):
		t.Fatal("the ended pod's read waits behind the running pods' refreshes")
	}
	l.mu.Lock()
	refreshing, queued := l.refreshing, len(l.queue)
	l.mu.Unlock()
	if refreshing != maxRefreshes || queued != maxLogReads+2-maxRefreshes {
		t.Errorf("%d refreshes running and %d queued, want %d and %d", refreshing, queued, maxRefreshes, maxLogReads+2-maxRefreshes)
	}
	close(release)
	for i := range maxLogReads + 2 {
		select {
		case <-l.Events:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of %d refreshes reported back", i, maxLogReads+2)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.active != 0 || l.refreshing != 0 || len(l.queue) != 0 {
		t.Errorf("after all reads: %d active, %d refreshing, %d queued", l.active, l.refreshing, len(l.queue))
	}
}

// A running pod whose log was found over the limits is not read again at every Refresh (each read
// of a hostile runner's log pulled 35 MiB through the API server); its final read still happens.
func TestLogReaderDoesNotRefreshALogOverTheLimits(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(t0)
	p0 := kvv1.PhaseResult{PhaseSummary: kvv1.PhaseSummary{Workload: "readrandom", Threads: 1, OpsPerSec: 5}}
	line := phaseLine(t, p0)
	var reads atomic.Int32
	l := NewLogReader(func(context.Context, string, string, string) (io.ReadCloser, error) {
		reads.Add(1)
		return io.NopCloser(strings.NewReader(strings.Repeat(line, 3))), nil
	})
	l.Clock, l.Limits.Phases = clk, 2
	owner := types.NamespacedName{Namespace: "ns", Name: "b"}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u", ResourceVersion: "1"}}
	l.Get(pod, owner, false)
	<-l.Events
	if s := l.Get(pod, owner, false); s == nil || s.Over == nil {
		t.Fatalf("the first read: %+v, want over the limit of 2 phases", s)
	}
	clk.SetTime(t0.Add(2 * l.Refresh))
	changed := pod.DeepCopy()
	changed.ResourceVersion = "2"
	l.Get(changed, owner, false)
	l.mu.Lock()
	reading := l.pods["u"].reading
	l.mu.Unlock()
	if reading || reads.Load() != 1 {
		t.Fatalf("the log over the limits is read again while the pod runs (%d reads)", reads.Load())
	}
	l.Get(changed, owner, true)
	<-l.Final
	if s := l.Get(changed, owner, true); s == nil || !s.Final || s.Over == nil || reads.Load() != 2 {
		t.Fatalf("after the pod ended: %+v, %d reads; want the final read", s, reads.Load())
	}
}

// runnerPod is a pod named name (and with that UID) at resource version 1, in namespace ns.
func runnerPod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name), ResourceVersion: "1"}}
}

// A running pod's refresh reconciles its benchmark only when it found something a pass writes: a
// new phase, an error, the limits reached. Refreshes that found what the last read found were a
// quarter of the work queue at a thousand benchmarks.
func TestLogReaderReportsARefreshOnlyWhenItFoundSomethingNew(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(t0)
	var log atomic.Value
	log.Store("")
	l := NewLogReader(func(context.Context, string, string, string) (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(log.Load().(string))), nil
	})
	l.Clock = clk
	owner := types.NamespacedName{Namespace: "ns", Name: "b"}
	pod := runnerPod("p")
	read := func() (reported bool) {
		t.Helper()
		clk.SetTime(clk.Now().Add(l.Refresh))
		l.Get(pod, owner, false)
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			l.mu.Lock()
			reading := l.pods[pod.UID].reading
			l.mu.Unlock()
			if !reading {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the read did not end")
			}
		}
		select {
		case <-l.Events:
			return true
		default:
			return false
		}
	}
	if read() {
		t.Error("the first read of a log with nothing in it reconciled the benchmark")
	}
	log.Store(phaseLine(t, kvv1.PhaseResult{PhaseSummary: kvv1.PhaseSummary{Workload: "fillseq", Threads: 1, OpsPerSec: 5}}))
	if !read() {
		t.Error("a read that found a new phase did not reconcile the benchmark")
	}
	if read() {
		t.Error("a read that found the same phase again reconciled the benchmark")
	}
	log.Store(log.Load().(string) + phaseLine(t, kvv1.PhaseResult{PhaseSummary: kvv1.PhaseSummary{Workload: "readrandom", Threads: 1, OpsPerSec: 5}}))
	if !read() {
		t.Error("a read that found a second phase did not reconcile the benchmark")
	}
}

// Logs found over the limits while their pods ran are read in full one at a time once the pods
// end (each such read may decode a whole budget), and the other readers still read other pods.
func TestLogReaderReadsOneLogOverTheLimitsAtATime(t *testing.T) {
	p0 := kvv1.PhaseResult{PhaseSummary: kvv1.PhaseSummary{Workload: "readrandom", Threads: 1, OpsPerSec: 5}}
	overLog := strings.Repeat(phaseLine(t, p0), 2) // over a limit of one phase line
	release := make(chan struct{})
	var mu sync.Mutex
	calls := map[string]int{}
	running, most := 0, 0
	l := NewLogReader(func(_ context.Context, _, name, _ string) (io.ReadCloser, error) {
		mu.Lock()
		calls[name]++
		first := calls[name] == 1
		if !first && strings.HasPrefix(name, "over-") {
			running++
			most = max(most, running)
		}
		mu.Unlock()
		if first || !strings.HasPrefix(name, "over-") {
			return io.NopCloser(strings.NewReader(overLog)), nil
		}
		<-release
		mu.Lock()
		running--
		mu.Unlock()
		return io.NopCloser(strings.NewReader(overLog)), nil
	})
	l.Limits.Phases = 1
	owner := types.NamespacedName{Namespace: "ns", Name: "b"}
	for i := range 3 {
		l.Get(runnerPod(fmt.Sprint("over-", i)), owner, false) // the refresh finds the log over the limits
	}
	for range 3 {
		<-l.Events
	}
	for i := range 3 {
		ended := runnerPod(fmt.Sprint("over-", i))
		ended.ResourceVersion = "2"
		l.Get(ended, owner, true)
	}
	l.Get(runnerPod("plain"), owner, true)
	select {
	case <-l.Final:
	case <-time.After(10 * time.Second):
		t.Fatal("an ended pod's read waits behind the logs over the limits")
	}
	mu.Lock()
	if most > 1 {
		t.Errorf("%d logs over the limits read at once, want 1", most)
	}
	mu.Unlock()
	close(release)
	for i := range 3 {
		select {
		case <-l.Final:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of 3 final reads of logs over the limits ended", i)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if most != 1 {
		t.Errorf("%d logs over the limits read at once, want 1", most)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.active != 0 || l.overLimits != 0 || len(l.queue) != 0 {
		t.Errorf("after all reads: %d active, %d over the limits, %d queued", l.active, l.overLimits, len(l.queue))
	}
}

// The final read of a Sequential comparison between its engines (Ahead) goes ahead of the other
// ended pods' queued reads: its slot and node wait, reserved, until it decides the run.
func TestLogReaderReadsAComparisonsFinalReadFirst(t *testing.T) {
	release := make(chan struct{}) // the other busy readers
	first := make(chan struct{})   // busy-0's: one reader free
	var mu sync.Mutex
	var order []string
	l := NewLogReader(func(_ context.Context, _, name, _ string) (io.ReadCloser, error) {
		mu.Lock()
		order = append(order, name)
		mu.Unlock()
		switch {
		case name == "busy-0":
			<-first
		case strings.HasPrefix(name, "busy-"):
			<-release
		}
		return io.NopCloser(strings.NewReader("")), nil
	})
	l.Ahead = func(owner types.NamespacedName) bool { return owner.Name == "cmp" }
	owner := types.NamespacedName{Namespace: "ns", Name: "b"}
	for i := range maxLogReads {
		l.Get(runnerPod(fmt.Sprint("busy-", i)), owner, true)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		mu.Lock()
		n := len(order)
		mu.Unlock()
		if n == maxLogReads {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the readers did not start")
		}
	}
	l.Get(runnerPod("plain-0"), owner, true)
	l.Get(runnerPod("plain-1"), owner, true)
	l.Get(runnerPod("cmp-pebble"), types.NamespacedName{Namespace: "ns", Name: "cmp"}, true)
	close(first) // one reader free: it takes the next queued read
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		mu.Lock()
		n := len(order)
		mu.Unlock()
		if n > maxLogReads {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the freed reader took no queued read")
		}
	}
	close(release)
	for range maxLogReads + 3 {
		select {
		case <-l.Final:
		case <-time.After(10 * time.Second):
			t.Fatal("not every final read ended")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if next := order[maxLogReads]; next != "cmp-pebble" {
		t.Errorf("after the busy readers, %s was read first (order %v), want the comparison's", next, order)
	}
}
