package config

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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
	cfg, err := Parse("sb.yaml", []byte(src), testOpts)
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs("logs/audit.jsonl")
	want := Audit{File: abs, MaxSize: 10 << 20, MaxBackups: 3, MaxAge: 720 * time.Hour, Compress: true, Required: true,
		Pos: Pos{File: "sb.yaml", Line: 6, Col: 1}}
	if diff := cmp.Diff(want, cfg.Audit); diff != "" {
		t.Errorf("audit (-want +got):\n%s", diff)
	}
	out, err := MarshalResolved(cfg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse("sb.yaml", out, testOpts)
	if err != nil {
		t.Fatalf("output does not parse: %v\n%s", err, out)
	}
	if !cfg.Audit.Equal(again.Audit) {
		t.Errorf("read back %+v, want %+v\n%s", again.Audit, cfg.Audit, out)
	}

	// Standard output, with the defaults.
	cfg, err = Parse("sb.yaml", []byte(agentServers+"audit:\n  file: \"-\"\n"), testOpts)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Audit; got.File != "-" || got.MaxSize != 100<<20 || got.MaxBackups != 10 || got.MaxAge != 0 || got.Required {
		t.Errorf("got %+v, want standard output with the defaults", got)
	}

	// Absent: off, and not written.
	cfg, err = Parse("sb.yaml", []byte(agentServers), testOpts)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Audit.Enabled() {
		t.Errorf("got %+v, want the audit trail off by default", cfg.Audit)
	}
	if out, _ := MarshalResolved(cfg); strings.Contains(string(out), "audit:") {
		t.Errorf("an absent block is written:\n%s", out)
	}
}

func TestAuditProblems(t *testing.T) {
	tests := []struct {
		name string
		src  string // after agentServers (so line 6 is the first)
		want []string
	}{
		{
			name: "unknown key",
			src:  "audit:\n  path: a.jsonl\n",
			want: []string{`sb.yaml:7:3: audit.path: unknown field "path"`},
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
				`sb.yaml:8:13: audit.max_size: invalid size "lots"; use a number of bytes`,
				`sb.yaml:9:16: audit.max_backups: -1 is out of range`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("sb.yaml", []byte(agentServers+tt.src), testOpts)
			if err == nil {
				t.Fatal("got no error, want problems")
			}
			got := strings.Split(strings.TrimSpace(err.Error()), "\n")
			if len(got) != len(tt.want) {
				t.Fatalf("got %d problems, want %d:\n%s", len(got), len(tt.want), err)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.want[i]) {
					t.Errorf("problem %d: got %q, want it to start with %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}
