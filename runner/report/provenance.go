package report

import (
	"fmt"
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
		SpecHash: p.SpecHash, Node: NodeLine(p.Node)}
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
