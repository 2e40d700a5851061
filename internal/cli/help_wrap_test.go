package cli

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestHelpWrapsFlagsToTheTerminal: on a 60-column terminal a command's
// --help wraps each flag's description under its column, as kubectl and gh
// do, instead of lines of 150 characters that the terminal breaks
// anywhere; piped, the help is as cobra writes it.
func TestHelpWrapsFlagsToTheTerminal(t *testing.T) {
	t.Parallel()
	help := func(width int, terminal bool) string {
		t.Helper()
		var out bytes.Buffer
		a := &app{stdout: &out, stderr: io.Discard, termWidth: func(io.Writer) (int, bool) { return width, terminal }}
		root := newRoot(a)
		root.SetOut(&out)
		root.SetErr(io.Discard)
		root.SetArgs([]string{"history", "--help"})
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	piped, narrow := help(0, false), help(60, true)
	if !strings.Contains(piped, "only calls started within this duration (90m, 2h, 7d) or since this date") {
		t.Fatalf("piped help: a flag's description is not on one line:\n%s", piped)
	}
	_, flags, _ := strings.Cut(narrow, "Flags:\n")
	for _, line := range strings.Split(flags, "\n") {
		if n := utf8.RuneCountInString(line); n > 60 && strings.HasPrefix(line, " ") { // a flag's line
			t.Errorf("60 columns: line %q is %d wide", line, n)
		}
	}
	if !strings.Contains(narrow, "      --since duration   only calls started within this\n                         duration") {
		t.Errorf("60 columns: want --since's description wrapped under its column:\n%s", narrow)
	}
	if strings.Join(strings.Fields(narrow), " ") != strings.Join(strings.Fields(piped), " ") {
		t.Errorf("60 columns: the words differ from the piped help's")
	}
}
