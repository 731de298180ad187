//go:build qemu

package multiarch

import (
	"bytes"
	"context"
	"flag"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/archive"
	"github.com/kvbench/kvbench-operator/controllers/plan"
	"github.com/kvbench/kvbench-operator/controllers/render"
	"github.com/kvbench/kvbench-operator/hack/imagebuild/oci"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
	"k8s.io/utils/ptr"
)

var (
	javaLayout = flag.String("java-layout", "../../bin/images/oci/kvbench-runner-java", "the Java runner image's OCI layout (hack/build-images.sh)")
	qemuAMD64  = flag.String("qemu-amd64", "qemu-x86_64-static", "qemu-user for amd64")
)

// The Java runner image of each architecture, straight from its layer under qemu-user (-L: the image is
// the root for the loader and every library, so what the image lacks is missing here too), runs the
// arguments the operator renders for a rocksjava Job after the image's own entrypoint, loads the JNI
// library the image ships (java.io.tmpdir does not exist: unpacking it from the jar would fail the run),
// and writes what the operator reads.
func TestJavaRunnerImage(t *testing.T) {
	idx, _, err := oci.ReadLayout(*javaLayout)
	if err != nil {
		t.Fatalf("the Java runner image (WHAT=runner-java hack/build-images.sh): %v", err)
	}
	b := w.MakeKVBenchmark("jimg", "ns").EngineNames(api.EngineRocksJava).DatasetNum(2000).Threads(2).Workloads(
		api.WorkloadSpec{Name: api.WorkloadFillRandom}, api.WorkloadSpec{Name: api.WorkloadReadRandom}).
		EditSpec(func(s *api.KVBenchmarkSpec) { s.Dataset.LoadMode = api.LoadFillSeq }).Obj()
	job, err := render.Job(b, plan.Plan(b)[0], render.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	// The YCSB letters: YCSB core's jar in the image, and the entrypoint's --add-opens that seeds its generators.
	yb := w.MakeKVBenchmark("jycsb", "ns").EngineNames(api.EngineRocksJava).DatasetNum(2000).Threads(1).Workloads(
		api.WorkloadSpec{Name: api.WorkloadYCSB, Num: ptr.To[int64](2000), YCSB: &api.YCSBSpec{Workload: "A"}}).
		EditSpec(func(s *api.KVBenchmarkSpec) {
			s.Dataset.LoadMode = api.LoadFillSeq
			s.Dataset.YCSB = &api.YCSBRecordSpec{FieldCount: ptr.To[int32](4)}
		}).Obj()
	yjob, err := render.Job(yb, plan.Plan(yb)[0], render.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	for arch, emu := range map[string]string{"amd64": *qemuAMD64, "arm64": *qemu} {
		t.Run(arch, func(t *testing.T) {
			img, err := oci.ImageFor(idx, arch)
			if err != nil {
				t.Fatal(err)
			}
			cf, err := img.ConfigFile()
			if err != nil || cf.Architecture != arch || cf.Config.User != "65532:65532" || len(cf.Config.Entrypoint) == 0 {
				t.Fatalf("%s config: %+v %v", arch, cf, err)
			}
			root, work := t.TempDir(), t.TempDir()
			if err := oci.Unpack(idx, arch, root); err != nil {
				t.Fatal(err)
			}
			l := runJavaJob(t, emu, root, work, cf.Config.Entrypoint, job.Spec.Template.Spec.Containers[0].Args, arch)
			if len(l.Phases) != 2 {
				t.Fatalf("phases: %d", len(l.Phases))
			}
			for i, wl := range []string{"fillrandom", "readrandom"} {
				if p := l.Result.Phases[i]; p.Workload != wl || p.Ops != 4000 || p.LatencyHistogram == "" {
					t.Errorf("phase %d: %s, %d ops; want %s, 4000 ops with a histogram", i, p.Workload, p.Ops, wl)
				}
			}
			if lib := l.Result.Provenance.Libraries; lib["rocksdbjni"] != "7.8.3" || !strings.Contains(lib["jvm"], "17.") {
				t.Errorf("provenance libraries %v", lib)
			}
			y := runJavaJob(t, emu, root, t.TempDir(), cf.Config.Entrypoint, yjob.Spec.Template.Spec.Containers[0].Args, arch)
			if p := y.Result.Phases[0]; len(y.Phases) != 1 || p.Workload != "ycsb-a" || p.Ops != 2000 || p.Found == nil ||
				*p.Found != p.EngineOps.Gets || len(p.Operations) != 2 {
				t.Errorf("ycsb phase: %+v", y.Result.Phases)
			}
		})
	}
}

// runJavaJob runs a rendered Job's container arguments after the image's entrypoint under emu, with the
// database and output paths moved into work, and returns the log the operator reads.
func runJavaJob(t *testing.T, emu, root, work string, entrypoint, jobArgs []string, arch string) *archive.Log {
	t.Helper()
	// The entrypoint's image paths, inside the unpacked root.
	var args []string
	for _, a := range entrypoint {
		for _, p := range []string{"/opt/"} {
			a = strings.Replace(a, p, filepath.Join(root, p)+"/", 1)
		}
		args = append(args, a)
	}
	args = append(args[:1], append([]string{"-Djava.io.tmpdir=" + filepath.Join(work, "no-such-dir")}, args[1:]...)...)
	local, err := w.LocalRunnerArgs(jobArgs, work)
	if err != nil {
		t.Fatal(err)
	}
	args = append(args, local...)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, emu, append([]string{"-L", root}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out.String(), errb.String())
	}
	t.Logf("%s: %.1fs emulated", arch, time.Since(start).Seconds())
	l, err := archive.ReadLog(strings.NewReader(out.String()), api.DefaultResultLimits, true)
	if err != nil || l.Result == nil || l.Result.Error != "" || l.Load == nil {
		t.Fatalf("log: %v, result %+v\n%s", err, l.Result, errb.String())
	}
	return l
}
