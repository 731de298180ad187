// Package archive keeps a runner's full result once its pod is gone. The runner prints the full
// result on one log line (api.ResultLogPrefix); the termination message holds only a 4 KiB summary.
// When a run ends, the operator copies that line into a ConfigMap owned by the benchmark,
// gzip-compressed, and kubectl kvbench reads it there after cleanup has deleted the Job.
package archive

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

const (
	// DataKey is the ConfigMap binaryData key of the gzip-compressed result JSON.
	DataKey = "result.json.gz"
	// MaxCompressed keeps the ConfigMap under the API server's 1 MiB object limit with room for
	// metadata.
	MaxCompressed = 900 << 10
	// DroppedIntervals is what Dropped names when the time series had to go.
	DroppedIntervals = "intervals"
	// DroppedEngineDumps is what Dropped names when, after the time series, the engines' text
	// dumps had to go too (their typed engine statistics stay).
	DroppedEngineDumps = "engineDumps"
	// DroppedLatencyHistograms is what Dropped names when, after both, the phases' encoded latency
	// histograms had to go too (their percentiles stay).
	DroppedLatencyHistograms = "latencyHistograms"
	// DroppedOverLimits is what Dropped names when the limits on runner output
	// (api.ResultLimits) left something out; the result's error says what.
	DroppedOverLimits = "overLimits"
)

// ErrNotOperatorWritten is returned for a ConfigMap under an archive's name that the operator did
// not write for this benchmark (no controller reference to it, or other content than recorded).
var ErrNotOperatorWritten = errors.New("not an archive the operator wrote")

// Name is the ConfigMap name of a run's result: its Job's name (unique per benchmark and run,
// at most 63 characters) with a suffix.
func Name(jobName string) string { return jobName + "-result" }

// ConfigMap builds the archive of one run's result. When the compressed result is too big it
// drops the time series (the phases, pulse rounds and usage stay) and says so in dropped.
func ConfigMap(b *api.KVBenchmark, runName, jobName string, res *api.Result) (cm *corev1.ConfigMap, dropped []string, err error) {
	data, err := compress(res)
	if err != nil {
		return nil, nil, err
	}
	if len(data) > MaxCompressed {
		res = withoutIntervals(res)
		dropped = []string{DroppedIntervals}
		if data, err = compress(res); err != nil {
			return nil, nil, err
		}
		if len(data) > MaxCompressed {
			res = withoutEngineDumps(res)
			dropped = append(dropped, DroppedEngineDumps)
			if data, err = compress(res); err != nil {
				return nil, nil, err
			}
		}
		if len(data) > MaxCompressed {
			res = withoutLatencyHistograms(res)
			dropped = append(dropped, DroppedLatencyHistograms)
			if data, err = compress(res); err != nil {
				return nil, nil, err
			}
		}
		if len(data) > MaxCompressed {
			return nil, nil, fmt.Errorf("the result is %d KiB compressed without its time series, engine dumps and latency histograms, over the %d KiB a ConfigMap holds", len(data)>>10, MaxCompressed>>10)
		}
	}
	cm = &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:      Name(jobName),
			Namespace: b.Namespace,
			Labels: map[string]string{
				api.LabelManagedBy: api.ManagerName,
				api.LabelBenchmark: b.Name,
				api.LabelRun:       api.RunLabelValue(runName, jobName),
			},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(b, api.GroupVersion.WithKind("KVBenchmark"))},
		},
		BinaryData: map[string][]byte{DataKey: data},
	}
	return cm, dropped, nil
}

// Digest is the hex sha256 of an archive's stored (compressed) bytes, recorded in status as
// ResultArchive.SHA256 when the operator writes the archive.
func Digest(cm *corev1.ConfigMap) string {
	sum := sha256.Sum256(cm.BinaryData[DataKey])
	return hex.EncodeToString(sum[:])
}

// Verify checks that cm is the archive the operator wrote for b: b (by UID) is its controller,
// and its content has the sha256 recorded in b's status. Anyone who can create ConfigMaps in the
// namespace can pre-create one under the archive's name, or copy an owner reference; neither
// passes both checks.
func Verify(cm *corev1.ConfigMap, b *api.KVBenchmark, sha string) error {
	ref := metav1.GetControllerOf(cm)
	if ref == nil || ref.Kind != "KVBenchmark" || ref.APIVersion != api.GroupVersion.String() || ref.UID != b.UID {
		return fmt.Errorf("ConfigMap %s/%s: %w: its controller is not KVBenchmark %s", cm.Namespace, cm.Name, ErrNotOperatorWritten, b.Name)
	}
	if sha == "" {
		return fmt.Errorf("ConfigMap %s/%s: %w: the status records no sha256 for it", cm.Namespace, cm.Name, ErrNotOperatorWritten)
	}
	if got := Digest(cm); got != sha {
		return fmt.Errorf("ConfigMap %s/%s: %w: its sha256 %.12s... differs from the recorded %.12s...", cm.Namespace, cm.Name, ErrNotOperatorWritten, got, sha)
	}
	return nil
}

// FromConfigMap reads the result archived for b in cm, after Verify with the recorded sha256.
func FromConfigMap(cm *corev1.ConfigMap, b *api.KVBenchmark, sha string) (*api.Result, error) {
	if err := Verify(cm, b, sha); err != nil {
		return nil, err
	}
	data, ok := cm.BinaryData[DataKey]
	if !ok {
		return nil, fmt.Errorf("ConfigMap %s has no %s", cm.Name, DataKey)
	}
	res, err := Decompress(data)
	if err != nil {
		return nil, fmt.Errorf("ConfigMap %s: %w", cm.Name, err)
	}
	return res, nil
}

// Decompress decodes a gzip-compressed result within api.DefaultResultLimits. An archive the
// operator wrote is within them; one over them is refused, not cut.
func Decompress(data []byte) (*api.Result, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	d := NewDecoder(api.DefaultResultLimits)
	res, err := DecodeResult(d, zr)
	if err != nil {
		return nil, err
	}
	if err := d.Over(); err != nil {
		return nil, err
	}
	return res, nil
}

func compress(res *api.Result) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := json.NewEncoder(zw).Encode(res); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func withoutIntervals(res *api.Result) *api.Result {
	out := res.DeepCopy()
	if out.Load != nil {
		out.Load.Intervals = nil
	}
	for i := range out.Phases {
		out.Phases[i].Intervals = nil
	}
	return out
}

// withoutLatencyHistograms drops the phases' encoded histograms (res is already a copy): a few KB
// each, they are what fills the archive of a result with thousands of phases.
func withoutLatencyHistograms(res *api.Result) *api.Result {
	if res.Load != nil {
		res.Load.LatencyHistogram = ""
	}
	for i := range res.Phases {
		res.Phases[i].LatencyHistogram = ""
	}
	return res
}

// withoutEngineDumps drops the engines' text dumps (res is already a copy).
func withoutEngineDumps(res *api.Result) *api.Result {
	if res.Load != nil {
		res.Load.EngineDumps = nil
	}
	for i := range res.Phases {
		res.Phases[i].EngineDumps = nil
	}
	return res
}
