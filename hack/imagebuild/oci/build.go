// Package oci builds the project's images with go-containerregistry: one reproducible layer of
// given files per architecture, an OCI image index per image; writes them as OCI layouts and
// `docker save` tarballs, pushes them, and unpacks an image into a directory.
package oci

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Spec is what hack/imagebuild builds: a list of images, each from files per architecture.
type Spec struct {
	Images []ImageSpec `json:"images"`
}

// ImageSpec is one image: an OCI image index with one single-layer image per architecture.
type ImageSpec struct {
	// Name is the repository name without a registry ("kvbench-runner").
	Name string `json:"name"`
	// Tag is the tag the index is pushed under ("v0.1.0").
	Tag        string            `json:"tag"`
	Entrypoint []string          `json:"entrypoint"`
	Cmd        []string          `json:"cmd,omitempty"`
	Env        []string          `json:"env,omitempty"`
	WorkingDir string            `json:"workingDir,omitempty"`
	Labels     map[string]string `json:"labels,omitempty"`
	// User, when set, is the uid (and gid) the image runs as; it gets an /etc/passwd entry.
	User *int `json:"user,omitempty"`
	// Platforms maps a Linux architecture ("amd64", "arm64") to the files of that image.
	Platforms map[string]PlatformSpec `json:"platforms"`
}

// PlatformSpec is the content of one architecture's image.
type PlatformSpec struct {
	Files []File `json:"files"`
}

// File is copied from Src on the build machine to the absolute path Dst in the image. Its mode is
// 0755 when Src has any execute bit, else 0644 (the build machine's umask does not leak in).
type File struct {
	Src string `json:"src"`
	Dst string `json:"dst"`
}

// platforms are the architectures an image may have, with the platform their index entry and
// config carry, and the ELF machine their binaries must be built for.
var platforms = map[string]struct {
	platform v1.Platform
	machine  elf.Machine
}{
	"amd64": {v1.Platform{OS: "linux", Architecture: "amd64"}, elf.EM_X86_64},
	"arm64": {v1.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}, elf.EM_AARCH64},
}

// epoch is every timestamp in the images, so that the same files give the same digests.
var epoch = v1.Time{Time: time.Unix(0, 0).UTC()}

// LoadSpec reads and checks a spec file.
func LoadSpec(file string) (*Spec, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var s Spec
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(s.Images) == 0 {
		return nil, fmt.Errorf("%s: no images", file)
	}
	for _, im := range s.Images {
		if err := im.check(); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	return &s, nil
}

func (im *ImageSpec) check() error {
	if im.Name == "" || strings.ContainsAny(im.Name, ":@ ") || im.Name != strings.ToLower(im.Name) {
		return fmt.Errorf("image %q: the name must be a lower-case repository name without tag or digest", im.Name)
	}
	if im.Tag == "" || strings.ContainsAny(im.Tag, ":@/ ") {
		return fmt.Errorf("image %s: tag %q is empty or not a tag", im.Name, im.Tag)
	}
	if len(im.Entrypoint) == 0 {
		return fmt.Errorf("image %s: no entrypoint", im.Name)
	}
	if len(im.Platforms) == 0 {
		return fmt.Errorf("image %s: no platforms", im.Name)
	}
	if im.User != nil && (*im.User < 0 || *im.User > 1<<31-2) {
		return fmt.Errorf("image %s: user %d is not a uid", im.Name, *im.User)
	}
	for arch, p := range im.Platforms {
		if _, ok := platforms[arch]; !ok {
			return fmt.Errorf("image %s: architecture %q is not one of amd64, arm64", im.Name, arch)
		}
		seen := map[string]bool{}
		for _, f := range p.Files {
			if !path.IsAbs(f.Dst) || path.Clean(f.Dst) != f.Dst || f.Dst == "/" {
				return fmt.Errorf("image %s/%s: destination %q is not a clean absolute file path", im.Name, arch, f.Dst)
			}
			if seen[f.Dst] || baseFiles[f.Dst] {
				return fmt.Errorf("image %s/%s: %s is given twice", im.Name, arch, f.Dst)
			}
			seen[f.Dst] = true
		}
		if !seen[im.Entrypoint[0]] {
			return fmt.Errorf("image %s/%s: the entrypoint %s is not one of its files", im.Name, arch, im.Entrypoint[0])
		}
	}
	return nil
}

// baseFiles are what every image has besides its files: the user database (a uid without a name
// upsets some programs) and the directories a container runtime mounts over or a program expects.
var baseFiles = map[string]bool{"/etc/passwd": true, "/etc/group": true}

var baseDirs = map[string]int64{"/etc": 0o755, "/tmp": 0o1777, "/dev": 0o755, "/proc": 0o755, "/sys": 0o755}

// Architectures are the image's platforms in a fixed order, so that the index does not depend on
// map order.
func (im *ImageSpec) Architectures() []string {
	var a []string
	for arch := range im.Platforms {
		a = append(a, arch)
	}
	slices.Sort(a)
	return a
}

// Build makes the image index of im: per architecture one image of one layer.
func Build(im *ImageSpec) (v1.ImageIndex, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, arch := range im.Architectures() {
		img, err := buildImage(im, arch)
		if err != nil {
			return nil, err
		}
		p := platforms[arch].platform
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
	}
	return idx, nil
}

func buildImage(im *ImageSpec, arch string) (v1.Image, error) {
	gz, err := layerTarGz(im, arch)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(gz)), nil },
		tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, MediaType: types.OCILayer,
		History: v1.History{Created: epoch, CreatedBy: "hack/imagebuild", Comment: im.Name + " " + arch}})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	p := platforms[arch].platform
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Created = epoch
	cf.Config = v1.Config{Entrypoint: im.Entrypoint, Cmd: im.Cmd, WorkingDir: im.WorkingDir, Labels: im.Labels,
		Env: append([]string{"PATH=/usr/local/bin:/usr/bin:/bin"}, im.Env...)}
	if cf.Config.WorkingDir == "" {
		cf.Config.WorkingDir = "/"
	}
	if im.User != nil {
		cf.Config.User = fmt.Sprintf("%d:%d", *im.User, *im.User)
	}
	return mutate.ConfigFile(img, cf)
}

