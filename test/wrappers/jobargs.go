package wrappers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	kvv1 "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// LocalRunnerArgs are a rendered runner Job's container arguments made runnable on this machine: the
// RunnerConfig's database, the --summary-file and --json moved into dir (db, summary.json, result.json),
// and --metrics-addr on a free loopback port (the rendered :8080 may be taken on a shared machine). The
// rendered config is decoded strictly: a field the runner's API does not know is an error.
func LocalRunnerArgs(args []string, dir string) ([]string, error) {
	out := make([]string, 0, len(args))
	for _, a := range args {
		switch {
		case strings.HasPrefix(a, "--config-json="):
			dec := json.NewDecoder(bytes.NewReader([]byte(strings.TrimPrefix(a, "--config-json="))))
			dec.DisallowUnknownFields()
			var cfg kvv1.RunnerConfig
			if err := dec.Decode(&cfg); err != nil {
				return nil, fmt.Errorf("the rendered --config-json: %w", err)
			}
			cfg.DBPath = filepath.Join(dir, "db")
			j, err := json.Marshal(cfg)
			if err != nil {
				return nil, err
			}
			a = "--config-json=" + string(j)
		case strings.HasPrefix(a, "--summary-file="):
			a = "--summary-file=" + filepath.Join(dir, "summary.json")
		case strings.HasPrefix(a, "--json="):
			a = "--json=" + filepath.Join(dir, "result.json")
		case strings.HasPrefix(a, "--metrics-addr="):
			a = "--metrics-addr=127.0.0.1:0"
		}
		out = append(out, a)
	}
	return out, nil
}
