// Command scale runs the operator at fleet scale against a real control plane: etcd and
// kube-apiserver (envtest's), kube-scheduler and kube-controller-manager, KWOK simulating the
// nodes and the runner pods (they run for --run-for and end with a runner summary), and the real
// operator binary. It applies --benchmarks KVBenchmarks at once, waits until all have Succeeded,
// and checks the figures against a range file (kueue's test/performance rangespec is the model).
//
//	go run ./test/scale --k8s-bin DIR --kwok PATH --operator PATH --ranges test/scale/ranges-full.yaml
//
// Everything listens on 127.0.0.1 on free ports; every process it starts is stopped by PID.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/controllers/render"
	"github.com/kvbench/kvbench-operator/report"
)

// The namespaces of the benchmarks, and of the hostile ones (--hostile): a second tenant.
const nsScale, nsHostile = "scale", "scale-hostile"

type options struct {
	benchmarks, nodes, nvmeNodes, eachNode int
	slots, exclusive, hostile              int
	result                                 string
	runFor, timeout                        time.Duration
	k8sBin, kwok, operator, ranges, out    string
	workDir                                string
	operatorArgs, operatorEnv              string
	keep, waitArchive                      bool
}

func main() {
	var o options
	flag.IntVar(&o.benchmarks, "benchmarks", 1000, "KVBenchmarks to apply at once")
	flag.IntVar(&o.nodes, "nodes", 100, "simulated nodes")
	flag.IntVar(&o.nvmeNodes, "nvme-nodes", 10, "of them labelled local NVMe")
	flag.IntVar(&o.eachNode, "each-node", 10, "of the benchmarks, spread EachNode over the NVMe nodes")
	flag.IntVar(&o.slots, "slots", 100, "the operator's --max-concurrent-runs (0: no limit)")
	flag.IntVar(&o.exclusive, "exclusive", 0, "of the benchmarks, exclusive two-engine Sequential ones (the operator places them on free nodes)")
	flag.IntVar(&o.hostile, "hostile", 0, "more one-engine benchmarks, in namespace "+nsHostile+" and applied after the others, whose runners print issue 18's hostile log (needs --result); each must end Failed with "+kvv1.ReasonResultOverLimits)
	flag.StringVar(&o.result, "result", "", "a saved runner result (result.json) every simulated runner prints as its log, phase lines and result line; empty: pods have no logs")
	flag.DurationVar(&o.runFor, "run-for", 30*time.Second, "how long a simulated runner pod runs")
	flag.DurationVar(&o.timeout, "timeout", 15*time.Minute, "give up waiting after this long")
	flag.StringVar(&o.k8sBin, "k8s-bin", "", "directory with etcd, kube-apiserver, kube-scheduler, kube-controller-manager (hack/k8s-binaries.sh)")
	flag.StringVar(&o.kwok, "kwok", "", "kwok binary (hack/tools.sh kwok)")
	flag.StringVar(&o.operator, "operator", "", "operator binary (make manager)")
	flag.StringVar(&o.operatorArgs, "operator-args", "", "extra operator flags, space separated")
	flag.StringVar(&o.operatorEnv, "operator-env", "GOMEMLIMIT=90MiB", "the operator's extra environment, space separated NAME=value (the default is the chart's)")
	flag.StringVar(&o.ranges, "ranges", "", "range file the figures must stay within")
	flag.StringVar(&o.out, "out", "", "write the figures as JSON here")
	flag.StringVar(&o.workDir, "work-dir", "", "logs and data (default: a new directory under /tmp)")
	flag.BoolVar(&o.keep, "keep", false, "keep the work directory")
	flag.BoolVar(&o.waitArchive, "wait-archive", false, "after all Succeeded, also wait until every run's archive outcome is in status (simulated pods have no logs: the operator gives up 5 minutes after a run ends)")
	flag.Parse()
	if err := o.validate(); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(2)
	}
	ok, err := run(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

func (o *options) validate() error {
	switch {
	case o.benchmarks < 1, o.nodes < 1:
		return errors.New("--benchmarks and --nodes must be at least 1")
	case o.nvmeNodes < 0 || o.nvmeNodes > o.nodes:
		return errors.New("--nvme-nodes must be between 0 and --nodes")
	case o.eachNode < 0 || o.eachNode > o.benchmarks || (o.eachNode > 0 && (o.nvmeNodes == 0 || o.nvmeNodes > 100)):
		return errors.New("--each-node must be between 0 and --benchmarks, and needs 1-100 NVMe nodes")
	case o.exclusive < 0 || o.eachNode+o.exclusive > o.benchmarks:
		return errors.New("--exclusive must be between 0 and --benchmarks minus --each-node")
	case o.slots < 0:
		return errors.New("--slots must not be negative")
	case o.hostile < 0 || o.hostile > 0 && o.result == "":
		return errors.New("--hostile must not be negative, and needs --result (its log begins with that result's phases)")
	case o.k8sBin == "" || o.kwok == "" || o.operator == "":
		return errors.New("--k8s-bin, --kwok and --operator are required")
	}
	for _, f := range []string{filepath.Join(o.k8sBin, "kube-scheduler"), filepath.Join(o.k8sBin, "kube-controller-manager"), o.kwok, o.operator} {
		if _, err := os.Stat(f); err != nil {
			return err
		}
	}
	return nil
}

// proc is a child process the scenario started.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan error
}

