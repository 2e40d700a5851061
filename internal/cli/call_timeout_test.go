package cli

import (
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// TestCallTimeoutSaysWhich: a call that times out says which timeout
// elapsed (the call's --timeout or the server's request_timeout), after how
// long, and how to raise that one, in-process and through the daemon; never
// the context's "context deadline exceeded".
func TestCallTimeoutSaysWhich(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{},
		"  - name: alpha\n    transport: http\n    url: "+testserver.OKHTTP(t)+"\n    request_timeout: 1s\n")
	tests := []struct {
		name  string
		args  []string
		wants []string
	}{
		{"the call's --timeout", []string{"call", "--config", cfg, "alpha", "slow", "seconds=30", "--timeout", "2s"}, []string{
			"switchboard call: alpha/slow did not answer within 2s (the call's --timeout); the call was cancelled upstream\n",
			"  hint: pass a longer --timeout (at most 5m)\n",
		}},
		{"the server's request_timeout", []string{"call", "--config", cfg, "alpha", "slow", "seconds=30"}, []string{
			"switchboard call: alpha/slow did not answer within 1s (server alpha's request_timeout); the call was cancelled upstream\n",
			"  hint: raise request_timeout for server alpha in the configuration, or defaults.request_timeout for every server (at most 5m)\n",
			"  hint: or pass --timeout for this call",
		}},
	}
	d := startDaemon(t, cfg)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			local, daemon := runBoth(t, d, tt.args...)
			for _, r := range []result{local, daemon} {
				wantCode(t, r, ExitFailure)
				wantContains(t, "stderr", r.stderr, tt.wants...)
				if strings.Contains(r.stderr, "deadline") {
					t.Errorf("stderr names the context's deadline:\n%s", r.stderr)
				}
			}
		})
	}
}
