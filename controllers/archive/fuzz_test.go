package archive

import (
	"bytes"
	"errors"
	"testing"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// FuzzFromLog: a runner log is untrusted (the runner image is user-selectable); any bytes are
// read without panicking, lines over the limit fail with ErrLineTooLong, and an accepted result
// has a known schema. Seed corpus: testdata/fuzz/FuzzFromLog.
func FuzzFromLog(f *testing.F) {
	f.Add([]byte(api.ResultLogPrefix + `{"schemaVersion":"` + api.ResultSchemaVersion + `","engine":"pebble"}` + "\n"))
	f.Fuzz(func(t *testing.T, log []byte) {
		res, err := FromLog(bytes.NewReader(log), 4096)
		if len(log) > 4096 && !bytes.Contains(log, []byte("\n")) && !errors.Is(err, ErrLineTooLong) {
			t.Fatalf("a %d-byte line passed the 4096-byte bound: %v", len(log), err)
		}
		if err != nil {
			if res != nil {
				t.Fatal("result with an error")
			}
			return
		}
		if res != nil && !api.KnownResultSchema(res.SchemaVersion) {
			t.Fatalf("accepted schema %q", res.SchemaVersion)
		}
	})
}

// FuzzDecompress: archive bytes are untrusted until verified, and readers decompress them; any
// input is decoded without panicking and never beyond MaxDecompressed. Seed corpus:
// testdata/fuzz/FuzzDecompress.
func FuzzDecompress(f *testing.F) {
	f.Add([]byte{0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Decompress(data)
		if err == nil && (res == nil || !api.KnownResultSchema(res.SchemaVersion)) {
			t.Fatalf("accepted %+v", res)
		}
	})
}
