package daemon

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// TestResourceOfServerNotAvailable: resources/read of a resource whose
// server is disabled (or starting, or reconnecting) says so with the
// -32603 of an unreachable upstream, as prompts/get does, not the SDK's
// "Resource not found", which would tell the client that the resource
// does not exist. This holds for a URI exposed under switchboard://SERVER/…
// too. A URI no server has is still not found.
func TestResourceOfServerNotAvailable(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "switchboard.yaml")
	writeConfig(t, path, map[string]string{"alpha": "ok", "beta": "ok"}, "")
	cfg, err := config.Load(path, config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := start(t, cfg)
	cs := r.connect(t, "/mcp", nil, nil)
	// Both serve test://readme: beta's is exposed under switchboard://beta/….
	const betaURI = "switchboard://beta/test:%2F%2Freadme"
	waitResources(t, cs, "both readmes", "test://readme", betaURI)
	for _, uri := range []string{"test://readme", betaURI} {
		if res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri}); err != nil || len(res.Contents) != 1 {
			t.Fatalf("reading %s while its server runs: got %v, %v", uri, res, err)
		}
	}

	for _, name := range []string{"beta", "alpha"} {
		sup, ok := r.d.Pool().Supervisor(name)
		if !ok {
			t.Fatalf("no supervisor for %s", name)
		}
		if err := sup.Disable(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	waitResources(t, cs, "no resources once both are disabled")

	var werr *jsonrpc.Error
	for uri, server := range map[string]string{"test://readme": "alpha", betaURI: "beta"} {
		_, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		if want := "server " + server + " is disabled"; !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInternalError || !strings.Contains(werr.Message, want) {
			t.Errorf("resources/read of %s while %s is disabled: got %v, want a JSON-RPC internal error saying %q", uri, server, err, want)
		}
	}
	_, err = cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "test://nope"})
	if !errors.As(err, &werr) || werr.Code == jsonrpc.CodeInternalError || !strings.Contains(strings.ToLower(werr.Message), "not found") {
		t.Errorf("resources/read of a URI no server has: got %v, want resource not found", err)
	}
}

// waitResources waits until the session lists exactly the resource URIs want.
func waitResources(t *testing.T, cs *mcp.ClientSession, what string, want ...string) {
	t.Helper()
	slices.Sort(want)
	var got []string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		res, err := cs.ListResources(context.Background(), nil)
		if err != nil {
			t.Fatalf("resources/list: %v", err)
		}
		got = got[:0]
		for _, r := range res.Resources {
			got = append(got, r.URI)
		}
		slices.Sort(got)
		if slices.Equal(got, want) {
			return
		}
	}
	t.Fatalf("timed out waiting for %s: resources %q, want %q", what, got, want)
}
