package oci

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// fakeELF is the smallest ELF header debug/elf accepts: 64-bit little-endian, of machine m.
func fakeELF(m uint16, payload string) []byte {
	h := make([]byte, 64)
	copy(h, "\x7fELF\x02\x01\x01")
	binary.LittleEndian.PutUint16(h[16:], 2) // ET_EXEC
	binary.LittleEndian.PutUint16(h[18:], m)
	binary.LittleEndian.PutUint32(h[20:], 1)
	binary.LittleEndian.PutUint16(h[52:], 64) // ehsize
	return append(h, payload...)
}

const (
	emX8664   = 62
	emAarch64 = 183
)

func write(t *testing.T, file string, data []byte, mode os.FileMode) string {
	t.Helper()
	if err := os.WriteFile(file, data, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(file, mode); err != nil { // past the umask
		t.Fatal(err)
	}
	return file
}

// testSpec is an image like the runner's: a binary and a library per architecture, user 65532.
func testSpec(t *testing.T, dir string) *ImageSpec {
	uid := 65532
	return &ImageSpec{Name: "kvbench-test", Tag: "v0.1.0", Entrypoint: []string{"/app"}, User: &uid,
		Env: []string{"A=b"}, Labels: map[string]string{"org.opencontainers.image.version": "v0.1.0"},
		Platforms: map[string]PlatformSpec{
			"amd64": {Files: []File{
				{Src: write(t, filepath.Join(dir, "app-amd64"), fakeELF(emX8664, "amd64 app"), 0o700), Dst: "/app"},
				{Src: write(t, filepath.Join(dir, "lib-amd64"), fakeELF(emX8664, "amd64 lib"), 0o600), Dst: "/lib/x86_64-linux-gnu/libx.so.1"},
			}},
			"arm64": {Files: []File{
				{Src: write(t, filepath.Join(dir, "app-arm64"), fakeELF(emAarch64, "arm64 app"), 0o755), Dst: "/app"},
				{Src: write(t, filepath.Join(dir, "lib-arm64"), fakeELF(emAarch64, "arm64 lib"), 0o644), Dst: "/lib/aarch64-linux-gnu/libx.so.1"},
			}},
		}}
}

func digest(t *testing.T, idx v1.ImageIndex) v1.Hash {
	t.Helper()
	d, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func manifests(t *testing.T, idx v1.ImageIndex) map[string]v1.Descriptor {
	t.Helper()
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]v1.Descriptor{}
	for _, d := range m.Manifests {
		out[d.Platform.Architecture] = d
	}
	return out
}

// The same files give the same digests (the build has no time, owner, umask or map order in
// it); a changed file changes its architecture's image and the index, not the other image.
func TestBuildIsReproducible(t *testing.T) {
	dir := t.TempDir()
	im := testSpec(t, dir)
	a, err := Build(im)
	if err != nil {
		t.Fatal(err)
	}
	// The same content written again later, with other permission bits that map to the same mode.
	dir2 := t.TempDir()
	im2 := testSpec(t, dir2)
	for _, f := range []string{"app-amd64", "lib-arm64"} {
		if err := os.Chmod(filepath.Join(dir2, f), map[string]os.FileMode{"app-amd64": 0o751, "lib-arm64": 0o640}[f]); err != nil {
			t.Fatal(err)
		}
	}
	b, err := Build(im2)
	if err != nil {
		t.Fatal(err)
	}
	if digest(t, a) != digest(t, b) {
		t.Fatalf("same inputs, different index digests %s and %s", digest(t, a), digest(t, b))
	}
	// Layout and docker archive written twice are byte-identical too.
	out1, out2 := t.TempDir(), t.TempDir()
	for _, o := range []struct {
		dir string
		idx v1.ImageIndex
	}{{out1, a}, {out2, b}} {
		if err := WriteLayout(filepath.Join(o.dir, "oci"), im.Tag, o.idx); err != nil {
			t.Fatal(err)
		}
		if err := WriteDockerArchive(filepath.Join(o.dir, "x.tar"), name.MustParseReference("localhost/kvbench-test:v0.1.0").(name.Tag), o.idx, "amd64"); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"oci/index.json", "x.tar"} {
		x, _ := os.ReadFile(filepath.Join(out1, f))
		y, _ := os.ReadFile(filepath.Join(out2, f))
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two builds of the same inputs (%d and %d bytes)", f, len(x), len(y))
		}
	}

	write(t, filepath.Join(dir2, "lib-arm64"), fakeELF(emAarch64, "arm64 lib, patched"), 0o644)
	c, err := Build(im2)
	if err != nil {
		t.Fatal(err)
	}
	ma, mc := manifests(t, a), manifests(t, c)
	if digest(t, c) == digest(t, a) || mc["arm64"].Digest == ma["arm64"].Digest {
		t.Error("a changed arm64 file did not change the arm64 image and the index")
	}
	if mc["amd64"].Digest != ma["amd64"].Digest {
		t.Error("a changed arm64 file changed the amd64 image")
	}
}

