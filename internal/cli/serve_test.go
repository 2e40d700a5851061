package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/control"
)

// TestServeListenFlagIsCheckedLikeTheKey checks that a bad --listen value
// gets the message `config validate` gives for the same gateway.listen,
// and no advice that does not apply (tokens, a busy port).
func TestServeListenFlagIsCheckedLikeTheKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		value string
		want  string
	}{
		{"foo", `invalid listen address "foo"; write it as host:port`},
		{"127.0.0.1:99999", `invalid port "99999" in listen address; use a port number from 0 (any free port) to 65535`},
		{"127.0.0.1:-1", `invalid port "-1" in listen address`},
		{"a b:7777", `invalid host "a b" in listen address`},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			cfg := writeConfig(t, map[string]string{"alpha": "ok"})
			r := runCLI(t, "serve", "--config", cfg, "--listen", tt.value)
			wantCode(t, r, ExitUsage)
			wantContains(t, "serve --listen", r.stderr, "--listen: "+tt.want)
			for _, wrong := range []string{"requires tokens", "another program"} {
				if strings.Contains(r.stderr, wrong) {
					t.Errorf("serve --listen %s: got %q, want no %q", tt.value, r.stderr, wrong)
				}
			}
			// The same words as the configuration key's.
			if err := appendFile(cfg, "gateway:\n  listen: \""+tt.value+"\"\n"); err != nil {
				t.Fatal(err)
			}
			v := runCLI(t, "config", "validate", cfg)
			wantCode(t, v, ExitFailure)
			wantContains(t, "config validate", v.stdout+v.stderr, "gateway.listen: "+tt.want)
		})
	}
}

// TestPrintEndpointsShowsAUsableAddress checks that a wildcard listen
// address is printed as one a client can dial, with a note for other
// machines, and that a specific address is printed as it is.
func TestPrintEndpointsShowsAUsableAddress(t *testing.T) {
	t.Parallel()
	tests := []struct {
		listen, addr string
		want         string
		wantNote     bool
	}{
		{"0.0.0.0:18110", "[::]:18110", "http://127.0.0.1:18110/mcp", true},
		{"0.0.0.0:18110", "0.0.0.0:18110", "http://127.0.0.1:18110/mcp", true},
		{":18110", "[::]:18110", "http://127.0.0.1:18110/mcp", true},
		{"127.0.0.1:18110", "127.0.0.1:18110", "http://127.0.0.1:18110/mcp", false},
		{"192.0.2.7:18110", "192.0.2.7:18110", "http://192.0.2.7:18110/mcp", false},
		{"[::1]:18110", "[::1]:18110", "http://[::1]:18110/mcp", false},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			cfg := config.Default()
			cfg.Gateway.Listen = tt.listen
			var b strings.Builder
			printEndpoints(&b, tt.addr, cfg, "/opt/bin/switchboard", []string{"serve", "--stdio", "--config", "/home/me/switchboard.yaml"})
			out := b.String()
			wantContains(t, "banner", out, `"command":"/opt/bin/switchboard"`, `"args":["serve","--stdio","--config","/home/me/switchboard.yaml"]`,
				"switchboard client connect CLIENT (claude-desktop, claude-code, cursor")
			if n := strings.Count(out, `"url":"`+tt.want+`"`); n != 2 {
				t.Errorf("client snippets with %s: got %d, want 2:\n%s", tt.want, n, out)
			}
			wantContains(t, "banner", out, "gateway: "+tt.want+" (streamable HTTP)")
			for _, bad := range []string{"[::]", "0.0.0.0:18110/", "//:18110"} {
				if strings.Contains(out, bad) {
					t.Errorf("banner shows the unusable address %q:\n%s", bad, out)
				}
			}
			if got := strings.Contains(out, "other machines use this host's name or IP address"); got != tt.wantNote {
				t.Errorf("note for other machines: got %v, want %v:\n%s", got, tt.wantNote, out)
			}
		})
	}
}

// TestPrintEndpointsNamesOAuth checks that the banner says the gateway
// signs clients in with OAuth, and where its metadata is.
func TestPrintEndpointsNamesOAuth(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.Gateway.OAuth = &config.OAuth{Resource: "https://mcp.example.com", Issuer: "https://login.example.com/realms/team"}
	var b strings.Builder
	printEndpoints(&b, "127.0.0.1:7777", cfg, "/opt/bin/switchboard", []string{"serve", "--stdio"})
	wantContains(t, "banner", b.String(),
		"sign-in: OAuth access tokens from https://login.example.com/realms/team for https://mcp.example.com;",
		"(metadata: https://mcp.example.com/.well-known/oauth-protected-resource/mcp)",
		"Cursor / Claude Code (mcpServers) (the client signs in with OAuth")
}

