package cli

import (
	stdjson "encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/goccy/go-yaml"
	"golang.org/x/term"
)

// Output formats of --output.
const (
	outputTable = "table"
	outputJSON  = "json"
	outputYAML  = "yaml"
)

// outputFormats are the values --output takes.
var outputFormats = []string{outputTable, outputJSON, outputYAML}

// printJSON writes v to stdout for a script: indented JSON, or YAML with
// --output yaml. Lists are bare arrays and single things one object
// (docs/cli.md#output-for-scripts); a nil list prints as [], never null.
func (a *app) printJSON(v any) error { return a.printJSONTo(a.stdout, v) }

// printJSONTo is printJSON to w.
func (a *app) printJSONTo(w io.Writer, v any) error {
	if a.output != outputYAML {
		return writeJSON(w, v, true)
	}
	data, err := marshalJSON(v, false)
	if err != nil {
		return err
	}
	y, err := jsonToYAML(data)
	if err != nil {
		return fmt.Errorf("converting the output to YAML: %w", err)
	}
	_, err = w.Write(y)
	return err
}

// printStreamed writes one of a stream of values to stdout (audit
// --follow, task get --watch), each as soon as it comes: one JSON object a
// line, or with --output yaml one YAML document each, after "---".
func (a *app) printStreamed(v any) error {
	if a.output != outputYAML {
		return writeJSON(a.stdout, v, false)
	}
	if _, err := io.WriteString(a.stdout, "---\n"); err != nil {
		return err
	}
	return a.printJSON(v)
}

// jsonToYAML converts JSON to YAML, keeping the order of object keys.
// Text of several lines (a resource, a result) is a literal block, to be
// read as it is rather than as one line of \n escapes. Strings holding
// control characters (a schema's "^[^\u0000]*$") are written
// double-quoted with escapes: YAML does not allow them raw.
func jsonToYAML(data []byte) ([]byte, error) {
	var v any
	if err := yaml.UnmarshalWithOptions(data, &v, yaml.UseOrderedMap()); err != nil {
		return nil, err
	}
	return yaml.MarshalWithOptions(escapeControl(v), yaml.UseLiteralStyleIfMultiline(true))
}

// escapeControl replaces, within v, each string the YAML encoder would
// not write so that it reads back the same — control characters, which
// YAML does not allow raw; a literal block whose first line starts with
// blanks; a tab alone, a trailing blank, "? :" — by one that marshals as
// a double-quoted, escaped YAML string.
func escapeControl(v any) any {
	switch v := v.(type) {
	case string:
		if !yamlRoundTrips(v) {
			return quotedString(v)
		}
	case []any:
		for i := range v {
			v[i] = escapeControl(v[i])
		}
	case yaml.MapSlice:
		for i := range v {
			v[i].Value = escapeControl(v[i].Value)
		}
	}
	return v
}

