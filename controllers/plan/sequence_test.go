package plan

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

func TestSequence(t *testing.T) {
	three := []Run{{Name: "rocksdb"}, {Name: "pebble"}, {Name: "leveldb"}}
	st := func(phase kvv1.RunPhase, node string) kvv1.RunStatus {
		return kvv1.RunStatus{Phase: phase, NodeName: node}
	}
	pending := st(kvv1.RunPending, "")
	eachNode := []Run{
		{Name: "rocksdb@n1", Node: "n1"}, {Name: "pebble@n1", Node: "n1"},
		{Name: "rocksdb@n2", Node: "n2"}, {Name: "pebble@n2", Node: "n2"},
	}
	cases := map[string]struct {
		mode      kvv1.EnginePlacement
		runs      []Run
		statuses  []kvv1.RunStatus
		missing   []int
		want      []Start
		wantWaits []int
	}{
		"sequential: only the first engine starts, unpinned; the others wait": {
			mode: kvv1.EnginesSequential, runs: three, statuses: []kvv1.RunStatus{pending, pending, pending},
			missing: []int{0, 1, 2}, want: []Start{{Index: 0, More: true}}, wantWaits: []int{1, 2},
		},
		"sequential: nothing starts while the first engine runs": {
			mode: kvv1.EnginesSequential, runs: three, statuses: []kvv1.RunStatus{st(kvv1.RunRunning, "node-a"), pending, pending},
			missing: []int{1, 2}, wantWaits: []int{1, 2},
		},
		"sequential: the scheduled but not yet running first engine still blocks": {
			mode: kvv1.EnginesSequential, runs: three, statuses: []kvv1.RunStatus{st(kvv1.RunPending, "node-a"), pending, pending},
			missing: []int{1, 2}, wantWaits: []int{1, 2},
		},
		"sequential: once the first finished, the second starts pinned to its node": {
			mode: kvv1.EnginesSequential, runs: three, statuses: []kvv1.RunStatus{st(kvv1.RunSucceeded, "node-a"), pending, pending},
			missing: []int{1, 2}, want: []Start{{Index: 1, Node: "node-a", After: true, More: true}}, wantWaits: []int{2},
		},
		"sequential: a failed run also hands over, and the pin is the first node used": {
			mode: kvv1.EnginesSequential, runs: three, statuses: []kvv1.RunStatus{st(kvv1.RunFailed, "node-a"), st(kvv1.RunSucceeded, "node-a"), pending},
			missing: []int{2}, want: []Start{{Index: 2, Node: "node-a", After: true}},
		},
		"sequential: a first run that failed unscheduled leaves the next one unpinned": {
			mode: kvv1.EnginesSequential, runs: three, statuses: []kvv1.RunStatus{st(kvv1.RunFailed, ""), pending, pending},
			missing: []int{1, 2}, want: []Start{{Index: 1, After: true, More: true}}, wantWaits: []int{2},
		},
		"sequential: all finished, nothing to do": {
			mode: kvv1.EnginesSequential, runs: three,
			statuses: []kvv1.RunStatus{st(kvv1.RunSucceeded, "a"), st(kvv1.RunSucceeded, "a"), st(kvv1.RunFailed, "a")},
		},
		"sequential: a run whose Job exists but is not missing blocks later ones (cache lag)": {
			mode: kvv1.EnginesSequential, runs: three, statuses: []kvv1.RunStatus{st(kvv1.RunSucceeded, "a"), pending, pending},
			missing: []int{2}, wantWaits: []int{2},
		},
		"parallel: every missing run starts at once": {
			mode: kvv1.EnginesParallel, runs: three, statuses: []kvv1.RunStatus{pending, pending, pending},
			missing: []int{0, 1, 2}, want: []Start{{Index: 0}, {Index: 1}, {Index: 2}},
		},
		"each node, sequential: one engine per node at a time, pinned to the planned node": {
			mode: kvv1.EnginesSequential, runs: eachNode, statuses: []kvv1.RunStatus{pending, pending, st(kvv1.RunSucceeded, "n2"), pending},
			missing: []int{0, 1, 3}, want: []Start{{Index: 0, Node: "n1", More: true}, {Index: 3, Node: "n2", After: true}}, wantWaits: []int{1},
		},
		"each node, parallel: everything at once, each on its node": {
			mode: kvv1.EnginesParallel, runs: eachNode, statuses: []kvv1.RunStatus{pending, pending, pending, pending},
			missing: []int{0, 1, 2, 3}, want: []Start{{Index: 0, Node: "n1"}, {Index: 1, Node: "n1"}, {Index: 2, Node: "n2"}, {Index: 3, Node: "n2"}},
		},
		"the default (empty) mode is sequential": {
			runs: three, statuses: []kvv1.RunStatus{pending, pending, pending},
			missing: []int{0, 1, 2}, want: []Start{{Index: 0, More: true}}, wantWaits: []int{1, 2},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			starts, waits, _ := Sequence(tc.mode, tc.runs, tc.statuses, tc.missing)
			if diff := cmp.Diff(tc.want, starts); diff != "" {
				t.Errorf("starts (-want +got):\n%s", diff)
			}
			var got []int
			for _, w := range waits {
				got = append(got, w.Index)
				if !strings.HasPrefix(w.Message, "placement.engines Sequential: runs after ") {
					t.Errorf("wait message %q", w.Message)
				}
			}
			if diff := cmp.Diff(tc.wantWaits, got); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSequenceWaitMessageNamesBlockerAndNode(t *testing.T) {
	runs := []Run{{Name: "rocksdb"}, {Name: "pebble"}}
	_, waits, _ := Sequence(kvv1.EnginesSequential, runs, []kvv1.RunStatus{{Phase: kvv1.RunRunning, NodeName: "node-a"}, {Phase: kvv1.RunPending}}, []int{1})
	if len(waits) != 1 || waits[0].Message != "placement.engines Sequential: runs after rocksdb on node node-a" {
		t.Fatalf("waits = %+v", waits)
	}
}

func TestSequenceHoldsTheNodeBetweenEngines(t *testing.T) {
	runs := []Run{{Name: "rocksdb"}, {Name: "pebble"}}
	st := func(phase kvv1.RunPhase, node string) kvv1.RunStatus {
		return kvv1.RunStatus{Phase: phase, NodeName: node}
	}
	pending := st(kvv1.RunPending, "")
	eachNode := []Run{{Name: "rocksdb@n1", Node: "n1"}, {Name: "pebble@n1", Node: "n1"}, {Name: "rocksdb@n2", Node: "n2"}, {Name: "pebble@n2", Node: "n2"}}
	cases := map[string]struct {
		runs     []Run
		statuses []kvv1.RunStatus
		missing  []int
		want     []Hold
	}{
		"not started: no hold":                        {runs: runs, statuses: []kvv1.RunStatus{pending, pending}, missing: []int{0, 1}},
		"first engine placed: held for the second":    {runs: runs, statuses: []kvv1.RunStatus{st(kvv1.RunPending, "n1"), pending}, missing: []int{1}, want: []Hold{{Index: 0, Node: "n1"}}},
		"first running":                               {runs: runs, statuses: []kvv1.RunStatus{st(kvv1.RunRunning, "n1"), pending}, missing: []int{1}, want: []Hold{{Index: 0, Node: "n1"}}},
		"between engines":                             {runs: runs, statuses: []kvv1.RunStatus{st(kvv1.RunSucceeded, "n1"), pending}, missing: []int{1}, want: []Hold{{Index: 1, Node: "n1"}}},
		"last engine running: its Job holds the node": {runs: runs, statuses: []kvv1.RunStatus{st(kvv1.RunSucceeded, "n1"), st(kvv1.RunRunning, "n1")}},
		"done": {runs: runs, statuses: []kvv1.RunStatus{st(kvv1.RunSucceeded, "n1"), st(kvv1.RunFailed, "n1")}},
		"each node: one hold per started node": {runs: eachNode,
			statuses: []kvv1.RunStatus{st(kvv1.RunSucceeded, "n1"), pending, pending, pending}, missing: []int{1, 2, 3},
			want: []Hold{{Index: 1, Node: "n1"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, holds := Sequence(kvv1.EnginesSequential, tc.runs, tc.statuses, tc.missing)
			if diff := cmp.Diff(tc.want, holds); diff != "" {
				t.Errorf("holds (-want +got):\n%s", diff)
			}
		})
	}
	if _, _, holds := Sequence(kvv1.EnginesParallel, runs, []kvv1.RunStatus{st(kvv1.RunSucceeded, "n1"), pending}, []int{1}); holds != nil {
		t.Errorf("Parallel holds %v", holds)
	}
}

func TestPlanOnEachNode(t *testing.T) {
	b := w.MakeKVBenchmark("fleet", "ns").EngineNames(kvv1.EngineRocksDB, kvv1.EnginePebble).EditSpec(func(s *kvv1.KVBenchmarkSpec) {
		s.Placement.Spread = kvv1.SpreadEachNode
		s.Placement.MaxNodes = ptr.To[int32](10)
	}).Obj()
	long := strings.Repeat("n", 60) + ".example.com"
	runs := PlanOn(b, []string{"nvme-1", long})
	var got [][3]string
	for _, r := range runs {
		got = append(got, [3]string{r.Name, r.JobName, r.Node})
		if errs := validation.IsDNS1123Label(r.JobName); len(errs) > 0 {
			t.Errorf("job name %q: %v", r.JobName, errs)
		}
	}
	want := [][3]string{
		{"rocksdb@nvme-1", "fleet-rocksdb-nvme-1", "nvme-1"},
		{"pebble@nvme-1", "fleet-pebble-nvme-1", "nvme-1"},
		{"rocksdb@" + long, JobName("fleet", "rocksdb-"+strings.Repeat("n", 60)+"-example-com"), long},
		{"pebble@" + long, JobName("fleet", "pebble-"+strings.Repeat("n", 60)+"-example-com"), long},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if runs[2].JobName == runs[3].JobName {
		t.Fatal("job names of two engines on one long-named node collide")
	}
	if len(PlanOn(b, nil)) != 0 {
		t.Fatal("EachNode without nodes has runs")
	}
	// AnyNode ignores the node list.
	b.Spec.Placement.Spread = kvv1.SpreadAnyNode
	if runs := PlanOn(b, []string{"x"}); len(runs) != 2 || runs[0].Node != "" || runs[0].Name != "rocksdb" {
		t.Fatalf("AnyNode runs = %+v", runs)
	}
}

func TestSelectNodes(t *testing.T) {
	got := SelectNodes([]string{"c", "a", "b", "a"}, 2)
	if diff := cmp.Diff([]string{"a", "b"}, got); diff != "" {
		t.Fatal(diff)
	}
	if got := SelectNodes([]string{"b", "a"}, 5); !cmp.Equal(got, []string{"a", "b"}) {
		t.Fatal(got)
	}
}
