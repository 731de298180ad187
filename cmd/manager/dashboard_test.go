package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/controllers/metrics"
	"github.com/kvbench/kvbench-operator/controllers/schedule"
	"github.com/kvbench/kvbench-operator/runner/livemetrics"
	"github.com/kvbench/kvbench-operator/test/envtest"
)

// targetLabels are the labels Prometheus (prometheus-operator's ServiceMonitor/PodMonitor) adds to
// every scraped series.
var targetLabels = []string{"namespace", "pod", "container", "job", "instance", "service", "endpoint"}

// dashboardQueries returns every PromQL query of the chart's dashboard (panel targets and
// template variables), with the legend of each target.
func dashboardQueries(t *testing.T) (exprs, legends []string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(envtest.RepoRoot(), "charts", "kvbench-operator", "files", "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr         string `json:"expr"`
				LegendFormat string `json:"legendFormat"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Type  string `json:"type"`
				Query string `json:"query"`
			} `json:"list"`
		} `json:"templating"`
		Annotations struct {
			List []struct {
				Expr        string `json:"expr"`
				TitleFormat string `json:"titleFormat"`
				TextFormat  string `json:"textFormat"`
			} `json:"list"`
		} `json:"annotations"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("dashboard.json: %v", err)
	}
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			exprs, legends = append(exprs, tg.Expr), append(legends, tg.LegendFormat)
		}
	}
	for _, a := range d.Annotations.List {
		exprs, legends = append(exprs, a.Expr), append(legends, a.TitleFormat+" "+a.TextFormat)
	}
	for _, v := range d.Templating.List {
		if v.Type == "query" {
			// label_values(<selector>, <label>): the selector is a query of its own.
			q := strings.TrimSuffix(strings.TrimPrefix(v.Query, "label_values("), ")")
			if i := strings.LastIndex(q, ","); i > 0 {
				q = q[:i]
			}
			exprs, legends = append(exprs, q), append(legends, "")
		}
	}
	return exprs, legends
}

var (
	reString   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	reMatchers = regexp.MustCompile(`\{[^}]*\}`)
	reMatcher  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)`)
	reGrouping = regexp.MustCompile(`\b(?:by|without|on|ignoring)\s*\(([^)]*)\)`)
	reRange    = regexp.MustCompile(`\[[^\]]*\]`)
	reIdent    = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	reLegend   = regexp.MustCompile(`\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}`)
)

var promqlWords = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true,
	"group_right": true, "and": true, "or": true, "unless": true, "offset": true, "bool": true}

// queryParts splits a query into the metric names it selects, the labels its matchers and
// groupings use, and the labels its result keeps (nil: all of the metric's).
func queryParts(expr string) (names, used, kept []string) {
	e := reString.ReplaceAllString(expr, `""`)
	for _, m := range reMatchers.FindAllString(e, -1) {
		for _, mm := range reMatcher.FindAllStringSubmatch(m, -1) {
			used = append(used, mm[1])
		}
	}
	e = reMatchers.ReplaceAllString(e, " ")
	for _, g := range reGrouping.FindAllStringSubmatch(e, -1) {
		for _, l := range strings.Split(g[1], ",") {
			if l = strings.TrimSpace(l); l != "" {
				used, kept = append(used, l), append(kept, l)
			}
		}
	}
	if kept == nil && (strings.Contains(e, "sum(") || strings.Contains(e, "max(")) {
		kept = []string{} // aggregated away
	}
	e = reGrouping.ReplaceAllString(e, " ")
	e = reRange.ReplaceAllString(e, " ")
	for _, loc := range reIdent.FindAllStringIndex(e, -1) {
		id := e[loc[0]:loc[1]]
		rest := strings.TrimSpace(e[loc[1]:])
		if promqlWords[id] || strings.HasPrefix(rest, "(") || (loc[0] > 0 && (e[loc[0]-1] >= '0' && e[loc[0]-1] <= '9')) {
			continue // a function, a keyword, a number's unit
		}
		names = append(names, id)
	}
	return names, used, kept
}

// registeredSeries returns the label names of every metric the operator and the runner register,
// plus the ones in scraped (the operator's /metrics text: controller-runtime's own series).
func registeredSeries(t *testing.T, scraped string) map[string]map[string]bool {
	t.Helper()
	out := map[string]map[string]bool{}
	add := func(name string, labels ...string) {
		if out[name] == nil {
			out[name] = map[string]bool{}
		}
		for _, l := range append(labels, targetLabels...) {
			out[name][l] = true
		}
	}
	reDesc := regexp.MustCompile(`fqName: "([^"]+)".*variableLabels: \{([^}]*)\}`)
	describe := func(c interface{ Describe(chan<- *prometheus.Desc) }, constLabels ...string) {
		ch := make(chan *prometheus.Desc, 128)
		c.Describe(ch)
		close(ch)
		for d := range ch {
			m := reDesc.FindStringSubmatch(d.String())
			if m == nil {
				t.Fatalf("cannot parse %s", d)
			}
			add(m[1], append(strings.Split(m[2], ","), constLabels...)...)
		}
	}
	c := metrics.NewCollector()
	describe(c)
	describe(c.JobsCreated)
	describe(schedule.NewCollector())
	t.Setenv(kvv1.EnvNamespace, "ns")
	t.Setenv(kvv1.EnvBenchmark, "b")
	var runLabels []string
	for l := range livemetrics.RunLabels("pebble") {
		runLabels = append(runLabels, l)
	}
	describe(livemetrics.New(nil), runLabels...)
	for _, line := range strings.Split(scraped, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, rest, _ := strings.Cut(line, "{")
		var labels []string
		if i := strings.Index(rest, "}"); i >= 0 {
			for _, m := range regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="`).FindAllStringSubmatch(rest[:i], -1) {
				labels = append(labels, m[1])
			}
		} else {
			name = strings.Fields(line)[0]
		}
		add(name, labels...)
	}
	return out
}

