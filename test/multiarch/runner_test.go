//go:build qemu

// Package multiarch runs what the runner image holds, straight from the image's layer: arm64
// under qemu-user (Debian's qemu-user-static), amd64 natively: the static runner on a small
// fillseq,readrandom for each C engine, and db_bench with the shared libraries and loader the
// image ships; both on the release builds of RocksDB and LevelDB. `make test-arm64` builds the image (hack/build-images.sh) and runs this:
//
//	go test -tags qemu ./test/multiarch -layout bin/images/oci/kvbench-runner
package multiarch

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/archive"
	"github.com/kvbench/kvbench-operator/hack/imagebuild/oci"
	"github.com/kvbench/kvbench-operator/runner/dbbench"
)

var (
	layoutDir = flag.String("layout", "../../bin/images/oci/kvbench-runner", "the runner image's OCI layout (hack/build-images.sh)")
	qemu      = flag.String("qemu", "qemu-aarch64-static", "qemu-user for arm64")
	num       = flag.Int("num", 20000, "keys per engine (emulated: keep it small)")
)

// rootfs unpacks the layout's image for arch into a directory, as a container runtime would.
func rootfs(t *testing.T, arch string) string {
	t.Helper()
	idx, _, err := oci.ReadLayout(*layoutDir)
	if err != nil {
		t.Fatalf("the runner image (make images): %v", err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var arches []string
	for _, d := range m.Manifests {
		arches = append(arches, d.Platform.String())
	}
	if strings.Join(arches, " ") != "linux/amd64 linux/arm64/v8" {
		t.Fatalf("the index has %v, want linux/amd64 and linux/arm64/v8", arches)
	}
	img, err := oci.ImageFor(idx, arch)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil || cf.Architecture != arch || cf.OS != "linux" || cf.Config.User != "65532:65532" {
		t.Fatalf("%s config: %+v %v", arch, cf, err)
	}
	dir := t.TempDir()
	if err := oci.Unpack(idx, arch, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runInImage runs a program of the image: an arm64 one under qemu, where -L makes the image its root
// for the loader and every library it opens, so a library the image lacks is missing here too; an
// amd64 one natively, its loader and libraries (db_bench's) the image's through the loader's
// --library-path, so there too nothing of the host's is used.
func runInImage(t *testing.T, root, arch string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	prog := append([]string{filepath.Join(root, args[0])}, args[1:]...)
	var cmd *exec.Cmd
	switch {
	case arch == "arm64":
		cmd = exec.CommandContext(ctx, *qemu, append([]string{"-L", root}, prog...)...)
	case args[0] == "/kvbench-runner": // static
		cmd = exec.CommandContext(ctx, prog[0], prog[1:]...)
	default:
		libs := filepath.Join(root, "lib/x86_64-linux-gnu") + ":" + filepath.Join(root, "usr/lib/x86_64-linux-gnu")
		cmd = exec.CommandContext(ctx, filepath.Join(root, "lib64/ld-linux-x86-64.so.2"), append([]string{"--library-path", libs}, prog...)...)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s\n%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	t.Logf("%s %s: %.1fs", arch, strings.Join(args, " "), time.Since(start).Seconds())
	return out.String()
}

var dbBenchVersion = regexp.MustCompile(`(?m)^db_bench version (\d+\.\d+\.\d+)$`)

// TestRunnerImage runs each architecture's runner image: db_bench and the runner on the release
// builds of RocksDB and LevelDB (hack/engine-build.sh), no assertions, one RocksDB for both.
func TestRunnerImage(t *testing.T) {
	for _, arch := range []string{"amd64", "arm64"} {
		t.Run(arch, func(t *testing.T) { runnerImage(t, arch) })
	}
}

func runnerImage(t *testing.T, arch string) {
	root := rootfs(t, arch)

	// db_bench --version, then a tiny fillseq,readrandom: the libraries and loader are all there.
	v := dbBenchVersion.FindStringSubmatch(runInImage(t, root, arch, "/usr/bin/db_bench", "--version"))
	if v == nil {
		t.Fatal("db_bench --version printed no version")
	}
	work := t.TempDir()
	out := runInImage(t, root, arch, "/usr/bin/db_bench", "--benchmarks=fillseq,readrandom", "--num=2000", "--db="+filepath.Join(work, "dbbench"))
	checkLines(t, "db_bench", out, 2000)
	if strings.Contains(out, "Assertions are enabled") {
		t.Error("the image's db_bench has assertions on (Debian's build, not the release build)")
	}

	for _, engine := range []api.EngineName{"rocksdb", "leveldb"} {
		t.Run(string(engine), func(t *testing.T) {
			js := filepath.Join(work, string(engine)+".json")
			n := *num
			out := runInImage(t, root, arch, "/kvbench-runner", "bench", "--engine="+string(engine), "--db="+filepath.Join(work, string(engine)),
				"--benchmarks=fillseq,readrandom", "--num="+strconv.Itoa(n), "--json="+js)
			checkLines(t, string(engine), out, n)
			b, err := os.ReadFile(js)
			if err != nil {
				t.Fatal(err)
			}
			// The operator's own decoding of a result (the archive and the log reader use it).
			res := &api.Result{}
			dec := archive.NewDecoder(api.DefaultResultLimits)
			if err := dec.Decode(bytes.NewReader(b), res); err != nil || dec.Over() != nil {
				t.Fatalf("the result file does not decode within the limits: %v %v", err, dec.Over())
			}
			if res.Engine != engine || res.Error != "" || len(res.Phases) != 2 || res.Provenance == nil {
				t.Fatalf("result: engine %s error %q phases %d", res.Engine, res.Error, len(res.Phases))
			}
			for i, w := range []string{"fillseq", "readrandom"} {
				p := res.Phases[i]
				if p.Workload != w || p.Ops != int64(n) || p.OpsPerSec <= 0 {
					t.Errorf("phase %d: %s, %d ops, %.0f ops/s; want %s, %d ops", i, p.Workload, p.Ops, p.OpsPerSec, w, n)
				}
			}
			if engine == "rocksdb" && res.Provenance.Libraries["rocksdb"] != v[1] {
				t.Errorf("the runner links RocksDB %q, the image's db_bench is %s", res.Provenance.Libraries["rocksdb"], v[1])
			}
			build, ok := res.Provenance.LibraryBuilds[string(engine)]
			if !ok || build.Assertions != "off" || !strings.HasPrefix(build.Source, "release build of Debian source package") ||
				!strings.Contains(build.Source, "("+arch+")") || !strings.HasPrefix(build.Digest, "sha256:") {
				t.Errorf("provenance.libraryBuilds[%s] = %+v, want the %s release build with assertions off", engine, build, arch)
			}
		})
	}
}

// checkLines parses db_bench-style output with the project's db_bench parser: a fillseq and a
// readrandom line with n operations, every read found.
func checkLines(t *testing.T, what, out string, n int) {
	t.Helper()
	bs := dbbench.Parse(out)
	if len(bs) != 2 || bs[0].Name != "fillseq" || bs[1].Name != "readrandom" {
		t.Fatalf("%s: want a fillseq and a readrandom line, parsed %+v from:\n%s", what, bs, out)
	}
	for _, b := range bs {
		if b.OpsPerSec <= 0 || b.MicrosPerOp <= 0 {
			t.Errorf("%s %s: %.0f ops/s, %.3f micros/op", what, b.Name, b.OpsPerSec, b.MicrosPerOp)
		}
	}
	if !bs[1].HasFound || bs[1].Found != int64(n) || bs[1].Reads != int64(n) {
		t.Errorf("%s readrandom: %d of %d found, want %d of %d", what, bs[1].Found, bs[1].Reads, n, n)
	}
}
