package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/history"
)

// scheduleCmds are history, trigger and ack: a KVBenchmarkSchedule's history and the two requests
// a user makes of it (run now; this change was expected).
func scheduleCmds(o *options) []*cobra.Command {
	return []*cobra.Command{historyCmd(o), triggerCmd(o), ackCmd(o)}
}

func historyCmd(o *options) *cobra.Command {
	var output, match, metric, file string
	var last int
	cmd := &cobra.Command{
		Use:   "history SCHEDULE | -f FILE",
		Short: "Print a KVBenchmarkSchedule's history: every run's point per series, change points marked",
		Example: `  kubectl kvbench history nightly
  kubectl kvbench history nightly --metric opsPerSec --series "rocksdb readrandom" --last 20
  kubectl kvbench history nightly -o csv > nightly.csv
  kubectl kvbench history nightly -o json > nightly.json; kubectl kvbench history -f nightly.json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := oneOf("output", output, []string{"table", "json", "csv"}); err != nil {
				return err
			}
			if metric != "" {
				if err := oneOf("metric", metric, metricNames()); err != nil {
					return err
				}
			}
			if last < 0 {
				return fmt.Errorf("--last %d: want 0 (all) or more", last)
			}
			var v *history.View
			var err error
			switch {
			case file != "" && len(args) == 0:
				v, err = viewFromFile(file)
			case file == "" && len(args) == 1:
				v, err = o.view(cmd.Context(), args[0])
			default:
				return fmt.Errorf("name a KVBenchmarkSchedule or give -f FILE (one of them)")
			}
			if err != nil {
				return err
			}
			v.Match, v.Metric, v.Last = match, api.HistoryMetric(metric), last
			switch output {
			case "json":
				enc := json.NewEncoder(o.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(v)
			case "csv":
				return v.WriteCSV(o.stdout)
			}
			return v.WriteTable(o.stdout)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "table", "table, json (the history and the change points; -f reads it back) or csv (a row per point)")
	cmd.Flags().StringVar(&match, "series", "", "only series whose name contains this (\"rocksdb readrandom threads=4\")")
	cmd.Flags().StringVar(&metric, "metric", "", "only this metric: "+strings.Join(metricNames(), ", "))
	cmd.Flags().IntVar(&last, "last", 0, "only the newest N runs of each series (0: all)")
	cmd.Flags().StringVarP(&file, "filename", "f", "", "a history saved with -o json")
	return cmd
}

func metricNames() []string {
	return []string{string(api.MetricOpsPerSec), string(api.MetricP50Micros), string(api.MetricP99Micros), string(api.MetricP999Micros),
		string(api.MetricWriteAmplification), string(api.MetricStallPercent)}
}

func viewFromFile(file string) (*history.View, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var v history.View
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if v.History == nil || v.History.SchemaVersion != history.SchemaVersion {
		return nil, fmt.Errorf("%s: not a history written by kubectl kvbench history -o json (schema %s)", file, history.SchemaVersion)
	}
	return &v, nil
}

// view reads a schedule and its history ConfigMap, which must be controlled by the schedule.
func (o *options) view(ctx context.Context, name string) (*history.View, error) {
	c, err := connect(o.kubeconfig, o.context, o.namespace, o.stderr)
	if err != nil {
		return nil, err
	}
	s, err := c.schedule(ctx, name)
	if err != nil {
		return nil, err
	}
	cm, err := c.clientset.CoreV1().ConfigMaps(c.namespace).Get(ctx, history.ConfigMapName(name), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return &history.View{History: history.New(name), ChangePoints: s.Status.ChangePoints}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("the history: %w", err)
	}
	h, err := history.FromConfigMap(cm, s)
	if err != nil {
		return nil, err
	}
	return &history.View{History: h, ChangePoints: s.Status.ChangePoints}, nil
}

func (c *cluster) schedule(ctx context.Context, name string) (*api.KVBenchmarkSchedule, error) {
	var s api.KVBenchmarkSchedule
	if err := c.client.Get(ctx, client.ObjectKey{Namespace: c.namespace, Name: name}, &s); err != nil {
		return nil, fmt.Errorf("KVBenchmarkSchedule %s/%s: %w", c.namespace, name, err)
	}
	return &s, nil
}

// annotate sets one annotation on a schedule with a merge patch.
func (c *cluster) annotate(ctx context.Context, s *api.KVBenchmarkSchedule, key, value string) error {
	patch := client.MergeFrom(s.DeepCopy())
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	s.Annotations[key] = value
	return c.client.Patch(ctx, s, patch)
}

func triggerCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:     "trigger SCHEDULE",
		Short:   "Run a KVBenchmarkSchedule's benchmark now (after the running one, under concurrencyPolicy Forbid)",
		Example: "  kubectl kvbench trigger nightly",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := connect(o.kubeconfig, o.context, o.namespace, o.stderr)
			if err != nil {
				return err
			}
			s, err := c.schedule(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			v := time.Now().UTC().Format(time.RFC3339Nano)
			if err := c.annotate(cmd.Context(), s, api.AnnotationTrigger, v); err != nil {
				return err
			}
			fmt.Fprintf(o.stdout, "%s: run requested (%s=%s); it will be %s\n", s.Name, api.AnnotationTrigger, v,
				api.ChildName(s.Name, api.CauseTrigger, time.Time{}, v))
			return nil
		},
	}
}

func ackCmd(o *options) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "ack SCHEDULE [RUN | --all]",
		Short: "Acknowledge a KVBenchmarkSchedule's change points at RUN (the first run of the new level) as expected",
		Long: `Acknowledge change points: they stop setting the Regressed or Improved condition and the
kvbench_schedule_change_point gauge (so the alert resolves), the history records the acknowledgement,
and the new level is the series' reference from then on.`,
		Example: `  kubectl kvbench ack nightly nightly-29926200
  kubectl kvbench ack nightly --all`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if all == (len(args) == 2) {
				return fmt.Errorf("name the run of the change point or give --all (one of them)")
			}
			c, err := connect(o.kubeconfig, o.context, o.namespace, o.stderr)
			if err != nil {
				return err
			}
			s, err := c.schedule(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			target := "*"
			if len(args) == 2 {
				target = args[1]
			}
			n, err := ackTargets(s, target)
			if err != nil {
				return err
			}
			v := target + "@" + time.Now().UTC().Format(time.RFC3339Nano)
			if err := c.annotate(cmd.Context(), s, api.AnnotationAck, v); err != nil {
				return err
			}
			fmt.Fprintf(o.stdout, "%s: %d change point(s) acknowledged (%s=%s)\n", s.Name, n, api.AnnotationAck, v)
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "acknowledge every unacknowledged change point")
	return cmd
}

// ackTargets counts the unacknowledged change points at run ("*": all), or says which there are.
func ackTargets(s *api.KVBenchmarkSchedule, run string) (int, error) {
	n := 0
	var open []string
	for _, c := range s.Status.ChangePoints {
		if c.AcknowledgedAt != nil {
			continue
		}
		open = append(open, fmt.Sprintf("%s (%s %s %+.1f%%)", c.Child, c.Series, c.Direction, c.ChangePercent))
		if run == "*" || c.Child == run {
			n++
		}
	}
	if n > 0 {
		return n, nil
	}
	if len(open) == 0 {
		return 0, fmt.Errorf("%s has no unacknowledged change point", s.Name)
	}
	return 0, fmt.Errorf("%s has no unacknowledged change point at %s; there are: %s", s.Name, run, strings.Join(open, "; "))
}