// checkDashboard fails for a dashboard query that names a metric nobody registers, or uses a
// label its metrics lack (in a matcher, a grouping or the legend).
func checkDashboard(t *testing.T, scraped string) {
	known := registeredSeries(t, scraped)
	exprs, legends := dashboardQueries(t)
	if len(exprs) < 10 {
		t.Fatalf("%d dashboard queries; the dashboard lost its panels?", len(exprs))
	}
	for i, expr := range exprs {
		names, used, kept := queryParts(expr)
		if len(names) == 0 {
			t.Errorf("query %q selects no metric", expr)
		}
		labels := map[string]bool{}
		for _, n := range names {
			if known[n] == nil {
				t.Errorf("query %q: metric %s is registered by neither the operator nor the runner", expr, n)
			}
			for l := range known[n] {
				labels[l] = true
			}
		}
		for _, l := range used {
			if !labels[l] {
				t.Errorf("query %q: label %s is not on %v", expr, l, names)
			}
		}
		for _, m := range reLegend.FindAllStringSubmatch(legends[i], -1) {
			l := m[1]
			if kept != nil && !contains(kept, l) {
				t.Errorf("query %q: legend label %s is aggregated away (kept: %v)", expr, l, kept)
			} else if !labels[l] {
				t.Errorf("query %q: legend label %s is not on %v", expr, l, names)
			}
		}
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// The checker itself catches what the shipped dashboard once had wrong.
func TestDashboardCheckerCatchesBrokenQueries(t *testing.T) {
	known := registeredSeries(t, "controller_runtime_reconcile_total{controller=\"kvbenchmark\",result=\"success\"} 1\n")
	for _, c := range []struct{ expr, legend, want string }{
		{`sum by (phase) (kvbench_benchmarks{namespace=~"$namespace"})`, "{{phase}}", "kvbench_benchmarks"},
		{`kvbench_result_ops_per_second{namespace=~"$namespace"}`, "{{name}} {{engine}}", "name"},
		{`sum by (namespace, pod) (rate(kvbench_runner_operations_total[30s]))`, "{{engine}}", "engine"},
	} {
		names, used, kept := queryParts(c.expr)
		bad := ""
		for _, m := range reLegend.FindAllStringSubmatch(c.legend, -1) {
			ok := false
			for _, n := range names {
				ok = ok || known[n][m[1]]
			}
			if !ok || (kept != nil && !contains(kept, m[1])) {
				bad = m[1]
			}
		}
		for _, n := range names {
			if known[n] == nil {
				bad = n // an unknown metric first
			}
		}
		if len(used) == 0 {
			t.Errorf("%q: no labels found", c.expr)
		}
		if bad != c.want {
			t.Errorf("%q with legend %q: flagged %q, want %q", c.expr, c.legend, bad, c.want)
		}
	}
}
