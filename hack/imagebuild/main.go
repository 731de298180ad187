// Command imagebuild builds the project's container images with go-containerregistry and pushes
// them to any registry (package oci does the work). No Docker engine, no base image: each image is
// one reproducible layer of files given per architecture (hack/build-images.sh writes the spec), in
// an OCI image index with one image per architecture.
//
//	imagebuild build -spec SPEC.json -out DIR [-docker-archive ARCH]
//	    writes DIR/oci/NAME (an OCI image layout holding NAME's index, tagged with its tag) for every
//	    image of the spec and, with -docker-archive, DIR/NAME-ARCH.tar (`docker save` format, tagged
//	    localhost/NAME:TAG) for `ctr images import`; prints each index digest
//	imagebuild push -registry HOST[:PORT][/PATH] [-tag T] [-insecure] [-env-file F] DIR/oci/NAME...
//	    pushes each index, prints REGISTRY/NAME@sha256:..., and writes F with one line per image:
//	    NAME_IMAGE=REGISTRY/NAME@sha256:... (kvbench-runner is RUNNER_IMAGE)
//	imagebuild unpack -layout DIR/oci/NAME -arch ARCH -out ROOT
//	    writes the files of that architecture's image under ROOT (the Dockerfile copies them)
//
// The same spec and files give the same digests: fixed timestamps, sorted tar entries owned by root,
// file modes 0755/0644, gzip without a name or time.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/kvbench/kvbench-operator/hack/imagebuild/oci"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: imagebuild build|push|unpack [flags]  (imagebuild build -h)")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	var err error
	switch args[0] {
	case "build":
		spec := fs.String("spec", "", "the images to build (JSON: oci.Spec)")
		out := fs.String("out", "", "output directory")
		archive := fs.String("docker-archive", "", "also write each image's image for this architecture as OUT/NAME-ARCH.tar (docker save format)")
		if err = parse(fs, args[1:], 0); err == nil {
			err = build(*spec, *out, *archive, stdout)
		}
	case "push":
		registry := fs.String("registry", "", "HOST[:PORT][/PATH] to push to (plain HTTP for localhost, 127.0.0.1, ::1 and private addresses)")
		tag := fs.String("tag", "", "push under this tag instead of the one the image was built with")
		insecure := fs.Bool("insecure", false, "plain HTTP, or HTTPS without verifying the certificate, for any registry")
		envFile := fs.String("env-file", "", "write NAME_IMAGE=REGISTRY/NAME@sha256:... lines here")
		if err = parse(fs, args[1:], -1); err == nil {
			err = push(ctx, *registry, *tag, *insecure, *envFile, fs.Args(), stdout)
		}
	case "unpack":
		layout := fs.String("layout", "", "an OCI layout written by build (OUT/oci/NAME)")
		arch := fs.String("arch", "", "the architecture whose image to unpack")
		out := fs.String("out", "", "the directory to write the image's files into")
		if err = parse(fs, args[1:], 0); err == nil {
			err = unpack(*layout, *arch, *out)
		}
	default:
		err = fmt.Errorf("unknown command %q: build, push or unpack", args[0])
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "imagebuild: %v\n", err)
		return 1
	}
	return 0
}

// parse parses flags and wants exactly nargs arguments (-1: at least one).
func parse(fs *flag.FlagSet, args []string, nargs int) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if nargs >= 0 && fs.NArg() != nargs || nargs < 0 && fs.NArg() == 0 {
		return fmt.Errorf("%s: wrong arguments %q (imagebuild %s -h)", fs.Name(), fs.Args(), fs.Name())
	}
	return nil
}

func build(spec, out, archive string, stdout io.Writer) error {
	if spec == "" || out == "" {
		return fmt.Errorf("build needs -spec and -out")
	}
	s, err := oci.LoadSpec(spec)
	if err != nil {
		return err
	}
	return oci.BuildAll(s, out, archive, stdout)
}

func push(ctx context.Context, registry, tag string, insecure bool, envFile string, dirs []string, stdout io.Writer) error {
	pushed, err := oci.Push(ctx, registry, tag, insecure, dirs, stdout)
	if err != nil {
		return err
	}
	if envFile == "" {
		return nil
	}
	return os.WriteFile(envFile, []byte(oci.EnvFile(pushed)), 0o644)
}

func unpack(layout, arch, out string) error {
	if layout == "" || arch == "" || out == "" {
		return fmt.Errorf("unpack needs -layout, -arch and -out")
	}
	idx, _, err := oci.ReadLayout(layout)
	if err != nil {
		return err
	}
	return oci.Unpack(idx, arch, out)
}
