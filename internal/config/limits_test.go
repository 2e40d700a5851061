package config_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"0", 0},
		{"1048576", 1 << 20},
		{"512B", 512},
		{"1KB", 1000},
		{"1KiB", 1 << 10},
		{"1 KiB", 1 << 10},
		{"  2  mib ", 2 << 20},
		{"1MB", 1000 * 1000},
		{"1MiB", 1 << 20},
		{"3gb", 3 * 1000 * 1000 * 1000},
		{"1GiB", 1 << 30},
		{"8589934591GiB", 8589934591 << 30},
		{"9223372036854775807", 1<<63 - 1},
	}
	for _, tt := range tests {
		got, err := config.ParseSize(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, nil", tt.in, got, err, tt.want)
		}
	}
	bad := map[string]string{
		"":                     "size is empty",
		"MiB":                  `invalid size "MiB": want a whole number of bytes, optionally followed by B, KB, KiB, MB, MiB, GB or GiB`,
		"-1":                   `invalid size "-1": want a whole number of bytes, optionally followed by B, KB, KiB, MB, MiB, GB or GiB`,
		"+1":                   `invalid size "+1": want a whole number of bytes, optionally followed by B, KB, KiB, MB, MiB, GB or GiB`,
		"1.5MiB":               `invalid size "1.5MiB": unknown unit ".5MiB"; use B, KB, KiB, MB, MiB, GB or GiB`,
		"1 TB":                 `invalid size "1 TB": unknown unit "TB"; use B, KB, KiB, MB, MiB, GB or GiB`,
		"1k":                   `invalid size "1k": unknown unit "k"; use B, KB, KiB, MB, MiB, GB or GiB`,
		"1 Mi B":               `invalid size "1 Mi B": unknown unit "Mi B"; use B, KB, KiB, MB, MiB, GB or GiB`,
		"8589934592GiB":        `size "8589934592GiB" is too large`,
		"9223372036854775808":  `size "9223372036854775808" is too large`,
		"99999999999999999999": `size "99999999999999999999" is too large`,
	}
	for in, want := range bad {
		got, err := config.ParseSize(in)
		if err == nil {
			t.Errorf("ParseSize(%q) = %d, nil; want error %q", in, got, want)
			continue
		}
		if err.Error() != want {
			t.Errorf("ParseSize(%q): got error %q, want %q", in, err, want)
		}
	}
}

