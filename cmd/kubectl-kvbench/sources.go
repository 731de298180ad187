package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kvbench/kvbench-operator/report"
)

// source is one place benchmarks come from: a KVBenchmark in the cluster, or a file or directory.
type source struct{ name, file string }

// sourceOf reads an --old or --new value: a path that exists or has a "/" in it is a file,
// anything else a KVBenchmark name (names cannot hold "/").
func sourceOf(v string) source {
	if _, err := os.Stat(v); err == nil || strings.ContainsRune(v, '/') {
		return source{file: v}
	}
	return source{name: v}
}

// sourcesInOrder lists the command line's benchmark sources in the order they were written: NAME
// arguments and -f values interleaved as typed, so that `compare -f old.yaml new` has the file
// as A. Cobra hands names and -f values over separately; this parses the command's own arguments
// again with the command's flag definitions (and throwaway values) to recover their order.
func (o *options) sourcesInOrder(cmd *cobra.Command) ([]source, error) {
	_, args, err := cmd.Root().Find(o.args)
	if err != nil {
		return nil, err
	}
	fs := pflag.NewFlagSet("order", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SetInterspersed(false) // stop at each name, so that its place among the -f values is known
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		c := *f
		c.Value = discard(f.Value.Type())
		fs.AddFlag(&c)
	})
	var out []source
	record := func(f *pflag.Flag, value string) error {
		if f.Name != "filename" {
			return nil
		}
		files, err := csv.NewReader(strings.NewReader(value)).Read() // as pflag splits a string slice
		if err != nil {
			return err
		}
		for _, file := range files {
			out = append(out, source{file: file})
		}
		return nil
	}
	for {
		if err := fs.ParseAll(args, record); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if fs.ArgsLenAtDash() >= 0 { // after "--" everything is a name
			for _, name := range rest {
				out = append(out, source{name: name})
			}
			return out, nil
		}
		if len(rest) == 0 {
			return out, nil
		}
		out = append(out, source{name: rest[0]})
		args = rest[1:]
	}
}

// discard is a flag value that takes anything: sourcesInOrder only needs to know which flags
// take a value.
type discard string

func (d discard) String() string   { return "" }
func (d discard) Set(string) error { return nil }
func (d discard) Type() string     { return string(d) }

// loadSources reads the benchmarks of each source, in the sources' order. Files are read
// together (a result file given with -f attaches to its benchmark in another -f argument).
func (o *options) loadSources(ctx context.Context, srcs []source) ([]*report.Benchmark, error) {
	if len(srcs) == 0 {
		return nil, fmt.Errorf("name a KVBenchmark or give -f FILE")
	}
	var files []string
	needCluster := false
	for _, s := range srcs {
		if s.file != "" {
			files = append(files, s.file)
		} else {
			needCluster = true
		}
	}
	var fromFiles []*report.Benchmark
	if len(files) > 0 {
		var err error
		if fromFiles, err = loadFiles(files); err != nil {
			return nil, err
		}
	}
	var c *cluster
	if needCluster {
		var err error
		if c, err = connect(o.kubeconfig, o.context, o.namespace, o.stderr); err != nil {
			return nil, err
		}
	}
	var out []*report.Benchmark
	used := make([]bool, len(fromFiles))
	for _, s := range srcs {
		if s.name != "" {
			b, err := c.benchmark(ctx, s.name)
			if err != nil {
				return nil, err
			}
			out = append(out, b)
			continue
		}
		for i, b := range fromFiles {
			if !used[i] && b.Source == s.file {
				used[i] = true
				out = append(out, b)
			}
		}
	}
	return out, nil
}

// loadInOrder reads the benchmarks named on cmd's command line, in the order written.
func (o *options) loadInOrder(cmd *cobra.Command) ([]*report.Benchmark, error) {
	srcs, err := o.sourcesInOrder(cmd)
	if err != nil {
		return nil, err
	}
	return o.loadSources(cmd.Context(), srcs)
}
