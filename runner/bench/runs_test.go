package bench

import (
	"bytes"
	"testing"

	"github.com/kvbench/kvbench-operator/runner/engine"
	"github.com/kvbench/kvbench-operator/runner/keygen"
)

// The keys a run holds are keygen.Keys.Put's, for every layout, including after the thread's run
// was made for another one.
func TestRunKeysAreKeygens(t *testing.T) {
	th := &thread{}
	r := keygen.NewRand(5)
	for _, k := range []keygen.Keys{
		{KeySize: 16, Num: 1000},
		{KeySize: 8, Num: 1000},
		{KeySize: 4, Num: 1000},
		{KeySize: 17, Num: 1000},
		{KeySize: 20, PrefixSize: 12, KeysPerPrefix: 10, Num: 1000},
		{KeySize: 16, Num: 1000},
	} {
		o := th.nextRun(k, engine.MaxOps)
		if o.N != runFirst || o.KeyLen != k.KeySize {
			t.Fatalf("%+v: run of %d keys of %d bytes", k, o.N, o.KeyLen)
		}
		for range 3 {
			for j := range engine.MaxOps {
				v := r.Uint64()
				if j%2 == 0 {
					v %= 1000
				}
				th.putKey(j, v)
				if want := k.Put(k.Make(), v); !bytes.Equal(o.Key(j), want) {
					t.Fatalf("%+v: key %d = %q, want %q", k, v, o.Key(j), want)
				}
			}
		}
	}
}
