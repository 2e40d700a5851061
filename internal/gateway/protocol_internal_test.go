package gateway

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAsServerVersion: what a prefix: never view's SDK session is given
// of a client's initialize and server/discover, for the version its
// server negotiated upstream (asServerVersion).
func TestAsServerVersion(t *testing.T) {
	initialize := func(v string) mcp.Request {
		return &mcp.ServerRequest[*mcp.InitializeParams]{Params: &mcp.InitializeParams{ProtocolVersion: v, ClientInfo: &mcp.Implementation{Name: "c"}}}
	}
	discover := func(v string) mcp.Request {
		return &mcp.ServerRequest[*mcp.DiscoverParams]{Params: &mcp.DiscoverParams{Meta: mcp.Meta{mcp.MetaKeyProtocolVersion: v}}}
	}
	for _, c := range []struct {
		name, method string
		req          mcp.Request
		upstream     string
		stateless    bool
		want         string // the version the SDK is asked, or the error's data
	}{
		{"initialize of a newer version", "initialize", initialize("2025-11-25"), "2025-06-18", false, "2025-06-18"},
		{"initialize of the server's version", "initialize", initialize("2025-11-25"), "2025-11-25", false, "2025-11-25"},
		{"initialize of an older version", "initialize", initialize("2025-03-26"), "2025-11-25", false, "2025-03-26"},
		{"initialize, the server not connected", "initialize", initialize("2025-11-25"), "", false, "2025-11-25"},
		{"initialize, a version the SDK does not know upstream", "initialize", initialize("2025-11-25"), "2099-01-01", false, "2025-11-25"},
		{"discover of a version the server lacks", "server/discover", discover("2026-07-28"), "2025-11-25", false,
			`{"supported":["2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"requested":"2026-07-28"}`},
		{"discover, the server on 2026-07-28", "server/discover", discover("2026-07-28"), "2026-07-28", false, "2026-07-28"},
		{"discover on a stateless gateway", "server/discover", discover("2026-07-28"), "2025-11-25", true, "2026-07-28"},
		{"discover, the server not connected", "server/discover", discover("2026-07-28"), "", false, "2026-07-28"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := asServerVersion(c.method, c.req, c.upstream, c.stateless)
			var rpc *jsonrpc.Error
			switch {
			case errors.As(err, &rpc):
				if rpc.Code != mcp.CodeUnsupportedProtocolVersion || string(rpc.Data) != c.want {
					t.Errorf("refused with %d %s, want -32022 with %s", rpc.Code, rpc.Data, c.want)
				}
			case err != nil:
				t.Fatal(err)
			default:
				var v string
				switch p := got.GetParams().(type) {
				case *mcp.InitializeParams:
					v = p.ProtocolVersion
				case *mcp.DiscoverParams:
					v, _ = p.Meta[mcp.MetaKeyProtocolVersion].(string)
				}
				if v != c.want {
					b, _ := json.Marshal(got.GetParams())
					t.Errorf("the SDK is asked %s, want %s", b, c.want)
				}
			}
		})
	}
	// The client's own params are left as it sent them.
	req := initialize("2025-11-25")
	if _, err := asServerVersion("initialize", req, "2025-06-18", false); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("2025-11-25", req.GetParams().(*mcp.InitializeParams).ProtocolVersion); diff != "" {
		t.Errorf("the client's params changed: %s", diff)
	}
}
