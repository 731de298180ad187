package render

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/controllers/plan"
	w "github.com/kvbench/kvbench-operator/test/wrappers"
)

// TestJobOptionsFrom: an engine's optionsFrom key is mounted read-only under one fixed name, and
// only that engine's runner config names the file; an engine without optionsFrom gets neither.
func TestJobOptionsFrom(t *testing.T) {
	from := &kvv1.OptionsFromSource{ConfigMapKeyRef: kvv1.ConfigMapKeyRef{Name: "prod-opts", Key: "OPTIONS-000042"}}
	b := w.MakeKVBenchmark("b", "ns").Engines(
		kvv1.EngineSpec{Name: kvv1.EngineRocksDB, OptionsFrom: from},
		kvv1.EngineSpec{Name: kvv1.EnginePebble},
	).Obj()
	wantVolume := corev1.Volume{Name: "options", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "prod-opts"},
		Items:                []corev1.KeyToPath{{Key: "OPTIONS-000042", Path: "OPTIONS"}},
		DefaultMode:          ptr.To[int32](0o444),
		Optional:             ptr.To(false),
	}}}
	wantMount := corev1.VolumeMount{Name: "options", MountPath: "/etc/kvbench/options", ReadOnly: true}
	for _, tc := range []struct {
		run      string
		withFile bool
	}{{"rocksdb", true}, {"pebble", false}} {
		t.Run(tc.run, func(t *testing.T) {
			var run plan.Run
			for _, r := range plan.Plan(b) {
				if r.Name == tc.run {
					run = r
				}
			}
			job, err := Job(b, run, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			ps := job.Spec.Template.Spec
			var vol *corev1.Volume
			for i := range ps.Volumes {
				if ps.Volumes[i].Name == "options" {
					vol = &ps.Volumes[i]
				}
			}
			var mount *corev1.VolumeMount
			for i, m := range ps.Containers[0].VolumeMounts {
				if m.Name == "options" {
					mount = &ps.Containers[0].VolumeMounts[i]
				}
			}
			file := runnerConfig(t, job.Spec.Template.Spec.Containers[0].Args).OptionsFile
			if !tc.withFile {
				if vol != nil || mount != nil || file != "" {
					t.Fatalf("no optionsFrom, yet volume %v mount %v file %q", vol, mount, file)
				}
				return
			}
			if vol == nil || mount == nil {
				t.Fatalf("volume %v, mount %v: want both", vol, mount)
			}
			if diff := cmp.Diff(wantVolume, *vol); diff != "" {
				t.Errorf("volume (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantMount, *mount); diff != "" {
				t.Errorf("mount (-want +got):\n%s", diff)
			}
			if file != "/etc/kvbench/options/OPTIONS" {
				t.Errorf("runner config optionsFile %q, want /etc/kvbench/options/OPTIONS", file)
			}
		})
	}
}

func runnerConfig(t *testing.T, args []string) kvv1.RunnerConfig {
	t.Helper()
	var cfg kvv1.RunnerConfig
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--config-json="); ok {
			if err := json.Unmarshal([]byte(v), &cfg); err != nil {
				t.Fatal(err)
			}
			return cfg
		}
	}
	t.Fatal("no --config-json")
	return cfg
}