// yamlRoundTrips reports whether s, written by the encoder as jsonToYAML
// writes it — as a value of a mapping with a key after it, and as an item
// of a list — reads back as s.
func yamlRoundTrips(s string) bool {
	if strings.IndexFunc(s, func(r rune) bool { return (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f }) >= 0 {
		return false
	}
	doc := yaml.MapSlice{{Key: "s", Value: s}, {Key: "l", Value: []any{s}}, {Key: "e", Value: "end"}}
	out, err := yaml.MarshalWithOptions(doc, yaml.UseLiteralStyleIfMultiline(true))
	if err != nil {
		return false
	}
	var back struct {
		S *string  `yaml:"s"`
		L []string `yaml:"l"`
		E string   `yaml:"e"`
	}
	return yaml.Unmarshal(out, &back) == nil && back.S != nil && *back.S == s && len(back.L) == 1 && back.L[0] == s && back.E == "end"
}

// quotedString marshals as a double-quoted YAML string. Go's escapes
// (\x00, \a, \u2028, ...) are YAML's too.
type quotedString string

// MarshalYAML implements yaml.BytesMarshaler.
func (s quotedString) MarshalYAML() ([]byte, error) { return []byte(strconv.Quote(string(s))), nil }

// writeJSON writes v to w as JSON and a newline, indented or on one line.
func writeJSON(w io.Writer, v any, indent bool) error {
	data, err := marshalJSON(v, indent)
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// marshalJSON encodes v with encoding/json's rules (field names, tags,
// methods, map order), except that a nil slice is [] rather than null and
// HTML characters are not escaped.
func marshalJSON(v any, indent bool) ([]byte, error) {
	opts := []json.Options{jsonv1.DefaultOptionsV1(), json.FormatNilSliceAsNull(false), jsontext.EscapeForHTML(false), json.WithMarshalers(stdNumber)}
	if indent {
		opts = append(opts, jsontext.WithIndent("  "))
	}
	data, err := json.Marshal(v, opts...)
	if err != nil {
		return nil, fmt.Errorf("encoding the output as JSON: %w", err)
	}
	return data, nil
}

// stdNumber writes an encoding/json Number as the number it holds: the
// arguments key=value text is coerced to (a hook's "3" for an integer
// parameter) are such numbers, which go-json-experiment would otherwise
// write as the string "3", unlike what is sent. One that is not a valid
// number stays a string.
var stdNumber = json.MarshalFunc(func(n stdjson.Number) ([]byte, error) {
	if v := jsontext.Value(n); v.IsValid() && v.Kind() == '0' {
		return []byte(n), nil
	}
	return json.Marshal(string(n))
})

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// terminalWidth returns the width of w when it is a terminal.
func terminalWidth(w io.Writer) (int, bool) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return 0, false
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil || width <= 0 {
		return 0, false
	}
	return width, true
}

// widthOf is the width of the terminal w writes to (a.termWidth in
// tests); false when w is not a terminal.
func (a *app) widthOf(w io.Writer) (int, bool) {
	if a.termWidth != nil {
		return a.termWidth(w)
	}
	return terminalWidth(w)
}

// table prints rows in aligned columns, two spaces apart. On a terminal
// narrower than the table, the widest column is cut to fit, each cut cell
// ending in "…"; piped output is never cut.
type table struct {
	w     io.Writer
	width func(io.Writer) (int, bool)
	rows  [][]string
	whole []int // the columns never cut (see keepWhole)
	wrap  bool  // wrap the last column rather than cut it (see wrapLast)
}

// wrapLast makes a table that does not fit narrow only its last column,
// and wrap that column's cells onto more lines, under it, rather than cut
// them: for text a person needs whole, such as a parameter's allowed
// values and bounds.
func (t *table) wrapLast() *table {
	t.wrap = true
	return t
}

// keepWhole marks columns that are never cut to fit: the names and ids a
// person passes to another command (a tool, a resource's URI, a call's
// id). When the others cannot make the table fit, the terminal wraps it.
func (t *table) keepWhole(cols ...int) *table {
	t.whole = append(t.whole, cols...)
	return t
}

// newTable starts a table with a header row.
func (a *app) newTable(header ...string) *table {
	return a.newTableTo(a.stdout, header...)
}

// newTableTo starts a table on w; header may be empty.
func (a *app) newTableTo(w io.Writer, header ...string) *table {
	t := &table{w: w, width: a.widthOf}
	if len(header) > 0 {
		t.rows = append(t.rows, header)
	}
	return t
}

// row adds a row of cells; a cell's line breaks become spaces.
func (t *table) row(cells ...string) {
	for i, c := range cells {
		if strings.ContainsAny(c, "\r\n\t") {
			cells[i] = strings.Join(strings.Fields(c), " ")
		}
	}
	t.rows = append(t.rows, cells)
}

// minColumn is the narrowest a cut column gets.
const minColumn = 12

// flush writes the table.
func (t *table) flush() error {
	widths := columnWidths(t.rows)
	if limit, ok := t.width(t.w); ok {
		whole := t.whole
		if t.wrap && len(widths) > 0 {
			// Only the wrapped column gives way.
			whole = make([]int, len(widths)-1)
			for i := range whole {
				whole[i] = i
			}
		}
		fitColumns(widths, limit, whole)
	}
	var b strings.Builder
	for _, r := range t.rows {
		line, indent := "", 0
		for i, c := range r {
			if i == len(r)-1 {
				if t.wrap && i == len(widths)-1 {
					lines := wrapText(c, widths[i])
					line += strings.Join(lines, "\n"+strings.Repeat(" ", indent))
				} else {
					line += cut(c, widths[i])
				}
				break
			}
			c = cut(c, widths[i])
			line += c + strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+2)
			indent += widths[i] + 2
		}
		b.WriteString(strings.TrimRight(line, " "))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(t.w, b.String())
	return err
}

// columnWidths returns the widest cell of each column, in runes.
func columnWidths(rows [][]string) []int {
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	return widths
}

// fitColumns narrows the widest column not in whole, one rune at a
// time, until the columns and the gaps between them fit in limit. When
// not even every such column at minColumn would fit, the terminal wraps
// the rows whatever is cut, so only the last column (the free text: a
// note, a description, a path) is cut, to minColumn, and the others
// (times, ids, names) stay whole.
func fitColumns(widths []int, limit int, whole []int) {
	total := func() int {
		n := 2 * max(len(widths)-1, 0)
		for _, w := range widths {
			n += w
		}
		return n
	}
	floor := 2 * max(len(widths)-1, 0)
	for i, w := range widths {
		if slices.Contains(whole, i) {
			floor += w
		} else {
			floor += min(w, minColumn)
		}
	}
	if floor > limit && len(widths) > 0 {
		if last := len(widths) - 1; !slices.Contains(whole, last) {
			widths[last] = min(widths[last], max(minColumn, limit-(total()-widths[last])))
		}
		return
	}
	for total() > limit {
		widest := -1
		for i, w := range widths {
			if !slices.Contains(whole, i) && (widest < 0 || w > widths[widest]) {
				widest = i
			}
		}
		if widest < 0 || widths[widest] <= minColumn {
			return
		}
		widths[widest]--
	}
}

// wrapText breaks s into lines of at most n runes, at spaces where it
// can (a word longer than n is split).
func wrapText(s string, n int) []string {
	n = max(n, 1)
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		for utf8.RuneCountInString(word) > n {
			if line != "" {
				lines, line = append(lines, line), ""
			}
			r := []rune(word)
			lines, word = append(lines, string(r[:n])), string(r[n:])
		}
		switch {
		case line == "":
			line = word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= n:
			line += " " + word
		default:
			lines, line = append(lines, line), word
		}
	}
	return append(lines, line)
}

// cut shortens s to n runes, ending in "…" when it was longer.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
