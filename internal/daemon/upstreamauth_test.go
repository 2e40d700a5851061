package daemon

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
	"github.com/switchboard-mcp/switchboard/internal/web"
)

var signInButton = regexp.MustCompile(`<button type="button" data-action="signin" data-server="demo"[^>]*>`)

// TestConsoleSignIn: the console shows a "Sign in" button on a server
// that needs sign-in (and on no other); pressing it answers the
// authorization URL, and once the browser has been through it (here an
// HTTP client following the redirects, as a browser tab does after
// "Allow") the server connects, and the button is gone.
func TestConsoleSignIn(t *testing.T) {
	t.Parallel()
	ex := testpeer.StartOAuthExample(t, true)
	demo := config.Server{Name: "demo", Transport: config.TransportHTTP, URL: ex.URL, Enabled: true, TerminateOnClose: true,
		ConnectTimeout: 30 * time.Second, LoadTools: true}
	r := start(t, testConfig(okHTTPServer(t, "alpha"), demo))
	waitServerState(t, r, "demo", upstream.StateNeedsAuth)

	b := newBrowserish(t, r.url)
	csrf := b.csrf("/")
	_, page := b.do("GET", "/", "", "")
	btn := signInButton.FindString(page)
	if btn == "" || strings.Contains(btn, "hidden") {
		t.Fatalf("servers page: got button %q, want a visible Sign in button for demo", btn)
	}
	_, one := b.do("GET", web.Prefix+"server?name=demo", "", "")
	if m := signInButton.FindString(one); m == "" || strings.Contains(m, "hidden") {
		t.Errorf("demo's page: got button %q, want a visible Sign in button", m)
	}
	if m := regexp.MustCompile(`data-action="signin" data-server="alpha"[^>]*>`).FindString(page); !strings.Contains(m, "hidden") {
		t.Errorf("servers page: alpha's Sign in button %q, want it hidden (alpha needs no sign-in)", m)
	}

	resp, body := b.do("POST", web.Prefix+"api/servers/demo/signin", "", "", web.CSRFHeader, csrf)
	var out struct {
		URL string `json:"url"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &out) != nil || !strings.Contains(out.URL, "code_challenge_method=S256") {
		t.Fatalf("sign in: got %d %s, want the authorization URL", resp.StatusCode, body)
	}
	// A second press while the first waits for the browser is refused.
	if resp, body := b.do("POST", web.Prefix+"api/servers/demo/signin", "", "", web.CSRFHeader, csrf); resp.StatusCode == http.StatusOK || !strings.Contains(body, "already waiting for the browser") {
		t.Errorf("a second sign-in: got %d %s, want it refused", resp.StatusCode, body)
	}
	// The browser tab.
	tab, err := (&http.Client{Timeout: 30 * time.Second}).Get(out.URL)
	if err != nil {
		t.Fatal(err)
	}
	tab.Body.Close()
	if tab.StatusCode != http.StatusOK {
		t.Fatalf("the redirect page: got %s", tab.Status)
	}
	waitServerState(t, r, "demo", upstream.StateConnected)
	_, page = b.do("GET", "/", "", "")
	if btn := signInButton.FindString(page); !strings.Contains(btn, "hidden") {
		t.Errorf("after the sign-in: got button %q, want it hidden", btn)
	}
}

// waitServerState waits for a server's state.
func waitServerState(t *testing.T, r *running, server string, want upstream.State) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, s := range r.d.Pool().Snapshots() {
			if s.Server == server && s.State == want {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s to be %s: %+v", server, want, r.d.Pool().Snapshots())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
