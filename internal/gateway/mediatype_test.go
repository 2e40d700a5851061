package gateway_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestPostMediaTypesAsTheSDK: a post whose body is not declared JSON, or
// whose Accept does not take both of the streamable transport's answers,
// gets the status a go-sdk server gives it directly (415, 400) — checked
// against one over HTTP — not a JSON-RPC parse error, nor an answer on
// the lean path; the gateway's answer is a JSON-RPC error in the SDK's
// words.
func TestPostMediaTypesAsTheSDK(t *testing.T) {
	t.Parallel()
	r := newRig(t, map[string]string{"alpha": "ok"}, "")
	direct := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		return mcp.NewServer(&mcp.Implementation{Name: "direct", Version: "1"}, nil)
	}, nil))
	t.Cleanup(direct.Close)

	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	const both = "application/json, text/event-stream"
	tests := []struct {
		name, contentType, accept, body string
		want                            int
		says                            string
	}{
		{"text/plain body", "text/plain", both, `{}`, http.StatusUnsupportedMediaType, "Content-Type must be 'application/json'"},
		{"no content type", "", both, initialize, http.StatusUnsupportedMediaType, "Content-Type must be 'application/json'"},
		{"no Accept", "application/json", "", initialize, http.StatusBadRequest, "Accept must contain both"},
		{"Accept JSON only", "application/json", "application/json", initialize, http.StatusBadRequest, "Accept must contain both"},
		{"JSON with a charset, Accept */*", "application/json; charset=utf-8", "*/*", initialize, http.StatusOK, ""},
		{"as clients send it", "application/json", both, initialize, http.StatusOK, ""},
	}
	send := func(t *testing.T, url, contentType, accept, body string, header ...string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("POST %s: %v", url, err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ds, dbody := send(t, direct.URL, tt.contentType, tt.accept, tt.body)
			gs, gbody := send(t, r.srv.URL+"/mcp", tt.contentType, tt.accept, tt.body)
			if ds != tt.want {
				t.Fatalf("the go-sdk server answered %d (%s), want %d: the SDK changed; update the case", ds, dbody, tt.want)
			}
			if gs != ds {
				t.Errorf("the gateway answered %d, the go-sdk server %d\ngateway: %s\ngo-sdk: %s", gs, ds, gbody, dbody)
			}
			if tt.says != "" && (!strings.Contains(gbody, `"jsonrpc":"2.0"`) || !strings.Contains(gbody, tt.says)) {
				t.Errorf("the gateway's answer: %s; want a JSON-RPC error saying %q", gbody, tt.says)
			}
		})
	}

	// In a session, a call the lean path would answer: refused all the
	// same without both media types in Accept.
	t.Run("call in a session without Accept", func(t *testing.T) {
		t.Parallel()
		const call = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"alpha__echo","arguments":{"message":"hi"}}}`
		dsid := rawSession(t, direct.URL).Get("Mcp-Session-Id")
		gsid := rawSession(t, r.srv.URL+"/mcp").Get("Mcp-Session-Id")
		ds, dbody := send(t, direct.URL, "application/json", "", call, "Mcp-Session-Id", dsid)
		gs, gbody := send(t, r.srv.URL+"/mcp", "application/json", "", call, "Mcp-Session-Id", gsid)
		if ds != http.StatusBadRequest {
			t.Fatalf("the go-sdk server answered %d (%s), want 400: the SDK changed; update the case", ds, dbody)
		}
		if gs != ds || !strings.Contains(gbody, "Accept must contain both") {
			t.Errorf("the gateway answered %d: %s; want %d as the go-sdk server: %s", gs, gbody, ds, dbody)
		}
	})
}
