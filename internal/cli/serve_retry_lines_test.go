package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestServeOneLinePerFailedAttempt runs serve with a server that refuses
// every connection, retried twice and then auto-disabled: serve prints
// one line per failed attempt, with its cause and when the next comes,
// and the log at its default level repeats none of them.
func TestServeOneLinePerFailedAttempt(t *testing.T) {
	t.Parallel()
	// A port nobody listens on: taken, then let go.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	setenv(t, "SWITCHBOARD_STATE_DIR", stateDir(t))
	cfg := filepath.Join(t.TempDir(), "switchboard.yaml")
	yaml := fmt.Sprintf(`gateway:
  listen: 127.0.0.1:0
defaults:
  health: {max_failures: 2, backoff: [10ms, 20ms]}
servers:
  - name: down
    transport: http
    url: http://%s/mcp
`, addr)
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() { done <- mainIn(t, ctx, &out, &errb, "serve", "--config", cfg) }()
	eventuallyCLI(t, 30*time.Second, "serve to auto-disable down", func() bool {
		return strings.Contains(out.String(), "down: auto-disabled")
	})
	cancel()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}

	var lines []string
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "down: ") {
			lines = append(lines, line)
		}
	}
	cause := regexp.QuoteMeta("connection refused by " + addr + " (http://" + addr + "/mcp)")
	want := []*regexp.Regexp{
		regexp.MustCompile(`^down: connecting$`),
		regexp.MustCompile(`^down: error: ` + cause + ` \(retry 1 at \d\d:\d\d:\d\d\)$`),
		regexp.MustCompile(`^down: error: ` + cause + ` \(retry 2 at \d\d:\d\d:\d\d\)$`),
		regexp.MustCompile(`^down: auto-disabled: ` + cause + `$`),
	}
	ok := len(lines) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = want[i].MatchString(lines[i])
	}
	if !ok {
		t.Errorf("serve's lines for down: got\n%s\nwant\n%s", strings.Join(lines, "\n"), want)
	}
	if n := strings.Count(errb.String(), "upstream failure"); n != 0 {
		t.Errorf("the log at its default level repeats the failures already printed (%d times):\n%s", n, errb.String())
	}
}
