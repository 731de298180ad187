package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// runnerLog is what a runner prints for a saved result: a phase line per phase as it finishes,
// then the result line. The engine is left out, so each run's archive names its own.
func runnerLog(resultFile string) (string, error) {
	raw, err := os.ReadFile(resultFile)
	if err != nil {
		return "", err
	}
	var res kvv1.Result
	if err := json.Unmarshal(raw, &res); err != nil {
		return "", fmt.Errorf("%s: %w", resultFile, err)
	}
	if len(res.Phases) == 0 {
		return "", fmt.Errorf("%s: no phases", resultFile)
	}
	res.Engine = ""
	var sb strings.Builder
	sb.WriteString("simulated runner (kwok): the log of " + filepath.Base(resultFile) + "\n")
	phases := res.Phases
	if res.Load != nil {
		phases = append([]kvv1.PhaseResult{*res.Load}, phases...)
	}
	for _, p := range phases {
		line, err := json.Marshal(p)
		if err != nil {
			return "", err
		}
		sb.WriteString(kvv1.ResultPhaseLogPrefix + string(line) + "\n")
	}
	line, err := json.Marshal(res)
	if err != nil {
		return "", err
	}
	sb.WriteString(kvv1.ResultLogPrefix + string(line) + "\n")
	return sb.String(), nil
}

