package archive

import (
	"bytes"
	"reflect"
	"testing"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// fuzzLimits are small, so that random inputs reach them.
var fuzzLimits = api.ResultLimits{Bytes: 4096, Phases: 3, Items: 8, Lists: map[string]int{"operations": 2},
	DefaultList: 4, Keys: 4, String: 16, Text: 32, Depth: 5}

// FuzzReadLog: a runner log is untrusted (the runner image is user-selectable); any bytes are
// read without panicking, what is kept is within the limits, and an accepted result has a known
// schema. Seed corpus: testdata/fuzz/FuzzReadLog.
func FuzzReadLog(f *testing.F) {
	f.Add([]byte(api.ResultLogPrefix + `{"schemaVersion":"` + api.ResultSchemaVersion + `","engine":"pebble"}` + "\n"))
	f.Fuzz(func(t *testing.T, log []byte) {
		for _, full := range []bool{true, false} {
			l, err := ReadLog(bytes.NewReader(log), fuzzLimits, full)
			if err != nil {
				t.Fatalf("reading from memory failed: %v", err)
			}
			if len(l.Phases) > fuzzLimits.Phases {
				t.Fatalf("%d phase lines kept", len(l.Phases))
			}
			if l.Result != nil && !api.KnownResultSchema(l.Result.SchemaVersion) {
				t.Fatalf("accepted schema %q", l.Result.SchemaVersion)
			}
			if l.Result != nil && !full {
				t.Fatal("a result from a summaries-only read")
			}
			checkWithin(t, reflect.ValueOf([]any{l.Load, l.Phases, l.Result}), fuzzLimits)
		}
	})
}

// checkWithin fails when a string or list in v is beyond lim.
func checkWithin(t *testing.T, v reflect.Value, lim api.ResultLimits) {
	t.Helper()
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			checkWithin(t, v.Elem(), lim)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				checkWithin(t, v.Field(i), lim)
			}
		}
	case reflect.Slice:
		if n := max(lim.Phases, lim.DefaultList, 2); v.Len() > n {
			t.Fatalf("a %s of %d items", v.Type(), v.Len())
		}
		for i := range v.Len() {
			checkWithin(t, v.Index(i), lim)
		}
	case reflect.Map:
		if v.Len() > lim.Keys {
			t.Fatalf("a map of %d keys", v.Len())
		}
		for _, k := range v.MapKeys() {
			checkWithin(t, k, lim)
			checkWithin(t, v.MapIndex(k), lim)
		}
	case reflect.String:
		if v.Len() > lim.Text {
			t.Fatalf("a string of %d bytes", v.Len())
		}
	}
}

// FuzzDecompress: archive bytes are untrusted until verified, and readers decompress them; any
// input is decoded without panicking, within the limits. Seed corpus: testdata/fuzz/FuzzDecompress.
func FuzzDecompress(f *testing.F) {
	f.Add([]byte{0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Decompress(data)
		if err == nil && (res == nil || !api.KnownResultSchema(res.SchemaVersion)) {
			t.Fatalf("accepted %+v", res)
		}
		if res != nil && len(res.Phases) > api.DefaultResultLimits.Phases {
			t.Fatalf("%d phases", len(res.Phases))
		}
	})
}
