package archive

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// Log is what a runner's log holds, within the limits it was read with.
type Log struct {
	// Load and Phases are the finished phases the runner logged (api.ResultPhaseLogPrefix lines),
	// in order; read in full they carry their time series, else only their summaries.
	Load   *api.PhaseResult
	Phases []api.PhaseResult
	// Result is the last result line's (api.ResultLogPrefix), read in full only; ResultErr says
	// why the last result line cannot be used (not JSON, not a known schema).
	Result    *api.Result
	ResultErr error
	// Over is a *LimitError saying what the limits left out of the phase lines and the result
	// line kept; nil when everything fit.
	Over error
}

// ReadLog reads a runner's log as it streams, holding no line whole: lines other than phase and
// result lines are skipped, those are decoded within lim (at most lim.Phases phase lines, their
// list items and strings bounded together). With full it decodes phase lines with their time
// series and the last result line; without (the periodic read of a running runner) only the
// phases' summaries, and result lines are skipped. An error is a failed read of r.
func ReadLog(r io.Reader, lim api.ResultLimits, full bool) (*Log, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	out := &Log{}
	phases := NewDecoder(lim) // one budget for all phase lines
	if !full {
		phases.Skip = phaseDetail
	}
	var result *Decoder // the kept result line's
	seen := 0
	longest := max(len(api.ResultPhaseLogPrefix), len(api.ResultLogPrefix))
	for {
		head, err := br.Peek(longest)
		if len(head) == 0 && err != nil {
			if err == io.EOF {
				break
			}
			return nil, err
		}
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			head = head[:i]
		}
		line := &lineReader{br: br}
		switch {
		case bytes.HasPrefix(head, []byte(api.ResultPhaseLogPrefix)):
			_, _ = br.Discard(len(api.ResultPhaseLogPrefix))
			if seen >= lim.Phases {
				phases.leave(fmt.Sprintf("phase line(s) over the limit of %d", lim.Phases), 1)
				break
			}
			// Decoded in place: a hostile log's 10,000 phases were each decoded, then copied.
			out.Phases = append(out.Phases, api.PhaseResult{})
			p := &out.Phases[len(out.Phases)-1]
			err := readPhase(phases, line, full, p)
			if line.err != nil {
				return nil, line.err
			}
			if err != nil {
				out.Phases = out.Phases[:len(out.Phases)-1]
				break // not the runner's (it writes whole lines): the result line still counts
			}
			seen++
			if phases.Refused(&p.PhaseSummary) {
				out.Phases = out.Phases[:len(out.Phases)-1]
				break
			}
			if p.Workload == "load" {
				load := *p
				out.Load = &load
				out.Phases = out.Phases[:len(out.Phases)-1]
			}
		case full && bytes.HasPrefix(head, []byte(api.ResultLogPrefix)):
			_, _ = br.Discard(len(api.ResultLogPrefix))
			d := NewDecoder(lim)
			res, err := DecodeResult(d, line)
			if line.err != nil {
				return nil, line.err
			}
			out.Result, out.ResultErr, result = res, err, d
		}
		if err := line.drain(); err != nil {
			return nil, err
		}
	}
	var left []string
	for _, d := range []*Decoder{phases, result} {
		var le *LimitError
		if d != nil && errors.As(d.Over(), &le) {
			left = append(left, le.Left...)
		}
	}
	if len(left) > 0 {
		out.Over = &LimitError{Left: left}
	}
	return out, nil
}

// phaseDetail are the keys of a phase result that its summary does not have.
var phaseDetail = map[string]bool{"intervals": true, "pulseRounds": true, "usage": true, "engineStats": true,
	"engineDumps": true, "device": true, "protocol": true}

// readPhase decodes one phase line into p, in full or as its summary.
func readPhase(d *Decoder, r io.Reader, full bool, p *api.PhaseResult) error {
	if full {
		return d.Decode(r, p)
	}
	return d.Decode(r, &p.PhaseSummary)
}

