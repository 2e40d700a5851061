package cli

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// TestTableTooWideToFitKeepsItsColumns: a table that cannot fit the
// terminal even with every column cut (history's eight columns on 60)
// keeps its times, ids and names whole and cuts only its last, free-text
// column; cutting the others made the rows no narrower than the terminal
// wraps them, and left "2026-11-27 …" for a time.
func TestTableTooWideToFitKeepsItsColumns(t *testing.T) {
	t.Parallel()
	a := &app{termWidth: func(io.Writer) (int, bool) { return 60, true }}
	var out bytes.Buffer
	tb := a.newTableTo(&out, "STARTED", "ID", "SOURCE", "SERVER", "TOOL", "STATUS", "DURATION", "NOTE")
	tb.row("2026-11-27 04:08:49", "5c15a821", "document", "fs", "read_text_file", "error", "102ms", "tool_error: ENOENT: no such file or directory, open '/tmp/notes.txt'")
	if err := tb.flush(); err != nil {
		t.Fatal(err)
	}
	row := strings.Split(out.String(), "\n")[1]
	for _, whole := range []string{"2026-11-27 04:08:49", "5c15a821", "document", "read_text_file", "102ms"} {
		if !strings.Contains(row, whole) {
			t.Errorf("row on a 60-column terminal: got %q, want %q whole", row, whole)
		}
	}
	if !strings.HasSuffix(row, "tool_error:…") {
		t.Errorf("row on a 60-column terminal: got %q, want the note cut to %d runes", row, minColumn)
	}
}
