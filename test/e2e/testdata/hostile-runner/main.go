// Command hostile-runner plays a runner image that writes hostile output (issue 18), for the e2e
// spec in hostile_test.go, which builds it (stdlib only, static) into an image. Given the runner's
// arguments, it serves /metrics with more series than the chart's PodMonitor sampleLimit, logs a
// flood of tiny phase lines, waits for the operator's periodic read, logs a result line with
// duplicate pulse rounds, values of 1e308 (refused at decoding, issue 29), an overlong workload
// and odd operation names on a phase with plausible numbers, and a million phases of "{}",
// writes a valid summary that claims success, and exits 0. The total stays under the kubelet's
// 10 MiB log rotation (containerLogMaxSize) as the node stores it, so the operator reads all of
// it: containerd adds a ~40-byte timestamp and stream prefix to every line, so 4 MiB of 46-byte
// lines took 8 MiB on disk and, with the 4 MiB result line, passed 10 MiB; the kubelet rotated the
// log when its 10 s check fell between the result line and the exit, and the operator's final read
// saw only the new, empty file (issue 29; the controllers' envtest replays that rotation).
package main

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"
)

const (
	schema      = "kvbench.io/result/v2"
	phasePrefix = "kvbench-phase: "
	resultLine  = "kvbench-result: "
	floodBytes  = 2 << 20 // ~45,000 phase lines, 3.9 MB on the node
	emptyPhases = 4 << 20 / 3
)

func main() {
	summaryFile := "/dev/termination-log"
	for _, a := range os.Args[1:] {
		if v, ok := strings.CutPrefix(a, "--summary-file="); ok {
			summaryFile = v
		}
	}
	http.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		for i := range 5000 {
			fmt.Fprintf(w, "kvbench_runner_ops_per_second{workload=\"w%d\",threads=\"1\"} 1\n", i)
		}
	})
	go func() { _ = http.ListenAndServe(":8080", nil) }()

	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	for n := 0; n < floodBytes; {
		k, _ := fmt.Fprintf(out, "%s{\"workload\":\"x\",\"threads\":1,\"opsPerSec\":1e308}\n", phasePrefix)
		n += k
	}
	out.Flush()
	time.Sleep(25 * time.Second) // the operator reads the log of a running pod every 15 s

	long := strings.Repeat("w", 5000)
	fmt.Fprintf(out, `%s{"schemaVersion":%q,"engine":"rocksdb","engineVersion":%q,"phases":[`, resultLine, schema, long)
	fmt.Fprint(out, `{"workload":"pulse","threads":1,"ops":10,"seconds":1,"opsPerSec":1e308,"microsPerOp":1e308,`+
		`"pulse":{"rounds":3,"meanRoundSeconds":1e308,"maxRoundSeconds":1e308},`+
		`"pulseRounds":[{"round":1,"totalSeconds":1},{"round":1,"totalSeconds":2},{"round":1,"totalSeconds":1e308}]},`)
	fmt.Fprintf(out, `{"index":1,"workload":%q,"threads":1,"opsPerSec":3,"operations":[{"name":"read","opsPerSec":1},{"name":"read","opsPerSec":2},{"name":"re\"ad{}","opsPerSec":3}]},`, long+`"}{`)
	fmt.Fprint(out, `{"index":2,"workload":"readrandom","threads":1,"opsPerSec":1e200,"iteration":0},`)
	fmt.Fprint(out, `{"index":3,"workload":"readrandom","threads":1,"opsPerSec":3e200,"iteration":1}`)
	for range emptyPhases {
		out.WriteString(",{}")
	}
	fmt.Fprint(out, "]}\n")
	out.Flush()

	summary := fmt.Sprintf(`{"schemaVersion":%q,"engine":"rocksdb","engineVersion":"hostile 1","phases":[{"workload":"readrandom","threads":1,"ops":1,"seconds":1,"opsPerSec":1e308,"microsPerOp":1e308}]}`, schema)
	if err := os.WriteFile(summaryFile, []byte(summary), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	time.Sleep(2 * time.Second) // the metrics endpoint stays a little longer for a scrape
}