func start(dir, name, bin string, env []string, args ...string) (*proc, error) {
	logf, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), env...)
	// Its own process group, and killed if this runner dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait(); logf.Close() }()
	return p, nil
}

// stop ends the process by its PID: SIGTERM, then SIGKILL after 10 s.
func (p *proc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *proc) exited() error {
	select {
	case err := <-p.done:
		p.done <- err
		if err == nil {
			err = errors.New("exited")
		}
		return fmt.Errorf("%s: %w", p.name, err)
	default:
		return nil
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func run(o options) (bool, error) {
	// A signal ends the run through ctx, so the deferred stops still end every process it started.
	sigCtx, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	if o.workDir == "" {
		d, err := os.MkdirTemp("", "kvbench-scale-")
		if err != nil {
			return false, err
		}
		o.workDir = d
	} else if err := os.MkdirAll(o.workDir, 0o755); err != nil {
		return false, err
	}
	if !o.keep {
		defer os.RemoveAll(o.workDir)
	}
	fmt.Printf("scale: %d benchmarks (%d EachNode, %d exclusive) and %d hostile on %d simulated nodes (%d NVMe), %d slots, pods run %s; logs in %s\n",
		o.benchmarks, o.eachNode, o.exclusive, o.hostile, o.nodes, o.nvmeNodes, o.slots, o.runFor, o.workDir)

	// etcd and kube-apiserver, with the CRDs.
	root, err := repoRoot()
	if err != nil {
		return false, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: o.k8sBin,
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	// More in-flight requests than the default: 1,000 objects arrive at once.
	env.ControlPlane.GetAPIServer().Configure().Set("max-requests-inflight", "800").Set("max-mutating-requests-inflight", "400")
	cfg, err := env.Start()
	if err != nil {
		return false, fmt.Errorf("start etcd and kube-apiserver: %w", err)
	}
	defer func() { _ = env.Stop() }()
	admin, err := env.AddUser(envtest.User{Name: "scale-admin", Groups: []string{"system:masters"}}, cfg)
	if err != nil {
		return false, err
	}
	kc, err := admin.KubeConfig()
	if err != nil {
		return false, err
	}
	kubeconfig := filepath.Join(o.workDir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		return false, err
	}

	var procs []*proc
	defer func() {
		for i := len(procs) - 1; i >= 0; i-- {
			procs[i].stop()
		}
	}()
	launch := func(name, bin string, env []string, args ...string) (*proc, error) {
		p, err := start(o.workDir, name, bin, env, args...)
		if err == nil {
			procs = append(procs, p)
		}
		return p, err
	}
	// The scheduler and the Job controller must not be the bottleneck: raise their client limits.
	if _, err := launch("kube-scheduler", filepath.Join(o.k8sBin, "kube-scheduler"), nil,
		"--kubeconfig="+kubeconfig, "--authentication-kubeconfig="+kubeconfig, "--authorization-kubeconfig="+kubeconfig,
		"--leader-elect=false", "--bind-address=127.0.0.1", "--secure-port=0", "--kube-api-qps=500", "--kube-api-burst=1000"); err != nil {
		return false, err
	}
	if _, err := launch("kube-controller-manager", filepath.Join(o.k8sBin, "kube-controller-manager"), nil,
		"--kubeconfig="+kubeconfig, "--authentication-kubeconfig="+kubeconfig, "--authorization-kubeconfig="+kubeconfig,
		"--leader-elect=false", "--bind-address=127.0.0.1", "--secure-port=0",
		"--controllers=job-controller,garbage-collector-controller", "--concurrent-job-syncs=20",
		"--kube-api-qps=500", "--kube-api-burst=1000"); err != nil {
		return false, err
	}
	// The nodes' kubelet endpoint: KWOK's server, serving every runner the same log (--result; the
	// hostile log in namespace scale-hostile), or a port nobody listens on (log reads fail at once).
	kubeletPort, err := freePort()
	if err != nil {
		return false, err
	}
	st, err := stages(o.runFor.Milliseconds(), kubeletPort)
	if err != nil {
		return false, err
	}
	kwokArgs := []string{"--kubeconfig=" + kubeconfig, "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
		"--cidr=10.0.0.0/16", "--node-ip=127.0.0.1"}
	if o.result != "" {
		logs, server, err := kubeletLogs(o.workDir, o.result, o.hostile > 0, kubeletPort)
		if err != nil {
			return false, err
		}
		st += "---\n" + logs
		kwokArgs = append(kwokArgs, server...)
	}
	stageFile := filepath.Join(o.workDir, "kwok.yaml")
	if err := os.WriteFile(stageFile, []byte(st), 0o600); err != nil {
		return false, err
	}
	if _, err := launch("kwok", o.kwok, nil, append(kwokArgs, "--config="+stageFile)...); err != nil {
		return false, err
	}

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return false, err
	}
	if err := kvv1.AddToScheme(scheme); err != nil {
		return false, err
	}
	rc := rest.CopyConfig(admin.Config())
	rc.QPS, rc.Burst = 1000, 2000
	c, err := client.New(rc, client.Options{Scheme: scheme})
	if err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(sigCtx, o.timeout+5*time.Minute)
	defer cancel()
	nvme := render.DefaultOptions().NVMeNodeLabel
	nvmeKey, nvmeValue, _ := strings.Cut(nvme, "=")
	if err := createNodes(ctx, c, o.nodes, o.nvmeNodes, nvmeKey, nvmeValue); err != nil {
		return false, err
	}
	if err := waitNodesReady(ctx, c, o.nodes, procs); err != nil {
		return false, err
	}
	for _, ns := range []string{nsScale, nsHostile} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return false, err
		}
	}

	// The operator, as a process, against this control plane.
	metricsPort, err := freePort()
	if err != nil {
		return false, err
	}
	probePort, err := freePort()
	if err != nil {
		return false, err
	}
	// Plain HTTP metrics on loopback: the harness scrapes them without a service account token.
	args := []string{"--leader-elect=false", "--metrics-secure=false", "--metrics-bind-address=127.0.0.1:" + strconv.Itoa(metricsPort),
		"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(probePort), "--max-concurrent-runs=" + strconv.Itoa(o.slots),
		"--runner-image=localhost/kvbench-runner:v0.0.0-scale"}
	args = append(args, strings.Fields(o.operatorArgs)...)
	op, err := launch("operator", o.operator, append([]string{"KUBECONFIG=" + kubeconfig}, strings.Fields(o.operatorEnv)...), args...)
	if err != nil {
		return false, err
	}
	if err := waitHTTP(ctx, fmt.Sprintf("http://127.0.0.1:%d/readyz", probePort), op); err != nil {
		return false, err
	}
	fmt.Printf("scale: control plane, scheduler, controller-manager, kwok (%d nodes Ready) and operator (pid %d) up\n", o.nodes, op.cmd.Process.Pid)
	cpu0, err := cpuSeconds(op.cmd.Process.Pid)
	if err != nil {
		return false, err
	}

	// Apply every benchmark at once.
	bs := benchmarks(o, nvmeKey, nvmeValue)
	t0 := time.Now()
	if err := createAll(ctx, c, bs); err != nil {
		return false, err
	}
	applied := time.Now()
	fmt.Printf("scale: applied %d KVBenchmarks in %.1fs\n", len(bs), applied.Sub(t0).Seconds())
	// The hostile tenant's benchmarks come last: fair slots serve its namespace in the first round
	// all the same.
	if err := createAll(ctx, c, hostileBenchmarks(o.hostile)); err != nil {
		return false, err
	}

	sc := scrapeEvery(15*time.Second, fmt.Sprintf("http://127.0.0.1:%d", metricsPort))
	f, err := watchUntilDone(ctx, c, o, applied, op)
	sc.end()
	if err != nil {
		return false, err
	}
	f.Scrapes, f.ScrapesFailed, f.ScrapeMaxResultsBytes, f.ScrapeMaxSeconds, f.ScrapeError = sc.count, sc.failed, sc.maxBytes, sc.maxSeconds, sc.firstError
	if o.waitArchive {
		if err := f.waitArchive(ctx, c, applied, op); err != nil {
			return false, err
		}
	}
	f.ApplySeconds = applied.Sub(t0).Seconds()
	f.Benchmarks, f.Nodes, f.Slots, f.HostileBenchmarks = o.benchmarks, o.nodes, o.slots, o.hostile
	if o.slots > 0 {
		f.ActiveJobsOverSlots = max(0, f.PeakActiveJobs-o.slots)
	}
	if f.CPUSeconds, err = cpuSeconds(op.cmd.Process.Pid); err != nil {
		return false, err
	}
	f.CPUSeconds -= cpu0
	if f.MaxRSSMiB, err = procStatusMiB(op.cmd.Process.Pid, "VmHWM"); err != nil {
		return false, err
	}
	if f.RSSFileMiB, err = procStatusMiB(op.cmd.Process.Pid, "RssFile"); err != nil {
		return false, err
	}
	m, err := scrape(fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort))
	if err != nil {
		return false, err
	}
	f.fromMetrics(m, o.benchmarks)
	if err := f.archiveOutcome(ctx, c); err != nil {
		return false, err
	}
	if err := f.eachNodeReport(ctx, c, o); err != nil {
		return false, err
	}
	if err := f.placementReport(ctx, c); err != nil {
		return false, err
	}

	f.print()
	if o.out != "" {
		raw, _ := json.MarshalIndent(f, "", "  ")
		if err := os.WriteFile(o.out, raw, 0o644); err != nil {
			return false, err
		}
	}
	if o.ranges == "" {
		return true, nil
	}
	rs, err := loadRanges(o.ranges)
	if err != nil {
		return false, err
	}
	violations := rs.check(f)
	for _, v := range violations {
		fmt.Println("scale: OUT OF RANGE:", v)
	}
	if len(violations) == 0 {
		fmt.Printf("scale: all figures within %s\n", o.ranges)
	}
	return len(violations) == 0, nil
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run from inside the repository (no go.mod found)")
		}
		dir = parent
	}
}

