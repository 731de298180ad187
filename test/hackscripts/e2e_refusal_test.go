// Package hackscripts tests the hack/ scripts' guards that need no cluster.
package hackscripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// e2e runs hack/e2e.sh (make test-e2e) with its cluster state in dir.
func e2e(t *testing.T, dir string) (string, int) {
	t.Helper()
	cmd := exec.Command("bash", "../../hack/e2e.sh")
	cmd.Env = append(os.Environ(), "KVBENCH_CLUSTER_DIR="+dir, "E2E_ARTIFACTS="+t.TempDir())
	out, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	return string(out), code
}

// Issue 34: a make test in a second clone found the demo's cluster and wiped it. make test now
// refuses a running cluster, and a stopped one's data it did not make, before touching either.
func TestE2ERefusesAClusterItDidNotMake(t *testing.T) {
	t.Run("the demo's data, stopped", func(t *testing.T) {
		dir := t.TempDir()
		data := filepath.Join(dir, "var", "etcd", "member")
		if err := os.MkdirAll(data, 0o755); err != nil {
			t.Fatal(err)
		}
		out, code := e2e(t, dir)
		if code != 2 || !strings.Contains(out, "make cluster-wipe") {
			t.Fatalf("exit %d, want 2 naming make cluster-wipe:\n%s", code, out)
		}
		if _, err := os.Stat(data); err != nil {
			t.Fatalf("the demo's etcd data was touched: %v", err)
		}
	})
	t.Run("a running cluster", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "run"), 0o755); err != nil {
			t.Fatal(err)
		}
		apiserver := exec.Command("sleep", "60") // plays the running kube-apiserver
		if err := apiserver.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = apiserver.Process.Kill(); _ = apiserver.Wait() }()
		pidFile := filepath.Join(dir, "run", "kube-apiserver.pid")
		if err := os.WriteFile(pidFile, []byte(strconv.Itoa(apiserver.Process.Pid)), 0o644); err != nil {
			t.Fatal(err)
		}
		out, code := e2e(t, dir)
		if code != 2 || !strings.Contains(out, "make cluster-down") {
			t.Fatalf("exit %d, want 2 naming make cluster-down:\n%s", code, out)
		}
		if _, err := os.Stat(pidFile); err != nil || apiserver.ProcessState != nil {
			t.Fatalf("the running cluster was touched: %v", err)
		}
	})
}
