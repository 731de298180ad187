package report

import (
	"fmt"
	"sort"
	"strings"
)

// runBuild is how the run's engine library was built, one line ("7.8.3, assertions off, release build
// of …"), from the full result's provenance, else from the status summary; "" when not recorded (a
// Go engine, the Java runner, or a runner built without hack/engine-build.sh).
func runBuild(r run) string {
	lib := string(r.engine)
	if r.full != nil && r.full.Provenance != nil {
		if b, ok := r.full.Provenance.LibraryBuilds[lib]; ok {
			return b.String()
		}
	}
	if r.status != nil && r.status.Provenance != nil {
		for _, l := range r.status.Provenance.Builds {
			if rest, ok := strings.CutPrefix(l, lib+": "); ok {
				return rest
			}
		}
	}
	return ""
}

// BuildNotes say how each engine's library was built: one line per engine when all its runs share
// a build, and a warning when they do not (the comparison is then also one of builds). A build with
// assertions on (Debian's packages) is named as such: its numbers are not a release build's.
func BuildNotes(bs ...*Benchmark) []string {
	byEngine := map[string]map[string][]string{} // engine -> build line -> runs
	order := map[string][]string{}               // engine -> build lines as first seen
	multi := len(bs) > 1
	for _, b := range bs {
		for _, r := range b.runs() {
			line := runBuild(r)
			if line == "" {
				continue
			}
			e := string(r.engine)
			if byEngine[e] == nil {
				byEngine[e] = map[string][]string{}
			}
			name := r.name
			if multi {
				name = b.Title() + "/" + r.name
			}
			if _, seen := byEngine[e][line]; !seen {
				order[e] = append(order[e], line)
			}
			byEngine[e][line] = append(byEngine[e][line], name)
		}
	}
	engines := make([]string, 0, len(byEngine))
	for e := range byEngine {
		engines = append(engines, e)
	}
	sort.Strings(engines)
	var notes []string
	for _, e := range engines {
		lines := order[e]
		if len(lines) == 1 {
			notes = append(notes, fmt.Sprintf("build: %s %s", e, lines[0]))
		} else {
			var parts []string
			for _, l := range lines {
				parts = append(parts, fmt.Sprintf("%s: %s", strings.Join(byEngine[e][l], ", "), l))
			}
			notes = append(notes, fmt.Sprintf("warning: the runs' %s builds differ (%s), so the comparison is also one of builds",
				e, strings.Join(parts, "; ")))
		}
		for _, l := range lines {
			if strings.Contains(l, "assertions on") {
				notes = append(notes, fmt.Sprintf("warning: %s was compiled with assertions on (%s): slower than the release build its users run (docs/benchmarks.md)", e, l))
				break
			}
		}
	}
	return notes
}
