package main

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// guardedPrefixes start the lines readers of the pod log take as results: the final Result
// (api.ResultLogPrefix) and each finished phase (api.ResultPhaseLogPrefix).
var guardedPrefixes = []string{api.ResultLogPrefix, api.ResultPhaseLogPrefix}

// logWriter passes the runner's output through unchanged, except that a line which would begin
// with a guarded prefix gets a leading space: readers of the pod log (the operator, kubectl kvbench
// save) take the lines that start with a prefix as results, so nothing else may (db_bench's
// passthrough output, a workload name, ...). It also lets a result line start on a line of its
// own when the output before it ended mid-line.
type logWriter struct {
	mu   sync.Mutex
	w    io.Writer
	pend []byte // the current line so far, while it matches the start of a guarded prefix
	mid  bool   // inside a line known not to start with a guarded prefix
}

func newLogWriter(w io.Writer) *logWriter { return &logWriter{w: w} }

// prefixMatch reports whether line is the start of a guarded prefix, and whether it is all of one.
func prefixMatch(line []byte) (partial, full bool) {
	for _, p := range guardedPrefixes {
		if len(line) <= len(p) && p[:len(line)] == string(line) {
			partial = true
			full = full || len(line) == len(p)
		}
	}
	return partial, full
}

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
		// At a line start, still matching a prefix: look at one more byte.
		partial, full := prefixMatch(append(g.pend, p[0]))
		switch {
		case full:
			out = append(append(append(out, ' '), g.pend...), p[0])
		case partial:
			g.pend = append(g.pend, p[0])
			p = p[1:]
			continue
		default: // a mismatch: this line is safe as it is; the mid branch copies the rest
			out = append(out, g.pend...)
			g.pend = g.pend[:0]
			g.mid = true
			continue
		}
		p = p[1:]
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

// writeResult writes api.ResultLogPrefix and res as one line.
func (g *logWriter) writeResult(res *api.Result) error {
	return g.writeLine(api.ResultLogPrefix, res)
}

// writePhase writes api.ResultPhaseLogPrefix and a finished phase as one line.
func (g *logWriter) writePhase(p *api.PhaseResult) error {
	return g.writeLine(api.ResultPhaseLogPrefix, p)
}

// writeLine writes prefix and v as compact JSON (one line: encoding/json never emits a raw
// newline), in one write, on a line of its own.
func (g *logWriter) writeLine(prefix string, v any) error {
	b, err := json.Marshal(v)
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
	line = append(append(append(line, prefix...), b...), '\n')
	_, err = g.w.Write(line)
	return err
}

// flush writes a held-back line start (output that ended in the middle of a prefix).
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
