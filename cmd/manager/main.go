// Command manager runs the kvbench operator: it turns KVBenchmarks into runner Jobs and their
// results into status and Prometheus metrics.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/controllers/kvbenchmark"
	"github.com/kvbench/kvbench-operator/controllers/metrics"
	"github.com/kvbench/kvbench-operator/controllers/render"
	"github.com/kvbench/kvbench-operator/controllers/schedule"
)

func main() {
	fs := flag.NewFlagSet(os.Args[0], flag.ExitOnError)
	// --kubeconfig, as controller-runtime's GetConfig reads it.
	fs.String("kubeconfig", "", "Path to a kubeconfig. Only required if out-of-cluster.")
	opts, zapOpts, err := parseFlags(fs, os.Args[1:])
	if err == nil {
		ctrl.SetLogger(zap.New(zap.UseFlagOptions(zapOpts)))
		var cfg *rest.Config
		if cfg, err = ctrl.GetConfig(); err == nil {
			err = run(ctrl.SetupSignalHandler(), cfg, opts)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kvbench-operator:", err)
		os.Exit(1)
	}
}

// options are the manager's flags.
type options struct {
	metricsAddr, probeAddr, pprofAddr, leaderElectionNamespace string
	leaderElect, metricsSecure                                 bool
	config                                                     kvbenchmark.Config
}

func parseFlags(fs *flag.FlagSet, args []string) (options, *zap.Options, error) {
	defaults := render.DefaultOptions()
	var o options
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", ":8080", "Address of the Prometheus /metrics endpoint (0 disables it).")
	fs.BoolVar(&o.metricsSecure, "metrics-secure", true, "Serve /metrics over HTTPS, only to callers authenticated by a TokenReview and allowed `get` on the /metrics non-resource URL (SubjectAccessReview); false serves plain HTTP to anyone.")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "Address of /healthz and /readyz.")
	fs.StringVar(&o.pprofAddr, "pprof-bind-address", "", "Address of Go's /debug/pprof endpoints, to profile the operator (empty or 0 disables them).")
	fs.BoolVar(&o.leaderElect, "leader-elect", true, "Elect a leader so only one replica reconciles.")
	fs.StringVar(&o.leaderElectionNamespace, "leader-election-namespace", "", "Namespace of the leader election Lease (default: the pod's namespace).")
	fs.StringVar(&o.config.Render.RunnerImage, "runner-image", defaults.RunnerImage, "Default runner image, e.g. registry.example.com/kvbench-runner@sha256:<digest> (benchmarks may set spec.runnerImage).")
	fs.StringVar(&o.config.Render.JavaRunnerImage, "java-runner-image", defaults.JavaRunnerImage, "The Java runner's image, which runs engine rocksjava, e.g. registry.example.com/kvbench-runner-java@sha256:<digest>.")
	fs.StringVar(&o.config.Render.NVMeNodeLabel, "nvme-node-label", defaults.NVMeNodeLabel, "key=value label of nodes with local NVMe; localNVMe runs select it.")
	fs.StringVar(&o.config.Render.LocalNVMeStorageClass, "local-nvme-storage-class", defaults.LocalNVMeStorageClass, "StorageClass of localNVMe volumes when a benchmark names none (a local-volume class with WaitForFirstConsumer).")
	fs.Func("runner-image-pull-secrets", "Comma-separated Secret names runner pods pull their image with (private registries); each must exist in every benchmark namespace.", func(v string) error {
		o.config.Render.RunnerImagePullSecrets = nil
		if v != "" {
			o.config.Render.RunnerImagePullSecrets = strings.Split(v, ",")
		}
		return nil
	})
	fs.StringVar(&o.config.Render.RunnerServiceAccount, "runner-service-account", "", "ServiceAccount of runner pods, in every benchmark namespace (default: the namespace's default; its token is not mounted).")
	fs.IntVar(&o.config.MaxConcurrentRuns, "max-concurrent-runs", 100, "Most runner Jobs active at once across all benchmarks, granted first come first served (0: no limit). Exclusive runs are also limited to one per node.")
	fs.DurationVar(&o.config.UnschedulableTimeout, "unschedulable-timeout", 10*time.Minute, "How long a runner pod may stay unschedulable, or an exclusive run find no node it fits, before its run fails.")
	fs.DurationVar(&o.config.StartFailureTimeout, "start-failure-timeout", 2*time.Minute, "How long a runner container may fail to start (image pull errors, CreateContainerConfigError) before its run fails with the kubelet's message.")
	fs.IntVar(&o.config.MaxConcurrentReconciles, "max-concurrent-reconciles", 4, "Benchmarks reconciled at once (runner log reads never run in these workers).")
	zapOpts := &zap.Options{}
	zapOpts.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return o, nil, err
	}
	// Fail at startup on a bad flag rather than on every run.
	if err := o.config.Render.Validate(); err != nil {
		return o, nil, err
	}
	if o.config.UnschedulableTimeout <= 0 {
		return o, nil, errors.New("--unschedulable-timeout must be positive")
	}
	if o.config.StartFailureTimeout <= 0 {
		return o, nil, errors.New("--start-failure-timeout must be positive")
	}
	if o.config.MaxConcurrentReconciles < 1 {
		return o, nil, errors.New("--max-concurrent-reconciles must be at least 1")
	}
	if o.config.MaxConcurrentRuns < 0 {
		return o, nil, errors.New("--max-concurrent-runs must not be negative")
	}
	return o, zapOpts, nil
}