// DecodeResult decodes one result within d's limits and checks its schema: the one gate for a
// runner's result, whether a log's result line, an archive or a file given to kubectl kvbench.
// Phases with numbers no engine reaches (api.PhaseSummary.Implausible) are refused: left out,
// and named in d.Over().
func DecodeResult(d *Decoder, r io.Reader) (*api.Result, error) {
	var res api.Result
	if err := d.Decode(r, &res); err != nil {
		return nil, fmt.Errorf("result line: %w", err)
	}
	if !api.KnownResultSchema(res.SchemaVersion) {
		return nil, fmt.Errorf("result schema %q is not supported (this build reads %s)", res.SchemaVersion, api.ResultSchemaVersion)
	}
	if res.Load != nil && d.Refused(&res.Load.PhaseSummary) {
		res.Load = nil
	}
	res.Phases = slices.DeleteFunc(res.Phases, func(p api.PhaseResult) bool { return d.Refused(&p.PhaseSummary) })
	return &res, nil
}

// lineReader reads br up to the end of the current line (consuming the newline). err keeps a
// failed read of br, to tell a broken log from a broken line.
type lineReader struct {
	br   *bufio.Reader
	done bool
	err  error
}

func (l *lineReader) Read(p []byte) (int, error) {
	if l.done || len(p) == 0 {
		return 0, io.EOF
	}
	if l.br.Buffered() == 0 {
		if _, err := l.br.Peek(1); err != nil {
			l.done = true
			if err != io.EOF {
				l.err = err
			}
			return 0, io.EOF
		}
	}
	buf, _ := l.br.Peek(min(len(p), l.br.Buffered()))
	if i := bytes.IndexByte(buf, '\n'); i >= 0 {
		n := copy(p, buf[:i])
		_, _ = l.br.Discard(n + 1)
		l.done = true
		return n, nil
	}
	n := copy(p, buf)
	_, _ = l.br.Discard(n)
	return n, nil
}

// drain skips the rest of the line.
func (l *lineReader) drain() error {
	for !l.done {
		if _, err := l.br.ReadSlice('\n'); err != bufio.ErrBufferFull {
			l.done = true
			if err != nil && err != io.EOF {
				l.err = err
			}
		}
	}
	return l.err
}

// Incomplete says what a full read (ReadLog with full) is missing of the whole log a runner that
// exited 0 writes: the result line it writes last, or the phase lines it writes as each phase
// ends (one per phase of the result, and one for its load). Lines go missing when the kubelet
// rotates the container log (containerLogMaxSize, 10Mi by default): the logs endpoint serves only
// the current file. Nil when the log is whole, or when Over or ResultErr already say why not.
func (l *Log) Incomplete() error {
	switch {
	case l.Over != nil || l.ResultErr != nil:
		return nil
	case l.Result == nil:
		return errors.New("no result line (the runner writes it last)")
	}
	lines := make(map[int32]bool, len(l.Phases))
	for i, p := range l.Phases {
		if l.Result.SchemaVersion == api.ResultSchemaVersionV1 {
			p.Index = int32(i) // v1 phases have no index: their position is their index
		}
		lines[p.Index] = true
	}
	var missing []int32
	for i, p := range l.Result.Phases {
		if l.Result.SchemaVersion == api.ResultSchemaVersionV1 {
			p.Index = int32(i)
		}
		if !lines[p.Index] {
			missing = append(missing, p.Index)
		}
	}
	noLoad := l.Result.Load != nil && l.Load == nil
	if len(missing) == 0 && !noLoad {
		return nil
	}
	what := fmt.Sprintf("%d of the result line's %d phases have no phase line", len(missing), len(l.Result.Phases))
	if len(missing) > 0 {
		what += fmt.Sprintf(" (indexes %d-%d)", missing[0], missing[len(missing)-1])
	}
	if noLoad {
		what += ", nor has its load"
	}
	return errors.New(what)
}
