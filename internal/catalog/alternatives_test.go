package catalog_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
)

// TestValidateArgsAlternatives checks arguments against the go-sdk
// conformance server's json_schema_2020_12_tool, whose schema asks for a
// phone or an email (anyOf) and, by an if/then/else, the one its
// contactMethod names: the error names the alternatives as such, not each
// as required, and says a problem two branches find once.
func TestValidateArgsAlternatives(t *testing.T) {
	t.Parallel()
	srv := config.Server{Name: "conformance", Transport: config.TransportStdio, Command: testpeer.ConformanceCommand(t),
		Enabled: true, LoadTools: true, TerminateOnClose: true, ConnectTimeout: 30 * time.Second, RequestTimeout: 30 * time.Second}
	_, cat := startCatalog(t, srv)
	tool := waitTool(t, cat, "conformance", "json_schema_2020_12_tool", 30*time.Second)
	if tool.Schema == nil {
		t.Fatalf("the schema did not compile: %s", tool.SchemaError)
	}
	either := fault.FieldDetail{Field: "(arguments)", Message: "needs one of phone or email, but has none of them", Suggestion: "provide phone or email"}
	for _, tc := range []struct {
		name string
		args map[string]any
		want []fault.FieldDetail
	}{
		{"none", map[string]any{}, []fault.FieldDetail{either,
			{Field: "email", Message: "required, but missing", Suggestion: "provide email"}}},
		{"phone named, not given", map[string]any{"contactMethod": "phone"}, []fault.FieldDetail{either,
			{Field: "phone", Message: "required, but missing", Suggestion: "provide phone"}}},
		{"email given", map[string]any{"email": "a@b.c"}, nil},
		{"a value of an alternative of the wrong type", map[string]any{"email": "a@b.c", "address": map[string]any{"city": 5}}, []fault.FieldDetail{
			{Field: "address.city", Message: "got number, want string", ReceivedValue: "5", Suggestion: "send a value of the expected type (got number, want string)"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tool.ValidateArgs(tc.args)
			var got []fault.FieldDetail
			if fe := fault.As(err); fe != nil {
				got = fe.Fields
			} else if err != nil {
				t.Fatalf("got %v, want a *fault.Error", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("details (-want +got):\n%s", diff)
			}
		})
	}
}

// TestValidateArgsAlternativesOfTypes checks an anyOf whose alternatives
// are more than a required field: the detail lists each alternative's
// problem, joined by "or", at the field they are about.
func TestValidateArgsAlternativesOfTypes(t *testing.T) {
	t.Parallel()
	tool := catalog.CompileTool("s", &mcp.Tool{Name: "t", InputSchema: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"limit": map[string]any{"anyOf": []any{
				map[string]any{"type": "integer", "minimum": 1},
				map[string]any{"type": "string", "enum": []any{"all"}},
			}},
		},
	}})
	if tool.Schema == nil {
		t.Fatalf("the schema did not compile: %s", tool.SchemaError)
	}
	fe := fault.As(tool.ValidateArgs(map[string]any{"limit": json.Number("0")}))
	if fe == nil {
		t.Fatal("limit 0: got no error, want one")
	}
	want := []fault.FieldDetail{{Field: "limit", ReceivedValue: "0",
		Message: "matches none of the allowed alternatives: minimum: got 0, want 1; or got number, want string"}}
	if diff := cmp.Diff(want, fe.Fields); diff != "" {
		t.Errorf("details (-want +got):\n%s", diff)
	}
}