func createNodes(ctx context.Context, c client.Client, n, nvme int, key, value string) error {
	for i := 0; i < n; i++ {
		labels := map[string]string{"type": "kwok", corev1.LabelHostname: fmt.Sprintf("kwok-node-%03d", i)}
		if i < nvme {
			labels[key] = value
		}
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("kwok-node-%03d", i), Labels: labels,
				Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"}},
			Status: corev1.NodeStatus{
				Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("128Gi"), corev1.ResourcePods: resource.MustParse("110")},
				Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("128Gi"), corev1.ResourcePods: resource.MustParse("110")},
			},
		}
		if err := c.Create(ctx, node); err != nil {
			return fmt.Errorf("create node: %w", err)
		}
	}
	return nil
}

func waitNodesReady(ctx context.Context, c client.Client, n int, procs []*proc) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		for _, p := range procs {
			if err := p.exited(); err != nil {
				return err
			}
		}
		var nodes corev1.NodeList
		if err := c.List(ctx, &nodes); err != nil {
			return err
		}
		ready := 0
		for _, nd := range nodes.Items {
			for _, cond := range nd.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		if ready == n {
			return untaint(ctx, c, nodes.Items)
		}
		time.Sleep(500 * time.Millisecond)
	}
	return errors.New("nodes did not become Ready in 2m (see kwok.log)")
}

