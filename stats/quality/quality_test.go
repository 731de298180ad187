package quality

import (
	"encoding/json"
	"os"
	"testing"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/stats"
)

// The targets, for the schedule's defaults (ops/s: minimum change 2%, p < 0.0001,
// confirmed by the next run), on fewer series than hack/bench/changepoint uses for docs so that
// this runs in seconds: at CoV 2%, at least 95% of 5% throughput drops found within 10 runs, and
// at most 1 false alarm per 1,000 runs; with normal noise and with the shape of this project's own
// repeats (docs/reproductions/repeats, scaled to CoV 2%). The series come from fixed seeds, so the
// figures are the same on every run; a change to the detector that loses power or raises alarms
// fails here.
func TestDetectorTargets(t *testing.T) {
	m := EDivisive(100, stats.DetectOptions{HigherIsBetter: true, MinChange: 0.02}, true)
	b, err := os.ReadFile("../../docs/reproductions/repeats/repeats-pebble.result.json")
	if err != nil {
		t.Fatal(err)
	}
	var res api.Result
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	r, cov := Residuals(Repeats(&res))
	for i := range r {
		r[i] *= 0.02 / cov
	}
	for _, noise := range []Noise{{Name: "normal", CoV: 0.02}, {Name: "pebble repeats' shape", Residuals: r}} {
		f := Run(m, Scenario{Noise: noise, Shift: 0.05, Before: 30, After: 20, Series: 300, Seed: 11, Within: 10, Slack: 2})
		if f.Found < 0.95 {
			t.Errorf("%s: 5%% shifts at CoV 2%%: found %.1f%% within 10 runs, want >= 95%%", noise.Name, 100*f.Found)
		}
		if f.RunsToDetect95 > 10 {
			t.Errorf("%s: 95th percentile of runs to detect: %v", noise.Name, f.RunsToDetect95)
		}
		null := Run(m, Scenario{Noise: noise, Before: 1000, Series: 30, Seed: 7})
		if null.FalsePer1000 > 1 {
			t.Errorf("%s: false alarms per 1,000 runs: %.2f, want <= 1", noise.Name, null.FalsePer1000)
		}
		t.Logf("%s: found %.1f%% (runs to detect: median %v, 95th percentile %v), %.2f false alarms per 1,000 runs",
			noise.Name, 100*f.Found, f.RunsToDetect, f.RunsToDetect95, null.FalsePer1000)
	}
	// One run in a hundred 30% slower, then back: outliers, not change points.
	spiky := Run(m, Scenario{Noise: Noise{CoV: 0.02, Excursions: 0.01, Excursion: 0.3}, Before: 1000, Series: 10, Seed: 7})
	if spiky.FalsePer1000 > 1 {
		t.Errorf("with single-run excursions: %.2f false alarms per 1,000 runs, want <= 1", spiky.FalsePer1000)
	}
	// Without the confirmation, the same excursions raise no alarm either: they are outliers.
	if f := Run(EDivisive(100, stats.DetectOptions{HigherIsBetter: true, MinChange: 0.02}, false),
		Scenario{Noise: Noise{CoV: 0.02, Excursions: 0.01, Excursion: 0.3}, Before: 1000, Series: 10, Seed: 7}); f.FalsePer1000 > 1 {
		t.Errorf("unconfirmed, with single-run excursions: %.2f false alarms per 1,000 runs, want <= 1", f.FalsePer1000)
	}
}

// The comparison methods behave as they should: a single-run 5% threshold at CoV 2% raises many
// false alarms, and the z-score at |z| > 5 misses most 5% shifts, which is why the schedule does not
// use them.
func TestBaselines(t *testing.T) {
	noise := Noise{CoV: 0.02}
	if f := Run(Threshold(0.05), Scenario{Noise: noise, Before: 1000, Series: 5, Seed: 7}); f.FalsePer1000 < 20 {
		t.Errorf("threshold: %.2f false alarms per 1,000 runs, want many", f.FalsePer1000)
	}
	if f := Run(ZScore(5, 30), Scenario{Noise: noise, Shift: 0.05, Before: 30, After: 20, Series: 100, Seed: 11, Within: 10, Slack: 2}); f.Found > 0.5 {
		t.Errorf("z-score |z| > 5: found %.0f%% of 5%% shifts, want few", 100*f.Found)
	}
	if f := Run(ZScore(5, 30), Scenario{Noise: noise, Shift: 0.2, Before: 30, After: 20, Series: 100, Seed: 11, Within: 10, Slack: 2}); f.Found < 0.99 || f.RunsToDetect != 1 {
		t.Errorf("z-score |z| > 5 on a 20%% shift: found %.0f%% after %v runs, want all at once", 100*f.Found, f.RunsToDetect)
	}
}

// Residuals are relative to each point's median.
func TestResiduals(t *testing.T) {
	res, cov := Residuals([][]float64{{90, 100, 110}, {1, 2}, {200, 200, 220}})
	want := []float64{-0.1, 0, 0.1, 0, 0, 0.1}
	if len(res) != len(want) {
		t.Fatalf("residuals %v", res)
	}
	for i := range want {
		if d := res[i] - want[i]; d > 1e-12 || d < -1e-12 {
			t.Errorf("residual %d = %v, want %v", i, res[i], want[i])
		}
	}
	if cov <= 0.05 || cov >= 0.1 {
		t.Errorf("cov %v", cov)
	}
}
