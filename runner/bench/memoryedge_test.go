package bench_test

import (
	"fmt"
	"k8s.io/utils/ptr"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/api/resource"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/controllers/plan"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

// inUserNS marks the re-executed test binary that runs as root of its own user and mount
// namespace (unshare -Urm), where it may mount a tmpfs without being root outside.
const inUserNS = "KVBENCH_TEST_IN_USERNS"

// asRoot reports whether this process may mount: as root, yes; otherwise it re-runs the test as
// root of a new user and mount namespace (unshare -Urm), where mounting a tmpfs needs no privilege
// outside, and reports false (the re-run did the work).
func asRoot(t *testing.T) bool {
	t.Helper()
	if os.Geteuid() == 0 {
		return true
	}
	if os.Getenv(inUserNS) != "" {
		t.Fatal("not root inside the user namespace")
	}
	cmd := exec.Command("unshare", "-Urm", os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), inUserNS+"=1")
	out, err := cmd.CombinedOutput()
	t.Logf("in a user namespace (unshare -Urm):\n%s", out)
	if err != nil {
		t.Fatalf("the test in a user namespace failed: %v", err)
	}
	return false
}

// sizedTmpfs mounts a tmpfs of size bytes (rounded up to pages, as the kernel does) for the test.
func sizedTmpfs(t *testing.T, size int64) string {
	t.Helper()
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Fatalf("mounting a %d-byte tmpfs: %v", size, err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, 0) })
	return dir
}

// Issue 21: at the least memory the CRD admitted, a 32Mi dataset got a 32Mi tmpfs and fillrandom
// failed at once with "No space left on device" on RocksDB's WAL (000004.log): the memory model
// did not count the WALs, flushes and compactions on the same tmpfs. Now the least admitted memory
// (the model's need, rounded up to MiB as a user writes it) gives each engine a tmpfs, sized as
// the operator sizes it (plan.TmpfsBytes), in which write workloads run one after another on the
// same database, and fillrandom with values that do not compress; and the tmpfs of the old model (the dataset alone) does not hold a fillrandom,
// so the edge is the tmpfs and not a test that cannot fail.
func TestSmallestAdmittedTmpfsRunsEveryWriteWorkload(t *testing.T) {
	// Random overwrites of every key, one after another, and half-write random reads/writes; all seven write
	// workloads in one sweep passed too, in 5 minutes on a loaded 2-core machine (too long here).
	// (YCSB's updates need YCSB's records, dataset.ycsb, which db_bench workloads cannot share: the
	// update-heavy readrandomwriterandom stands in for them.)
	writes := []api.WorkloadSpec{{Name: api.WorkloadFillRandom}, {Name: api.WorkloadOverwrite},
		{Name: api.WorkloadReadRandomWriteRandom, ReadWritePercent: ptr.To(int32(50))}}
	type edge struct {
		engine    api.EngineName
		workloads []api.WorkloadSpec
		ratio     int32 // compressionRatioPercent: 100 for values that do not compress
	}
	var edges []edge
	for _, e := range []api.EngineName{api.EngineRocksDB, api.EngineLevelDB, api.EnginePebble} {
		edges = append(edges, edge{e, writes, 50}, edge{e, writes[:1], 100})
	}
	var sizes []int64
	for _, c := range edges {
		b := w.MakeKVBenchmark("edge", "ns").EngineNames(c.engine).DatasetSize("32Mi").Threads(2).Workloads(c.workloads...).
			Dataset(func(d *api.DatasetSpec) { d.CompressionRatioPercent = c.ratio }).Obj()
		need := api.MemoryNeed(&b.Spec, b.Spec.Engines[0])
		b.Spec.Resources.Memory = *resource.NewQuantity(int64(math.Ceil(need/(1<<20)))<<20, resource.BinarySI)
		if !api.MemoryFits(&b.Spec) {
			t.Fatalf("%s: %s is not admitted", c.engine, b.Spec.Resources.Memory.String())
		}
		sizes = append(sizes, plan.TmpfsBytes(b, b.Spec.Engines[0]).Value())
		t.Logf("%s, %d workloads, compression ratio %d%%: resources.memory %s, tmpfs %.1fMi",
			c.engine, len(c.workloads), c.ratio, b.Spec.Resources.Memory.String(), float64(sizes[len(sizes)-1])/(1<<20))
	}
	if !asRoot(t) {
		return
	}
	for i, c := range edges {
		name := fmt.Sprintf("%s/%dworkloads/ratio%d", c.engine, len(c.workloads), c.ratio)
		t.Run(name, func(t *testing.T) {
			b := w.MakeKVBenchmark("edge", "ns").EngineNames(c.engine).DatasetSize("32Mi").Threads(2).Workloads(c.workloads...).
				Dataset(func(d *api.DatasetSpec) { d.CompressionRatioPercent = c.ratio }).Obj()
			cfg := plan.Plan(b)[0].Config
			cfg.DBPath = filepath.Join(sizedTmpfs(t, sizes[i]), "db")
			res, out, err := run(t, cfg)
			if err != nil {
				t.Fatalf("in a %d-byte tmpfs: %v\n%s", sizes[i], err, tail(out))
			}
			if len(res.Phases) != len(c.workloads) {
				t.Fatalf("%d phases of %d", len(res.Phases), len(c.workloads))
			}
		})
	}
	// LevelDB returns the error; Debian's RocksDB 7.8.3 aborts on an assertion after a failed write,
	// and Pebble panics, so neither can be shown in this process.
	t.Run("leveldb in the old model's tmpfs (the dataset alone) runs out of space on its log", func(t *testing.T) {
		b := w.MakeKVBenchmark("edge", "ns").EngineNames(api.EngineLevelDB).DatasetSize("32Mi").Threads(2).Workloads(writes[0]).Obj()
		cfg := plan.Plan(b)[0].Config
		cfg.DBPath = filepath.Join(sizedTmpfs(t, 32<<20), "db")
		_, out, err := run(t, cfg)
		if err == nil || !strings.Contains(err.Error(), "No space left on device") {
			t.Fatalf("want No space left on device, got %v\n%s", err, tail(out))
		}
	})
}

func tail(s string) string {
	if len(s) > 2000 {
		return "..." + s[len(s)-2000:]
	}
	return s
}
