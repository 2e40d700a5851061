// Internal on purpose: tests compileTool's output-schema compilation without a server round-trip.

package catalog

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

func TestValidateOutput(t *testing.T) {
	weather := compileTool("wx", &mcp.Tool{Name: "weather", InputSchema: map[string]any{"type": "object"},
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"temp":{"type":"number"},"city":{"type":"string"},
			"tags":{"type":"array","items":{"type":"string"}}},"required":["temp","city"]}`)})
	if weather.OutputSchema == nil {
		t.Fatalf("the output schema did not compile: %s", weather.OutputSchemaError)
	}
	plain := compileTool("wx", &mcp.Tool{Name: "plain", InputSchema: map[string]any{"type": "object"}})
	broken := compileTool("wx", &mcp.Tool{Name: "broken", InputSchema: map[string]any{"type": "object"},
		OutputSchema: map[string]any{"type": "array"}})
	if broken.OutputSchema != nil || !strings.Contains(broken.OutputSchemaError, `output schema type is array, want "object"`) {
		t.Errorf("a non-object output schema: got %v %q, want it refused", broken.OutputSchema, broken.OutputSchemaError)
	}
	decoded := func(s string) any {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		name       string
		tool       Tool
		structured any
		isError    bool
		want       []string // "field: message" of each detail; nil means valid
	}{
		{"valid (float64 numbers)", weather, decoded(`{"temp":21.5,"city":"Oslo","tags":["rain"]}`), false, nil},
		{"valid (raw JSON)", weather, json.RawMessage(`{"temp":3,"city":"Bergen"}`), false, nil},
		{"valid (Go values)", weather, map[string]any{"temp": 3, "city": "Bergen"}, false, nil},
		{"wrong type", weather, decoded(`{"temp":"warm","city":"Oslo"}`), false, []string{"temp: got string, want number"}},
		{"nested", weather, decoded(`{"temp":1,"city":"Oslo","tags":["a",2]}`), false, []string{"tags.1: got number, want string"}},
		{"missing field", weather, decoded(`{"temp":1}`), false, []string{"city: required by the output schema, but missing"}},
		{"not an object", weather, decoded(`[1]`), false, []string{"(structuredContent): got array, want object"}},
		{"missing structuredContent", weather, nil, false, []string{"(structuredContent): missing: the tool declares an output schema"}},
		{"an error result is not checked", weather, nil, true, nil},
		{"no output schema", plain, nil, false, nil},
		{"a schema that did not compile", broken, decoded(`{"x":1}`), false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.tool.ValidateOutput(tc.structured, tc.isError)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("got %v, want valid", err)
				}
				return
			}
			fe := fault.As(err)
			if fe == nil || fe.Kind != fault.Validation || !strings.Contains(fe.Message, "wx/"+tc.tool.Def.Name+" does not match the tool's output schema") {
				t.Fatalf("got %v, want a validation error naming wx/%s", err, tc.tool.Def.Name)
			}
			if len(fe.Fields) != len(tc.want) {
				t.Fatalf("got details %+v, want %q", fe.Fields, tc.want)
			}
			for i, w := range tc.want {
				if got := fe.Fields[i].Field + ": " + fe.Fields[i].Message; !strings.HasPrefix(got, w) {
					t.Errorf("detail %d: got %q, want %q", i, got, w)
				}
			}
		})
	}
}
