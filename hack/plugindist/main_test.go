package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

var targets = []string{"darwin_amd64", "darwin_arm64", "linux_amd64", "linux_arm64", "windows_amd64", "windows_arm64"}

// bins writes a fake binary per target whose content names the target.
func bins(t *testing.T) string {
	dir := t.TempDir()
	for _, tg := range targets {
		name := binName
		if strings.HasPrefix(tg, "windows") {
			name += ".exe"
		}
		if err := os.MkdirAll(filepath.Join(dir, tg), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, tg, name), []byte("binary for "+tg), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// members reads a .tar.gz or .zip archive: name -> content, and the binary's mode.
func members(t *testing.T, file string) (map[string]string, map[string]os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out, modes := map[string]string{}, map[string]os.FileMode{}
	if strings.HasSuffix(file, ".zip") {
		zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			d, _ := io.ReadAll(rc)
			rc.Close()
			out[f.Name], modes[f.Name] = string(d), f.Mode()
		}
		return out, modes
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		d, _ := io.ReadAll(tr)
		out[h.Name], modes[h.Name] = string(d), os.FileMode(h.Mode)
	}
	return out, modes
}

// The krew manifest names every archive with its real sha256, one platform each, and each
// archive holds the binary the manifest's bin and files name; SHA256SUMS agrees.
func TestManifestMatchesArchives(t *testing.T) {
	binDir, out := bins(t), t.TempDir()
	lic := filepath.Join(t.TempDir(), "LICENSE")
	if err := os.WriteFile(lic, []byte("Apache License"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"-version", "v0.1.0", "-url-base", "https://example.test/dl/v0.1.0/", "-out", out, "-license", lic, binDir}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "kvbench.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var p Plugin
	if err := yaml.UnmarshalStrict(b, &p); err != nil {
		t.Fatal(err)
	}
	if p.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || p.Kind != "Plugin" || p.Metadata.Name != "kvbench" ||
		p.Spec.Version != "v0.1.0" || p.Spec.ShortDescription == "" || p.Spec.Homepage == "" {
		t.Errorf("manifest header: %+v", p)
	}
	sums, _ := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
	seen := map[string]bool{}
	for _, pl := range p.Spec.Platforms {
		tg := pl.Selector.MatchLabels["os"] + "_" + pl.Selector.MatchLabels["arch"]
		if seen[tg] || len(pl.Selector.MatchLabels) != 2 {
			t.Errorf("selector %v twice or with other labels", pl.Selector.MatchLabels)
		}
		seen[tg] = true
		if !strings.HasPrefix(pl.URI, "https://example.test/dl/v0.1.0/kubectl-kvbench_v0.1.0_"+tg) {
			t.Errorf("%s: uri %s", tg, pl.URI)
		}
		file := filepath.Join(out, path.Base(pl.URI))
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("%s: the uri's archive: %v", tg, err)
		}
		sum := sha256.Sum256(data)
		if pl.Sha256 != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: manifest sha256 %s, archive's %x", tg, pl.Sha256, sum)
		}
		if !strings.Contains(string(sums), pl.Sha256+"  "+path.Base(pl.URI)+"\n") {
			t.Errorf("%s: SHA256SUMS has no line for %s", tg, path.Base(pl.URI))
		}
		content, modes := members(t, file)
		if content[pl.Bin] != "binary for "+tg || modes[pl.Bin].Perm() != 0o755 {
			t.Errorf("%s: the archive's %s is %q, mode %v", tg, pl.Bin, content[pl.Bin], modes[pl.Bin])
		}
		for _, f := range pl.Files {
			if _, ok := content[f.From]; !ok || f.To != "." {
				t.Errorf("%s: files entry %+v not in the archive", tg, f)
			}
		}
		if (strings.HasPrefix(tg, "windows") != strings.HasSuffix(pl.Bin, ".exe")) || content["LICENSE"] != "Apache License" {
			t.Errorf("%s: bin %s, LICENSE %q", tg, pl.Bin, content["LICENSE"])
		}
	}
	if len(seen) != len(targets) {
		t.Errorf("%d platforms, want %d", len(seen), len(targets))
	}

	// The same binaries give byte-identical archives and manifest.
	out2 := t.TempDir()
	if err := run([]string{"-version", "v0.1.0", "-url-base", "https://example.test/dl/v0.1.0/", "-out", out2, "-license", lic, binDir}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"kvbench.yaml", "SHA256SUMS"} {
		a, _ := os.ReadFile(filepath.Join(out, f))
		b, _ := os.ReadFile(filepath.Join(out2, f))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two runs over the same binaries", f)
		}
	}
}

func TestPackErrors(t *testing.T) {
	binDir := bins(t)
	if err := os.Remove(filepath.Join(binDir, "windows_arm64", binName+".exe")); err != nil {
		t.Fatal(err)
	}
	if _, err := Pack(binDir, t.TempDir(), "v0.1.0", ""); err == nil || !strings.Contains(err.Error(), "windows_arm64/kubectl-kvbench.exe") {
		t.Errorf("a missing binary: %v", err)
	}
	if _, err := Pack(t.TempDir(), t.TempDir(), "v0.1.0", ""); err == nil || !strings.Contains(err.Error(), "no OS_ARCH/kubectl-kvbench") {
		t.Errorf("no binaries: %v", err)
	}
	if err := run([]string{"-version", "0.1.0", "-url-base", "x", binDir}); err == nil || !strings.Contains(err.Error(), "usage") {
		t.Errorf("a version without v: %v", err)
	}
}