// TestPrintEndpointsGivesClaudeDesktopTheCommand: Claude Desktop only
// launches commands (client connect writes it one), so the banner gives it
// the command snippet, not the URL one it could not use.
func TestPrintEndpointsGivesClaudeDesktopTheCommand(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	printEndpoints(&b, "127.0.0.1:7777", config.Default(), "/opt/bin/switchboard", []string{"serve", "--stdio"})
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		if !strings.Contains(l, "Claude Desktop") {
			continue
		}
		if i+1 >= len(lines) || !strings.Contains(lines[i+1], `"command":"/opt/bin/switchboard"`) || strings.Contains(lines[i+1], `"url"`) {
			t.Errorf("the banner gives Claude Desktop %q, want the command snippet:\n%s", lines[min(i+1, len(lines)-1)], b.String())
		}
	}
	if !strings.Contains(b.String(), "Claude Desktop") {
		t.Errorf("the banner names no snippet for Claude Desktop:\n%s", b.String())
	}
}

// TestServeListenOverridesTheFile checks that --listen replaces
// gateway.listen before validation: a file that listens on 0.0.0.0
// without tokens serves on the flag's loopback address.
func TestServeListenOverridesTheFile(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	if err := appendFile(cfg, "gateway:\n  listen: 0.0.0.0:18110\n"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() { done <- mainIn(t, ctx, &out, &errb, "serve", "--config", cfg, "--listen", "127.0.0.1:0") }()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(out.String(), "gateway: http://127.0.0.1:") {
		select {
		case code := <-done:
			t.Fatalf("serve exited with %d before serving:\n%s%s", code, out.String(), errb.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not print its address within 20s:\n%s%s", out.String(), errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != ExitOK {
		t.Errorf("serve exit code: got %d, want 0\n%s", code, errb.String())
	}
}

// TestSecondServeRefusedFirst: a second serve on the same state directory
// says a daemon is running, and who, before printing or starting anything.
func TestSecondServeRefusedFirst(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() { done <- mainIn(t, ctx, &out, &errb, "serve", "--config", cfg, "--listen", "127.0.0.1:0") }()
	// The banner comes before the control socket opens: wait until the
	// daemon answers on the socket, as the second serve will ask it.
	sock := control.SocketPath(getenvOf(t, "SWITCHBOARD_STATE_DIR"))
	eventuallyCLI(t, 20*time.Second, "the first serve to answer on its control socket", func() bool {
		c := control.Dial(sock)
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := c.Status(ctx)
		return err == nil
	})

	r := runCLI(t, "serve", "--config", cfg, "--listen", "127.0.0.1:0")
	wantCode(t, r, ExitFailure)
	if r.stdout != "" {
		t.Errorf("the second serve printed before refusing:\n%s", r.stdout)
	}
	wantContains(t, "second serve", r.stderr, fmt.Sprintf("a switchboard daemon (pid %d) is already running", os.Getpid()), "serving "+cfg, "gateway at http://127.0.0.1:", "another --state-dir")

	cancel()
	if code := <-done; code != ExitOK {
		t.Errorf("first serve exit code %d: %s", code, errb.String())
	}
}

// TestPrintEndpointsListsEachViewOverBothTransports: a view is served at
// /mcp/VIEW and /sse/VIEW, and SSE-only clients need the second, so the
// banner lists both.
func TestPrintEndpointsListsEachViewOverBothTransports(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.Gateway.Views = []config.View{{Name: "ro"}, {Name: "dev"}}
	var b strings.Builder
	printEndpoints(&b, "127.0.0.1:7777", cfg, "/opt/bin/switchboard", []string{"serve", "--stdio"})
	wantContains(t, "banner", b.String(),
		"gateway: http://127.0.0.1:7777/mcp (streamable HTTP), http://127.0.0.1:7777/sse (SSE)\n",
		"view ro: http://127.0.0.1:7777/mcp/ro (streamable HTTP), http://127.0.0.1:7777/sse/ro (SSE)\n",
		"view dev: http://127.0.0.1:7777/mcp/dev (streamable HTTP), http://127.0.0.1:7777/sse/dev (SSE)\n")
}
