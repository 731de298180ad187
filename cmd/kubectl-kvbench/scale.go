package main

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/cmd/kubectl-kvbench/scale"
)

func scaleCmd(o *options) *cobra.Command {
	var files []string
	var size, medium, class string
	var num int64
	var threadScale float64
	cmd := &cobra.Command{
		Use:   "scale -f FILE [--dataset-size=SIZE | --num=N] [--medium=MEDIUM [--storage-class=CLASS]] [--thread-scale=R]",
		Short: "Resize KVBenchmark files (e.g. examples/seed-*.yaml) to another dataset size or medium, keeping every ratio",
		Long: `Scale prints the KVBenchmarks of FILE resized to a new dataset size, ready for kubectl apply.
The dataset is the one field you choose; memory (the page-cache cap), storage, block caches, write
buffers, level sizes, operation counts, durations and pulse counts keep their ratio to the dataset,
with floors that keep the result runnable and valid.

--medium moves the database to tmpfs, localNVMe or persistentVolume (with --storage-class): on
tmpfs the memory limit grows by the data it now holds, off tmpfs it shrinks by it, and a volume
gets the storage floor (the data, its checkpoint and the writes' copies; at least 1Gi); the memory
rule stays satisfied.

--thread-scale multiplies every thread count by R (rounded, at least 1; counts that become equal
are run once): seed 004's 45-150 threads are --thread-scale=0.05 on a 2-core machine.`,
		Example: `  kubectl kvbench scale -f examples/seed-002-leveldb-vs-rocksdb.yaml --dataset-size=256Mi | kubectl apply -f -
  kubectl kvbench scale -f examples/seed-000-rocksdb-in-memory.yaml --num=2000000 | kubectl apply -f -
  kubectl kvbench scale -f examples/seed-003-rocksdb-on-flash.yaml --num=100000 --medium=tmpfs | kubectl apply -f -
  kubectl kvbench scale -f examples/seed-004-ycsb-pegasus.yaml --dataset-size=256Mi --thread-scale=0.05 | kubectl apply -f -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("thread-scale") && !(threadScale > 0) {
				return fmt.Errorf("--thread-scale must be a positive number such as 0.1, not %g", threadScale)
			}
			t := scale.Target{Medium: api.StorageMedium(medium), StorageClassName: class, ThreadScale: threadScale}
			if medium != "" {
				if err := oneOf("medium", medium, []string{string(api.MediumTmpfs), string(api.MediumLocalNVMe), string(api.MediumPersistentVolume)}); err != nil {
					return err
				}
			}
			switch {
			case size != "" && num != 0:
				return fmt.Errorf("scale takes one of --dataset-size and --num, not both")
			case size == "" && num == 0 && medium == "" && threadScale == 0:
				return fmt.Errorf("scale needs --dataset-size, --num, --medium or --thread-scale")
			case size == "" && num == 0:
			case size != "":
				q, err := resource.ParseQuantity(size)
				if err != nil || q.Sign() <= 0 {
					return fmt.Errorf("--dataset-size %q is not a positive quantity such as 256Mi or 10Gi", size)
				}
				t.Size = &q
			case num < 0:
				return fmt.Errorf("--num must be positive, not %d", num)
			default:
				t.Num = &num
			}
			if len(files) == 0 {
				return fmt.Errorf("scale needs -f FILE")
			}
			var out []byte
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					return err
				}
				bs, results, err := decode(f, data)
				if err != nil {
					return err
				}
				if len(results) > 0 || len(bs) == 0 {
					return fmt.Errorf("%s: holds no KVBenchmark to scale", f)
				}
				for _, b := range bs {
					small, err := scale.Benchmark(&b.KVBenchmark, t)
					if err != nil {
						return err
					}
					app, err := applyable(small)
					if err != nil {
						return err
					}
					doc, err := yaml.Marshal(app)
					if err != nil {
						return err
					}
					out = append(append(out, "---\n"...), doc...)
				}
			}
			_, err := o.stdout.Write(out)
			return err
		},
	}
	fileFlag(cmd, &files)
	cmd.Flags().StringVar(&size, "dataset-size", "", "new dataset size (keys + values), e.g. 256Mi")
	cmd.Flags().Int64Var(&num, "num", 0, "new key count")
	cmd.Flags().StringVar(&medium, "medium", "", "move the database to this storage medium: tmpfs, localNVMe, persistentVolume")
	cmd.Flags().StringVar(&class, "storage-class", "", "the StorageClass of the volume (required for persistentVolume)")
	cmd.Flags().Float64Var(&threadScale, "thread-scale", 0, "multiply every thread count by this (rounded, at least 1), e.g. 0.1")
	return cmd
}

// applyable keeps what kubectl apply needs: no status, no server-set metadata, and of the spec
// what says something: no empty objects (cleanup: {}), durations as written (24h, not 24h0m0s).
func applyable(b *api.KVBenchmark) (any, error) {
	raw, err := json.Marshal(b.Spec)
	if err != nil {
		return nil, err
	}
	var spec map[string]any
	if err := json.Unmarshal(raw, &spec); err != nil {
		return nil, err
	}
	return map[string]any{
		"apiVersion": api.GroupVersion.String(), "kind": "KVBenchmark",
		"metadata": metadata(b),
		"spec":     tidy(spec, reflect.TypeOf(b.Spec)),
	}, nil
}

// goDuration is how a metav1.Duration marshals: 24h0m0s, 10m0s, 1m30s, 500ms.
var goDuration = regexp.MustCompile(`^(\d+h)?(\d+m)?(\d+(\.\d+)?s)$`)

// tidy drops from v (of Go type t) the empty objects of struct fields that are not pointers
// (cleanup: {}, placement: {}: an absent pointer's object would mean something, as ycsb: {} does),
// and writes durations without their zero parts.
func tidy(v any, t reflect.Type) any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch v := v.(type) {
	case map[string]any:
		if t.Kind() != reflect.Struct {
			return v
		}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			x, ok := v[name]
			if !ok {
				continue
			}
			x = tidy(x, f.Type)
			if m, empty := x.(map[string]any); empty && len(m) == 0 && f.Type.Kind() == reflect.Struct {
				delete(v, name)
				continue
			}
			v[name] = x
		}
	case []any:
		if t.Kind() == reflect.Slice {
			for i := range v {
				v[i] = tidy(v[i], t.Elem())
			}
		}
	case string:
		if t == reflect.TypeOf(metav1.Duration{}) {
			if m := goDuration.FindStringSubmatch(v); m != nil && (m[1] != "" || m[2] != "") {
				out := m[1]
				if m[2] != "0m" {
					out += m[2]
				}
				if m[3] != "0s" {
					out += m[3]
				}
				return out
			}
		}
	}
	return v
}

func metadata(b *api.KVBenchmark) map[string]any {
	m := map[string]any{"name": b.Name}
	if b.Namespace != "" {
		m["namespace"] = b.Namespace
	}
	if len(b.Labels) > 0 {
		m["labels"] = b.Labels
	}
	if len(b.Annotations) > 0 {
		m["annotations"] = b.Annotations
	}
	return m
}
