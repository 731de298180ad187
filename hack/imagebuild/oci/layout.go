package oci

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// refNameAnnotation is the OCI layout annotation that names the index's tag.
const refNameAnnotation = "org.opencontainers.image.ref.name"

// WriteLayout replaces dir with an OCI image layout holding idx, its tag as the ref name. The
// layout is what push reads; skopeo and podman read it too (oci:DIR:TAG).
func WriteLayout(dir, tag string, idx v1.ImageIndex) error {
	tmp := dir + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	p, err := layout.Write(tmp, empty.Index)
	if err != nil {
		return err
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{refNameAnnotation: tag})); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}

// ReadLayout returns the image index of a layout WriteLayout wrote and its tag.
func ReadLayout(dir string) (v1.ImageIndex, string, error) {
	top, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, "", err
	}
	m, err := top.IndexManifest()
	if err != nil {
		return nil, "", err
	}
	if len(m.Manifests) != 1 {
		return nil, "", fmt.Errorf("%s: %d entries in index.json, want the one image index hack/imagebuild writes", dir, len(m.Manifests))
	}
	d := m.Manifests[0]
	if !d.MediaType.IsIndex() {
		return nil, "", fmt.Errorf("%s: index.json names a %s, want an image index", dir, d.MediaType)
	}
	idx, err := top.ImageIndex(d.Digest)
	return idx, d.Annotations[refNameAnnotation], err
}

// WriteDockerArchive writes one architecture's image of idx as a `docker save` tarball tagged ref,
// for `ctr images import`, `docker load` and `podman load`.
func WriteDockerArchive(file string, ref name.Tag, idx v1.ImageIndex, arch string) error {
	img, err := ImageFor(idx, arch)
	if err != nil {
		return err
	}
	tmp := file + ".tmp"
	if err := tarball.WriteToFile(tmp, ref, img); err != nil {
		return err
	}
	return os.Rename(tmp, file)
}

// ImageFor is idx's image for a Linux architecture.
func ImageFor(idx v1.ImageIndex, arch string) (v1.Image, error) {
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, d := range m.Manifests {
		if d.Platform != nil && d.Platform.OS == "linux" && d.Platform.Architecture == arch {
			return idx.Image(d.Digest)
		}
	}
	return nil, fmt.Errorf("the index has no linux/%s image", arch)
}

// Pushed is one image index in a registry.
type Pushed struct {
	Name   string  // repository name as built ("kvbench-runner")
	Ref    string  // where it went, by digest: REGISTRY/NAME@sha256:...
	Tag    string  // REGISTRY/NAME:TAG, the same index
	Digest v1.Hash // the index digest
}

// Push pushes the index of each layout directory (named after its image) to registry (host[:port]
// with an optional path), under the layout's tag or tagOverride. Plain HTTP is used for loopback
// and private addresses (go-containerregistry's rule) and, with insecure, for any registry.
// Credentials come from the Docker config (~/.docker/config.json), as with docker and crane.
func Push(ctx context.Context, registry, tagOverride string, insecure bool, dirs []string, progress io.Writer) ([]Pushed, error) {
	registry = strings.TrimSuffix(registry, "/")
	if registry == "" {
		return nil, fmt.Errorf("no registry: give host[:port][/path], e.g. localhost:5000")
	}
	var opts []name.Option
	ropts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)}
	if insecure {
		// as crane --insecure: plain HTTP, or HTTPS without verifying the certificate
		opts = append(opts, name.Insecure)
		tr := remote.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // asked for with -insecure
		ropts = append(ropts, remote.WithTransport(tr))
	}
	var out []Pushed
	for _, dir := range dirs {
		idx, tag, err := ReadLayout(dir)
		if err != nil {
			return out, err
		}
		if tagOverride != "" {
			tag = tagOverride
		}
		repoName := filepath.Base(filepath.Clean(dir))
		ref, err := name.NewTag(registry+"/"+repoName+":"+tag, append(opts, name.StrictValidation)...)
		if err != nil {
			return out, fmt.Errorf("registry %q, image %s:%s: %w", registry, repoName, tag, err)
		}
		if err := remote.WriteIndex(ref, idx, ropts...); err != nil {
			return out, fmt.Errorf("pushing %s: %w", ref, err)
		}
		d, err := idx.Digest()
		if err != nil {
			return out, err
		}
		p := Pushed{Name: repoName, Ref: ref.Context().Digest(d.String()).String(), Tag: ref.String(), Digest: d}
		fmt.Fprintf(progress, "pushed %s (%s)\n", p.Ref, p.Tag)
		out = append(out, p)
	}
	return out, nil
}

// EnvName is the variable an image's reference gets in pushed.env: kvbench-runner is RUNNER_IMAGE,
// kvbench-operator OPERATOR_IMAGE, kvbench-runner-java RUNNER_JAVA_IMAGE.
func EnvName(image string) string {
	n := strings.TrimPrefix(image, "kvbench-")
	return strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(n)) + "_IMAGE"
}

// EnvFile is pushed.env: one NAME_IMAGE=REGISTRY/NAME@sha256:... line per image, in push order.
func EnvFile(pushed []Pushed) string {
	var b strings.Builder
	for _, p := range pushed {
		fmt.Fprintf(&b, "%s=%s\n", EnvName(p.Name), p.Ref)
	}
	return b.String()
}
