package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/archive"
	"github.com/kvbench/kvbench-operator/report"
)

// resultSuffix ends the files kubectl kvbench save writes for runs: <benchmark>-<run>.result.json.
const resultSuffix = ".result.json"

// resultFile is a runner result read from a file.
type resultFile struct {
	path   string
	result *api.Result
}

// loadFiles reads -f arguments: YAML or JSON files (multi-document YAML, KVBenchmark,
// KVBenchmarkList or List, runner results) and directories (their .yaml, .yml and .json files).
// A result named <benchmark>-<run>.result.json next to a benchmark's file attaches to that run
// (and is read without being named). Any other result becomes a benchmark of its own, named
// after the file. Benchmarks come in the order of the arguments they were read from, each with
// that argument as its Source.
func loadFiles(args []string) ([]*report.Benchmark, error) {
	paths, from, err := expand(args)
	if err != nil {
		return nil, err
	}
	argOf := map[string]int{}
	for i, p := range paths {
		argOf[p] = from[i]
	}
	var bs []*report.Benchmark
	var results []resultFile
	dirOf := map[*report.Benchmark]string{}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		fb, fr, err := decode(path, data)
		if err != nil {
			return nil, err
		}
		for _, b := range fb {
			dirOf[b] = filepath.Dir(path)
			b.Source = args[argOf[path]]
		}
		bs = append(bs, fb...)
		results = append(results, fr...)
	}
	// Results saved next to a benchmark's file.
	for _, b := range bs {
		for _, run := range runNames(b) {
			path := filepath.Join(dirOf[b], b.Name+"-"+run+resultSuffix)
			if slices.ContainsFunc(results, func(r resultFile) bool { return samePath(r.path, path) }) {
				continue
			}
			data, err := os.ReadFile(path)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, err
			}
			_, fr, err := decode(path, data)
			if err != nil {
				return nil, err
			}
			results = append(results, fr...)
		}
	}
	for _, r := range results {
		if b, run := owner(bs, dirOf, r.path); b != nil {
			if e := runEngine(b, run); r.result.Engine != e {
				return nil, fmt.Errorf("%s: a %s result, but run %s of %s is %s", r.path, r.result.Engine, run, b.Name, e)
			}
			if b.Results == nil {
				b.Results = map[string]*api.Result{}
			}
			b.Results[run] = r.result
			continue
		}
		b := resultBenchmark(r)
		if i, ok := argOf[r.path]; ok {
			b.Source = args[i]
		}
		bs = append(bs, b)
	}
	// Bare results become benchmarks last; put them back where their argument was.
	order := map[string]int{}
	for i := len(args) - 1; i >= 0; i-- {
		order[args[i]] = i
	}
	slices.SortStableFunc(bs, func(a, b *report.Benchmark) int { return order[a.Source] - order[b.Source] })
	return bs, nil
}

// expand replaces directories by the YAML and JSON files in them and drops repeated paths; from
// is the index of the argument each path came from.
func expand(args []string) (out []string, from []int, err error) {
	for i, a := range args {
		fi, err := os.Stat(a)
		if err != nil {
			return nil, nil, err
		}
		list := []string{a}
		if fi.IsDir() {
			entries, err := os.ReadDir(a)
			if err != nil {
				return nil, nil, err
			}
			list = nil
			for _, e := range entries {
				switch strings.ToLower(filepath.Ext(e.Name())) {
				case ".yaml", ".yml", ".json":
					if !e.IsDir() {
						list = append(list, filepath.Join(a, e.Name()))
					}
				}
			}
			if len(list) == 0 {
				return nil, nil, fmt.Errorf("%s: no .yaml, .yml or .json files", a)
			}
		}
		for _, p := range list {
			if !slices.ContainsFunc(out, func(q string) bool { return samePath(p, q) }) {
				out, from = append(out, p), append(from, i)
			}
		}
	}
	return out, from, nil
}

func samePath(a, b string) bool {
	x, err1 := filepath.Abs(a)
	y, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && x == y
}

// runNames are the runs a benchmark has or will have: status runs, then spec engines.
func runNames(b *report.Benchmark) []string {
	var names []string
	for _, r := range b.Status.Runs {
		names = append(names, r.Name)
	}
	for _, e := range b.Spec.Engines {
		if !slices.Contains(names, string(e.Name)) {
			names = append(names, string(e.Name))
		}
	}
	return names
}

// runEngine is the engine of a run: from status, else the spec engine of that name.
func runEngine(b *report.Benchmark, run string) api.EngineName {
	for _, r := range b.Status.Runs {
		if r.Name == run {
			return r.Engine
		}
	}
	return api.EngineName(run)
}

// owner finds the benchmark and run a result file belongs to: by its name, in the directory of
// the benchmark's file (two saved directories may hold benchmarks of the same name).
func owner(bs []*report.Benchmark, dirOf map[*report.Benchmark]string, path string) (*report.Benchmark, string) {
	base := filepath.Base(path)
	for _, b := range bs {
		if !samePath(dirOf[b], filepath.Dir(path)) {
			continue
		}
		for _, run := range runNames(b) {
			if base == b.Name+"-"+run+resultSuffix {
				return b, run
			}
		}
	}
	return nil, ""
}

