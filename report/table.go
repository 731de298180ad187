package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Table is a titled grid of cells, rendered as aligned text or as a GitHub markdown table.
type Table struct {
	Title   string
	Headers []string
	Rows    [][]string
	// Notes are printed under the table (units, where the numbers come from).
	Notes []string
}

// Empty is what a cell shows when there is no value (Pegasus tables leave such cells blank).
const Empty = "-"

func (t *Table) add(cells ...string) { t.Rows = append(t.Rows, cells) }

// numericColumn reports whether every filled cell of column c looks like a number (or there is
// none), so that the column is right-aligned.
func (t *Table) numericColumn(c int) bool {
	for _, row := range t.Rows {
		if c >= len(row) || row[c] == Empty || row[c] == "" {
			continue
		}
		s := strings.NewReplacer("~", "", "%", "", "+", "", "-", "", ".", "", ":", "").Replace(row[c])
		if _, err := strconv.ParseUint(s, 10, 64); err != nil {
			return false
		}
	}
	return true
}

// Text writes the table with columns padded to their widest cell and numbers right-aligned.
func (t *Table) Text(w io.Writer) {
	if t.Title != "" {
		fmt.Fprintln(w, t.Title)
	}
	widths := make([]int, len(t.Headers))
	right := make([]bool, len(t.Headers))
	for c, h := range t.Headers {
		widths[c] = utf8.RuneCountInString(h)
		right[c] = t.numericColumn(c)
		for _, row := range t.Rows {
			if c < len(row) {
				widths[c] = max(widths[c], utf8.RuneCountInString(row[c]))
			}
		}
	}
	line := func(cells []string) {
		var b strings.Builder
		for c := range t.Headers {
			cell := ""
			if c < len(cells) {
				cell = cells[c]
			}
			pad := strings.Repeat(" ", widths[c]-utf8.RuneCountInString(cell))
			if c > 0 {
				b.WriteString("  ")
			}
			if right[c] {
				b.WriteString(pad + cell)
			} else {
				b.WriteString(cell + pad)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	line(t.Headers)
	for _, row := range t.Rows {
		line(row)
	}
	for _, n := range t.Notes {
		fmt.Fprintln(w, "  "+n)
	}
}

// Markdown writes a GitHub markdown table, numeric columns right-aligned, the title as a heading.
func (t *Table) Markdown(w io.Writer) {
	if t.Title != "" {
		fmt.Fprintf(w, "#### %s\n\n", t.Title)
	}
	esc := strings.NewReplacer("|", `\|`, "\n", " ")
	line := func(cells []string) {
		var b strings.Builder
		b.WriteString("|")
		for c := range t.Headers {
			cell := ""
			if c < len(cells) {
				cell = cells[c]
			}
			b.WriteString(" " + esc.Replace(cell) + " |")
		}
		fmt.Fprintln(w, b.String())
	}
	line(t.Headers)
	sep := make([]string, len(t.Headers))
	for c := range sep {
		sep[c] = "---"
		if t.numericColumn(c) {
			sep[c] = "---:"
		}
	}
	fmt.Fprintln(w, "|"+strings.Join(sep, "|")+"|")
	for _, row := range t.Rows {
		line(row)
	}
	if len(t.Notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range t.Notes {
			fmt.Fprintln(w, n+"  ")
		}
	}
}

// ops formats a rate as an integer, as db_bench and the Pegasus tables do.
func ops(v float64) string { return strconv.FormatFloat(math.Round(v), 'f', 0, 64) }

// micros formats a latency with about three significant digits (in-memory engines answer in
// a microsecond, disks in milliseconds).
func micros(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

// seconds formats a duration in seconds with three significant digits, like seed 002's "12.8~16".
func seconds(v float64) string {
	if v == 0 {
		return "0"
	}
	digits := 3 - int(math.Floor(math.Log10(math.Abs(v)))) - 1
	if digits < 0 {
		digits = 0
	}
	s := strconv.FormatFloat(v, 'f', digits, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// change is the relative change from a to b in percent, signed.
func change(a, b float64) string {
	if a == 0 {
		return Empty
	}
	return fmt.Sprintf("%+.1f%%", (b-a)/a*100)
}
