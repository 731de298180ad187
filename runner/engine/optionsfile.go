package engine

import (
	"bufio"
	"path"
	"strings"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// OPTIONS files (engines[].optionsFrom, issue 19). The engines' own loaders apply the user's file
// (RocksDB's LoadOptionsFromFile, Pebble's Options.Parse); the runner then sets the typed options
// and its own few settings over it. To say which of the user's values did not take effect, the
// user's file and the options file the engine wrote at open are read side by side: both engines
// write INI ("[Section]" or `[Section "name"]` headers, "key=value" lines, "#" comments).

// Replacement is what one typed option or runner setting sets in an OPTIONS file: Keys are
// "Section/key" patterns (path.Match), e.g. `CFOptions "default"/write_buffer_size` or
// `Level "*"/block_size`.
type Replacement struct {
	// By is "engines[].options.<field>", "spec.cacheMode" or "runner: <why>".
	By   string
	Keys []string
}

// OptionsFileReplacer is implemented by engines opened from an OPTIONS file: what they set over it.
type OptionsFileReplacer interface {
	OptionsFileReplacements() []Replacement
}

// OptionsEntry is one "key=value" line of an OPTIONS file under its section.
type OptionsEntry struct {
	// Key is "Section/key" with the section as written in its header, spaces collapsed.
	Key, Value string
}

// ParseOptionsText reads an INI OPTIONS file's entries in file order. It is lenient (a line it
// cannot read is skipped): the engine's own loader has already accepted or refused the file.
func ParseOptionsText(text string) []OptionsEntry {
	var out []OptionsEntry
	section := ""
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if i := strings.Index(line, "#"); i >= 0 && !strings.HasPrefix(line, "[") {
			line = strings.TrimSpace(line[:i])
		}
		switch {
		case line == "":
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = strings.Join(strings.Fields(line[1:len(line)-1]), " ")
		default:
			k, v, ok := strings.Cut(line, "=")
			if ok {
				out = append(out, OptionsEntry{Key: section + "/" + strings.TrimSpace(k), Value: strings.TrimSpace(v)})
			}
		}
	}
	return out
}

// OptionsOverrides lists, in the user's file order, each key the user's file sets that a
// replacement set to another value, with the value the engine wrote in its own (effective)
// options file. A value written differently but equal ("64M" for 67108864) is listed too: the
// text is compared, not its meaning, so nothing that changed is missed.
func OptionsOverrides(userText, effectiveText string, reps []Replacement) []api.OptionOverride {
	effective := map[string]string{}
	for _, e := range ParseOptionsText(effectiveText) {
		effective[e.Key] = e.Value
	}
	var out []api.OptionOverride
	for _, e := range ParseOptionsText(userText) {
		if by := replacedBy(e.Key, reps); by != "" {
			eff, ok := effective[e.Key]
			if !ok {
				eff = "(not written)"
			}
			if eff == e.Value {
				continue // set to what the file says: no conflict
			}
			out = append(out, api.OptionOverride{Key: e.Key, File: e.Value, Effective: eff, By: by})
		}
	}
	return out
}

func replacedBy(key string, reps []Replacement) string {
	var by []string
	for _, r := range reps {
		for _, pat := range r.Keys {
			if ok, _ := path.Match(pat, key); ok {
				by = append(by, r.By)
				break
			}
		}
	}
	return strings.Join(by, ", ")
}
