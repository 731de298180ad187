package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// version and commit are set by the release build (make plugin-dist):
// -ldflags "-X main.version=v0.1.0 -X main.commit=<git revision>".
var version, commit string

// operatorSelector finds the operator's Deployment, as installed by the chart, config/ or
// dist/install.yaml: they all carry the app.kubernetes.io/name label.
const operatorSelector = kvv1.LabelName + "=" + kvv1.ManagerName

// pluginVersion is "VERSION (commit C, GOVERSION, OS/ARCH)"; a build without ldflags says what
// Go's build information knows (a `go install` of a module version has its version, a build in
// a clone its VCS revision).
func pluginVersion() string {
	v, c := version, commit
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && c == "" {
				c = s.Value
			}
		}
	}
	if v == "" {
		v = "dev"
	}
	if c == "" {
		c = "unknown"
	}
	return fmt.Sprintf("%s (commit %s, %s, %s/%s)", v, c, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func versionCmd(o *options) *cobra.Command {
	var client bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the plugin's version and the operator's (its Deployment's image and version label)",
		Long: `Version prints the plugin's version and commit and, unless --client, the operator's as installed in
the cluster: every Deployment labelled app.kubernetes.io/name=kvbench-operator, in any namespace,
with its manager image (by digest when installed by digest), its app.kubernetes.io/version label and
how many replicas are ready. A cluster that cannot be reached or read is reported on stderr; the
exit status is then still 0, as the plugin's own version was printed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(o.stdout, "kubectl-kvbench "+pluginVersion())
			if client {
				return nil
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			if err := printOperators(ctx, o); err != nil {
				fmt.Fprintln(o.stderr, "operator: "+err.Error())
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&client, "client", false, "only the plugin's version; do not contact the cluster")
	cmd.Flags().DurationVar(&timeout, "request-timeout", 10*time.Second, "how long to wait for the cluster")
	return cmd
}

func printOperators(ctx context.Context, o *options) error {
	c, err := connect(o.kubeconfig, o.context, o.namespace, o.stderr)
	if err != nil {
		return err
	}
	return operators(ctx, c.clientset, o.stdout)
}

// operators prints one line per operator Deployment in the cluster.
func operators(ctx context.Context, cs kubernetes.Interface, w io.Writer) error {
	list, err := cs.AppsV1().Deployments(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: operatorSelector})
	if err != nil {
		return fmt.Errorf("listing Deployments %s: %w", operatorSelector, err)
	}
	if len(list.Items) == 0 {
		return fmt.Errorf("no Deployment labelled %s in the cluster", operatorSelector)
	}
	for _, d := range list.Items {
		fmt.Fprintln(w, operatorLine(&d))
	}
	return nil
}

func operatorLine(d *appsv1.Deployment) string {
	image := "?"
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == "manager" || len(d.Spec.Template.Spec.Containers) == 1 {
			image = c.Image
		}
	}
	parts := []string{fmt.Sprintf("operator %s/%s: image %s", d.Namespace, d.Name, image)}
	if v := d.Labels["app.kubernetes.io/version"]; v != "" {
		parts = append(parts, "version "+v)
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	parts = append(parts, fmt.Sprintf("%d/%d ready", d.Status.ReadyReplicas, want))
	return strings.Join(parts, ", ")
}
