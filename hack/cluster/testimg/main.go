// Command testimg is the one static binary behind the e2e cluster's helper images (hack/images.sh):
//
//	pause              the pod sandbox's pause process (also when invoked as /pause): sleeps, reaps zombies,
//	                   exits 0 on SIGTERM/SIGINT
//	hello [MSG]        prints a greeting and writes it to /dev/termination-log
//	serve [ADDR]       HTTP on ADDR (default :8080): "/" says hello, "/metrics" is Prometheus text format
//	get URL [TRIES]    GET URL, retrying once a second (the first connection to a new Service may be refused)
//	apicheck           in-cluster API access with the pod's ServiceAccount: lists the pods of its namespace
//	sleep SECONDS
//	--flag=value ...   a stand-in for the operator's manager (chart tests before the real image exists): serves
//	                   /metrics on --metrics-bind-address and /healthz, /readyz on --health-probe-bind-address
//
// SIGTERM always ends the program with exit status 0, so a rollout does not show errors.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	args := os.Args[1:]
	if filepath.Base(os.Args[0]) == "pause" {
		args = append([]string{"pause"}, args...)
	}
	if len(args) == 0 {
		args = []string{"hello"}
	}
	go exitOnSignal()
	var err error
	if strings.HasPrefix(args[0], "--") {
		args = append([]string{"manager"}, args...)
	}
	switch args[0] {
	case "manager":
		err = manager(args[1:])
	case "pause":
		pause()
	case "hello":
		hello(args[1:])
	case "serve":
		addr := ":8080"
		if len(args) > 1 {
			addr = args[1]
		}
		err = serve(addr)
	case "get":
		err = get(args[1:])
	case "apicheck":
		err = apicheck()
	case "sleep":
		n, _ := strconv.Atoi(arg(args, 1, "3600"))
		time.Sleep(time.Duration(n) * time.Second)
	default:
		err = fmt.Errorf("unknown command %q", args[0])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "testimg:", err)
		os.Exit(1)
	}
}

func arg(a []string, i int, def string) string {
	if len(a) > i {
		return a[i]
	}
	return def
}

func exitOnSignal() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	<-c
	os.Exit(0)
}

func pause() {
	c := make(chan os.Signal, 8)
	signal.Notify(c, syscall.SIGCHLD)
	for range c {
		for {
			var ws syscall.WaitStatus
			if pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); pid <= 0 || err != nil {
				break
			}
		}
	}
}

func hello(a []string) {
	host, _ := os.Hostname()
	msg := "hello from a static Go binary in pod " + host
	if len(a) > 0 {
		msg = strings.Join(a, " ")
	}
	fmt.Println(msg)
	_ = os.WriteFile("/dev/termination-log", []byte(msg), 0o644)
}

func serve(addr string) error {
	var n atomic.Int64
	host, _ := os.Hostname()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		n.Add(1)
		fmt.Fprintf(w, "hello from %s\n", host)
	})
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprintf(w, "# HELP testimg_requests_total Requests to /.\n# TYPE testimg_requests_total counter\ntestimg_requests_total %d\n", n.Load())
		fmt.Fprintf(w, "# HELP testimg_info Always 1.\n# TYPE testimg_info gauge\ntestimg_info{pod=%q} 1\n", host)
	})
	fmt.Println("serving on", addr)
	return http.ListenAndServe(addr, mux)
}

func get(a []string) error {
	if len(a) == 0 {
		return fmt.Errorf("usage: get URL [TRIES]")
	}
	tries, _ := strconv.Atoi(arg(a, 1, "30"))
	c := &http.Client{Timeout: 5 * time.Second}
	var last error
	for i := 1; i <= tries; i++ {
		resp, err := c.Get(a[0])
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				fmt.Printf("GET %s -> %d after %d tries: %s\n", a[0], resp.StatusCode, i, strings.TrimSpace(string(body)))
				return nil
			}
			err = fmt.Errorf("status %d: %s", resp.StatusCode, body)
		}
		last = err
		time.Sleep(time.Second)
	}
	return last
}

func apicheck() error {
	const sa = "/var/run/secrets/kubernetes.io/serviceaccount/"
	token, err := os.ReadFile(sa + "token")
	if err != nil {
		return err
	}
	ns, _ := os.ReadFile(sa + "namespace")
	ca, err := os.ReadFile(sa + "ca.crt")
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	host := os.Getenv("KUBERNETES_SERVICE_HOST") + ":" + os.Getenv("KUBERNETES_SERVICE_PORT")
	url := "https://" + host + "/api/v1/namespaces/" + string(ns) + "/pods"
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Printf("in-cluster GET %s -> %d (%d bytes)\n", url, resp.StatusCode, len(body))
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusForbidden {
		return fmt.Errorf("unexpected status %d: %s", resp.StatusCode, body)
	}
	return nil
}

// manager stands in for the operator: it accepts any --flag=value and serves what the chart's probes and the
// ServiceMonitor expect.
func manager(flags []string) error {
	metrics, health := ":8080", ":8081"
	for _, f := range flags {
		k, v, _ := strings.Cut(strings.TrimLeft(f, "-"), "=")
		switch k {
		case "metrics-bind-address":
			metrics = v
		case "health-probe-bind-address":
			health = v
		}
	}
	fmt.Println("placeholder manager: flags", flags)
	hm := http.NewServeMux()
	ok := func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") }
	hm.HandleFunc("/healthz", ok)
	hm.HandleFunc("/readyz", ok)
	go func() { fmt.Fprintln(os.Stderr, http.ListenAndServe(health, hm)); os.Exit(1) }()
	mm := http.NewServeMux()
	mm.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "# HELP kvbench_placeholder_info The placeholder manager is running.\n# TYPE kvbench_placeholder_info gauge\nkvbench_placeholder_info 1\n")
	})
	return http.ListenAndServe(metrics, mm)
}