// untaint removes the not-ready taint the API server put on the new nodes; the node lifecycle
// controller that would lift it is not run (KWOK keeps the nodes Ready).
func untaint(ctx context.Context, c client.Client, nodes []corev1.Node) error {
	for i := range nodes {
		n := &nodes[i]
		if len(n.Spec.Taints) == 0 {
			continue
		}
		n.Spec.Taints = nil
		if err := c.Update(ctx, n); err != nil {
			return fmt.Errorf("untaint %s: %w", n.Name, err)
		}
	}
	return nil
}

// benchmarks is the mix: one, two (in sequence) or three (in parallel) engines, some on the NVMe
// nodes only, --each-node of them spread over every NVMe node, and --exclusive of them two-engine
// Sequential comparisons that want a node to themselves. All tmpfs and tiny (KWOK has no volumes
// for PVC media); the others not exclusive, so that 100 nodes hold them.
func benchmarks(o options, nvmeKey, nvmeValue string) []*kvv1.KVBenchmark {
	var out []*kvv1.KVBenchmark
	for i := 0; i < o.benchmarks; i++ {
		b := &kvv1.KVBenchmark{
			TypeMeta:   metav1.TypeMeta{APIVersion: kvv1.GroupVersion.String(), Kind: "KVBenchmark"},
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("b%04d", i), Namespace: nsScale},
			Spec: kvv1.KVBenchmarkSpec{
				Engines:   []kvv1.EngineSpec{{Name: kvv1.EngineRocksDB}},
				Dataset:   kvv1.DatasetSpec{Size: ptr.To(resource.MustParse("16Mi"))},
				Workloads: []kvv1.WorkloadSpec{{Name: kvv1.WorkloadReadRandom}},
				Threads:   []int32{1},
				Storage:   kvv1.StorageSpec{Medium: kvv1.MediumTmpfs},
				Placement: kvv1.PlacementSpec{Exclusive: ptr.To(false)},
			},
		}
		switch {
		case i < o.eachNode:
			b.Name = fmt.Sprintf("fleet%03d", i)
			b.Spec.Placement.Spread = kvv1.SpreadEachNode
			b.Spec.Placement.MaxNodes = ptr.To(int32(o.nvmeNodes))
			b.Spec.Placement.NodeSelector = map[string]string{nvmeKey: nvmeValue}
		case i < o.eachNode+o.exclusive:
			b.Name = fmt.Sprintf("excl%03d", i)
			b.Spec.Engines = []kvv1.EngineSpec{{Name: kvv1.EngineRocksDB}, {Name: kvv1.EnginePebble}} // Sequential
			b.Spec.Placement.Exclusive = ptr.To(true)
		case i%4 == 1:
			b.Spec.Engines = []kvv1.EngineSpec{{Name: kvv1.EnginePebble}}
			b.Spec.Placement.NodeSelector = map[string]string{nvmeKey: nvmeValue}
		case i%4 == 2:
			b.Spec.Engines = []kvv1.EngineSpec{{Name: kvv1.EngineRocksDB}, {Name: kvv1.EnginePebble}} // Sequential
		case i%4 == 3:
			b.Spec.Engines = []kvv1.EngineSpec{{Name: kvv1.EngineRocksDB}, {Name: kvv1.EngineLevelDB}, {Name: kvv1.EnginePebble}}
			b.Spec.Placement.Engines = kvv1.EnginesParallel
		}
		b.Spec.Resources.Memory = memoryFor(&b.Spec)
		out = append(out, b)
	}
	return out
}

