package oci

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// BuildAll builds every image of s into out/oci/NAME and, when archiveArch is set, that
// architecture's image as out/NAME-ARCH.tar tagged localhost/NAME:TAG. It prints one Summary line
// per image to w.
func BuildAll(s *Spec, out, archiveArch string, w io.Writer) error {
	for i := range s.Images {
		im := &s.Images[i]
		if _, ok := im.Platforms[archiveArch]; archiveArch != "" && !ok {
			return fmt.Errorf("image %s has no %s image for a docker archive", im.Name, archiveArch)
		}
		idx, err := Build(im)
		if err != nil {
			return err
		}
		if err := WriteLayout(filepath.Join(out, "oci", im.Name), im.Tag, idx); err != nil {
			return err
		}
		if archiveArch != "" {
			ref, err := name.NewTag("localhost/" + im.Name + ":" + im.Tag)
			if err != nil {
				return err
			}
			if err := WriteDockerArchive(filepath.Join(out, im.Name+"-"+archiveArch+".tar"), ref, idx, archiveArch); err != nil {
				return err
			}
		}
		line, err := Summary(im.Name+":"+im.Tag, idx)
		if err != nil {
			return err
		}
		fmt.Fprintln(w, line)
	}
	return nil
}

// Summary is one line: the index digest, then each architecture's manifest digest and compressed
// size.
func Summary(ref string, idx v1.ImageIndex) (string, error) {
	d, err := idx.Digest()
	if err != nil {
		return "", err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return "", err
	}
	parts := []string{ref + " " + d.String()}
	for _, md := range m.Manifests {
		img, err := idx.Image(md.Digest)
		if err != nil {
			return "", err
		}
		layers, err := img.Layers()
		if err != nil {
			return "", err
		}
		var size int64
		for _, l := range layers {
			n, err := l.Size()
			if err != nil {
				return "", err
			}
			size += n
		}
		parts = append(parts, fmt.Sprintf("%s %s %s MB", md.Platform, md.Digest, strconv.FormatFloat(float64(size)/1e6, 'f', 1, 64)))
	}
	return strings.Join(parts, "  "), nil
}

// Unpack writes the files of idx's image for arch into dir, as a container runtime would see
// them: for the Dockerfile's COPY and the qemu test.
func Unpack(idx v1.ImageIndex, arch, dir string) error {
	img, err := ImageFor(idx, arch)
	if err != nil {
		return err
	}
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		p := filepath.Join(dir, filepath.Clean("/"+h.Name))
		mode := os.FileMode(h.Mode).Perm()
		if h.Mode&0o1000 != 0 {
			mode |= os.ModeSticky
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
			err = os.Chmod(p, mode)
		case tar.TypeReg:
			var f *os.File
			if f, err = os.OpenFile(p, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600); err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err == nil {
				err = os.Chmod(p, mode)
			}
		default:
			return fmt.Errorf("%s: tar entry type %c, the images hold only files and directories", h.Name, h.Typeflag)
		}
		if err != nil {
			return err
		}
	}
}
