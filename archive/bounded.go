package archive

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

// Decoder reads a runner's JSON within api.ResultLimits. It walks the JSON token by token as it
// streams in and copies what fits the limits to a buffer, which is then unmarshalled: a list
// past its bound, a string past its length or a value past the byte limit never reaches the
// decoded value, so the decoded size is bounded whatever the input. One Decoder's item budget is
// shared by everything it reads (one log's phase lines), and it remembers what it left out.
type Decoder struct {
	Limits api.ResultLimits
	// Skip names keys whose values the target does not use: they are read past whole, by
	// encoding/json's scanner, without the token walk.
	Skip  map[string]bool
	items int
	left  map[string]int
	order []string
	// refused is the kind under which phases with impossible numbers are counted (Refused).
	refused string
}

// NewDecoder returns a Decoder with its own budget.
func NewDecoder(lim api.ResultLimits) *Decoder { return &Decoder{Limits: lim} }

// LimitError says what the limits left out of a runner's output.
type LimitError struct{ Left []string }

func (e *LimitError) Error() string {
	return "the runner's output is over the operator's limits (docs/operator.md#limits-on-runner-output); left out: " + strings.Join(e.Left, ", ")
}

// Over is nil when everything read so far fit, else a *LimitError saying what was left out.
func (d *Decoder) Over() error {
	if len(d.order) == 0 {
		return nil
	}
	e := &LimitError{}
	for _, k := range d.order {
		e.Left = append(e.Left, fmt.Sprintf("%d %s", d.left[k], k))
	}
	return e
}

// leave notes n things of a kind left out.
func (d *Decoder) leave(kind string, n int) {
	if d.left == nil {
		d.left = map[string]int{}
	}
	if _, ok := d.left[kind]; !ok {
		d.order = append(d.order, kind)
	}
	d.left[kind] += n
}

// Refused says whether phase p has numbers no engine reaches (api.PhaseSummary.Implausible) and
// is to be left out; each one is noted as left out, the first named in Over, the others counted
// with it. The one refusal of runner phases: log lines, result lines, archives and the summary.
func (d *Decoder) Refused(p *api.PhaseSummary) bool {
	why := p.Implausible()
	if why == "" {
		return false
	}
	if d.refused == "" {
		d.refused = "phase(s) with numbers no engine reaches (the first: " + why + ")"
	}
	d.leave(d.refused, 1)
	return true
}

// errCut is the byte limit reached in the middle of a value.
var errCut = errors.New("byte limit reached")

// Decode reads one JSON value from r into v, keeping what fits the limits: the first items of a
// list, the start of a string, and of a value cut by the byte limit whatever was complete. It
// fails only when the JSON is not valid (or does not match v), or nothing fit.
func (d *Decoder) Decode(r io.Reader, v any) error {
	f := &filter{d: d, dec: json.NewDecoder(&squeezeReader{r: &capReader{r: r, left: d.Limits.Bytes}})}
	f.dec.UseNumber() // numbers are copied as written
	tok, err := f.dec.Token()
	if err == nil {
		err = f.value(tok, "", 0)
	}
	if errors.Is(err, errCut) && f.out.Len() > 0 {
		d.leave(fmt.Sprintf("value(s) cut at the %d MiB limit", d.Limits.Bytes>>20), 1)
		err = nil
	}
	if errors.Is(err, errCut) {
		return fmt.Errorf("over the %d MiB limit", d.Limits.Bytes>>20)
	}
	if err != nil {
		return err
	}
	return json.Unmarshal(f.out.Bytes(), v)
}