// TestLimitsAndHistory checks the forms the new blocks accept, and that
// the defaults apply to whatever is left out.
func TestLimitsAndHistory(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "switchboard.yaml")
	tests := []struct {
		name    string
		src     string
		limits  config.Limits
		history config.History
		server  func(*config.Server)
	}{
		{
			name:    "absent",
			src:     "servers: []\n",
			limits:  config.Default().Limits,
			history: config.Default().History,
		},
		{
			name:    "empty blocks",
			src:     "limits:\nhistory: {}\n",
			limits:  config.Default().Limits,
			history: config.Default().History,
		},
		{
			name: "every field",
			src: `limits:
  max_concurrent: 4
  queue_wait: 1m
  max_queue: 0
  session_limit: 1
  max_output: 1GiB
history:
  store: "postgres://app:${PGPASSWORD:-pw}@db.internal:5432/calls?sslmode=require"
  record_values: true
  keep: 1
servers:
  - name: a
    command: npx
    max_concurrent: 4
    redact_results: true
`,
			limits:  config.Limits{MaxConcurrent: 4, QueueWait: time.Minute, MaxQueue: 0, SessionLimit: 1, MaxOutputBytes: 1 << 30},
			history: config.History{Store: "postgres://app:pw@db.internal:5432/calls?sslmode=require", RecordValues: true, Keep: 1},
			server:  func(s *config.Server) { s.MaxConcurrent, s.RedactResults = 4, true },
		},
		{
			name: "rate",
			src: `limits:
  rate:
    per_user: {calls_per_second: 2.5, burst: 10}
    per_user_server: {calls_per_second: 0.5}
`,
			limits: func() config.Limits {
				l := config.Default().Limits
				l.Rate = config.Rate{PerUser: config.Bucket{PerSecond: 2.5, Burst: 10}, PerUserServer: config.Bucket{PerSecond: 0.5, Burst: 1}}
				return l
			}(),
			history: config.Default().History,
		},
		{
			name:    "sizes and seconds",
			src:     "limits: {max_output: 1024, queue_wait: 5, session_limit: -1}\nhistory: {store: \"state/${HISTORY:-calls}.db\"}\n",
			limits:  config.Limits{MaxConcurrent: 25, QueueWait: 5 * time.Second, MaxQueue: 1000, SessionLimit: -1, MaxOutputBytes: 1024},
			history: config.History{Store: filepath.Join(dir, "state", "calls.db"), Keep: 10000},
		},
		{
			name:    "decimal units",
			src:     "limits: {max_output: 5 mb, queue_wait: 5m}\nhistory: {store: /var/lib/switchboard/h.db}\n",
			limits:  config.Limits{MaxConcurrent: 25, QueueWait: 5 * time.Minute, MaxQueue: 1000, SessionLimit: -1, MaxOutputBytes: 5_000_000},
			history: config.History{Store: "/var/lib/switchboard/h.db", Keep: 10000},
		},
		{
			name:    "queue_wait until the call's timeout, and fail fast",
			src:     "limits: {queue_wait: timeout}\n",
			limits:  config.Limits{MaxConcurrent: 25, QueueWait: config.QueueWaitCallTimeout, MaxQueue: 1000, SessionLimit: -1, MaxOutputBytes: 1 << 20},
			history: config.Default().History,
		},
		{
			name:    "queue_wait 0s fails fast",
			src:     "limits: {queue_wait: 0s}\n",
			limits:  config.Limits{MaxConcurrent: 25, QueueWait: 0, MaxQueue: 1000, SessionLimit: -1, MaxOutputBytes: 1 << 20},
			history: config.Default().History,
		},
		{
			name:    "postgresql scheme",
			src:     "history: {store: \"postgresql://db/calls\"}\n",
			limits:  config.Default().Limits,
			history: config.History{Store: "postgresql://db/calls", Keep: 10000},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := config.Parse(file, []byte(tt.src), config.TestOpts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.limits, cfg.Limits); diff != "" {
				t.Errorf("limits mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.history, cfg.History); diff != "" {
				t.Errorf("history mismatch (-want +got):\n%s", diff)
			}
			if tt.server != nil {
				want := stdioServer("a", "npx")
				want.Args = nil
				tt.server(&want)
				if diff := cmp.Diff([]config.Server{want}, cfg.Servers, config.IgnorePos); diff != "" {
					t.Errorf("servers mismatch (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestRedactedHistoryStore(t *testing.T) {
	tests := map[string]string{
		"":                                 "",
		"/var/lib/switchboard/h.db":        "/var/lib/switchboard/h.db",
		"postgres://db.internal/calls":     "postgres://db.internal/calls",
		"postgres://app@db.internal/calls": "postgres://app@db.internal/calls",
		"postgres://user:s3cret@host/db":   "postgres://user:[REDACTED]@host/db",
		"postgresql://u%40x:p%3Aw@h:5432/d?sslmode=require": "postgresql://u%40x:[REDACTED]@h:5432/d?sslmode=require",
		"postgres://user:s3cret@host/db?password=other":     "postgres://user:[REDACTED]@host/db?password=REDACTED",
		"postgres://host/db?password=other":                 "postgres://host/db?password=REDACTED",
		"postgres://user:s3cret@host:port/db":               "postgres://[REDACTED]",
	}
	for in, want := range tests {
		cfg := config.Default()
		cfg.History.Store = in
		red := cfg.Redacted()
		if got := red.History.Store; got != want {
			t.Errorf("Redacted store of %q: got %q, want %q", in, got, want)
		}
		if cfg.History.Store != in {
			t.Errorf("Redacted changed the original store to %q", cfg.History.Store)
		}
	}
}

// TestDSNPasswordNeverShown checks that neither config show nor a
// message repeats the password of a history store.
func TestDSNPasswordNeverShown(t *testing.T) {
	cfg, err := config.Parse("t.yaml", []byte("history:\n  store: postgres://app:hunter2@db/calls\n"), config.TestOpts)
	if err != nil {
		t.Fatal(err)
	}
	out, err := config.MarshalResolved(cfg.Redacted())
	if err != nil {
		t.Fatal(err)
	}
	if want := "  store: \"postgres://app:[REDACTED]@db/calls\"\n"; !strings.Contains(string(out), want) {
		t.Errorf("config show lacks %q:\n%s", want, out)
	}
	if strings.Contains(string(out), "hunter2") {
		t.Errorf("config show repeats the password:\n%s", out)
	}
	// Copied back into a file, the redacted form does not load.
	if _, err := config.Parse("shown.yaml", out, config.TestOpts); err == nil || !strings.Contains(err.Error(), "history.store: the postgres DSN is not a valid URL") {
		t.Errorf("parsing config show output: got %v, want an invalid DSN problem", err)
	}
	for _, src := range []string{
		"history: {store: \"postgres://app:hunter2@:5432/calls\"}",
		"history: {store: \"postgres://app:hunter2@db:x/calls\"}",
		"history: {store: \"mysql://app:hunter2@db/calls\"}",
		"history: {store: \"postgres://app:hunter2@db/calls\", kep: 1}",
	} {
		_, err := config.Parse("t.yaml", []byte(src), config.TestOpts)
		var ve *config.ValidationError
		if !errors.As(err, &ve) {
			t.Fatalf("%s: got %v, want a *ValidationError", src, err)
		}
		for _, p := range ve.Problems {
			if strings.Contains(p.String(), "hunter2") || strings.Contains(p.Err.Error(), "hunter2") {
				t.Errorf("%s: problem repeats the password: %s", src, p)
			}
		}
	}
}

// TestImportKeepsLimitsAndHistory checks that a native file's limits and
// history survive config import, the store's variables kept as written.
func TestImportKeepsLimitsAndHistory(t *testing.T) {
	dir := t.TempDir()
	p := config.WriteFile(t, dir, "switchboard.yaml", `limits: {max_concurrent: 3, max_output: 64KiB}
history: {store: "calls-${USER_SUFFIX:-x}.db", keep: 7}
servers:
  - {name: a, command: npx, max_concurrent: 2, redact_results: true}
`)
	out, err := config.Import(p, config.TestOpts)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"limits:\n  max_concurrent: 3\n  queue_wait: timeout\n  max_queue: 1000\n  session_limit: -1\n  max_output: 64KiB\n",
		"history:\n  store: \"" + filepath.Join(dir, "calls-${USER_SUFFIX:-x}.db") + "\"\n  record_values: false\n  keep: 7\n",
		"    max_concurrent: 2\n    redact_results: true\n",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("import lacks %q:\n%s", want, out)
		}
	}
	original, err := config.Load(p, config.TestOpts)
	if err != nil {
		t.Fatal(err)
	}
	imported, err := config.Parse(filepath.Join(t.TempDir(), "switchboard.yaml"), out, config.TestOpts)
	if err != nil {
		t.Fatalf("parsing the import: %v\n%s", err, out)
	}
	sameConfig(t, original, imported)
}