// ResultsPath is where the metrics server serves the kvbench_result_*, kvbench_benchmark_phase and
// kvbench_run_* series (behind the same authentication and authorization as /metrics).
const ResultsPath = "/metrics/results"

// metricsOptions serves /metrics as kubebuilder v4 scaffolds it: HTTPS (a self-signed certificate
// controller-runtime generates at start) behind authentication and authorization, so the series of
// every tenant's benchmarks are not readable by anyone who reaches the pod.
// The result series are served apart, on /metrics/results, written straight from the collector's
// compact samples: a registry's Gather of a thousand finished benchmarks' series took 175 MB per scrape.
func metricsOptions(o options, results http.Handler) metricsserver.Options {
	opts := metricsserver.Options{BindAddress: o.metricsAddr, SecureServing: o.metricsSecure,
		ExtraHandlers: map[string]http.Handler{ResultsPath: results}}
	if o.metricsSecure {
		opts.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	return opts
}

// logsConfig is cfg for reading runner logs over HTTP/1.1, one connection per read: over the
// manager's one HTTP/2 connection, a tenant's 35 MiB logs held up every other request to the API
// server (first passes of a thousand benchmarks stalled for a minute), and each log stream could
// buffer 4 MiB of unread data in the operator (HTTP/2's per-stream window).
func logsConfig(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.NextProtos = []string{"http/1.1"}
	return c
}

// run starts the manager and blocks until ctx ends.
func run(ctx context.Context, cfg *rest.Config, o options) error {
	log := ctrl.Log.WithName("setup")
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := kvv1.AddToScheme(scheme); err != nil {
		return err
	}
	collector := metrics.NewCollector()
	if err := ctrlmetrics.Registry.Register(collector.JobsCreated); err != nil {
		return fmt.Errorf("register metrics: %w", err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsOptions(o, collector),
		HealthProbeBindAddress:  o.probeAddr,
		PprofBindAddress:        o.pprofAddr,
		LeaderElection:          o.leaderElect,
		LeaderElectionID:        "kvbench-operator.kvbench.io",
		LeaderElectionNamespace: o.leaderElectionNamespace,
		// Release the lease on shutdown so a new replica takes over at once.
		LeaderElectionReleaseOnCancel: true,
		Cache:                         kvbenchmark.CacheOptions(),
	})
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	clientset, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	logClients, err := kubernetes.NewForConfig(logsConfig(cfg))
	if err != nil {
		return err
	}
	if err := (&kvbenchmark.KVBenchmarkReconciler{
		Client:    mgr.GetClient(),
		Recorder:  mgr.GetEventRecorderFor("kvbench-operator"),
		Clock:     clock.RealClock{},
		Metrics:   collector,
		Config:    o.config,
		Logs:      kvbenchmark.ClientsetLogs(logClients),
		APIReader: mgr.GetAPIReader(),
		Nodes:     kvbenchmark.ClientsetNodes(clientset),
	}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up controller: %w", err)
	}
	schedules := schedule.NewCollector()
	if err := schedules.Register(ctrlmetrics.Registry); err != nil {
		return fmt.Errorf("register schedule metrics: %w", err)
	}
	if err := (&schedule.Reconciler{
		Client:   mgr.GetClient(),
		Recorder: mgr.GetEventRecorderFor("kvbench-operator"),
		Clock:    clock.RealClock{},
		Metrics:  schedules,
	}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up schedule controller: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	log.Info("starting manager", "runnerImage", o.config.Render.RunnerImage, "javaRunnerImage", o.config.Render.JavaRunnerImage, "nvmeNodeLabel", o.config.Render.NVMeNodeLabel,
		"maxConcurrentRuns", o.config.MaxConcurrentRuns, "maxConcurrentReconciles", o.config.MaxConcurrentReconciles, "leaderElect", o.leaderElect)
	return mgr.Start(ctx)
}
