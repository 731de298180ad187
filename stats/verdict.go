package stats

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Outcome is what a comparison can say: a regression, none, or nothing (too few repeats).
type Outcome string

const (
	// OutcomeRegressed: some point regressed (significant and beyond the threshold).
	OutcomeRegressed Outcome = "Regressed"
	// OutcomeNoRegression: every point had the repeats to show a difference, and none regressed.
	OutcomeNoRegression Outcome = "NoRegression"
	// OutcomeNoVerdict: no point regressed, but some had too few repeats for the U test to find
	// a difference at all, so "no regression" would be a guess.
	OutcomeNoVerdict Outcome = "NoVerdict"
)

// MinP is the smallest two-sided p-value the Mann-Whitney U test can give for samples of n1 and
// n2 values (fully separated, no ties): 2 / C(n1+n2, n1), at most 1. With 3 repeats a side it is
// 0.1, with 4 it is 0.029, with 5 it is 0.0079.
func MinP(n1, n2 int) float64 {
	if n1 <= 0 || n2 <= 0 {
		return 1
	}
	lc, _ := math.Lgamma(float64(n1 + n2 + 1))
	l1, _ := math.Lgamma(float64(n1 + 1))
	l2, _ := math.Lgamma(float64(n2 + 1))
	return math.Min(1, 2*math.Exp(l1+l2-lc))
}

// MinRepeats is the fewest repeats a side with which the U test can call a difference significant
// at alpha (p < alpha): 4 at 0.05, 5 at 0.01, 6 at 0.005.
func MinRepeats(alpha float64) int {
	n := 1
	for ; n < 1000 && !(MinP(n, n) < alpha); n++ {
	}
	return n
}

// decidable says whether samples of these sizes can show a difference at alpha.
func decidable(n1, n2 int32, alpha float64) bool { return MinP(int(n1), int(n2)) < alpha }

// Undecided are the changes whose repeats are too few for any difference to be significant.
func (c *Comparison) Undecided() []Change {
	var out []Change
	for _, ch := range c.Changes {
		if ch.NoVerdict {
			out = append(out, ch)
		}
	}
	return out
}

// Outcome is the comparison's verdict: a regression wins over missing repeats elsewhere; without
// one, any point with too few repeats makes it no verdict.
func (c *Comparison) Outcome() Outcome {
	switch {
	case c.Regressed():
		return OutcomeRegressed
	case len(c.Undecided()) > 0:
		return OutcomeNoVerdict
	}
	return OutcomeNoRegression
}

// noVerdict is Verdict's line for OutcomeNoVerdict: how many points lacked repeats, how many are
// needed, and the largest change in the bad direction, with its size.
func (c *Comparison) noVerdict() string {
	und := c.Undecided()
	var points, sizes []string
	for _, ch := range und {
		p := fmt.Sprintf("%s %s threads=%d", ch.Run, ch.Workload, ch.Threads)
		if !slices.Contains(points, p) {
			points = append(points, p)
		}
		if n := fmt.Sprintf("n=%d+%d", ch.Old.N, ch.New.N); !slices.Contains(sizes, n) {
			sizes = append(sizes, n)
		}
	}
	s := fmt.Sprintf("no verdict: too few repeats in %d of %d point(s) (%s): the U test needs at least %d repeats a side to find a difference at alpha %g (spec.repeat: %d or more)",
		len(points), c.Matched, joinMax(sizes, 3), MinRepeats(c.Alpha), c.Alpha, MinRepeats(c.Alpha))
	sortWorstFirst(und)
	if w := und[0]; w.Ratio != 0 {
		s += fmt.Sprintf("; largest change: %s %+.2f%% (%s)", w.Label(), 100*(w.Ratio-1), fmt.Sprintf("n=%d+%d", w.Old.N, w.New.N))
	}
	return s
}

func joinMax(xs []string, n int) string {
	if len(xs) > n {
		return fmt.Sprintf("%s and %d more", strings.Join(xs[:n], ", "), len(xs)-n)
	}
	return strings.Join(xs, ", ")
}
