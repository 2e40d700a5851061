package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"runtime/debug"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
)

// TestTableFitsTheTerminal checks that on a terminal narrower than a
// table the widest column is cut with an ellipsis, and that output that is
// not a terminal is never cut.
func TestTableFitsTheTerminal(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a long description ", 10)
	rows := func(a *app, w io.Writer) {
		tb := a.newTableTo(w, "SERVER", "TOOL", "DESCRIPTION")
		tb.row("alpha", "echo", long)
		tb.row("beta", "get-sum", "short")
		if err := tb.flush(); err != nil {
			t.Fatal(err)
		}
	}

	var term bytes.Buffer
	a := &app{termWidth: func(io.Writer) (int, bool) { return 60, true }}
	rows(a, &term)
	lines := strings.Split(strings.TrimRight(term.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("got %d lines, want 3:\n%s", len(lines), term.String())
	}
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > 60 {
			t.Errorf("line of %d runes on a 60-column terminal: %q", n, l)
		}
	}
	if !strings.HasSuffix(lines[1], "…") || !strings.HasPrefix(lines[1], "alpha   echo     a long description") {
		t.Errorf("cut row: got %q, want the description cut with …", lines[1])
	}
	if lines[2] != "beta    get-sum  short" {
		t.Errorf("short row: got %q", lines[2])
	}

	var piped bytes.Buffer
	rows(&app{termWidth: func(io.Writer) (int, bool) { return 0, false }}, &piped)
	if !strings.Contains(piped.String(), strings.TrimSpace(long)) || strings.Contains(piped.String(), "…") {
		t.Errorf("piped table: got\n%s\nwant every cell whole", piped.String())
	}

	// A terminal too narrow for anything keeps each column readable.
	var narrow bytes.Buffer
	rows(&app{termWidth: func(io.Writer) (int, bool) { return 10, true }}, &narrow)
	if !strings.Contains(narrow.String(), "a long desc…") {
		t.Errorf("narrow terminal: got\n%s\nwant columns cut no narrower than %d", narrow.String(), minColumn)
	}
}

// TestVersionFromBuildInfo checks what version reports for the builds
// people make: go install …@vX, a pseudo-version, a work tree build with
// VCS stamping, and one without (the -ldflags variable).
func TestVersionFromBuildInfo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		bi       debug.BuildInfo
		want     buildInfo
		wantLine string
	}{
		{
			name:     "go install at a tag",
			bi:       debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.4.0"}},
			want:     buildInfo{Version: "v1.4.0", Go: "go1.26.8"},
			wantLine: "switchboard v1.4.0 (go1.26.8)",
		},
		{
			name:     "go install at a commit",
			bi:       debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.4.1-0.20260102150405-0123456789ab"}},
			want:     buildInfo{Version: "v1.4.1-0.20260102150405-0123456789ab", Commit: "0123456789ab", Go: "go1.26.8"},
			wantLine: "switchboard v1.4.1-0.20260102150405-0123456789ab (commit 0123456789ab; go1.26.8)",
		},
		{
			name: "work tree with VCS stamping",
			bi: debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
				{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
				{Key: "vcs.time", Value: "2026-01-02T15:04:05Z"},
				{Key: "vcs.modified", Value: "true"},
			}},
			want: buildInfo{Version: "v9.9.9-ldflags", Commit: "0123456789abcdef0123456789abcdef01234567",
				CommitTime: "2026-01-02T15:04:05Z", Modified: true, Go: "go1.26.8"},
			wantLine: "switchboard v9.9.9-ldflags (commit 0123456789ab, 2026-01-02T15:04:05Z, modified; go1.26.8)",
		},
		{
			name:     "no build info",
			bi:       debug.BuildInfo{Main: debug.Module{Version: ""}},
			want:     buildInfo{Version: "v9.9.9-ldflags"},
			wantLine: "switchboard v9.9.9-ldflags",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := buildFrom(&tt.bi, "v9.9.9-ldflags")
			if got != tt.want {
				t.Errorf("buildFrom: got %+v, want %+v", got, tt.want)
			}
			if line := got.String(); line != tt.wantLine {
				t.Errorf("line: got %q, want %q", line, tt.wantLine)
			}
		})
	}

	r := runCLI(t, "version", "--json")
	wantCode(t, r, ExitOK)
	wantContains(t, "version --json", r.stdout, `"version": "`, `"go": "go1.`)
	r = runCLI(t, "--version")
	wantCode(t, r, ExitOK)
	if !strings.HasPrefix(r.stdout, "switchboard ") {
		t.Errorf("--version: got %q", r.stdout)
	}
}