// entry is one tar entry of a layer: a directory, or a file with its content.
type entry struct {
	mode int64
	dir  bool
	data []byte
}

// layerTarGz is the image's one layer: sorted entries owned by root with time 0, gzip-compressed
// without a name or time in the header. Every ELF file must be built for the layer's architecture.
func layerTarGz(im *ImageSpec, arch string) ([]byte, error) {
	entries := map[string]entry{}
	addDirs := func(p string) {
		for d := path.Dir(p); d != "/"; d = path.Dir(d) {
			if _, ok := entries[d]; !ok {
				entries[d] = entry{mode: 0o755, dir: true}
			}
		}
	}
	for d, m := range baseDirs {
		entries[d] = entry{mode: m, dir: true}
	}
	passwd := "root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n"
	group := "root:x:0:\nnogroup:x:65534:\n"
	if u := im.User; u != nil && *u != 0 && *u != 65534 {
		passwd += fmt.Sprintf("app:x:%d:%d:app:/nonexistent:/sbin/nologin\n", *u, *u)
		group += fmt.Sprintf("app:x:%d:\n", *u)
	}
	entries["/etc/passwd"] = entry{mode: 0o644, data: []byte(passwd)}
	entries["/etc/group"] = entry{mode: 0o644, data: []byte(group)}
	for _, f := range im.Platforms[arch].Files {
		st, err := os.Stat(f.Src)
		if err != nil {
			return nil, fmt.Errorf("image %s/%s: %w", im.Name, arch, err)
		}
		if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("image %s/%s: %s is not a regular file", im.Name, arch, f.Src)
		}
		data, err := os.ReadFile(f.Src)
		if err != nil {
			return nil, err
		}
		if err := checkMachine(data, platforms[arch].machine); err != nil {
			return nil, fmt.Errorf("image %s/%s: %s: %w", im.Name, arch, f.Src, err)
		}
		mode := int64(0o644)
		if st.Mode().Perm()&0o111 != 0 {
			mode = 0o755
		}
		if e, ok := entries[f.Dst]; ok && e.dir {
			return nil, fmt.Errorf("image %s/%s: %s is a directory of the image", im.Name, arch, f.Dst)
		}
		entries[f.Dst] = entry{mode: mode, data: data}
		addDirs(f.Dst)
	}
	names := make([]string, 0, len(entries))
	for n, e := range entries {
		if !e.dir {
			if d, ok := entries[path.Dir(n)]; ok && !d.dir {
				return nil, fmt.Errorf("image %s/%s: %s is a file and a directory", im.Name, arch, path.Dir(n))
			}
		}
		names = append(names, n)
	}
	slices.Sort(names)

	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	for _, n := range names {
		e := entries[n]
		h := &tar.Header{Name: strings.TrimPrefix(n, "/"), Mode: e.mode, ModTime: epoch.Time, Typeflag: tar.TypeReg, Size: int64(len(e.data)), Format: tar.FormatPAX}
		if e.dir {
			h.Name += "/"
			h.Typeflag, h.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
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

// checkMachine refuses an ELF file of another architecture (an amd64 library in the arm64 image
// would only fail when the pod starts). Other files pass.
func checkMachine(data []byte, want elf.Machine) error {
	if !bytes.HasPrefix(data, []byte(elf.ELFMAG)) {
		return nil
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("not a valid ELF file: %w", err)
	}
	if f.Machine != want {
		return fmt.Errorf("an ELF file for %s, not %s", f.Machine, want)
	}
	return nil
}