// layerFiles reads an image's one layer: name -> header and content.
func layerFiles(t *testing.T, img v1.Image) (map[string]*tar.Header, map[string]string) {
	t.Helper()
	ls, err := img.Layers()
	if err != nil || len(ls) != 1 {
		t.Fatalf("%d layers, %v; want 1", len(ls), err)
	}
	if mt, _ := ls[0].MediaType(); mt != types.OCILayer {
		t.Errorf("layer media type %s", mt)
	}
	rc, err := ls[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	hs, data := map[string]*tar.Header{}, map[string]string{}
	tr := tar.NewReader(rc)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		hs[h.Name], data[h.Name] = h, string(b)
		names = append(names, h.Name)
	}
	for i := 1; i < len(names); i++ {
		if names[i-1] >= names[i] {
			t.Errorf("tar entries not sorted: %s before %s", names[i-1], names[i])
		}
	}
	return hs, data
}

// Each architecture's image says so in the index and its config, runs as the user, and holds
// that architecture's files with normalised modes, root-owned, at time 0.
func TestBuildPlatformsConfigAndLayer(t *testing.T) {
	idx, err := Build(testSpec(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	if mt, _ := idx.MediaType(); mt != types.OCIImageIndex {
		t.Errorf("index media type %s", mt)
	}
	ms := manifests(t, idx)
	if len(ms) != 2 || ms["amd64"].Platform.OS != "linux" || ms["arm64"].Platform.Variant != "v8" || ms["amd64"].Platform.Variant != "" {
		t.Fatalf("index platforms: %+v", ms)
	}
	for arch, payload := range map[string]string{"amd64": "amd64 app", "arm64": "arm64 app"} {
		img, err := idx.Image(ms[arch].Digest)
		if err != nil {
			t.Fatal(err)
		}
		if mt, _ := img.MediaType(); mt != types.OCIManifestSchema1 {
			t.Errorf("%s manifest media type %s", arch, mt)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.Architecture != arch || cf.OS != "linux" || cf.Variant != ms[arch].Platform.Variant || cf.Created.Unix() != 0 {
			t.Errorf("%s config: architecture %s os %s variant %s created %v", arch, cf.Architecture, cf.OS, cf.Variant, cf.Created)
		}
		c := cf.Config
		if c.User != "65532:65532" || strings.Join(c.Entrypoint, " ") != "/app" || c.WorkingDir != "/" ||
			strings.Join(c.Env, ",") != "PATH=/usr/local/bin:/usr/bin:/bin,A=b" || c.Labels["org.opencontainers.image.version"] != "v0.1.0" {
			t.Errorf("%s config: %+v", arch, c)
		}
		hs, data := layerFiles(t, img)
		if !strings.HasSuffix(data["app"], payload) || hs["app"].Mode != 0o755 {
			t.Errorf("%s /app: mode %o, content %q", arch, hs["app"].Mode, data["app"])
		}
		if hs["tmp/"] == nil || hs["tmp/"].Mode != 0o1777 || hs["etc/"] == nil {
			t.Errorf("%s: /tmp or /etc missing or /tmp not 1777", arch)
		}
		if !strings.Contains(data["etc/passwd"], ":65532:65532:") || !strings.Contains(data["etc/group"], ":65532:") {
			t.Errorf("%s: no passwd/group entry for the user: %q", arch, data["etc/passwd"])
		}
		for n, h := range hs {
			if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || !h.ModTime.Equal(epoch.Time) {
				t.Errorf("%s %s: uid %d gid %d uname %q mtime %v", arch, n, h.Uid, h.Gid, h.Uname, h.ModTime)
			}
			if h.Typeflag == tar.TypeReg && h.Mode != 0o755 && h.Mode != 0o644 {
				t.Errorf("%s %s: mode %o", arch, n, h.Mode)
			}
		}
		lib := map[string]string{"amd64": "lib/x86_64-linux-gnu/libx.so.1", "arm64": "lib/aarch64-linux-gnu/libx.so.1"}[arch]
		if hs[lib] == nil || hs[lib].Mode != 0o644 || hs["lib/"] == nil {
			t.Errorf("%s: %s missing, not 0644, or its directories missing", arch, lib)
		}
	}
}

func TestSpecErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, want string
		edit       func(*ImageSpec)
	}{
		{"relative destination", `destination "app" is not a clean absolute file path`, func(s *ImageSpec) {
			s.Platforms["amd64"].Files[0].Dst = "app"
		}},
		{"unclean destination", `destination "/lib/../app" is not`, func(s *ImageSpec) {
			s.Platforms["amd64"].Files[1].Dst = "/lib/../app"
		}},
		{"twice", "/app is given twice", func(s *ImageSpec) {
			p := s.Platforms["arm64"]
			p.Files[1].Dst = "/app"
		}},
		{"over the user database", "/etc/passwd is given twice", func(s *ImageSpec) {
			s.Platforms["arm64"].Files[1].Dst = "/etc/passwd"
		}},
		{"unknown architecture", `architecture "riscv64" is not one of amd64, arm64`, func(s *ImageSpec) {
			s.Platforms["riscv64"] = s.Platforms["amd64"]
		}},
		{"no platforms", "no platforms", func(s *ImageSpec) { s.Platforms = nil }},
		{"entrypoint not shipped", "the entrypoint /manager is not one of its files", func(s *ImageSpec) { s.Entrypoint = []string{"/manager"} }},
		{"tag with a colon", `tag "v1:2" is empty or not a tag`, func(s *ImageSpec) { s.Tag = "v1:2" }},
		{"name with a tag", "must be a lower-case repository name", func(s *ImageSpec) { s.Name = "kvbench-runner:v1" }},
		{"negative user", "user -1 is not a uid", func(s *ImageSpec) { u := -1; s.User = &u }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testSpec(t, dir)
			tc.edit(s)
			b, _ := json.Marshal(Spec{Images: []ImageSpec{*s}})
			f := write(t, filepath.Join(dir, "spec.json"), b, 0o644)
			_, err := LoadSpec(f)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	t.Run("unknown field", func(t *testing.T) {
		f := write(t, filepath.Join(dir, "spec.json"), []byte(`{"images":[{"name":"x","tag":"v1","entrypont":["/x"]}]}`), 0o644)
		if _, err := LoadSpec(f); err == nil || !strings.Contains(err.Error(), `unknown field "entrypont"`) {
			t.Fatalf("error %v", err)
		}
	})
	// Found at build time: a file of the wrong architecture, and a missing file.
	for _, tc := range []struct {
		name, want string
		edit       func(*ImageSpec)
	}{
		{"amd64 binary in the arm64 image", "an ELF file for EM_X86_64, not EM_AARCH64", func(s *ImageSpec) {
			s.Platforms["arm64"].Files[1].Src = s.Platforms["amd64"].Files[1].Src
		}},
		{"missing file", "no such file or directory", func(s *ImageSpec) {
			s.Platforms["amd64"].Files[1].Src = filepath.Join(dir, "nope")
		}},
		{"file under a file", "/app is a file and a directory", func(s *ImageSpec) {
			s.Platforms["amd64"].Files[1].Dst = "/app/lib.so"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testSpec(t, dir)
			tc.edit(s)
			if _, err := Build(s); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// The docker archive (what `ctr images import` reads today) holds the amd64 image of the index
// under localhost/NAME:TAG: the same config, hence the same image ID.
func TestDockerArchiveIsTheIndexImage(t *testing.T) {
	dir := t.TempDir()
	spec := testSpec(t, dir)
	b, _ := json.Marshal(Spec{Images: []ImageSpec{*spec}})
	specFile := write(t, filepath.Join(dir, "spec.json"), b, 0o644)
	out := t.TempDir()
	s, err := LoadSpec(specFile)
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	if err := BuildAll(s, out, "amd64", &stdout); err != nil {
		t.Fatal(err)
	}
	idx, tag, err := ReadLayout(filepath.Join(out, "oci", "kvbench-test"))
	if err != nil || tag != "v0.1.0" {
		t.Fatalf("layout: tag %q, %v", tag, err)
	}
	if !strings.HasPrefix(stdout.String(), "kvbench-test:v0.1.0 "+digest(t, idx).String()) || !strings.Contains(stdout.String(), "linux/arm64/v8 sha256:") {
		t.Errorf("build printed %q", stdout.String())
	}
	tagRef := name.MustParseReference("localhost/kvbench-test:v0.1.0").(name.Tag)
	img, err := tarball.ImageFromPath(filepath.Join(out, "kvbench-test-amd64.tar"), &tagRef)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := ImageFor(idx, "amd64")
	got, _ := img.ConfigName()
	wantCfg, _ := want.ConfigName()
	if got != wantCfg {
		t.Errorf("archive image ID %s, index amd64 image config %s", got, wantCfg)
	}
}

// Push to a real registry implementation (go-containerregistry's, in process): both indexes land
// with an amd64 and an arm64 manifest, by the printed digests, and pushed.env names them.
func TestPushToRegistry(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://") // 127.0.0.1:port: plain HTTP without -insecure

	dir, out := t.TempDir(), t.TempDir()
	op := testSpec(t, dir)
	op.Name = "kvbench-operator"
	rn := testSpec(t, dir)
	rn.Name, rn.Env = "kvbench-runner", []string{"A=c"} // another index than the operator's
	var dirs []string
	local := map[string]v1.Hash{}
	for _, im := range []*ImageSpec{op, rn} {
		idx, err := Build(im)
		if err != nil {
			t.Fatal(err)
		}
		d := filepath.Join(out, "oci", im.Name)
		if err := WriteLayout(d, im.Tag, idx); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
		local[im.Name] = digest(t, idx)
	}
	var stdout bytes.Buffer
	pushed, err := Push(context.Background(), host+"/team", "v9.9.9", false, dirs, &stdout)
	if err != nil {
		t.Fatal(err)
	}
	wantEnv := "OPERATOR_IMAGE=" + host + "/team/kvbench-operator@" + local["kvbench-operator"].String() + "\n" +
		"RUNNER_IMAGE=" + host + "/team/kvbench-runner@" + local["kvbench-runner"].String() + "\n"
	if env := EnvFile(pushed); env != wantEnv {
		t.Errorf("pushed.env:\n%s\nwant:\n%s", env, wantEnv)
	}
	for _, n := range []string{"kvbench-operator", "kvbench-runner"} {
		if !strings.Contains(stdout.String(), "pushed "+host+"/team/"+n+"@"+local[n].String()) {
			t.Errorf("push printed %q", stdout.String())
		}
		for _, ref := range []string{host + "/team/" + n + "@" + local[n].String(), host + "/team/" + n + ":v9.9.9"} {
			r, err := name.ParseReference(ref)
			if err != nil {
				t.Fatal(err)
			}
			idx, err := remote.Index(r)
			if err != nil {
				t.Fatalf("%s: %v", ref, err)
			}
			if digest(t, idx) != local[n] {
				t.Errorf("%s: digest %s, pushed %s", ref, digest(t, idx), local[n])
			}
			ms := manifests(t, idx)
			for _, arch := range []string{"amd64", "arm64"} {
				img, err := idx.Image(ms[arch].Digest)
				if err != nil {
					t.Fatalf("%s %s: %v", ref, arch, err)
				}
				cf, err := img.ConfigFile()
				if err != nil || cf.Architecture != arch {
					t.Errorf("%s: the %s manifest's config says %v (%v)", ref, arch, cf, err)
				}
				// The layer is there, byte for byte.
				ls, _ := img.Layers()
				rc, err := ls[0].Compressed()
				if err != nil {
					t.Fatal(err)
				}
				h := sha256.New()
				_, _ = io.Copy(h, rc)
				rc.Close()
				if d, _ := ls[0].Digest(); "sha256:"+hex.EncodeToString(h.Sum(nil)) != d.String() {
					t.Errorf("%s %s: layer content does not match its digest", ref, arch)
				}
			}
		}
	}
}

func TestPushErrors(t *testing.T) {
	dir := t.TempDir()
	idx, err := Build(testSpec(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	layoutDir := filepath.Join(dir, "oci", "kvbench-test")
	if err := WriteLayout(layoutDir, "v0.1.0", idx); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ registry, want string }{
		{"", "no registry"},
		{"Bad Host:5000", `registry "Bad Host:5000"`},
		{"127.0.0.1:1", "connection refused"},
	} {
		if _, err := Push(context.Background(), tc.registry, "", false, []string{layoutDir}, io.Discard); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("registry %q: error %v, want %q", tc.registry, err, tc.want)
		}
	}
	if _, err := Push(context.Background(), "127.0.0.1:1", "", false, []string{dir}, io.Discard); err == nil {
		t.Error("a directory that is no layout pushed")
	}
}

func TestEnvName(t *testing.T) {
	for in, want := range map[string]string{"kvbench-runner": "RUNNER_IMAGE", "kvbench-operator": "OPERATOR_IMAGE", "kvbench-runner-java": "RUNNER_JAVA_IMAGE"} {
		if got := EnvName(in); got != want {
			t.Errorf("EnvName(%s) = %s, want %s", in, got, want)
		}
	}
}

// A registry with a certificate no one signed: refused, unless -insecure.
func TestPushInsecure(t *testing.T) {
	srv := httptest.NewTLSServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "https://")
	dir := t.TempDir()
	idx, err := Build(testSpec(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	layoutDir := filepath.Join(dir, "oci", "kvbench-test")
	if err := WriteLayout(layoutDir, "v0.1.0", idx); err != nil {
		t.Fatal(err)
	}
	if _, err := Push(context.Background(), host, "", false, []string{layoutDir}, io.Discard); err == nil {
		t.Fatal("pushed to a registry with an unverifiable certificate without -insecure")
	}
	pushed, err := Push(context.Background(), host, "", true, []string{layoutDir}, io.Discard)
	if err != nil || len(pushed) != 1 || pushed[0].Digest != digest(t, idx) {
		t.Fatalf("with -insecure: %v %v", pushed, err)
	}
}

// Unpack gives the image's files as a directory: that architecture's content, modes kept.
func TestUnpack(t *testing.T) {
	idx, err := Build(testSpec(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := Unpack(idx, "arm64", dir); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{"app": 0o755, "lib/aarch64-linux-gnu/libx.so.1": 0o644, "etc/passwd": 0o644,
		"tmp": os.ModeDir | os.ModeSticky | 0o777, "proc": os.ModeDir | 0o755} {
		st, err := os.Stat(filepath.Join(dir, p))
		if err != nil || st.Mode() != want {
			t.Errorf("%s: mode %v (%v), want %v", p, st.Mode(), err, want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "app")); !strings.HasSuffix(string(b), "arm64 app") {
		t.Errorf("/app is not the arm64 file")
	}
	if err := Unpack(idx, "riscv64", dir); err == nil || !strings.Contains(err.Error(), "no linux/riscv64 image") {
		t.Errorf("unpacking a missing architecture: %v", err)
	}
}