// hostileBenchmarks are n one-engine benchmarks in namespace scale-hostile (their runners print
// the hostile log).
func hostileBenchmarks(n int) []*kvv1.KVBenchmark {
	var out []*kvv1.KVBenchmark
	for i := 0; i < n; i++ {
		b := &kvv1.KVBenchmark{
			TypeMeta:   metav1.TypeMeta{APIVersion: kvv1.GroupVersion.String(), Kind: "KVBenchmark"},
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("hostile%03d", i), Namespace: nsHostile},
			Spec: kvv1.KVBenchmarkSpec{
				Engines:   []kvv1.EngineSpec{{Name: kvv1.EngineRocksDB}},
				Dataset:   kvv1.DatasetSpec{Size: ptr.To(resource.MustParse("16Mi"))},
				Workloads: []kvv1.WorkloadSpec{{Name: kvv1.WorkloadReadRandom}},
				Threads:   []int32{1},
				Storage:   kvv1.StorageSpec{Medium: kvv1.MediumTmpfs},
				Placement: kvv1.PlacementSpec{Exclusive: ptr.To(false)},
			},
		}
		b.Spec.Resources.Memory = memoryFor(&b.Spec)
		out = append(out, b)
	}
	return out
}

// memoryFor is the least memory the CRD's rule accepts for s (api.MemoryNeed of its largest
// engine, in whole MiB), so the mix follows the memory model.
func memoryFor(s *kvv1.KVBenchmarkSpec) resource.Quantity {
	need := 0.0
	for _, e := range s.Engines {
		need = max(need, kvv1.MemoryNeed(s, e))
	}
	return *resource.NewQuantity(int64(math.Ceil(need/(1<<20)))<<20, resource.BinarySI)
}

func createAll(ctx context.Context, c client.Client, bs []*kvv1.KVBenchmark) error {
	work := make(chan *kvv1.KVBenchmark)
	errs := make(chan error, len(bs))
	var wg sync.WaitGroup
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range work {
				if err := c.Create(ctx, b); err != nil {
					errs <- fmt.Errorf("create %s: %w", b.Name, err)
				}
			}
		}()
	}
	for _, b := range bs {
		work <- b
	}
	close(work)
	wg.Wait()
	close(errs)
	return <-errs
}

