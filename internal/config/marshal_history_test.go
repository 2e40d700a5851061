package config_test

import (
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// TestMarshalLeavesOutAnUnsetHistoryStore: config show writes no
// `store: ""` for the default history store (switchboard.db in the state
// directory), and writes a store that is set; either way what it writes
// reads back to the same store.
func TestMarshalLeavesOutAnUnsetHistoryStore(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ extra, want string }{
		{"", ""},
		{"history:\n  store: /var/lib/sb/history.db\n", "/var/lib/sb/history.db"},
	} {
		cfg, err := config.Parse("sb.yaml", []byte("servers:\n  - name: a\n    command: npx\n"+c.extra), config.TestOpts)
		if err != nil {
			t.Fatal(err)
		}
		out, err := config.MarshalResolved(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(out), `store: ""`) {
			t.Errorf("config show writes an empty store:\n%s", out)
		}
		if c.want != "" && !strings.Contains(string(out), "store: "+c.want) {
			t.Errorf("config show: got\n%s\nwant store: %s", out, c.want)
		}
		back, err := config.Parse("sb.yaml", out, config.TestOpts)
		if err != nil {
			t.Fatalf("reading back what config show wrote: %v\n%s", err, out)
		}
		if back.History.Store != c.want {
			t.Errorf("read back: got store %q, want %q", back.History.Store, c.want)
		}
	}
}
