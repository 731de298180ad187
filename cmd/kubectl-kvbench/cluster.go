package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/archive"
	"github.com/kvbench/kvbench-operator/report"
)

// cluster reads KVBenchmarks and the runners' full results: from the ConfigMaps the operator
// archives them in when a run ends, else from the runner pods' logs.
type cluster struct {
	client    client.Client        // KVBenchmarks
	clientset kubernetes.Interface // pods and their logs
	namespace string
	stderr    io.Writer
}

// connect loads the kubeconfig as kubectl does: --kubeconfig, else $KUBECONFIG, else
// ~/.kube/config; --context and --namespace override the current context's.
func connect(kubeconfig, context, namespace string, stderr io.Writer) (*cluster, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: context}
	overrides.Context.Namespace = namespace
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	scheme := runtime.NewScheme()
	if err := api.AddToScheme(scheme); err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	clientset, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &cluster{client: c, clientset: clientset, namespace: ns, stderr: stderr}, nil
}

// benchmark gets a KVBenchmark and its runs' full results. Runs whose pods are gone (Jobs are
// deleted cleanup.ttlSecondsAfterFinished after a run) are reported from status; one note on
// stderr says so.
func (c *cluster) benchmark(ctx context.Context, name string) (*report.Benchmark, error) {
	var kvb api.KVBenchmark
	if err := c.client.Get(ctx, client.ObjectKey{Namespace: c.namespace, Name: name}, &kvb); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("KVBenchmark %q not found in namespace %s", name, c.namespace)
		}
		return nil, err
	}
	b := &report.Benchmark{KVBenchmark: kvb, Results: map[string]*api.Result{}}
	byWhy := map[string][]string{}
	var whys []string
	for _, run := range kvb.Status.Runs {
		if run.Phase == api.RunPending {
			continue // no pod yet, nothing to miss
		}
		res, why, err := c.result(ctx, &kvb, run)
		if err != nil {
			return nil, fmt.Errorf("run %s of %s: %w", run.Name, name, err)
		}
		if res == nil {
			if byWhy[why] == nil {
				whys = append(whys, why)
			}
			byWhy[why] = append(byWhy[why], run.Name)
			continue
		}
		b.Results[run.Name] = res
	}
	if len(whys) > 0 {
		var parts []string
		for _, why := range whys {
			parts = append(parts, fmt.Sprintf("run %s: %s", strings.Join(byWhy[why], ", "), why))
		}
		fmt.Fprintf(c.stderr, "note: %s: no full result (%s); using the summaries in status: no time series or pulse rounds\n",
			name, strings.Join(parts, "; "))
	}
	return b, nil
}

// result reads a run's full result from its archive, or from the newest of its pods that logged
// one when there is no archive or the archive left something out. Without one it returns the
// reason.
func (c *cluster) result(ctx context.Context, kvb *api.KVBenchmark, run api.RunStatus) (*api.Result, string, error) {
	bench := kvb.Name
	fr := run.FullResult
	archived := fr != nil && fr.ConfigMap != ""
	if archived && len(fr.Dropped) == 0 {
		return c.archived(ctx, kvb, fr)
	}
	res, why, err := c.logged(ctx, bench, api.RunLabelValue(run.Name, run.JobName))
	if res != nil || err != nil || !archived {
		if res == nil && err == nil && fr != nil && fr.Error != "" {
			why += "; not archived: " + fr.Error
		}
		return res, why, err
	}
	fmt.Fprintf(c.stderr, "note: %s: run %s: the archived result left out %s to fit a ConfigMap\n", bench, run.Name, strings.Join(fr.Dropped, ", "))
	return c.archived(ctx, kvb, fr)
}

// archived reads a result the operator archived in a ConfigMap, trusting it only if kvb controls
// it and its content has the sha256 recorded in status (archive.Verify).
func (c *cluster) archived(ctx context.Context, kvb *api.KVBenchmark, fr *api.ResultArchive) (*api.Result, string, error) {
	cm, err := c.clientset.CoreV1().ConfigMaps(c.namespace).Get(ctx, fr.ConfigMap, metav1.GetOptions{})
	if err != nil {
		return nil, "", fmt.Errorf("the archived result: %w", err)
	}
	res, err := archive.FromConfigMap(cm, kvb, fr.SHA256)
	return res, "", err
}

// logged reads a result from the newest of a run's pods that logged one.
func (c *cluster) logged(ctx context.Context, bench, run string) (*api.Result, string, error) {
	sel := labels.Set{api.LabelBenchmark: bench, api.LabelRun: run}.String()
	list, err := c.clientset.CoreV1().Pods(c.namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, "", err
	}
	if len(list.Items) == 0 {
		return nil, "runner pod gone", nil
	}
	pods := list.Items
	slices.SortFunc(pods, func(a, b corev1.Pod) int { return b.CreationTimestamp.Compare(a.CreationTimestamp.Time) })
	why := "no result in the runner log yet"
	for _, pod := range pods {
		if pod.Status.Phase == corev1.PodPending {
			continue
		}
		logs, err := c.clientset.CoreV1().Pods(c.namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Container: api.ContainerName}).Stream(ctx)
		if err != nil {
			why = fmt.Sprintf("reading the log of pod %s: %v", pod.Name, err)
			continue
		}
		lg, err := archive.ReadLog(logs, api.DefaultResultLimits, true)
		logs.Close()
		if err == nil {
			err = lg.ResultErr
		}
		if err != nil {
			return nil, "", fmt.Errorf("pod %s: %w", pod.Name, err)
		}
		if lg.Result != nil {
			if lg.Over != nil {
				fmt.Fprintf(c.stderr, "note: %s: pod %s: %v\n", bench, pod.Name, lg.Over)
			}
			return lg.Result, "", nil
		}
	}
	return nil, why, nil
}
