package report

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// OPTIONS file overrides (issue 19) go into status bounded: the first 8 lines and a count; when the
// summary is full, one line with the count goes before any phase does.
func TestSummaryBoundsOptionsOverrides(t *testing.T) {
	overrides := func(n int) []api.OptionOverride {
		var o []api.OptionOverride
		for i := range n {
			o = append(o, api.OptionOverride{Key: fmt.Sprintf(`CFOptions "default"/key_%d`, i), File: strings.Repeat("9", 100),
				Effective: "1", By: "engines[].options.writeBufferSize"})
		}
		return o
	}
	r := result(2, "")
	r.Provenance = &api.Provenance{OptionsOverrides: overrides(12)}
	s := Summarize(r)
	got := s.Provenance.OptionsOverrides
	if len(got) != api.MaxSummaryOverrides+1 || got[8] != "and 4 more: see provenance.optionsOverrides in the result" {
		t.Fatalf("overrides in the summary: %q", got)
	}
	for _, l := range got {
		if len(l) > 160 {
			t.Errorf("line of %d bytes: %q", len(l), l)
		}
	}
	if !strings.HasPrefix(got[0], `CFOptions "default"/key_0: 999`) || !strings.HasSuffix(got[0], "...") {
		t.Errorf("first line %q", got[0])
	}

	// A summary that does not fit: the overrides become one line before phases are dropped.
	r = result(20, "")
	r.Provenance = &api.Provenance{OptionsOverrides: overrides(12)}
	full := Summarize(result(20, ""))
	s = Summarize(r)
	if want := []string{"12 OPTIONS file keys overridden: see provenance.optionsOverrides in the result"}; fmt.Sprint(s.Provenance.OptionsOverrides) != fmt.Sprint(want) {
		t.Errorf("overrides %q, want %q", s.Provenance.OptionsOverrides, want)
	}
	if b, _ := json.Marshal(s); len(b) > api.TerminationMessageLimit {
		t.Errorf("summary is %d bytes", len(b))
	}
	if s.Truncated > full.Truncated+1 {
		t.Errorf("the overrides cost %d phases (without them %d truncated)", s.Truncated, full.Truncated)
	}
}

// The summary keeps the run's engine's library build (one line), and gives it up before a phase.
func TestSummaryKeepsTheEnginesBuild(t *testing.T) {
	builds := map[string]api.LibraryBuild{
		"rocksdb": {Version: "7.8.3", Assertions: "off", Source: "release build of Debian source package rocksdb 7.8.3-2 (amd64)"},
		"leveldb": {Version: "1.23", Assertions: "off", Source: "release build of Debian source package leveldb 1.23-4 (amd64)"},
	}
	r := result(2, "")
	r.Engine = api.EngineLevelDB
	r.Provenance = &api.Provenance{LibraryBuilds: builds}
	if got, want := fmt.Sprint(Summarize(r).Provenance.Builds), "[leveldb: 1.23, assertions off, release build of Debian source package leveldb 1.23-4 (amd64)]"; got != want {
		t.Errorf("builds %s, want %s", got, want)
	}
	r.Engine = api.EnginePebble
	if got := Summarize(r).Provenance.Builds; got != nil {
		t.Errorf("pebble's summary has builds %q", got)
	}
	r = result(60, "")
	r.Provenance = &api.Provenance{LibraryBuilds: builds}
	full := Summarize(result(60, ""))
	if full.Truncated == 0 {
		t.Fatal("60 phases fit: the test needs a summary that does not")
	}
	if s := Summarize(r); s.Provenance.Builds != nil || s.Truncated != full.Truncated {
		t.Errorf("a full summary kept builds %q and truncated %d phases (without them %d)", s.Provenance.Builds, s.Truncated, full.Truncated)
	}
}
