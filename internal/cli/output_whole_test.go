package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/creack/pty"
)

// TestNarrowTableKeepsNamesWhole: on a 60-column terminal the resources,
// prompts and tools tables keep the names a person passes to read, prompt
// and call whole and cut the free text beside them. The fitter cut the
// widest column whatever it was: every URI became "demo://resour…", a
// prompt "completable-p…".
func TestNarrowTableKeepsNamesWhole(t *testing.T) {
	t.Parallel()
	a := &app{termWidth: func(io.Writer) (int, bool) { return 60, true }}
	for _, tc := range []struct {
		name   string
		table  func(w io.Writer) *table
		row    []string
		whole  []string
		cutEnd string // the end of the cut row
	}{
		{
			name: "resources",
			table: func(w io.Writer) *table {
				return a.newTableTo(w, "SERVER", "URI", "MIME TYPE", "NAME").keepWhole(0, 1, 2)
			},
			row:    []string{"everything", "demo://resource/static/document/architecture.md", "text/markdown", "architecture.md"},
			whole:  []string{"everything", "demo://resource/static/document/architecture.md", "text/markdown"},
			cutEnd: "architectur…", // the whole columns alone are wider than 60: the last is cut, the terminal wraps
		},
		{
			name: "prompts",
			table: func(w io.Writer) *table {
				return a.newTableTo(w, "SERVER", "PROMPT", "ARGUMENTS", "DESCRIPTION").keepWhole(0, 1, 2)
			},
			row:    []string{"everything", "completable-prompt", "department*,name*", "First argument choice narrows values for second argument."},
			whole:  []string{"everything", "completable-prompt", "department*,name*"},
			cutEnd: "…",
		},
		{
			name:   "tools",
			table:  func(w io.Writer) *table { return a.newTableTo(w, "SERVER", "TOOL", "DESCRIPTION").keepWhole(0, 1) },
			row:    []string{"everything", "trigger-long-running-operation", "Demonstrates a long running operation with progress updates."},
			whole:  []string{"everything", "trigger-long-running-operation"},
			cutEnd: "…",
		},
	} {
		var out bytes.Buffer
		tb := tc.table(&out)
		tb.row(tc.row...)
		if err := tb.flush(); err != nil {
			t.Fatal(err)
		}
		row := strings.Split(out.String(), "\n")[1]
		for _, whole := range tc.whole {
			if !strings.Contains(row, whole) {
				t.Errorf("%s on a 60-column terminal: got %q, want %q whole", tc.name, row, whole)
			}
		}
		if !strings.HasSuffix(row, tc.cutEnd) {
			t.Errorf("%s on a 60-column terminal: got %q, want it to end in %q", tc.name, row, tc.cutEnd)
		}
		// The columns it could cut make it fit, unless the whole ones and
		// the cut one at its narrowest do not.
		floor := 2*(len(tc.row)-1) + minColumn
		for _, w := range tc.whole {
			floor += len([]rune(w))
		}
		if n := len([]rune(row)); n > 60 && floor <= 60 {
			t.Errorf("%s on a 60-column terminal: got a row of %d runes, want at most 60: %q", tc.name, n, row)
		}
	}
}

// TestNarrowTerminalListsKeepNamesWhole runs resources and prompts against
// server-everything with a 60-column pseudo-terminal as stdout, in this
// process: each URI, prompt name and prompt argument comes out whole, so
// that it can be copied into read or prompt, and each MIME type.
func TestNarrowTerminalListsKeepNamesWhole(t *testing.T) {
	t.Parallel()
	everything := everythingURL(t)
	state := t.TempDir()
	for _, tc := range []struct {
		command string
		whole   []string
	}{
		// A resource's MIME type and a prompt's arguments stay whole too; the
		// resource's name and the prompt's description give way.
		{"resources", []string{"demo://resource/static/document/architecture.md", "demo://resource/dynamic/text/{resourceId}", "text/markdown"}},
		{"prompts", []string{"completable-prompt", "resource-prompt", "department*,name*"}},
	} {
		ptmx, tty, err := pty.Open()
		if err != nil {
			t.Fatalf("opening a pseudo-terminal: %v", err)
		}
		if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 50, Cols: 60}); err != nil {
			t.Fatal(err)
		}
		var out syncBuffer
		var read sync.WaitGroup
		read.Go(func() { _, _ = io.Copy(&out, ptmx) })
		var errb bytes.Buffer
		code := run(context.Background(), invocation{args: []string{tc.command, "--url", everything, "--state-dir", state},
			stdin: os.Stdin, stdout: tty, stderr: &errb, env: envOf(t)})
		tty.Close() // the reader gets EOF (EIO) once the output is read
		read.Wait()
		ptmx.Close()
		if code != ExitOK {
			t.Fatalf("%s: exit code %d: %s", tc.command, code, errb.String())
		}
		// The terminal turns each \n into \r\n.
		shown := strings.ReplaceAll(out.String(), "\r\n", "\n")
		for _, whole := range tc.whole {
			if !strings.Contains(shown, whole+" ") {
				t.Errorf("%s on a 60-column terminal: got\n%s\nwant %q whole", tc.command, shown, whole)
			}
		}
		if !strings.Contains(shown, "…") {
			t.Errorf("%s on a 60-column terminal: got\n%s\nwant the free text cut to fit", tc.command, shown)
		}
	}
}
