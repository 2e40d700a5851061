package config_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{in: "npx -y pkg", want: []string{"npx", "-y", "pkg"}},
		{in: "  npx \t -y\npkg  ", want: []string{"npx", "-y", "pkg"}},
		{in: `uvx server --name 'my server'`, want: []string{"uvx", "server", "--name", "my server"}},
		{in: `a "b c" d`, want: []string{"a", "b c", "d"}},
		{in: `a "x\"y\\z\$w\q"`, want: []string{"a", `x"y\z$w\q`}},
		{in: `a 'it'\''s'`, want: []string{"a", "it's"}},
		{in: `a b\ c`, want: []string{"a", "b c"}},
		{in: `a ''`, want: []string{"a", ""}},
		{in: `a ""x`, want: []string{"a", "x"}},
		{in: "a \\\nb", want: []string{"a", "b"}},
		{in: `a $HOME ~ * | > ;`, want: []string{"a", "$HOME", "~", "*", "|", ">", ";"}},
		{in: ``, want: nil},
		{in: `   `, want: nil},
		{in: `a 'open`, wantErr: "unbalanced single quote at character 3"},
		{in: `a "open`, wantErr: "unbalanced double quote at character 3"},
		{in: `a "x\"`, wantErr: "unbalanced double quote at character 3"},
		{in: `a \`, wantErr: "the command ends with a backslash that escapes nothing"},
	}
	for _, tt := range tests {
		got, err := config.SplitCommand(tt.in)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if gotErr != tt.wantErr {
			t.Errorf("SplitCommand(%q): got error %q, want %q", tt.in, gotErr, tt.wantErr)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("SplitCommand(%q) mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
}

// shellQuote quotes a word for SplitCommand.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// FuzzSplitCommand checks that splitting never panics and that quoting the
// words back gives the same words.
func FuzzSplitCommand(f *testing.F) {
	for _, s := range []string{"npx -y pkg", `a "b c" 'd e' f\ g`, `"\"`, `'`, `\`, "a\\\nb", `""`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := config.SplitCommand(s)
		if err != nil {
			return
		}
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = shellQuote(w)
		}
		again, err := config.SplitCommand(strings.Join(quoted, " "))
		if err != nil {
			t.Fatalf("re-splitting %q: %v", quoted, err)
		}
		if !cmp.Equal(words, again) {
			t.Fatalf("SplitCommand(%q) = %q, re-split %q", s, words, again)
		}
	})
}

func TestAdHoc(t *testing.T) {
	d := config.Default().Defaults
	d.RequestTimeout = 10e9
	stdio := stdioServer(config.AdHocName, "npx", "-y", "@modelcontextprotocol/server-everything")
	stdio.InheritEnv = true
	stdio.RequestTimeout = 10e9
	relative := stdioServer(config.AdHocName, "./my-server")
	relative.InheritEnv = true
	relative.RequestTimeout = 10e9
	tests := []struct {
		stdio, url string
		want       config.Server
		wantErr    string
	}{
		{stdio: "npx -y @modelcontextprotocol/server-everything", want: stdio},
		{stdio: "./my-server", want: relative}, // not held to the allowlist
		{url: "https://x.example.com/mcp", want: withTimeout(netServer(config.AdHocName, config.TransportHTTP, "https://x.example.com/mcp"))},
		{url: "https://x.example.com/sse", want: withTimeout(netServer(config.AdHocName, config.TransportSSE, "https://x.example.com/sse"))},
		{url: "http://localhost:8080/v1/sse/", want: withTimeout(netServer(config.AdHocName, config.TransportSSE, "http://localhost:8080/v1/sse/"))},
		{url: "wss://x.example.com/ws", want: withTimeout(netServer(config.AdHocName, config.TransportWebSocket, "wss://x.example.com/ws"))},
		{url: "WS://x.example.com", want: withTimeout(netServer(config.AdHocName, config.TransportWebSocket, "WS://x.example.com"))},
		{wantErr: `--stdio: give a server to connect to; use --stdio "COMMAND ARGS..." or --url URL`},
		{stdio: "npx", url: "https://x", wantErr: "--stdio: --stdio and --url cannot be used together; give one of them"},
		{stdio: `npx "open`, wantErr: "--stdio: unbalanced double quote at character 5; quote the command as a shell would"},
		{stdio: `''`, wantErr: `--stdio: the command is empty; give the command that starts the server, e.g. --stdio "npx -y @modelcontextprotocol/server-everything"`},
		{url: "ftp://x.example.com", wantErr: "--url: the URL must start with http://, https://, ws:// or wss://"},
		{url: "not a url", wantErr: "--url: the URL is not valid; write it as https://host/path"},
	}
	for _, tt := range tests {
		got, err := config.AdHoc(tt.stdio, tt.url, d)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if gotErr != tt.wantErr {
			t.Errorf("AdHoc(%q, %q): got error %q, want %q", tt.stdio, tt.url, gotErr, tt.wantErr)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("AdHoc(%q, %q) mismatch (-want +got):\n%s", tt.stdio, tt.url, diff)
		}
	}
}

func withTimeout(s config.Server) config.Server {
	s.RequestTimeout = 10e9
	return s
}

func TestAdHocZeroDefaults(t *testing.T) {
	got, err := config.AdHoc("npx pkg", "", config.Defaults{})
	if err != nil {
		t.Fatal(err)
	}
	if got.ConnectTimeout != config.DefaultConnectTimeout || got.RequestTimeout != config.DefaultRequestTimeout {
		t.Errorf("got timeouts %v/%v, want the defaults", got.ConnectTimeout, got.RequestTimeout)
	}
}
