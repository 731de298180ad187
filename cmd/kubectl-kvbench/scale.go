package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/scale"
)

func scaleCmd(o *options) *cobra.Command {
	var files []string
	var size, medium, class string
	var num int64
	cmd := &cobra.Command{
		Use:   "scale -f FILE [--dataset-size=SIZE | --num=N] [--medium=MEDIUM [--storage-class=CLASS]]",
		Short: "Resize KVBenchmark files (e.g. examples/seed-*.yaml) to another dataset size or medium, keeping every ratio",
		Long: `Scale prints the KVBenchmarks of FILE resized to a new dataset size, ready for kubectl apply.
The dataset is the one field you choose; memory (the page-cache cap), storage, block caches, write
buffers, level sizes, operation counts, durations and pulse counts keep their ratio to the dataset,
with floors that keep the result runnable and valid.

--medium moves the database to tmpfs, localNVMe or persistentVolume (with --storage-class): on
tmpfs the memory limit grows by the data it now holds, off tmpfs it shrinks by it, and a volume
gets the storage floor (the data, its checkpoint and the writes' copies; at least 1Gi); the memory
rule stays satisfied.`,
		Example: `  kubectl kvbench scale -f examples/seed-002-leveldb-vs-rocksdb.yaml --dataset-size=256Mi | kubectl apply -f -
  kubectl kvbench scale -f examples/seed-000-rocksdb-in-memory.yaml --num=2000000 | kubectl apply -f -
  kubectl kvbench scale -f examples/seed-003-rocksdb-on-flash.yaml --num=100000 --medium=tmpfs | kubectl apply -f -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t := scale.Target{Medium: api.StorageMedium(medium), StorageClassName: class}
			if medium != "" {
				if err := oneOf("medium", medium, []string{string(api.MediumTmpfs), string(api.MediumLocalNVMe), string(api.MediumPersistentVolume)}); err != nil {
					return err
				}
			}
			switch {
			case size != "" && num != 0:
				return fmt.Errorf("scale takes one of --dataset-size and --num, not both")
			case size == "" && num == 0 && medium == "":
				return fmt.Errorf("scale needs --dataset-size, --num or --medium")
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
					doc, err := yaml.Marshal(applyable(small))
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
	return cmd
}

// applyable keeps what kubectl apply needs: no status, no server-set metadata.
func applyable(b *api.KVBenchmark) any {
	return struct {
		APIVersion string              `json:"apiVersion"`
		Kind       string              `json:"kind"`
		Metadata   map[string]any      `json:"metadata"`
		Spec       api.KVBenchmarkSpec `json:"spec"`
	}{
		APIVersion: api.GroupVersion.String(), Kind: "KVBenchmark",
		Metadata: metadata(b),
		Spec:     b.Spec,
	}
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
