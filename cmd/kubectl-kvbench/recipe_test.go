package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/test/envtest"
)

// The ops/s of a benchmark and of one 10x slower: the regression every gate below must catch.
var (
	fast = map[api.EngineName]float64{api.EnginePebble: 150000, api.EngineLevelDB: 150000, api.EngineRocksDB: 15000}
	slow = map[api.EngineName]float64{api.EnginePebble: 15000, api.EngineLevelDB: 15000, api.EngineRocksDB: 15000}
)

// nightlyRecipe is the "In CI with the plugin" block of docs/report.md, its continuation lines
// joined and comments dropped, so that the test runs what the page tells users to type.
func nightlyRecipe(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(envtest.RepoRoot(), "docs", "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	state := 0 // 0: before the section, 1: before its block, 2: in the block
	cont := ""
	for sc := bufio.NewScanner(f); sc.Scan(); {
		l := sc.Text()
		switch {
		case state == 0 && strings.HasPrefix(l, "**In CI with the plugin.**"):
			state = 1
		case state == 1 && strings.HasPrefix(l, "```sh"):
			state = 2
		case state == 2 && strings.HasPrefix(l, "```"):
			return lines
		case state == 2:
			if i := strings.Index(l, " #"); i >= 0 {
				l = l[:i]
			}
			l = strings.TrimSpace(l)
			if strings.HasPrefix(l, "#") || l == "" {
				continue
			}
			if strings.HasSuffix(l, `\`) {
				cont += strings.TrimSuffix(l, `\`) + " "
				continue
			}
			lines = append(lines, cont+l)
			cont = ""
		}
	}
	t.Fatal("docs/report.md: no ```sh block after **In CI with the plugin.**")
	return nil
}

// runRecipe plays the recipe against the API server: `kubectl apply` creates the benchmark the
// line names, already finished (the first fast, the next 10x slower, as a regression would be),
// `kubectl wait` has nothing to wait for, and `kubectl kvbench` lines run the plugin in a working
// directory of their own. It returns the last plugin command's output and exit code.
func runRecipe(t *testing.T, repeat int) (stdout, stderr string, code int) {
	kubeconfig, ns := testCluster(t)
	t.Chdir(t.TempDir())
	const date = "2026-11-23"
	applied := 0
	for _, line := range nightlyRecipe(t) {
		line = strings.ReplaceAll(line, "$(date +%F)", date)
		switch {
		case strings.Contains(line, "kubectl apply"):
			name, ops := "nightly", fast
			if applied > 0 {
				name, ops = "nightly-"+date, slow
			}
			if applied > 0 && !strings.Contains(line, "name: "+name) {
				t.Fatalf("the recipe's second apply does not create %s: %s", name, line)
			}
			finishedBenchmark(t, ns, name, repeat, ops)
			applied++
		case strings.HasPrefix(line, "kubectl wait"):
		case strings.HasPrefix(line, "kubectl kvbench "):
			args := strings.Fields(strings.TrimPrefix(line, "kubectl kvbench "))
			out := ""
			if i := indexOf(args, ">"); i >= 0 {
				out, args = args[i+1], args[:i]
			}
			stdout, stderr, code = kvbench(t, append(args, "--kubeconfig", kubeconfig, "-n", ns)...)
			if out != "" {
				if err := os.WriteFile(out, []byte(stdout), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if args[0] != "compare" && code != 0 {
				t.Fatalf("%s: exit %d\n%s", line, code, stderr)
			}
		default:
			t.Fatalf("the recipe has a line this test cannot play: %s", line)
		}
	}
	if applied != 2 {
		t.Fatalf("the recipe applied %d benchmarks, want the reference and tonight's", applied)
	}
	return stdout, stderr, code
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

// The documented nightly gate on a saved baseline and a 10x slower benchmark: exit 2, old and
// new the way round the user wrote them. (It printed "A = default/new, B = baseline ... +923%"
// and exited 0 when names were loaded before files.)
func TestNightlyRecipeCatchesARegression(t *testing.T) {
	stdout, stderr, code := runRecipe(t, 5)
	if code != 2 {
		t.Fatalf("exit %d, want 2 (regression)\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	md, err := os.ReadFile("comparison.md")
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(md), "\n")
	if !strings.Contains(first, "A (old) = default/nightly") && !strings.Contains(first, "A (old) = ") {
		t.Errorf("first line %q does not say which is old", first)
	}
	contains(t, first, "A (old) = ", "/nightly (baseline/nightly.yaml)", "B (new) = ", "/nightly-2026-11-23 (cluster)")
	contains(t, stderr, "regression: ", "/nightly-2026-11-23 regressed against ", "pebble readrandom threads=1 ops/s")
	contains(t, string(md), "-90.")
}

// The same with the default repeat 1: no verdict, exit 3, never 0; the changes still shown with their size.
func TestNightlyRecipeWithoutRepeatsHasNoVerdict(t *testing.T) {
	stdout, stderr, code := runRecipe(t, 1)
	if code != 3 {
		t.Fatalf("exit %d, want 3 (no verdict)\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	md, _ := os.ReadFile("comparison.md")
	contains(t, string(md), "% no verdict", "-90.")
	contains(t, stderr, "no verdict: too few repeats", "needs at least 4 repeats a side")
}

// Every example of `compare --help`, as a gate, on a real regression: the first benchmark named
// is the old, fast one and the second the new, 10x slower one, so each must exit 2.
func TestCompareHelpExamplesCatchARegression(t *testing.T) {
	kubeconfig, ns := testCluster(t)
	t.Chdir(t.TempDir())
	for _, name := range []string{"baseline", "nightly-yesterday"} {
		finishedBenchmark(t, ns, name, 5, fast)
	}
	for _, name := range []string{"bloom", "nightly-today"} {
		finishedBenchmark(t, ns, name, 5, slow)
	}
	finishedBenchmark(t, ns, "demo", 5, fast, api.EngineLevelDB, api.EngineRocksDB)
	if _, stderr, code := kvbench(t, "save", "baseline", "bloom", "nightly-yesterday", "-d", "saved", "--kubeconfig", kubeconfig, "-n", ns); code != 0 {
		t.Fatalf("save: exit %d: %s", code, stderr)
	}

	examples := strings.Split(compareCmd(&options{}).Example, "\n")
	if len(examples) < 3 {
		t.Fatalf("examples: %q", examples)
	}
	for _, ex := range examples {
		line := strings.TrimSpace(ex)
		if i := strings.Index(line, " #"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if !strings.HasPrefix(line, "kubectl kvbench compare ") {
			t.Fatalf("example %q", ex)
		}
		args := strings.Fields(strings.TrimPrefix(line, "kubectl kvbench "))
		if indexOf(args, "--fail-on-regression") < 0 {
			args = append(args, "--fail-on-regression")
		}
		stdout, stderr, code := kvbench(t, append(args, "--kubeconfig", kubeconfig, "-n", ns)...)
		if code != 2 || !strings.Contains(stderr, "regressed against") {
			t.Errorf("%s: exit %d, want 2\nstdout:\n%s\nstderr:\n%s", line, code, stdout, stderr)
		}
		if !strings.HasPrefix(stdout, "A (old) = ") && !strings.HasPrefix(stdout, "{") {
			t.Errorf("%s: the first line does not name old and new:\n%s", line, stdout)
		}
	}
	if _, err := os.Stat(filepath.Join("saved", "nightly-yesterday.yaml")); err != nil {
		t.Error(err)
	}
}