// figures are what the scenario measured.
type figures struct {
	Benchmarks, Nodes int
	Runs              int
	ApplySeconds      float64
	// From the end of the apply.
	SecondsToAllPhases    float64
	SecondsToAllFirstJobs float64
	SecondsToAllSucceeded float64
	BenchmarksSucceeded   int
	BenchmarksFailed      int
	BenchmarksLostPhase   int
	ReconcileP50Seconds   float64
	ReconcileP99Seconds   float64
	Reconciles            float64
	QueueWaitMeanSeconds  float64
	ReconcileMeanSeconds  float64
	ReconcileErrors       float64
	CPUSeconds            float64
	MaxRSSMiB             float64
	// Of the resident set: the most anonymous memory seen (sampled every second), and the mapped
	// files (the binary) at the end.
	MaxRSSAnonMiB, RSSFileMiB float64
	// Scrapes every 15 s during the run: how many, failed, the largest /metrics/results body
	// (unzipped) and the slowest scrape.
	Scrapes, ScrapesFailed      int
	ScrapeMaxResultsBytes       int64
	ScrapeMaxSeconds            float64
	ScrapeError                 string
	APIRequests                 float64
	APIRequestsPerBenchmark     float64
	SecondsToAllArchiveOutcomes float64
	RunsArchived                int
	RunsArchiveError            int
	RunsArchivePending          int
	ArchiveErrorSample          string
	EachNodeRuns                []int
	EachNodeDistinctNodes       []int
	EachNodeSpread              string `json:"-"`
	// Exclusive Sequential benchmarks: seconds from one engine's end to the next one's start
	// (-1: none measured), and runs that shared a node with an exclusive run at the same time.
	SequentialGapMaxSeconds float64
	SequentialGaps          []float64 `json:"-"`
	ExclusiveOverlaps       int
	ExclusiveOverlapSample  string
	// SequentialGapSample says where the seconds of the longest gap went.
	SequentialGapSample string
	// Slots: the most runner Jobs seen holding a slot at once (sampled once a second; see
	// jobsByBenchmark), and by how much that exceeded --slots.
	Slots, PeakActiveJobs, ActiveJobsOverSlots int
	// The hostile tenant (--hostile): how many ended Failed with ResultOverLimits, how many did not
	// (yet), when all had their first Job and when all had ended.
	HostileBenchmarks, HostileOverLimits, HostileNotOverLimits int
	HostileSecondsToAllFirstJobs, HostileSecondsToAllEnded     float64
	HostileSample                                              string
}

func watchUntilDone(ctx context.Context, c client.Client, o options, applied time.Time, op *proc) (*figures, error) {
	f := &figures{SecondsToAllPhases: -1, SecondsToAllFirstJobs: -1, SecondsToAllSucceeded: -1,
		HostileSecondsToAllFirstJobs: -1, HostileSecondsToAllEnded: -1}
	hadPhase := map[string]bool{}
	withJob := map[string]bool{} // namespace/name
	deadline := applied.Add(o.timeout)
	last := time.Time{}
	for {
		if err := op.exited(); err != nil {
			return nil, err
		}
		now := time.Now()
		var list kvv1.KVBenchmarkList
		if err := c.List(ctx, &list, client.InNamespace(nsScale)); err != nil {
			return nil, err
		}
		phases, succeeded, failed, runs := 0, 0, 0, 0
		for _, b := range list.Items {
			if b.Status.Phase != "" {
				phases++
				hadPhase[b.Name] = true
			} else if hadPhase[b.Name] {
				f.BenchmarksLostPhase++
			}
			switch b.Status.Phase {
			case kvv1.PhaseSucceeded:
				if allResults(&b) {
					succeeded++
				}
			case kvv1.PhaseFailed:
				failed++
			}
			runs += len(b.Status.Runs)
		}
		hostileEnded, err := f.hostileOutcome(ctx, c)
		if err != nil {
			return nil, err
		}
		active, err := jobsByBenchmark(ctx, c, withJob, o.slots)
		if err != nil {
			return nil, err
		}
		f.PeakActiveJobs = max(f.PeakActiveJobs, active)
		if anon, err := procStatusMiB(op.cmd.Process.Pid, "RssAnon"); err == nil {
			f.MaxRSSAnonMiB = max(f.MaxRSSAnonMiB, anon)
		}
		if f.SecondsToAllFirstJobs < 0 && countIn(withJob, nsScale) >= o.benchmarks {
			f.SecondsToAllFirstJobs = now.Sub(applied).Seconds()
		}
		if f.HostileSecondsToAllFirstJobs < 0 && o.hostile > 0 && countIn(withJob, nsHostile) >= o.hostile {
			f.HostileSecondsToAllFirstJobs = now.Sub(applied).Seconds()
		}
		if f.HostileSecondsToAllEnded < 0 && o.hostile > 0 && hostileEnded == o.hostile {
			f.HostileSecondsToAllEnded = now.Sub(applied).Seconds()
		}
		if f.SecondsToAllPhases < 0 && phases == o.benchmarks {
			f.SecondsToAllPhases = now.Sub(applied).Seconds()
		}
		if now.Sub(last) >= 10*time.Second {
			fmt.Printf("scale: +%3.0fs phases %d, with a Job %d, succeeded %d, failed %d, runs %d; active Jobs %d; hostile ended %d\n",
				now.Sub(applied).Seconds(), phases, countIn(withJob, nsScale), succeeded, failed, runs, active, hostileEnded)
			last = now
		}
		f.BenchmarksSucceeded, f.BenchmarksFailed, f.Runs = succeeded, failed, runs
		if succeeded+failed == o.benchmarks && hostileEnded == o.hostile {
			if failed == 0 {
				f.SecondsToAllSucceeded = now.Sub(applied).Seconds()
			}
			return f, nil
		}
		if now.After(deadline) {
			fmt.Printf("scale: timed out after %s\n", o.timeout)
			return f, nil
		}
		time.Sleep(time.Second)
	}
}

