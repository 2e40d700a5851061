package notebook_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/notebook"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
)

// TestRunReportsLinesOfTheWrittenDocument: after a run writes its results,
// each block's Line and EndLine in the report are the block's lines in the
// document as written — those Inspect reads there — whether the results
// added lines (a first run) or took some away (a shorter result replacing
// a longer one).
func TestRunReportsLinesOfTheWrittenDocument(t *testing.T) {
	t.Parallel()
	cfg := testConfig(okServers(t, "alpha")...)
	p := writeDoc(t, twoBlocks)
	reply := func(text string) notebook.Caller {
		return &fakeCaller{call: func(context.Context, toolcall.Request) (*toolcall.Result, error) { return textResult(text), nil }}
	}
	for _, step := range []struct{ name, result string }{
		{"first run (results added)", "one\ntwo\nthree\nfour\nfive"},
		{"second run (longer results replaced by shorter ones)", "x"},
		{"third run (unchanged)", "x"},
	} {
		rep, err := notebook.Run(context.Background(), p, notebook.Options{Config: cfg, Caller: reply(step.result)})
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		in, err := notebook.Inspect(p, cfg)
		if err != nil {
			t.Fatalf("%s: Inspect: %v", step.name, err)
		}
		if len(rep.Blocks) != len(in.Blocks) {
			t.Fatalf("%s: Run reported %d blocks, Inspect %d", step.name, len(rep.Blocks), len(in.Blocks))
		}
		lines := strings.Split(readDoc(t, p), "\n")
		for i, b := range rep.Blocks {
			if b.Line != in.Blocks[i].Line || b.EndLine != in.Blocks[i].EndLine {
				t.Errorf("%s: block %d: Run reported lines %d-%d, the document as written has it at %d-%d\n%s", step.name, i+1, b.Line, b.EndLine, in.Blocks[i].Line, in.Blocks[i].EndLine, readDoc(t, p))
			}
			if b.Line < 1 || b.Line > len(lines) || !strings.HasPrefix(lines[b.Line-1], "```alpha") {
				t.Errorf("%s: block %d: line %d of the written document is not its fence\n%s", step.name, i+1, b.Line, readDoc(t, p))
			}
		}
	}
}