// resultBenchmark makes a one-run benchmark of a bare result, named after its file.
func resultBenchmark(r resultFile) *report.Benchmark {
	name := strings.TrimSuffix(r.path, resultSuffix)
	if name == r.path {
		name = strings.TrimSuffix(r.path, filepath.Ext(r.path))
	}
	engine := r.result.Engine
	run := api.RunStatus{Name: string(engine), Engine: engine, Phase: api.RunSucceeded, EngineVersion: r.result.EngineVersion}
	ds := r.result.Dataset
	run.Dataset = &ds
	if r.result.Error != "" {
		run.Phase, run.Reason, run.Message = api.RunFailed, api.ReasonRunnerError, r.result.Error
	}
	b := &report.Benchmark{Results: map[string]*api.Result{run.Name: r.result}}
	b.Name = name
	b.Spec.Engines = []api.EngineSpec{{Name: engine}}
	b.Status.Runs = []api.RunStatus{run}
	return b
}

// decode reads every document of a file.
func decode(path string, data []byte) ([]*report.Benchmark, []resultFile, error) {
	docs, err := documents(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(docs) == 0 {
		return nil, nil, fmt.Errorf("%s: empty", path)
	}
	var bs []*report.Benchmark
	var rs []resultFile
	for _, doc := range docs {
		b, r, err := decodeObject(doc)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		bs = append(bs, b...)
		if r != nil {
			rs = append(rs, resultFile{path: path, result: r})
		}
	}
	if len(rs) > 1 {
		return nil, nil, fmt.Errorf("%s: %d runner results in one file: save each in its own file", path, len(rs))
	}
	return bs, rs, nil
}

// documents splits a file into JSON documents: a stream of JSON values, or multi-document YAML.
func documents(data []byte) ([]json.RawMessage, error) {
	var docs []json.RawMessage
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		dec := json.NewDecoder(bytes.NewReader(t))
		for {
			var doc json.RawMessage
			if err := dec.Decode(&doc); err == io.EOF {
				return docs, nil
			} else if err != nil {
				return nil, err
			}
			docs = append(docs, doc)
		}
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if err == io.EOF {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, err
		}
		if t := bytes.TrimSpace(j); len(t) == 0 || string(t) == "null" {
			continue // an empty document or only comments
		}
		docs = append(docs, j)
	}
}

// decodeObject reads one document: a runner result, a KVBenchmark, or a list of KVBenchmarks.
func decodeObject(doc json.RawMessage) ([]*report.Benchmark, *api.Result, error) {
	var head struct {
		APIVersion    string            `json:"apiVersion"`
		Kind          string            `json:"kind"`
		SchemaVersion string            `json:"schemaVersion"`
		Items         []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(doc, &head); err != nil {
		return nil, nil, fmt.Errorf("not a JSON or YAML object: %w", err)
	}
	switch {
	case head.SchemaVersion != "":
		if !api.KnownResultSchema(head.SchemaVersion) {
			return nil, nil, fmt.Errorf("runner result schema %q is not supported (this kubectl-kvbench reads %s)", head.SchemaVersion, api.ResultSchemaVersion)
		}
		// A runner's bytes: decoded within the limits the operator applies (a saved result fits them).
		d := archive.NewDecoder(api.DefaultResultLimits)
		r, err := archive.DecodeResult(d, bytes.NewReader(doc))
		if err != nil {
			return nil, nil, fmt.Errorf("runner result: %w", err)
		}
		if err := d.Over(); err != nil {
			return nil, nil, fmt.Errorf("runner result: %w", err)
		}
		return nil, r, nil
	case head.Kind == "KVBenchmark":
		if gv := api.GroupVersion.String(); head.APIVersion != gv {
			return nil, nil, fmt.Errorf("KVBenchmark of apiVersion %q, want %s", head.APIVersion, gv)
		}
		b := &report.Benchmark{}
		if err := json.Unmarshal(doc, &b.KVBenchmark); err != nil {
			return nil, nil, fmt.Errorf("KVBenchmark: %w", err)
		}
		if b.Name == "" {
			return nil, nil, fmt.Errorf("KVBenchmark without metadata.name")
		}
		return []*report.Benchmark{b}, nil, nil
	case head.Kind == "KVBenchmarkList" || head.Kind == "List":
		var bs []*report.Benchmark
		for i, item := range head.Items {
			ib, r, err := decodeObject(item)
			if err == nil && (r != nil || len(ib) != 1) {
				err = fmt.Errorf("not a KVBenchmark")
			}
			if err != nil {
				return nil, nil, fmt.Errorf("%s item %d: %w", head.Kind, i, err)
			}
			bs = append(bs, ib...)
		}
		return bs, nil, nil
	}
	return nil, nil, fmt.Errorf("not a KVBenchmark, KVBenchmarkList or runner result (kind %q)", head.Kind)
}