// hostileOutcome counts the hostile benchmarks that ended, and of them those that failed with
// ResultOverLimits (a run with that reason), as they must.
func (f *figures) hostileOutcome(ctx context.Context, c client.Client) (int, error) {
	var list kvv1.KVBenchmarkList
	if err := c.List(ctx, &list, client.InNamespace(nsHostile)); err != nil {
		return 0, err
	}
	ended, over := 0, 0
	for _, b := range list.Items {
		if b.Status.Phase != kvv1.PhaseSucceeded && b.Status.Phase != kvv1.PhaseFailed {
			continue
		}
		ended++
		for _, r := range b.Status.Runs {
			if b.Status.Phase == kvv1.PhaseFailed && r.Reason == kvv1.ReasonResultOverLimits {
				over++
				if f.HostileSample == "" {
					f.HostileSample = r.Message
				}
				break
			}
		}
	}
	f.HostileOverLimits, f.HostileNotOverLimits = over, len(list.Items)-over
	return ended, nil
}

func allResults(b *kvv1.KVBenchmark) bool {
	for _, r := range b.Status.Runs {
		if len(r.Results) == 0 {
			return false
		}
	}
	return len(b.Status.Runs) > 0
}

// jobsByBenchmark notes in seen the benchmarks (namespace/name, by label) that have a Job, and
// returns how many runner Jobs hold a slot as the operator's ledger counts them: not finished, not
// being deleted, and no pod of theirs has ended (the Job controller may mark a Job finished well
// after its pod ended). Jobs are listed before pods, so a Job created after another's pod ended is
// never counted beside it.
func jobsByBenchmark(ctx context.Context, c client.Client, seen map[string]bool, slots int) (int, error) {
	var jobs batchv1.JobList
	if err := c.List(ctx, &jobs); err != nil {
		return 0, err
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods); err != nil {
		return 0, err
	}
	ended := map[types.UID]bool{}
	podsOf := map[types.UID][]string{}
	for _, p := range pods.Items {
		if ref := metav1.GetControllerOf(&p); ref != nil {
			podsOf[ref.UID] = append(podsOf[ref.UID], fmt.Sprintf("%s %s on %q", p.Name, p.Status.Phase, p.Spec.NodeName))
			if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				ended[ref.UID] = true
			}
		}
	}
	var counted []string
	for _, j := range jobs.Items {
		if name := j.Labels[kvv1.LabelBenchmark]; name != "" {
			seen[j.Namespace+"/"+name] = true
		}
		if j.DeletionTimestamp == nil && !jobFinished(&j) && !ended[j.UID] {
			counted = append(counted, fmt.Sprintf("%s/%s created %s, active %d, pods %v", j.Namespace, j.Name,
				j.CreationTimestamp.Format(time.TimeOnly), j.Status.Active, podsOf[j.UID]))
		}
	}
	if slots > 0 && len(counted) > slots {
		// Which Jobs held a slot when there were too many: what the operator's ledger missed.
		fmt.Printf("scale: %d Jobs hold a slot (of %d):\n  %s\n", len(counted), slots, strings.Join(counted, "\n  "))
	}
	return len(counted), nil
}

