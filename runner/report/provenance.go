package report

import (
	"fmt"
	"sort"
	"strings"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// ProvenanceSummary is the part of a run's provenance kept in the termination message and in
// status: digest, revision, seed, spec hash and a one-line node fingerprint.
func ProvenanceSummary(p *api.Provenance) *api.ProvenanceSummary {
	if p == nil {
		return nil
	}
	return &api.ProvenanceSummary{ImageDigest: p.ImageDigest, RunnerRevision: p.RunnerRevision, Seed: p.Seed,
		SpecHash: p.SpecHash, Node: NodeLine(p.Node), OptionsOverrides: OverrideLines(p.OptionsOverrides, api.MaxSummaryOverrides),
		Builds: BuildLines(p.LibraryBuilds)}
}

// BuildLines are the library builds one line each, "name: version, assertions on|off, source", by
// name, at most api.MaxSummaryBuilds (each at most 200 bytes).
func BuildLines(b map[string]api.LibraryBuild) []string {
	names := make([]string, 0, len(b))
	for n := range b {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []string
	for _, n := range names[:min(len(names), api.MaxSummaryBuilds)] {
		line := n + ": " + b[n].String()
		if len(line) > 200 {
			line = line[:197] + "..."
		}
		out = append(out, line)
	}
	return out
}

// OverrideLines are the OPTIONS file overrides one line each, at most max of them (each at most
// 160 bytes) and then a line that counts the rest.
func OverrideLines(o []api.OptionOverride, max int) []string {
	var out []string
	for i, v := range o {
		if i == max {
			out = append(out, fmt.Sprintf("and %d more: see provenance.optionsOverrides in the result", len(o)-max))
			break
		}
		line := v.String()
		if len(line) > 160 {
			line = line[:157] + "..."
		}
		out = append(out, line)
	}
	return out
}

// NodeLine is "cpu model x N @ MHz, kernel, fs (device, rotational)".
func NodeLine(n *api.NodeFingerprint) string {
	if n == nil {
		return ""
	}
	var parts []string
	if n.CPUModel != "" || n.CPUs > 0 {
		cpu := fmt.Sprintf("%s x %d", n.CPUModel, n.CPUs)
		if n.CPUMHz > 0 {
			cpu += fmt.Sprintf(" @ %.0f MHz", n.CPUMHz)
		}
		parts = append(parts, strings.TrimSpace(cpu))
	}
	if n.Kernel != "" {
		parts = append(parts, "kernel "+n.Kernel)
	}
	if n.MemoryBytes > 0 {
		parts = append(parts, fmt.Sprintf("%.1f GiB", float64(n.MemoryBytes)/(1<<30)))
	}
	if n.DataFilesystem != "" {
		fs := n.DataFilesystem
		if d := n.Device; d != nil {
			dev := d.Name
			if d.Rotational != nil {
				dev += map[bool]string{true: ", rotational", false: ", non-rotational"}[*d.Rotational]
			}
			fs += " (" + dev + ")"
		}
		parts = append(parts, fs)
	}
	s := strings.Join(parts, ", ")
	if len(s) > 200 {
		s = s[:197] + "..."
	}
	return s
}
