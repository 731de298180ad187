package metrics

import (
	"bufio"
	"compress/gzip"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
)

// family is what the text format says of a descriptor (prometheus.Desc keeps it unexported).
type family struct {
	name, help string
	labels     []string
	// order lists the labels' positions by label name: the order client_golang writes them in.
	order []int
}

// families holds the family of every descriptor newDesc made.
var families = map[*prometheus.Desc]family{}

func newDesc(name, help string, labels []string, constLabels prometheus.Labels) *prometheus.Desc {
	d := prometheus.NewDesc(name, help, labels, constLabels)
	order := make([]int, len(labels))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(labels[a], labels[b]) })
	families[d] = family{name: name, help: help, labels: labels, order: order}
	return d
}

// ContentType is the media type WriteText writes: Prometheus' text format, version 0.0.4.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// WriteText writes every series in Prometheus' text format, family after family, straight from
// the compact samples. Collect (and so a registry's Gather) builds every series as a metric before
// a byte is written: with a thousand finished benchmarks (about 280,000 series) that was 175 MB
// per scrape, more than the operator's memory limit. Here, the memory a scrape takes is a
// line. The benchmarks are written as they were when the scrape began (series sets are replaced
// whole, never changed), so a slow scraper never holds up Set.
func (c *Collector) WriteText(w io.Writer) error {
	c.mu.RLock()
	keys := make([]types.NamespacedName, 0, len(c.series))
	for k := range c.series {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b types.NamespacedName) int { return strings.Compare(a.String(), b.String()) })
	var sets []*seriesSet
	for _, k := range keys {
		ms := c.series[k]
		sets = append(sets, &ms.own)
		for i := range ms.runs {
			sets = append(sets, &ms.runs[i])
		}
	}
	c.mu.RUnlock()
	bw := bufio.NewWriterSize(w, 32<<10)
	var line []byte
	for i, d := range descs {
		f, header := families[d], false
		for _, set := range sets {
			for _, g := range set.groups {
				for _, s := range g.samples {
					if int(s.desc) != i {
						continue
					}
					if !header {
						line = append(append(append(line[:0], "# HELP "...), f.name...), ' ')
						line = append(escape(line, f.help, false), "\n# TYPE "...)
						line = append(append(line, f.name...), " gauge\n"...)
						header = true
					} else {
						line = line[:0]
					}
					line = appendSample(line, f, g.labels, set.strings, s)
					if _, err := bw.Write(line); err != nil {
						return err
					}
				}
			}
		}
	}
	return bw.Flush()
}

// appendSample appends one series' line: name{label="value",...} value, labels by name.
func appendSample(line []byte, f family, labels, strs []string, s sample) []byte {
	var values [16]string
	n := copy(values[:], labels)
	for _, e := range s.extra {
		if e != 0 {
			values[n] = strs[e-1]
			n++
		}
	}
	line = append(append(line, f.name...), '{')
	for i, at := range f.order {
		if i > 0 {
			line = append(line, ',')
		}
		line = append(append(line, f.labels[at]...), `="`...)
		line = append(escape(line, values[at], true), '"')
	}
	line = append(line, "} "...)
	switch {
	case math.IsInf(s.value, 1):
		line = append(line, "+Inf"...)
	case math.IsInf(s.value, -1):
		line = append(line, "-Inf"...)
	case math.IsNaN(s.value):
		line = append(line, "NaN"...)
	default:
		line = strconv.AppendFloat(line, s.value, 'g', -1, 64)
	}
	return append(line, '\n')
}

// escape appends s escaped as the text format wants: backslash and newline, and in label values
// the double quote.
func escape(b []byte, s string, quote bool) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b = append(b, `\\`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '"' && quote:
			b = append(b, `\"`...)
		default:
			b = append(b, c)
		}
	}
	return b
}

// ServeHTTP serves WriteText, gzipped when the scraper accepts it (Prometheus does).
func (c *Collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", ContentType)
	var out io.Writer = w
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		w.Header().Set("Content-Encoding", "gzip")
		gz := gzip.NewWriter(w)
		defer gz.Close()
		out = gz
	}
	// An error here is the scraper gone: nothing to tell it.
	_ = c.WriteText(out)
}

func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		if enc, _, _ := strings.Cut(strings.TrimSpace(part), ";"); enc == "gzip" {
			return true
		}
	}
	return false
}