// hostileLog is issue 18's hostile runner after the real phases of resultFile: a flood of tiny
// phase lines (floodBytes, far over the phase limit), then a result line of about 31 MiB (just
// under the byte limit) whose first phases hold duplicate pulse rounds, an overlong workload and
// operation name and values of 1e308 (refused), followed by millions of empty phases.
func hostileLog(resultFile string, floodBytes int) (string, error) {
	base, err := runnerLog(resultFile)
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	sb.WriteString(base[:strings.LastIndex(base, kvv1.ResultLogPrefix)])
	for flood := 0; flood < floodBytes; {
		n, _ := sb.WriteString(kvv1.ResultPhaseLogPrefix + `{"workload":"x","threads":1}` + "\n")
		flood += n
	}
	pulse := kvv1.PhaseResult{PhaseSummary: kvv1.PhaseSummary{Workload: "pulse", Threads: 1, Ops: 10, Seconds: 1, OpsPerSec: 10, MicrosPerOp: 1e5,
		Pulse: &kvv1.PulseSummary{Rounds: 2, MeanRoundSeconds: 1.5, MaxRoundSeconds: 2}},
		PulseRounds: []kvv1.PulseRound{{Round: 1, TotalSeconds: 1}, {Round: 1, TotalSeconds: 2}}}
	long := kvv1.PhaseResult{PhaseSummary: kvv1.PhaseSummary{Index: 1, Workload: strings.Repeat("w", 5000) + `"{}\`, Threads: 1, OpsPerSec: 3,
		Operations: []kvv1.OperationSummary{{Name: "read", OpsPerSec: 1}, {Name: "read", OpsPerSec: 2}, {Name: strings.Repeat("o", 500), OpsPerSec: 3}}}}
	huge := kvv1.PhaseResult{PhaseSummary: kvv1.PhaseSummary{Index: 2, Workload: "x", Threads: 1, Ops: 1, Seconds: 1, OpsPerSec: 1e308, MicrosPerOp: 1e308}}
	head, err := json.Marshal([]kvv1.PhaseResult{pulse, long, huge})
	if err != nil {
		return "", err
	}
	sb.WriteString(kvv1.ResultLogPrefix + `{"schemaVersion":"` + kvv1.ResultSchemaVersion + `","phases":` +
		strings.TrimSuffix(string(head), "]") + "," + strings.Repeat("{},", 31<<20/3) + "{}]}\n")
	return sb.String(), nil
}

// hostileFloodBytes is how much of a hostile log is tiny phase lines (about 95,000 of them).
const hostileFloodBytes = 4 << 20

// kubeletLogs sets KWOK's server up as every node's kubelet endpoint on port (HTTPS with a
// self-signed certificate: the API server does not verify kubelets it has no CA for), serving
// the runner log of resultFile for every runner container in namespace "scale" and, with hostile,
// hostileLog in namespace "scale-hostile". It returns KWOK's ClusterLogs documents and its
// server flags.
func kubeletLogs(dir, resultFile string, hostile bool, port int) (string, []string, error) {
	logs := map[string]func() (string, error){nsScale: func() (string, error) { return runnerLog(resultFile) }}
	if hostile {
		logs[nsHostile] = func() (string, error) { return hostileLog(resultFile, hostileFloodBytes) }
	}
	var docs []string
	for _, ns := range []string{nsScale, nsHostile} {
		build, ok := logs[ns]
		if !ok {
			continue
		}
		log, err := build()
		if err != nil {
			return "", nil, err
		}
		logFile := filepath.Join(dir, ns+".log")
		if err := os.WriteFile(logFile, []byte(criLog(log, time.Now())), 0o644); err != nil {
			return "", nil, err
		}
		fmt.Printf("scale: simulated runners in namespace %s print %s (%d KiB)\n", ns, filepath.Base(resultFile), len(log)>>10)
		docs = append(docs, fmt.Sprintf(`apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata:
  name: runner-%s
spec:
  selector:
    matchNamespaces: [%s]
  logs:
  - containers: [runner]
    logsFile: %s
`, ns, ns, logFile))
	}
	cert, key := filepath.Join(dir, "kubelet.crt"), filepath.Join(dir, "kubelet.key")
	if err := selfSigned(cert, key); err != nil {
		return "", nil, err
	}
	return strings.Join(docs, "---\n"), []string{fmt.Sprintf("--server-address=127.0.0.1:%d", port), "--tls-cert-file=" + cert, "--tls-private-key-file=" + key}, nil
}

// criLog is text as a container runtime stores it for the kubelet: each line timestamped, from
// stdout, split into partial (P) chunks of 16 KiB and a full (F) last one, as containerd does.
func criLog(text string, at time.Time) string {
	const chunk = 16 << 10
	ts := at.UTC().Format(time.RFC3339Nano)
	var sb strings.Builder
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		for len(line) > chunk {
			sb.WriteString(ts + " stdout P " + line[:chunk] + "\n")
			line = line[chunk:]
		}
		sb.WriteString(ts + " stdout F " + line + "\n")
	}
	return sb.String()
}

func selfSigned(certFile, keyFile string) error {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kwok-kubelet"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		return err
	}
	kb, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return err
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return err
	}
	return os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
}

// placementReport measures the operator's placement from the runs' times in status: the longest
// gap between the engines of an exclusive Sequential benchmark (from one's end to the next one's
// start), and how often an exclusive run shared its node with another run at the same time.
func (f *figures) placementReport(ctx context.Context, c client.Client) error {
	var list kvv1.KVBenchmarkList
	if err := c.List(ctx, &list, client.InNamespace(nsScale)); err != nil {
		return err
	}
	type span struct {
		who        string
		exclusive  bool
		start, end time.Time
	}
	byNode := map[string][]span{}
	f.SequentialGapMaxSeconds = -1
	var longest struct {
		ns      string
		prev    kvv1.RunStatus
		next    kvv1.RunStatus
		present bool
	}
	for _, b := range list.Items {
		exclusive := b.Spec.Placement.Exclusive == nil || *b.Spec.Placement.Exclusive
		runs := b.Status.Runs
		for i, r := range runs {
			if r.StartTime == nil || r.CompletionTime == nil || r.NodeName == "" {
				continue
			}
			byNode[r.NodeName] = append(byNode[r.NodeName], span{b.Name + "/" + r.Name, exclusive, r.StartTime.Time, r.CompletionTime.Time})
			if exclusive && b.Spec.Placement.Engines != kvv1.EnginesParallel && i > 0 && runs[i-1].CompletionTime != nil {
				gap := r.StartTime.Sub(runs[i-1].CompletionTime.Time).Seconds()
				f.SequentialGaps = append(f.SequentialGaps, gap)
				if gap > f.SequentialGapMaxSeconds {
					longest.ns, longest.prev, longest.next, longest.present = b.Namespace, runs[i-1], r, true
				}
				f.SequentialGapMaxSeconds = max(f.SequentialGapMaxSeconds, gap)
			}
		}
	}
	sort.Float64s(f.SequentialGaps)
	if longest.present {
		f.SequentialGapSample = gapBreakdown(ctx, c, longest.ns, longest.prev, longest.next)
	}
	for _, spans := range byNode {
		for i, a := range spans {
			for _, b := range spans[i+1:] {
				// Kubelet times have whole seconds: a run that starts in the second another ended does not overlap it.
				if (a.exclusive || b.exclusive) && a.start.Before(b.end) && b.start.Before(a.end) {
					f.ExclusiveOverlaps++
					if f.ExclusiveOverlapSample == "" {
						f.ExclusiveOverlapSample = fmt.Sprintf("%s %s-%s and %s %s-%s", a.who, a.start.Format(time.TimeOnly), a.end.Format(time.TimeOnly),
							b.who, b.start.Format(time.TimeOnly), b.end.Format(time.TimeOnly))
					}
				}
			}
		}
	}
	return nil
}

// gapBreakdown says where the seconds between two engines of a comparison went: from the first's
// end to the second's Job (the operator: final log read, the deciding pass), to its pod (the Job
// controller), to its binding (the scheduler, with its FailedScheduling messages) and its start.
func gapBreakdown(ctx context.Context, c client.Client, ns string, prev, next kvv1.RunStatus) string {
	t0 := prev.CompletionTime.Time
	at := func(t time.Time) string { return fmt.Sprintf("+%.1fs", t.Sub(t0).Seconds()) }
	out := fmt.Sprintf("%s ended %s; %s", prev.JobName, t0.Format(time.TimeOnly), next.JobName)
	var job batchv1.Job
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: next.JobName}, &job); err != nil {
		return out + ": " + err.Error()
	}
	out += " created " + at(job.CreationTimestamp.Time)
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"job-name": next.JobName}); err != nil || len(pods.Items) == 0 {
		return out + ", no pod"
	}
	pod := pods.Items[0]
	out += ", its pod " + at(pod.CreationTimestamp.Time)
	var evs corev1.EventList
	if err := c.List(ctx, &evs, client.InNamespace(ns)); err == nil {
		for _, e := range evs.Items {
			if e.InvolvedObject.UID != pod.UID {
				continue
			}
			when := e.LastTimestamp.Time
			if when.IsZero() {
				when = e.EventTime.Time
			}
			switch e.Reason {
			case "Scheduled":
				out += ", bound " + at(when)
			case "FailedScheduling":
				out += fmt.Sprintf(", FailedScheduling x%d (last %s: %.150s)", max(e.Count, 1), at(when), e.Message)
			}
		}
	}
	return out + ", started " + at(next.StartTime.Time)
}
