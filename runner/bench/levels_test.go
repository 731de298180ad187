package bench_test

import (
	"fmt"
	"math"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// Every engine's levels[] covers the whole tree: a bulk-loaded tree (ingested table files land
// in the bottom level) and a fillrandom-loaded one. Each level with files has bytes and the
// level bytes add up to the LSM bytes; a bulk load's bytes are in the bottom level.
func TestLevelsCoverTheTree(t *testing.T) {
	for _, eng := range []api.EngineName{api.EngineRocksDB, api.EnginePebble, api.EngineLevelDB} {
		for _, mode := range []api.LoadMode{api.LoadBulk, api.LoadFillRandom} {
			t.Run(string(eng)+"/"+string(mode), func(t *testing.T) {
				mib := resource.MustParse("1Mi")
				cfg := api.RunnerConfig{Engine: api.EngineSpec{Name: eng, Options: api.EngineOptions{WriteBufferSize: &mib}},
					DBPath: dbDir(t), Threads: []int32{1},
					Dataset: api.DatasetSpec{Num: i64(60000), LoadMode: mode},
					// readseq after waitforcompaction sees the settled tree.
					Workloads: []api.WorkloadSpec{{Name: "waitforcompaction"}, {Name: "readseq", Num: i64(10)}}}
				res, out, err := run(t, cfg)
				if err != nil {
					t.Fatalf("%v\n%s", err, out)
				}
				if res.Load == nil {
					t.Fatal("no load phase")
				}
				checkLevels(t, "load", res.Load.EngineStats)
				settled := phaseByName(t, res, "readseq").EngineStats
				checkLevels(t, "readseq", settled)
				if ls := res.Load.EngineStats.Levels; mode == api.LoadBulk && eng != api.EngineLevelDB { // LevelDB cannot ingest: it loads with puts
					var bottom api.LevelStats
					if len(ls) > 0 {
						bottom = ls[len(ls)-1]
					}
					if bottom.Level != 6 || bottom.Files == 0 || bottom.Bytes < *res.Load.EngineStats.LSMBytes*9/10 {
						t.Errorf("bulk load: deepest level %+v, want L6 holding the %d LSM bytes", bottom, *res.Load.EngineStats.LSMBytes)
					}
				}
			})
		}
	}
}

// checkLevels: every level with files has bytes and the other way round, and the levels' bytes
// add up to the LSM bytes within 10%.
func checkLevels(t *testing.T, phase string, s *api.EngineStats) {
	t.Helper()
	if s == nil || s.LSMBytes == nil || *s.LSMBytes == 0 {
		t.Fatalf("%s: engine stats %+v: want LSM bytes", phase, s)
	}
	var sum int64
	desc := ""
	for _, l := range s.Levels {
		if (l.Files > 0) != (l.Bytes > 0) {
			t.Errorf("%s: level %+v: files and bytes disagree", phase, l)
		}
		sum += l.Bytes
		if l.Files > 0 {
			desc += fmt.Sprintf(" L%d:%d/%d", l.Level, l.Files, l.Bytes)
		}
	}
	t.Logf("%s: lsm %d, levels%s", phase, *s.LSMBytes, desc)
	if math.Abs(float64(sum-*s.LSMBytes)) > 0.1*float64(*s.LSMBytes) {
		t.Errorf("%s: levels sum to %d bytes, LSM bytes %d: more than 10%% apart (levels %+v)", phase, sum, *s.LSMBytes, s.Levels)
	}
}
