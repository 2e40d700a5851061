package daemon

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// TestGatewayPassesOutputInvalidResultsUnchanged: a tool whose result does
// not match its outputSchema reaches a gateway client exactly as the
// server sent it — the same result a direct client gets — on the lean
// path and the SDK's; the history records it as output_invalid with the
// path of the mismatch, and a matching result as success. The client
// sees the tool's outputSchema in tools/list.
func TestGatewayPassesOutputInvalidResultsUnchanged(t *testing.T) {
	t.Parallel()
	url := testserver.Weather(t)
	ctx := context.Background()
	direct, err := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	want := map[string]*mcp.CallToolResult{}
	for _, mode := range []string{"valid", "wrong_type"} {
		if want[mode], err = direct.CallTool(ctx, &mcp.CallToolParams{Name: "weather", Arguments: map[string]any{"mode": mode}}); err != nil {
			t.Fatal(err)
		}
	}

	for _, fast := range []bool{true, false} {
		cfg := testConfig(httpUpstream("wx", url))
		cfg.Gateway.DisableFastPath = !fast
		r := start(t, cfg)
		cs := r.connect(t, "/mcp", nil, nil)
		waitTools(t, cs, "wx__weather", func(names []string) bool { return slices.Contains(names, "wx__weather") })
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if i := slices.IndexFunc(tools.Tools, func(tl *mcp.Tool) bool { return tl.Name == "wx__weather" }); i < 0 || tools.Tools[i].OutputSchema == nil {
			t.Errorf("fast_path %v: tools/list lost the tool's outputSchema", fast)
		}
		for _, mode := range []string{"valid", "wrong_type"} {
			got, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wx__weather", Arguments: map[string]any{"mode": mode}})
			if err != nil {
				t.Fatalf("fast_path %v, %s: %v", fast, mode, err)
			}
			got.Meta = nil // the gateway's hop adds none here, but _meta is no part of this check
			w := *want[mode]
			w.Meta = nil
			if !reflect.DeepEqual(got, &w) {
				a, _ := json.Marshal(got)
				b, _ := json.Marshal(&w)
				t.Errorf("fast_path %v, %s: through the gateway %s, directly %s", fast, mode, a, b)
			}
		}
		recs := r.waitRecords(t, store.CallFilter{Tool: "weather"}, func(recs []store.CallRecord) bool { return len(recs) == 2 })
		// Newest first: wrong_type, then valid.
		if recs[0].Status != "output_invalid" || recs[0].ErrorKind != "output_invalid" ||
			!strings.Contains(recs[0].ErrorMessage, "the result of wx/weather does not match the tool's output schema; temp: got string, want number") {
			t.Errorf("fast_path %v: the mismatching call's record: %+v", fast, recs[0])
		}
		if recs[1].Status != "success" || recs[1].ErrorKind != "" {
			t.Errorf("fast_path %v: the matching call's record: %+v", fast, recs[1])
		}
	}
}
