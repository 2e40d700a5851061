package notebook_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"

	"github.com/switchboard-mcp/switchboard/internal/notebook"
)

// TestOutputInvalidResult: a result whose structuredContent fails the
// tool's output schema is written like any result, its marker says
// status=output_invalid, and the report carries the mismatch; the block
// does not count as failed (it has its result).
func TestOutputInvalidResult(t *testing.T) {
	caller := &fakeCaller{call: func(context.Context, toolcall.Request) (*toolcall.Result, error) {
		r := textResult("mode wrong_type")
		r.Status = toolcall.StatusOutputInvalid
		r.StructuredContent = map[string]any{"temp": "warm"}
		r.OutputError = &toolcall.OutputError{Message: "the result of alpha/weather does not match the tool's output schema",
			Fields: []fault.FieldDetail{{Field: "temp", Message: "got string, want number"}}}
		return r, nil
	}}
	p := writeDoc(t, "# Doc\n\n```alpha\ntool: weather\n```\n")
	rep, err := notebook.Run(context.Background(), p, notebook.Options{Config: testConfig(okServers(t, "alpha")...), Caller: caller})
	if err != nil {
		t.Fatal(err)
	}
	text := readDoc(t, p)
	if !strings.Contains(text, "status=output_invalid -->") || !strings.Contains(text, "mode wrong_type") {
		t.Errorf("document: got\n%s\nwant the result written with status=output_invalid", text)
	}
	if rep.Failed != 0 || len(rep.Blocks) != 1 || rep.Blocks[0].Status != "output_invalid" {
		t.Fatalf("report: got %d failed, blocks %+v", rep.Failed, rep.Blocks)
	}
	if e := rep.Blocks[0].Error; e == nil || e.Kind != toolcall.ErrorKindOutputInvalid || len(e.Fields) != 1 || e.Fields[0].Field != "temp" {
		t.Errorf("the block's error: got %+v, want the mismatch at temp", e)
	}
}
