package web_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// TestServerPageSaysWhatToTry: a server that fails shows, on its own page
// as on the servers page, what to try about its last error.
func TestServerPageSaysWhatToTry(t *testing.T) {
	t.Parallel()
	dead := config.Server{Name: "dead", Transport: config.TransportStdio, Command: "/bin/sh", Args: []string{"-c", "echo 'no such module' >&2; exit 3"},
		ConnectTimeout: 5 * time.Second, RequestTimeout: 5 * time.Second, Enabled: true, LoadTools: true}
	r := startDaemon(t, testConfig(dead))
	cl := newClient(t, r.url)
	var hint string
	deadline := time.Now().Add(30 * time.Second)
	for hint == "" {
		var out struct{ Servers []struct{ Hint string } }
		cl.json("GET", "/ui/api/servers", "", 200, &out)
		if len(out.Servers) == 1 {
			hint = out.Servers[0].Hint
		}
		if hint == "" && time.Now().After(deadline) {
			t.Fatal("the dead server never had a hint")
		}
		time.Sleep(50 * time.Millisecond)
	}
	_, page := cl.do("GET", "/ui/server?name=dead", "", "")
	m := regexp.MustCompile(`<p class="hint" data-field="hint"( hidden)?>([^<]*)</p>`).FindStringSubmatch(page)
	if m == nil || m[1] != "" || !strings.HasPrefix(m[2], "Try: ") {
		t.Errorf("the server's page: got hint %q, want the hint shown (%q)", m, hint)
	}
}
