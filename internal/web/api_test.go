package web_test

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/internal/web"
)

// client is an HTTP client with a console session: its cookie and CSRF
// token.
type client struct {
	t    *testing.T
	base string
	c    *http.Client
	csrf string
}

var csrfMeta = regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)">`)

func newClient(t *testing.T, base string) *client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	cl := &client{t: t, base: base, c: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	_, body := cl.do("GET", "/", "", "")
	m := csrfMeta.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no CSRF token on the servers page:\n%s", body)
	}
	cl.csrf = m[1]
	return cl
}

// do sends a request with the session's CSRF token.
func (cl *client) do(method, path, contentType, body string) (*http.Response, string) {
	cl.t.Helper()
	req, err := http.NewRequest(method, cl.base+path, strings.NewReader(body))
	if err != nil {
		cl.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if cl.csrf != "" {
		req.Header.Set(web.CSRFHeader, cl.csrf)
	}
	resp, err := cl.c.Do(req)
	if err != nil {
		cl.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// json sends a JSON body and decodes the JSON answer into out.
func (cl *client) json(method, path, body string, want int, out any) {
	cl.t.Helper()
	resp, b := cl.do(method, path, "application/json", body)
	if resp.StatusCode != want {
		cl.t.Fatalf("%s %s: got %d %s, want %d", method, path, resp.StatusCode, b, want)
	}
	if out != nil {
		if err := json.Unmarshal([]byte(b), out); err != nil {
			cl.t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
}

var preCurl = regexp.MustCompile(`(?s)<pre class="cmd" id="curl-command">(.*?)</pre>`)
var preCLI = regexp.MustCompile(`(?s)<pre class="cmd" id="cli-command">(.*?)</pre>`)

// TestCopyAsCurlRuns takes the "copy as curl" command from a tool page
// after a call and runs it in bash against the daemon's gateway: it must
// return the same result. Once with a gateway that keeps sessions and no
// tokens, once stateless with a token (read from $SWITCHBOARD_TOKEN).
func TestCopyAsCurlRuns(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("this test runs curl, which is not installed: apt-get install curl")
	}
	const secret = "curl-token-secret"
	message := `it's a "quoted" $HOME & more`
	for _, tc := range []struct {
		name      string
		stateless bool
		token     bool
	}{{"sessions, no token", false, false}, {"stateless, token", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(testserver.Server(t, "alpha", "ok"))
			cfg.Gateway.Stateless = tc.stateless
			if tc.token {
				cfg.Gateway.Tokens = []config.Token{{Name: "ci", User: "alice", Secret: secret}}
			}
			r := startDaemon(t, cfg)
			if _, err := r.d.Pool().WaitConnected(context.Background(), "alpha", 20*time.Second); err != nil {
				t.Fatal(err)
			}
			var cl *client
			if tc.token {
				cl = loginClient(t, r.url, secret)
			} else {
				cl = newClient(t, r.url)
			}
			args, _ := json.Marshal(map[string]any{"server": "alpha", "tool": "echo", "arguments": map[string]string{"message": message}})
			var st struct {
				ID string `json:"id"`
			}
			cl.json("POST", web.Prefix+"api/calls", string(args), http.StatusAccepted, &st)
			_, page := cl.do("GET", web.Prefix+"tool?server=alpha&name=echo&call="+st.ID, "", "")
			m, mc := preCurl.FindStringSubmatch(page), preCLI.FindStringSubmatch(page)
			if m == nil || mc == nil {
				t.Fatalf("no commands on the tool page:\n%s", page)
			}
			curl, cli := html.UnescapeString(m[1]), html.UnescapeString(mc[1])
			if strings.Contains(curl, secret) {
				t.Fatal("the curl command holds the token")
			}
			if got := strings.Contains(curl, "Authorization: Bearer $"+web.TokenVariable); got != tc.token {
				t.Errorf("Authorization header in the curl command: got %v, want %v:\n%s", got, tc.token, curl)
			}
			cmd := exec.Command("bash", "-c", "set -eo pipefail\n"+curl)
			cmd.Env = append(os.Environ(), web.TokenVariable+"="+secret)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("running the curl command: %v\n%s\n%s", err, curl, out)
			}
			// The answer is JSON or an SSE data line holding JSON-RPC.
			body := string(out)
			if i := strings.Index(body, "data: "); i >= 0 {
				body = strings.TrimSpace(strings.SplitN(body[i+6:], "\n", 2)[0])
			}
			var rpc struct {
				Result struct {
					Content []struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(body), &rpc); err != nil || len(rpc.Result.Content) == 0 || rpc.Result.Content[0].Text != message {
				t.Errorf("the curl command answered %s, want the echo of %q", out, message)
			}
			// The CLI command, as a shell splits it: the words switchboard
			// call would get.
			words, err := exec.Command("bash", "-c", "printf '%s\\n' "+strings.TrimPrefix(cli, "switchboard ")).Output()
			if err != nil {
				t.Fatal(err)
			}
			want := "call\nalpha\necho\n--args\n" + `{"message":"it's a \"quoted\" $HOME \u0026 more"}` + "\n"
			if string(words) != want {
				t.Errorf("the CLI command %s splits into\n%s\nwant\n%s", cli, words, want)
			}
		})
	}
}

// loginClient logs in with a gateway token through the login form.
func loginClient(t *testing.T, base, secret string) *client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	cl := &client{t: t, base: base, c: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	_, body := cl.do("GET", web.Prefix+"login", "", "")
	m := csrfMeta.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no CSRF token on the login page:\n%s", body)
	}
	resp, _ := cl.do("POST", web.Prefix+"login", "application/x-www-form-urlencoded", url.Values{"csrf": {m[1]}, "token": {secret}}.Encode())
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("login: got %d", resp.StatusCode)
	}
	_, body = cl.do("GET", "/", "", "")
	if m = csrfMeta.FindStringSubmatch(body); m == nil {
		t.Fatalf("no CSRF token after logging in:\n%s", body)
	}
	cl.csrf = m[1]
	return cl
}
