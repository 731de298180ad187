// Command plugindist packs cross-built kubectl-kvbench binaries into release archives, their
// SHA256SUMS and a krew plugin manifest (kvbench.yaml) that names each archive by URL and sha256.
// hack/plugin-dist.sh builds the binaries and runs it (make plugin-dist).
//
//	plugindist -version v0.1.0 -url-base https://…/releases/download/v0.1.0 -out dist [-license LICENSE] BINDIR
//
// BINDIR holds OS_ARCH/kubectl-kvbench (kubectl-kvbench.exe for windows). Archives are .tar.gz
// (linux, darwin) and .zip (windows), with fixed times and owners: the same binaries give the same
// archives and sha256s.
package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

const binName = "kubectl-kvbench"

// Plugin is the krew manifest (krew.googlecontainertools.github.com/v1alpha2 Plugin), the fields
// this plugin uses.
type Plugin struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Metadata   Metadata   `json:"metadata"`
	Spec       PluginSpec `json:"spec"`
}

type Metadata struct {
	Name string `json:"name"`
}

type PluginSpec struct {
	Version          string     `json:"version"`
	Homepage         string     `json:"homepage"`
	ShortDescription string     `json:"shortDescription"`
	Description      string     `json:"description"`
	Platforms        []Platform `json:"platforms"`
}

type Platform struct {
	Selector Selector   `json:"selector"`
	URI      string     `json:"uri"`
	Sha256   string     `json:"sha256"`
	Bin      string     `json:"bin"`
	Files    []FileCopy `json:"files"`
}

type Selector struct {
	MatchLabels map[string]string `json:"matchLabels"`
}

type FileCopy struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Archive is one packed platform.
type Archive struct {
	OS, Arch, File, Sha256 string
}

// mtime is every archive member's time (zip cannot hold times before 1980).
var mtime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "plugindist: "+err.Error())
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("plugindist", flag.ContinueOnError)
	version := fs.String("version", "", "the release version (v0.1.0)")
	urlBase := fs.String("url-base", "", "where the archives will be downloaded from (the manifest's uri prefix)")
	out := fs.String("out", "dist", "output directory")
	license := fs.String("license", "", "a LICENSE file to put into every archive")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *version == "" || !strings.HasPrefix(*version, "v") || *urlBase == "" || fs.NArg() != 1 {
		return fmt.Errorf("usage: plugindist -version vX.Y.Z -url-base URL -out DIR [-license FILE] BINDIR")
	}
	archives, err := Pack(fs.Arg(0), *out, *version, *license)
	if err != nil {
		return err
	}
	var sums strings.Builder
	for _, a := range archives {
		fmt.Fprintf(&sums, "%s  %s\n", a.Sha256, a.File)
	}
	if err := os.WriteFile(filepath.Join(*out, "SHA256SUMS"), []byte(sums.String()), 0o644); err != nil {
		return err
	}
	m, err := yaml.Marshal(Manifest(*version, *urlBase, *license != "", archives))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*out, "kvbench.yaml"), m, 0o644); err != nil {
		return err
	}
	fmt.Print(sums.String())
	fmt.Println("wrote " + filepath.Join(*out, "kvbench.yaml"))
	return nil
}

// Pack archives every BINDIR/OS_ARCH/kubectl-kvbench[.exe] into out, in OS_ARCH order.
func Pack(binDir, out, version, license string) ([]Archive, error) {
	dirs, err := os.ReadDir(binDir)
	if err != nil {
		return nil, err
	}
	var lic []byte
	if license != "" {
		if lic, err = os.ReadFile(license); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	var archives []Archive
	for _, d := range dirs {
		goos, arch, ok := strings.Cut(d.Name(), "_")
		if !d.IsDir() || !ok {
			continue
		}
		bin := binName
		if goos == "windows" {
			bin += ".exe"
		}
		data, err := os.ReadFile(filepath.Join(binDir, d.Name(), bin))
		if err != nil {
			return nil, err
		}
		members := []member{{bin, data, 0o755}}
		if lic != nil {
			members = append(members, member{"LICENSE", lic, 0o644})
		}
		file := fmt.Sprintf("%s_%s_%s_%s", binName, version, goos, arch)
		var b []byte
		if goos == "windows" {
			file += ".zip"
			b, err = zipArchive(members)
		} else {
			file += ".tar.gz"
			b, err = tarGz(members)
		}
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(out, file), b, 0o644); err != nil {
			return nil, err
		}
		sum := sha256.Sum256(b)
		archives = append(archives, Archive{OS: goos, Arch: arch, File: file, Sha256: hex.EncodeToString(sum[:])})
	}
	if len(archives) == 0 {
		return nil, fmt.Errorf("no OS_ARCH/%s in %s", binName, binDir)
	}
	slices.SortFunc(archives, func(a, b Archive) int { return strings.Compare(a.File, b.File) })
	return archives, nil
}

// Manifest is the krew manifest for the archives, downloaded from urlBase.
func Manifest(version, urlBase string, license bool, archives []Archive) Plugin {
	p := Plugin{APIVersion: "krew.googlecontainertools.github.com/v1alpha2", Kind: "Plugin", Metadata: Metadata{Name: "kvbench"},
		Spec: PluginSpec{
			Version:          version,
			Homepage:         "https://github.com/kvbench/kvbench-operator",
			ShortDescription: "Report, compare and plot KVBenchmark results (RocksDB, LevelDB, Pebble)",
			Description: `Reads KVBenchmarks of the kvbench-operator from the cluster or from saved files and
prints the seed documents' tables (YCSB, pulse), db_bench result lines, comparisons with a
significance test and plots; saves runs to files and rescales benchmark files.`,
		}}
	for _, a := range archives {
		bin := binName
		if a.OS == "windows" {
			bin += ".exe"
		}
		files := []FileCopy{{From: bin, To: "."}}
		if license {
			files = append(files, FileCopy{From: "LICENSE", To: "."})
		}
		p.Spec.Platforms = append(p.Spec.Platforms, Platform{
			Selector: Selector{MatchLabels: map[string]string{"os": a.OS, "arch": a.Arch}},
			URI:      strings.TrimSuffix(urlBase, "/") + "/" + a.File,
			Sha256:   a.Sha256, Bin: bin, Files: files,
		})
	}
	return p
}

type member struct {
	name string
	data []byte
	mode int64
}

func tarGz(members []member) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf) // no name, no time in the header
	tw := tar.NewWriter(zw)
	for _, m := range members {
		if err := tw.WriteHeader(&tar.Header{Name: m.name, Mode: m.mode, Size: int64(len(m.data)), ModTime: mtime, Typeflag: tar.TypeReg}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(m.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func zipArchive(members []member) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range members {
		h := &zip.FileHeader{Name: m.name, Method: zip.Deflate, Modified: mtime}
		h.SetMode(os.FileMode(m.mode))
		w, err := zw.CreateHeader(h)
		if err != nil {
			return nil, err
		}
		if _, err := io.Copy(w, bytes.NewReader(m.data)); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