// capReader reads at most left bytes of r, then fails with errCut.
type capReader struct {
	r    io.Reader
	left int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, errCut
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// squeezeReader collapses each run of whitespace outside JSON strings to its first byte:
// encoding/json's Decoder scans pending whitespace again after every read, which takes minutes
// over megabytes of it arriving in small reads (a decompressing or network reader).
type squeezeReader struct {
	r                 io.Reader
	inString, escaped bool
	afterSpace        bool
}

func (s *squeezeReader) Read(p []byte) (int, error) {
	for {
		n, err := s.r.Read(p)
		w := 0
		for _, c := range p[:n] {
			space := false
			switch {
			case s.inString:
				switch {
				case s.escaped:
					s.escaped = false
				case c == '\\':
					s.escaped = true
				case c == '"':
					s.inString = false
				}
			case c == '"':
				s.inString = true
			case c == ' ' || c == '\t' || c == '\n' || c == '\r':
				space = true
			}
			if space && s.afterSpace {
				continue
			}
			s.afterSpace = space
			p[w] = c
			w++
		}
		if w > 0 || err != nil || n == 0 {
			return w, err
		}
	}
}

// filter copies one JSON value within the limits.
type filter struct {
	d   *Decoder
	dec *json.Decoder
	out bytes.Buffer
}

// value copies the value that tok starts; key is the object key it belongs to (a list's items
// belong to the list's key), depth its nesting.
func (f *filter) value(tok json.Token, key string, depth int) error {
	lim := &f.d.Limits
	switch t := tok.(type) {
	case json.Delim:
		if depth >= lim.Depth {
			f.d.leave(fmt.Sprintf("value(s) nested deeper than %d", lim.Depth), 1)
			f.out.WriteString("null")
			return f.skip(t)
		}
		if t == '{' {
			return f.object(depth + 1)
		}
		return f.array(key, depth+1)
	case string:
		n, kind := lim.String, "string(s)"
		switch key {
		case "text":
			n, kind = lim.Text, "text(s)"
		case "latencyHistogram":
			// An encoded histogram cut short is no histogram: over the limit it is left out whole.
			if len(t) > lim.Histogram {
				f.d.leave(fmt.Sprintf("latency histogram(s) over %d bytes", lim.Histogram), 1)
				t = ""
			}
			n = len(t)
		}
		f.str(f.cut(t, n, kind))
	case json.Number:
		f.out.WriteString(string(t))
	case bool:
		f.out.WriteString(strconv.FormatBool(t))
	case nil:
		f.out.WriteString("null")
	}
	return nil
}

func (f *filter) object(depth int) error {
	f.out.WriteByte('{')
	n := 0
	for f.dec.More() {
		kt, err := f.dec.Token()
		if err != nil {
			f.out.WriteByte('}')
			return err
		}
		k, _ := kt.(string)
		if f.d.Skip[k] {
			if err := f.dec.Decode(&discard{}); err != nil {
				f.out.WriteByte('}')
				return err
			}
			continue
		}
		vt, err := f.dec.Token()
		if err != nil {
			f.out.WriteByte('}')
			return err
		}
		if n >= f.d.Limits.Keys {
			f.d.leave(fmt.Sprintf("object key(s) over the limit of %d", f.d.Limits.Keys), 1)
			if err := f.skip(vt); err != nil {
				f.out.WriteByte('}')
				return err
			}
			continue
		}
		if n > 0 {
			f.out.WriteByte(',')
		}
		f.str(f.cut(k, f.d.Limits.String, "string(s)"))
		f.out.WriteByte(':')
		n++
		if err := f.value(vt, k, depth); err != nil {
			f.out.WriteByte('}')
			return err
		}
	}
	_, err := f.dec.Token() // '}'
	f.out.WriteByte('}')
	return err
}

func (f *filter) array(key string, depth int) error {
	limit := f.d.Limits.List(key)
	overList, overItems := 0, 0 // items left out by the list's bound, by the budget of all items
	defer func() {
		if overList > 0 {
			f.d.leave(fmt.Sprintf("%s item(s) over the limit of %d", key, limit), overList)
		}
		if overItems > 0 {
			f.d.leave(fmt.Sprintf("list item(s) over the limit of %d in all", f.d.Limits.Items), overItems)
		}
	}()
	f.out.WriteByte('[')
	n := 0
	for f.dec.More() {
		tok, err := f.dec.Token()
		if err != nil {
			f.out.WriteByte(']')
			return err
		}
		over := true
		switch {
		case n >= limit:
			overList++
		case key != "phases" && f.d.items >= f.d.Limits.Items:
			overItems++
		default:
			over = false
		}
		if over {
			if err := f.skip(tok); err != nil {
				f.out.WriteByte(']')
				return err
			}
			continue
		}
		if key != "phases" {
			f.d.items++
		}
		if n > 0 {
			f.out.WriteByte(',')
		}
		n++
		if err := f.value(tok, key, depth); err != nil {
			f.out.WriteByte(']')
			return err
		}
	}
	_, err := f.dec.Token() // ']'
	f.out.WriteByte(']')
	return err
}

// discard reads past a JSON value, keeping nothing.
type discard struct{}

func (*discard) UnmarshalJSON([]byte) error { return nil }

// skip reads past the value tok starts, keeping nothing.
func (f *filter) skip(tok json.Token) error {
	if d, ok := tok.(json.Delim); !ok || (d != '{' && d != '[') {
		return nil
	}
	for open := 1; open > 0; {
		tok, err := f.dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			open++
		case json.Delim('}'), json.Delim(']'):
			open--
		}
	}
	return nil
}

// cut shortens s to at most n bytes, on a character boundary.
func (f *filter) cut(s string, n int, kind string) string {
	if len(s) <= n {
		return s
	}
	f.d.leave(fmt.Sprintf("%s cut to %d bytes", kind, n), 1)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func (f *filter) str(s string) {
	b, _ := json.Marshal(s) // a Go string always marshals
	f.out.Write(b)
}
