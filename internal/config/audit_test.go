package config_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

func TestAuditBlock(t *testing.T) {
	src := agentServers + `audit:
  file: logs/audit.jsonl
  max_size: 10MiB
  max_backups: 3
  max_age: 720h
  compress: true
  required: true
`
	cfg, err := config.Parse("sb.yaml", []byte(src), config.TestOpts)
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs("logs/audit.jsonl")
	want := config.Audit{File: abs, MaxSize: 10 << 20, MaxBackups: 3, MaxAge: 720 * time.Hour, Compress: true, Required: true,
		Pos: config.Pos{File: "sb.yaml", Line: 6, Col: 1}}
	if diff := cmp.Diff(want, cfg.Audit); diff != "" {
		t.Errorf("audit (-want +got):\n%s", diff)
	}
	out, err := config.MarshalResolved(cfg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := config.Parse("sb.yaml", out, config.TestOpts)
	if err != nil {
		t.Fatalf("output does not parse: %v\n%s", err, out)
	}
	if !cfg.Audit.Equal(again.Audit) {
		t.Errorf("read back %+v, want %+v\n%s", again.Audit, cfg.Audit, out)
	}

	// Standard output, with the defaults.
	cfg, err = config.Parse("sb.yaml", []byte(agentServers+"audit:\n  file: \"-\"\n"), config.TestOpts)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Audit; got.File != "-" || got.MaxSize != 100<<20 || got.MaxBackups != 10 || got.MaxAge != 0 || got.Required {
		t.Errorf("got %+v, want standard output with the defaults", got)
	}

	// Absent: off, and not written.
	cfg, err = config.Parse("sb.yaml", []byte(agentServers), config.TestOpts)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Audit.Enabled() {
		t.Errorf("got %+v, want the audit trail off by default", cfg.Audit)
	}
	if out, _ := config.MarshalResolved(cfg); strings.Contains(string(out), "audit:") {
		t.Errorf("an absent block is written:\n%s", out)
	}
}

func TestAuditProblems(t *testing.T) {
	tests := []problemCase{
		{
			name: "unknown key",
			src:  "audit:\n  path: a.jsonl\n",
			want: []string{`sb.yaml:7:3: audit.path: unknown field "path"; remove it; docs/configuration.md lists the fields`},
		},
		{
			name: "empty file",
			src:  "audit:\n  file: \"\"\n",
			want: []string{`sb.yaml:7:9: audit.file: is empty; give a file path such as audit.jsonl, or "-" for standard output; remove the audit: block for no audit trail`},
		},
		{
			name: "required without a file",
			src:  "audit:\n  required: true\n",
			want: []string{`sb.yaml:7:13: audit.required: requires an audit trail, but audit.file is not set; set audit.file to a path such as audit.jsonl, or "-" for standard output`},
		},
		{
			name: "size and backups",
			src:  "audit:\n  file: a.jsonl\n  max_size: lots\n  max_backups: -1\n",
			want: []string{
				`sb.yaml:8:13: audit.max_size: invalid size "lots"; use a number of bytes, or a size such as 512KiB or 1MiB (units B, KB, KiB, MB, MiB, GB or GiB)`,
				`sb.yaml:9:16: audit.max_backups: -1 is out of range; use 0 to 100000 (the default is 10)`,
			},
		},
	}
	checkProblems(t, agentServers, config.TestOpts, tests)
}