// TestJSONToYAML checks that --output yaml keeps the key order and writes
// control characters escaped, which YAML does not allow raw.
func TestJSONToYAML(t *testing.T) {
	t.Parallel()
	got, err := jsonToYAML([]byte(`{"z": 1, "a": {"pattern": "^[^\u0000]*$", "bell": "a\u0007b", "text": "two\nlines", "list": []}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := "z: 1\na:\n  pattern: \"^[^\\x00]*$\"\n  bell: \"a\\ab\"\n"
	if !strings.HasPrefix(string(got), want) {
		t.Errorf("got:\n%s\nwant it to start with:\n%s", got, want)
	}
	var back map[string]any
	if err := yaml.Unmarshal(got, &back); err != nil {
		t.Fatalf("the YAML does not parse: %v\n%s", err, got)
	}
	if a := back["a"].(map[string]any); a["pattern"] != "^[^\x00]*$" || a["bell"] != "a\ab" || a["text"] != "two\nlines" {
		t.Errorf("read back: got %q", a)
	}

	// Text of several lines is a literal block, and reads back as it was:
	// with or without a final line break, indented lines, quotes, a
	// "key: value" line.
	for _, text := range []string{"two\nlines", "  lead\nx", "\n\tlead\n", "a \nb", "\nstarts with a break", "only\n", "# Title\n\n  indented\nsay \"hi\"\nkey: value\n", "ends\n\n", "tab\there\nx"} {
		in, _ := json.Marshal(map[string]string{"text": text})
		got, err := jsonToYAML(in)
		if err != nil {
			t.Fatal(err)
		}
		if lead := strings.TrimLeft(text, "\n"); !strings.HasPrefix(string(got), "text: |") && lead[0] != ' ' && lead[0] != '\t' {
			t.Errorf("%q: got\n%s\nwant a literal block (text: |)", text, got)
		}
		var back map[string]string
		if err := yaml.Unmarshal(got, &back); err != nil || back["text"] != text {
			t.Errorf("%q: read back %q (%v) from\n%s", text, back["text"], err, got)
		}
	}
}

// TestReadableText: a JSON object with multi-line text prints that text
// as it is, then its other fields as YAML; other text is unchanged.
func TestReadableText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{`{"results":"## A\n\n` + "```go\\nx := 1\\n```" + `\n","metadata":{"count":1},"suggestions":["b"]}`,
			"## A\n\n```go\nx := 1\n```\n\nmetadata:\n  count: 1\nsuggestions:\n- b"},
		{`{"id": 7, "title": "Buy milk"}`, `{"id": 7, "title": "Buy milk"}`},
		{"# plain Markdown\n\ntext", "# plain Markdown\n\ntext"},
		{`{"a": "x\ny"} trailing`, `{"a": "x\ny"} trailing`},
		{`[{"a": "x\ny"}]`, `[{"a": "x\ny"}]`},
	} {
		if got := readableText(tc.in); got != tc.want {
			t.Errorf("%q:\ngot  %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

// TestYAMLOutputReadsBack: whatever text a server sends, --output yaml
// writes it so that it reads back the same, in a mapping and nested in a
// list. The encoder alone lost some (a tab alone, "? :}", a trailing
// blank, a literal block of blank lines; about one in twenty of these
// strings): those are written double-quoted.
func TestYAMLOutputReadsBack(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", " ", "\n", "\t", "#", ":", "-", `"`, "'", "|", ">", "{", "}", "[", "]", "…", "x y", "\n\n", "  ", "? ", "%", "@", "`", "!", "*", "&", ",", `\`}
	for range 3000 {
		var b strings.Builder
		for range 1 + r.IntN(12) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		s := b.String()
		in, _ := json.Marshal(map[string]any{"t": s, "l": []any{map[string]string{"t": s}}, "z": 1})
		out, err := jsonToYAML(in)
		if err != nil {
			t.Fatal(err)
		}
		var back struct {
			T string              `yaml:"t"`
			L []map[string]string `yaml:"l"`
			Z int                 `yaml:"z"`
		}
		if err := yaml.Unmarshal(out, &back); err != nil || back.T != s || len(back.L) != 1 || back.L[0]["t"] != s || back.Z != 1 {
			t.Fatalf("%q: read back %q, %v (%v) from\n%s", s, back.T, back.L, err, out)
		}
	}
}
