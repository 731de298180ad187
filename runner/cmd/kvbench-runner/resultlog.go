package main

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// logWriter passes the runner's output through unchanged, except that a line which would begin
// with api.ResultLogPrefix gets a leading space: readers of the pod log (kubectl kvbench save)
// take the one line that starts with the prefix as the result, so nothing else may (db_bench's
// passthrough output, a workload name, ...). It also lets the result line start on a line of its
// own when the output before it ended mid-line.
type logWriter struct {
	mu   sync.Mutex
	w    io.Writer
	pend []byte // the current line so far, while it matches the start of the prefix
	mid  bool   // inside a line known not to start with the prefix
}

func newLogWriter(w io.Writer) *logWriter { return &logWriter{w: w} }

func (g *logWriter) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := len(p)
	var out []byte
	for len(p) > 0 {
		if g.mid {
			i := bytes.IndexByte(p, '\n')
			if i < 0 {
				out = append(out, p...)
				break
			}
			out = append(out, p[:i+1]...)
			p = p[i+1:]
			g.mid = false
			continue
		}
		// At a line start, still matching the prefix: compare the next bytes.
		j := 0
		for j < len(p) && len(g.pend)+j < len(api.ResultLogPrefix) && p[j] == api.ResultLogPrefix[len(g.pend)+j] {
			j++
		}
		g.pend = append(g.pend, p[:j]...)
		p = p[j:]
		switch {
		case len(g.pend) == len(api.ResultLogPrefix):
			out = append(append(out, ' '), g.pend...)
		case len(p) > 0: // a mismatch: this line is safe as it is
			out = append(out, g.pend...)
		default: // out of input while still matching; decide on the next write
			continue
		}
		g.pend = g.pend[:0]
		g.mid = true
	}
	if len(out) == 0 {
		return n, nil
	}
	if _, err := g.w.Write(out); err != nil {
		return 0, err
	}
	return n, nil
}

// writeResult writes api.ResultLogPrefix and res as compact JSON (one line: encoding/json never
// emits a raw newline), in one write, on a line of its own.
func (g *logWriter) writeResult(res *api.Result) error {
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var line []byte
	if len(g.pend) > 0 || g.mid {
		line = append(append(line, g.pend...), '\n')
		g.pend, g.mid = g.pend[:0], false
	}
	line = append(append(append(line, api.ResultLogPrefix...), b...), '\n')
	_, err = g.w.Write(line)
	return err
}

// flush writes a held-back line start (output that ended in the middle of the prefix).
func (g *logWriter) flush() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.pend) == 0 {
		return nil
	}
	_, err := g.w.Write(g.pend)
	g.pend, g.mid = g.pend[:0], true
	return err
}
