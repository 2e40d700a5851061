package cli

import (
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// TestCompleteReadURIs: read completes its second word with the URIs of
// the server's resources (server-everything's), and with --stdio its
// first; it offered the server names again, or nothing.
func TestCompleteReadURIs(t *testing.T) {
	t.Parallel()
	bin, args := testpeer.EverythingCommand(t)
	const want = "demo://resource/static/document/features.md"
	// The configured server is the shared one over HTTP; --stdio starts
	// its own, as the flag is the point.
	cfg := writeConfigWith(t, map[string]string{}, "  - name: everything\n    transport: http\n    url: "+everythingURL(t)+"\n")

	got, directive := complete(t, "read", "--config", cfg, "everything", "")
	if !slices.Contains(got, want) || directive != ":4" {
		t.Errorf("read everything <TAB>: got %q %s, want the URIs of server-everything's resources, %s among them, and no files (:4)", got, directive, want)
	}
	got, _ = complete(t, "read", "--stdio", strings.Join(append([]string{bin}, args...), " "), "")
	if !slices.Contains(got, want) {
		t.Errorf("read --stdio server-everything <TAB>: got %q, want the URIs of its resources, %s among them", got, want)
	}
}