func jobFinished(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// countIn counts the keys (namespace/name) of namespace ns.
func countIn(seen map[string]bool, ns string) int {
	n := 0
	for k := range seen {
		if strings.HasPrefix(k, ns+"/") {
			n++
		}
	}
	return n
}

// archiveOutcome counts how the operator's archive step ended for each run: archived, an error
// recorded (simulated pods have no logs), or not yet decided.
func (f *figures) archiveOutcome(ctx context.Context, c client.Client) error {
	var list kvv1.KVBenchmarkList
	if err := c.List(ctx, &list, client.InNamespace(nsScale)); err != nil {
		return err
	}
	for _, b := range list.Items {
		for _, r := range b.Status.Runs {
			switch {
			case r.FullResult == nil:
				f.RunsArchivePending++
			case r.FullResult.Error != "":
				f.RunsArchiveError++
				if f.ArchiveErrorSample == "" {
					f.ArchiveErrorSample = r.FullResult.Error
				}
			default:
				f.RunsArchived++
			}
		}
	}
	return nil
}

// waitArchive waits (at most 7 minutes) until every run has its archive outcome in status.
func (f *figures) waitArchive(ctx context.Context, c client.Client, applied time.Time, op *proc) error {
	f.SecondsToAllArchiveOutcomes = -1
	deadline := time.Now().Add(7 * time.Minute)
	for time.Now().Before(deadline) {
		if err := op.exited(); err != nil {
			return err
		}
		g := &figures{}
		if err := g.archiveOutcome(ctx, c); err != nil {
			return err
		}
		if g.RunsArchivePending == 0 {
			f.SecondsToAllArchiveOutcomes = time.Since(applied).Seconds()
			return nil
		}
		time.Sleep(2 * time.Second)
	}
	fmt.Println("scale: archive outcomes still missing after 7 minutes")
	return nil
}

// eachNodeReport checks that every EachNode benchmark ran once per NVMe node and renders the
// spread table of the first.
func (f *figures) eachNodeReport(ctx context.Context, c client.Client, o options) error {
	var list kvv1.KVBenchmarkList
	if err := c.List(ctx, &list, client.InNamespace(nsScale)); err != nil {
		return err
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	for i := range list.Items {
		b := &list.Items[i]
		if b.Spec.Placement.Spread != kvv1.SpreadEachNode {
			continue
		}
		nodes := map[string]bool{}
		for _, r := range b.Status.Runs {
			nodes[r.NodeName] = true
		}
		f.EachNodeRuns = append(f.EachNodeRuns, len(b.Status.Runs))
		f.EachNodeDistinctNodes = append(f.EachNodeDistinctNodes, len(nodes))
		if f.EachNodeSpread == "" && b.Status.Phase == kvv1.PhaseSucceeded {
			var sb strings.Builder
			if err := report.WriteByNode(&sb, []*report.Benchmark{{KVBenchmark: *b}}, "text", report.DefaultTolerance); err != nil {
				return err
			}
			f.EachNodeSpread = sb.String()
		}
	}
	return nil
}

func median(sorted []float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	return sorted[len(sorted)/2]
}

func (f *figures) print() {
	fmt.Printf(`scale: results
  benchmarks %d (runs %d) on %d nodes; applied in %.1fs
  from the end of the apply: every benchmark has a phase %.1fs, its first Job %.1fs, all Succeeded with results %.1fs
  succeeded %d, failed %d, lost their phase %d
  reconciles %.0f, errors %.0f, latency p50 %.3fs p99 %.3fs, mean %.3fs; mean wait in the work queue %.1fs
  operator CPU %.1fs, max RSS %.1f MiB (anonymous at most %.1f MiB sampled every second, files %.1f MiB), API requests %.0f (%.1f per benchmark)
  archive: %d archived, %d with an error, %d undecided (all decided %.1fs); e.g. %q
  EachNode: runs %v, distinct nodes %v
  exclusive Sequential: %d gaps between engines, median %.0fs, max %.0fs (%s); runs sharing a node with an exclusive run: %d %s
  slots %d: at most %d runner Jobs held a slot at once (sampled every second)
  hostile %d: %d Failed with ResultOverLimits, %d not; all had a Job %.1fs, all ended %.1fs; e.g. %.200q
  scrapes of /metrics and /metrics/results every 15 s: %d, failed %d %q; largest results body %.1f MiB, slowest scrape %.2fs
`, f.Benchmarks, f.Runs, f.Nodes, f.ApplySeconds, f.SecondsToAllPhases, f.SecondsToAllFirstJobs, f.SecondsToAllSucceeded,
		f.BenchmarksSucceeded, f.BenchmarksFailed, f.BenchmarksLostPhase, f.Reconciles, f.ReconcileErrors,
		f.ReconcileP50Seconds, f.ReconcileP99Seconds, f.ReconcileMeanSeconds, f.QueueWaitMeanSeconds, f.CPUSeconds, f.MaxRSSMiB, f.MaxRSSAnonMiB, f.RSSFileMiB, f.APIRequests, f.APIRequestsPerBenchmark,
		f.RunsArchived, f.RunsArchiveError, f.RunsArchivePending, f.SecondsToAllArchiveOutcomes, f.ArchiveErrorSample, f.EachNodeRuns, f.EachNodeDistinctNodes,
		len(f.SequentialGaps), median(f.SequentialGaps), f.SequentialGapMaxSeconds, f.SequentialGapSample, f.ExclusiveOverlaps, f.ExclusiveOverlapSample,
		f.Slots, f.PeakActiveJobs, f.HostileBenchmarks, f.HostileOverLimits, f.HostileNotOverLimits,
		f.HostileSecondsToAllFirstJobs, f.HostileSecondsToAllEnded, f.HostileSample,
		f.Scrapes, f.ScrapesFailed, f.ScrapeError, float64(f.ScrapeMaxResultsBytes)/(1<<20), f.ScrapeMaxSeconds)
	if f.EachNodeSpread != "" {
		fmt.Println(f.EachNodeSpread)
	}
}
