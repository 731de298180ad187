// Package gate_test checks `kubectl kvbench compare --fail-on-regression` on real runs: the runner
// library measures Pebble (pure Go engine, tiny dataset on tmpfs) with repeats, the results are
// written as the runner writes them, and the plugin binary built from this tree is the gate. It
// lives outside cmd/kubectl-kvbench because the engines link cgo, which the plugin must not.
package gate_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/runner/bench"
	_ "github.com/kvbench/kvbench-operator/runner/engine/pebble"
)

func ptr[T any](v T) *T { return &v }

// spec is one run: 20000 keys, readrandom at one thread repeated 6 times. The fast variant has a
// 64 MiB block cache over uncompressed tables (every read a cache hit); the slow variant a 64 KiB
// cache over zstd tables, so nearly every read decompresses a block: slower by construction.
func spec(dir string, slow bool) api.RunnerConfig {
	opts := api.EngineOptions{CacheSize: ptr(resource.MustParse("64Mi")), Compression: ptr(api.CompressionNone)}
	if slow {
		opts = api.EngineOptions{CacheSize: ptr(resource.MustParse("64Ki")), Compression: ptr(api.CompressionZstd)}
	}
	return api.RunnerConfig{
		Engine:    api.EngineSpec{Name: api.EnginePebble, Options: opts},
		Dataset:   api.DatasetSpec{Num: ptr[int64](20000), LoadMode: api.LoadBulk},
		Workloads: []api.WorkloadSpec{{Name: api.WorkloadReadRandom, Num: ptr[int64](100000)}},
		Threads:   []int32{1},
		Repeat:    6,
		DBPath:    filepath.Join(dir, "db"),
	}
}

// tmpDir is on tmpfs when there is one (the e2e runs use tmpfs too).
func tmpDir(t *testing.T) string {
	t.Helper()
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "kvbench-gate-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			return d
		}
	}
	return t.TempDir()
}

// measure runs the specs concurrently (so that load from other processes on the machine falls on
// all of them alike) and writes each result as NAME.result.json, the file the plugin reads.
func measure(t *testing.T, out string, specs map[string]api.RunnerConfig) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(specs))
	for name, cfg := range specs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := bench.Run(context.Background(), cfg, bench.Options{})
			if err != nil {
				errs <- err
				return
			}
			data, err := json.Marshal(res)
			if err == nil {
				err = os.WriteFile(filepath.Join(out, name+".result.json"), data, 0o644)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// plugin builds kubectl-kvbench from this tree.
func plugin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "kubectl-kvbench")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/kvbench/kvbench-operator/cmd/kubectl-kvbench")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func compare(t *testing.T, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"compare"}, args...)...)
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

func TestFailOnRegression(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Pebble benchmarks")
	}
	bin := plugin(t)
	out := t.TempDir()
	measure(t, out, map[string]api.RunnerConfig{
		"base": spec(tmpDir(t), false), "again": spec(tmpDir(t), false), "slow": spec(tmpDir(t), true),
	})
	file := func(name string) string { return filepath.Join(out, name+".result.json") }

	// The gate as a CI job on this shared 2-core machine would run it (docs/benchmarks.md "Noise":
	// the same command varies by 2x): throughput and median latency only (the tails of 100000
	// reads are noise here), alpha 0.01 (6 repeats a side reach p = 0.002), and a threshold above
	// the machine's noise. The slow variant is several times slower.
	gate := []string{"--threshold", "40%", "--metrics", "ops,p50", "--alpha", "0.01", "--fail-on-regression"}

	// Two runs of the same spec: no regression.
	stdout, stderr, code := compare(t, bin, append([]string{"-f", file("base"), "-f", file("again")}, gate...)...)
	t.Logf("same spec:\n%s%s", stdout, stderr)
	if code != 0 {
		t.Errorf("two runs of the same spec: exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "no significant regression beyond 40% in 1 point(s)") {
		t.Errorf("no verdict in\n%s", stdout)
	}

	// The slower run regresses; the gate exits 2 and names the point.
	stdout, stderr, code = compare(t, bin, append([]string{"-f", file("base"), "-f", file("slow")}, gate...)...)
	t.Logf("slower:\n%s%s", stdout, stderr)
	if code != 2 {
		t.Errorf("slower run: exit %d, want 2\n%s%s", code, stdout, stderr)
	}
	if !strings.HasPrefix(stderr, "regression: ") || !strings.Contains(stderr, "slow regressed against ") ||
		!strings.Contains(stderr, "pebble readrandom threads=1 ops/s") {
		t.Errorf("stderr does not name the point:\n%s", stderr)
	}
	if !strings.Contains(stdout, "pebble  readrandom        1") || !strings.Contains(stdout, " !") {
		t.Errorf("table does not mark the regression:\n%s", stdout)
	}

	// Turned around, the same data is an improvement: no regression of throughput.
	stdout, _, code = compare(t, bin, append([]string{"-f", file("slow"), "-f", file("base"), "--format", "json"}, gate...)...)
	var v struct {
		Regressed bool
		Changes   []struct {
			Metric      string
			Ratio       float64
			Significant bool
		}
	}
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatalf("json: %v\n%s", err, stdout)
	}
	if code != 0 || v.Regressed || v.Changes[0].Metric != "opsPerSec" || !v.Changes[0].Significant || v.Changes[0].Ratio < 1.4 {
		t.Errorf("faster run: exit %d, %+v", code, v)
	}
}
