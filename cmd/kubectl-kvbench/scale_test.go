package main

import (
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

func TestScaleExample(t *testing.T) {
	out := mustRun(t, "scale", "-f", "../../examples/seed-002-leveldb-vs-rocksdb.yaml", "--dataset-size=256Mi")
	docs := strings.Split(strings.TrimPrefix(out, "---\n"), "\n---\n")
	if len(docs) != 2 {
		t.Fatalf("want the example's 2 benchmarks, got %d:\n%s", len(docs), out)
	}
	for _, d := range docs {
		var b api.KVBenchmark
		if err := yaml.UnmarshalStrict([]byte(d), &b); err != nil {
			t.Fatalf("%v in\n%s", err, d)
		}
		// 2Gi x 1/40 floors at 512Mi; the defaults variant's 64-thread sweep needs more for the memory
		// rule (rocksdb's default 2 x 64Mi memtables, 256Mi overhead, 2 x 64 x 1Mi value buffers).
		wantMem := map[string]string{"seed-002-defaults": "768Mi", "seed-002-tuned": "512Mi"}[b.Name]
		if b.Spec.Dataset.Size.String() != "256Mi" || b.Spec.Resources.Memory.String() != wantMem {
			t.Errorf("%s: dataset %s memory %s, want 256Mi and %s", b.Name,
				b.Spec.Dataset.Size.String(), b.Spec.Resources.Memory.String(), wantMem)
		}
		if !api.MemoryFits(&b.Spec) {
			t.Errorf("%s: memory %s does not hold what the CRD's memory rule counts", b.Name, b.Spec.Resources.Memory.String())
		}
		if p := b.Spec.Workloads[0].Pulse; p == nil || p.Reads != 2250 || p.Writes != 5250 || p.Deletes != 750 {
			t.Errorf("%s: pulse %+v, want 90000/210000/30000 x 1/40", b.Name, p)
		}
		if strings.Contains(d, "status") || strings.Contains(d, "creationTimestamp") {
			t.Errorf("output must be ready for kubectl apply:\n%s", d)
		}
	}
	out = mustRun(t, "scale", "-f", "../../examples/seed-001-db-bench-basics.yaml", "--num=1000")
	contains(t, out, "num: 1000\n", "--num=1000", "name: seed-001-dbbench")
}

// --medium moves seed 003 (1B keys on local NVMe) onto tmpfs at a size a small node holds.
func TestScaleMedium(t *testing.T) {
	out := mustRun(t, "scale", "-f", "../../examples/seed-003-rocksdb-on-flash.yaml", "--num=100000", "--medium=tmpfs")
	for _, d := range strings.Split(strings.TrimPrefix(out, "---\n"), "\n---\n") {
		var b api.KVBenchmark
		if err := yaml.UnmarshalStrict([]byte(d), &b); err != nil {
			t.Fatalf("%v in\n%s", err, d)
		}
		if b.Spec.Storage.Medium != api.MediumTmpfs || b.Spec.Storage.Size != nil || *b.Spec.Dataset.Num != 100000 || !api.MemoryFits(&b.Spec) {
			t.Errorf("%s: storage %+v, num %d, memory %s", b.Name, b.Spec.Storage, *b.Spec.Dataset.Num, b.Spec.Resources.Memory.String())
		}
	}
}

// Issue 34: seed 004's 45-150 threads scale with --thread-scale (each count once), and the output
// holds no empty objects (cleanup: {}, placement: {}) and durations as written (24h, not 24h0m0s).
func TestScaleThreadsAndTidyOutput(t *testing.T) {
	out := mustRun(t, "scale", "-f", "../../examples/seed-004-ycsb-pegasus.yaml", "--dataset-size=256Mi", "--thread-scale=0.02")
	for _, bad := range []string{"{}", "0m0s", "0s\n"} {
		if strings.Contains(out, bad) {
			t.Errorf("the output holds %q:\n%s", bad, out)
		}
	}
	contains(t, out, "deadline: 24h\n")
	for _, d := range strings.Split(strings.TrimPrefix(out, "---\n"), "\n---\n") {
		var b api.KVBenchmark
		if err := yaml.UnmarshalStrict([]byte(d), &b); err != nil {
			t.Fatalf("%v in\n%s", err, d)
		}
		// 45 x 0.02 = 0.9 -> 1; 60 -> 1; 90 -> 2; 150 -> 3.
		want := map[string][]int32{"seed-004-320b": {1, 1, 2}, "seed-004-1kb": {1, 1, 1, 3}}[b.Name]
		var got []int32
		for _, w := range b.Spec.Workloads {
			got = append(got, w.Threads...)
		}
		if !slices.Equal(got, want) || !slices.Equal(b.Spec.Threads, []int32{1}) || !api.MemoryFits(&b.Spec) {
			t.Errorf("%s: workload threads %v, spec threads %v; want %v and [1]", b.Name, got, b.Spec.Threads, want)
		}
	}
}

func TestScaleErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"scale", "-f", "../../examples/seed-001-db-bench-basics.yaml"}, "scale needs --dataset-size, --num, --medium or --thread-scale"},
		{[]string{"scale", "-f", "../../examples/seed-001-db-bench-basics.yaml", "--medium=floppy"}, `unknown --medium "floppy" (one of tmpfs, localNVMe, persistentVolume)`},
		{[]string{"scale", "-f", "../../examples/seed-003-rocksdb-on-flash.yaml", "--medium=persistentVolume"}, "medium persistentVolume needs a storage class (--storage-class)"},
		{[]string{"scale", "-f", "../../examples/seed-001-db-bench-basics.yaml", "--num=5", "--dataset-size=1Gi"}, "scale takes one of --dataset-size and --num, not both"},
		{[]string{"scale", "-f", "../../examples/seed-001-db-bench-basics.yaml", "--dataset-size=big"}, `"big" is not a positive quantity`},
		{[]string{"scale", "-f", "../../examples/seed-001-db-bench-basics.yaml", "--num=-3"}, "--num must be positive"},
		{[]string{"scale", "--num=5"}, "needs -f FILE"},
		{[]string{"scale", "-f", "../../examples/seed-004-ycsb-pegasus.yaml", "--thread-scale=0"}, "--thread-scale must be a positive number"},
		{[]string{"scale", "-f", "../../examples/seed-004-ycsb-pegasus.yaml", "--thread-scale=-1"}, "--thread-scale must be a positive number"},
		{[]string{"scale", "-f", "missing.yaml", "--num=5"}, "missing.yaml"},
	} {
		out, errOut, code := kvbench(t, c.args...)
		if code != 1 || out != "" || !strings.Contains(errOut, c.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want one error line with %q", c.args, code, out, errOut, c.want)
		}
	}
}
