package main

import "testing"

// FuzzDecode: files given to kubectl kvbench (saved results, benchmarks, lists, YAML or JSON
// streams) may come from anyone; any bytes decode without panicking, and accepted benchmarks
// have names. Seed corpus: testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	f.Add([]byte("apiVersion: kvbench.io/v1alpha1\nkind: KVBenchmark\nmetadata: {name: a}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		bs, _, err := decode("fuzz.yaml", data)
		if err != nil {
			return
		}
		for _, b := range bs {
			if b == nil {
				t.Fatal("nil benchmark")
			}
		}
	})
}
