// Internal on purpose: tests the index's parts (identifier splitting, terms, symbols, scope patterns, .gitignore rules, passages) over inputs no tree of a test would hold.

package project

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitIdent(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"parseHTTPRequest", []string{"parse", "HTTP", "Request"}},
		{"XMLHttpRequest", []string{"XML", "Http", "Request"}},
		{"snake_case_name", []string{"snake", "case", "name"}},
		{"__init__", []string{"init"}},
		{"Simple", []string{"Simple"}},
		{"ID", []string{"ID"}},
		{"getV2Client", []string{"get", "V2", "Client"}},
	}
	for _, tt := range tests {
		if got := splitIdent(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("splitIdent(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestAppendTerms(t *testing.T) {
	got := appendTerms(nil, "func (s *Server) handleHTTPRequest(w io.Writer) { x := max_retry_count }")
	want := []string{"func", "server", "handlehttprequest", "handle", "http", "request", "io", "writer", "max_retry_count", "max", "retry", "count"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("appendTerms mismatch (-want +got):\n%s", diff)
	}
	if got := queryTerms("Where is the HTTP server started?"); !slices.Equal(got, []string{"http", "server", "started"}) {
		t.Errorf("queryTerms: got %q, want [http server started]", got)
	}
}

func TestFindSymbols(t *testing.T) {
	tests := []struct {
		ext, src string
		want     []string
	}{
		{".go", "func Free() {}\nfunc (s *T) Method(x int) {}\ntype Thing struct {\n\tField int\n}\ntype (\n\tAlias = int\n)\nconst Limit = 3\nvar ErrGone = errors.New(\"gone\")\nfunc f() {\n\tvar local int\n}", []string{"Free", "Method", "Thing", "Limit", "ErrGone", "f"}},
		{".py", "class Report:\n    def render(self):\n        pass\nasync def fetch_all():\n    if x:\n        pass", []string{"Report", "render", "fetch_all"}},
		{".ts", "export class Cart {}\nexport function addItem(a) {}\nconst removeItem = (a) => a\nexport interface Item {}\nif (x) {\n}", []string{"Cart", "addItem", "removeItem", "Item"}},
		{".rs", "pub fn parse_line() {}\nstruct Token;\npub(crate) enum Kind {}", []string{"parse_line", "Token", "Kind"}},
		{".java", "public class Shop {\n  public static void openStore(int x) {\n    if (x) {}\n  }\n}", []string{"Shop", "openStore"}},
		{".rb", "module Billing\n  class Invoice\n    def total?\n    end\n  end\nend", []string{"Billing", "Invoice", "total?"}},
		{".txt", "func NotCode() {}", nil},
	}
	for _, tt := range tests {
		var got []string
		for _, s := range findSymbols(tt.ext, strings.Split(tt.src, "\n")) {
			got = append(got, s.name)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("findSymbols(%s): got %q, want %q", tt.ext, got, tt.want)
		}
	}
}

func TestScopePatterns(t *testing.T) {
	root := t.TempDir()
	tests := []struct {
		glob, path string
		want       bool
	}{
		{"*.go", "main.go", true},
		{"*.go", "a/main.go", true}, // a name without a slash matches at any depth
		{"*.go", "main.go.txt", false},
		{"**/*.go", "main.go", true},
		{"**/*.go", "a/b/main.go", true},
		{"a/**", "a/b/c", true},
		{"a/**", "b/a/c", false},
		{"a/**/z", "a/z", true},
		{"a/**/z", "a/b/c/z", true},
		{"a/*/z", "a/b/c/z", false},
		{"a/*", "a/b/c", true}, // covers what is inside a matched directory
		{"file?.txt", "file1.txt", true},
		{"file?.txt", "file10.txt", false},
		{"[abc].md", "b.md", true},
		{"[!abc].md", "b.md", false},
		{"[!abc].md", "d.md", true},
		{"[^abc].md", "d.md", true},
		{`\*.go`, "*.go", true},
		{`\*.go`, "x.go", false},
		{"!x*", "!xy", true}, // a name starting with "!", not a re-inclusion
		{"!x*", "xy", false},
	}
	for _, tt := range tests {
		p, fd := compileScopePattern(root, "filePatterns", tt.glob)
		if fd != nil {
			t.Fatalf("compileScopePattern(%q): %s", tt.glob, fd.Message)
		}
		if got := p.matches(tt.path); got != tt.want {
			t.Errorf("glob %q on %q: got %v, want %v", tt.glob, tt.path, got, tt.want)
		}
	}
	for _, bad := range []string{"[abc", "a/[b/c", `x\`} {
		if _, fd := compileScopePattern(root, "filePatterns", bad); fd == nil || !strings.Contains(fd.Message, "not a valid glob") {
			t.Errorf("compileScopePattern(%q): got %v, want a 'not a valid glob' error", bad, fd)
		}
	}
}

func TestGitignoreRules(t *testing.T) {
	rules := ignoreRules(parseGitignore("", []byte("# comment\n*.log\n!keep.log\nbuild/\n/top.txt\ndocs/**/draft.md\n\\#hash\ntrailing   \n")))
	rules = append(rules, parseGitignore("sub", []byte("local.txt\n!*.log\n/anchored\n"))...)
	tests := []struct {
		path  string
		isDir bool
		want  bool
	}{
		{"a.log", false, true},
		{"deep/x/a.log", false, true},
		{"keep.log", false, false},
		{"build", true, true},
		{"build", false, false}, // a file named build is not a directory
		{"x/build", true, true},
		{"top.txt", false, true},
		{"x/top.txt", false, false},
		{"docs/draft.md", false, true},
		{"docs/a/b/draft.md", false, true},
		{"#hash", false, true},
		{"trailing", false, true},
		{"sub/local.txt", false, true},
		{"local.txt", false, false},
		{"sub/x.log", false, false}, // re-included by the deeper file
		{"sub/anchored", false, true},
		{"sub/x/anchored", false, false},
		{"main.go", false, false},
	}
	for _, tt := range tests {
		if got := rules.ignored(tt.path, tt.isDir); got != tt.want {
			t.Errorf("ignored(%q, dir=%v): got %v, want %v", tt.path, tt.isDir, got, tt.want)
		}
	}
}

func TestPassages(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 75; i++ {
		b.WriteString("line\n")
	}
	a := newAnalyser(newTermDict())
	doc := &fileDoc{path: "f.txt"}
	a.analyseText(doc, []byte(b.String()))
	var got [][2]int
	for _, p := range doc.passages {
		got = append(got, [2]int{p.start, p.end})
	}
	want := [][2]int{{1, 30}, {21, 50}, {41, 70}, {61, 75}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("passages mismatch (-want +got):\n%s", diff)
	}
	empty := &fileDoc{path: "e.txt"}
	a.analyseText(empty, nil)
	if len(empty.passages) != 1 || empty.passages[0].length != 0 {
		t.Errorf("got %+v for an empty file, want one empty passage", empty.passages)
	}
}

func TestScopeAllow(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"internal/auth/a.go", "cmd/x/main.go"} {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, problems := validateScope(root, Scope{
		Directories:     []string{"internal", "cmd/"},
		FilePatterns:    []string{"*.go"},
		ExcludePatterns: []string{"*_test.go", "internal/auth/gen"},
	})
	if len(problems) > 0 {
		t.Fatalf("validateScope: %v", problems)
	}
	tests := []struct {
		path string
		want bool
	}{
		{"internal/auth/a.go", true},
		{"internal/auth/a_test.go", false},
		{"internal/auth/gen/z.go", false},
		{"cmd/x/main.go", true},
		{"cmd/x/README.md", false},
		{"other/b.go", false},
		{"internalx/b.go", false},
	}
	for _, tt := range tests {
		if got := f.allow(tt.path); got != tt.want {
			t.Errorf("allow(%q): got %v, want %v", tt.path, got, tt.want)
		}
	}
}

// FuzzGitignore checks that any .gitignore text parses without panicking
// and that its rules answer for any path.
func FuzzGitignore(f *testing.F) {
	for _, seed := range []string{"*.log\n!keep.log\nbuild/\n", "/a/**/b\n[!x]y\n", "\\!x\n\\#y\n[", "**\n**/\n/**\n"} {
		f.Add(seed, "a/b/c.log")
	}
	f.Fuzz(func(t *testing.T, text, rel string) {
		rules := ignoreRules(parseGitignore("", []byte(text)))
		rules = append(rules, parseGitignore("sub", []byte(text))...)
		rules.ignored(rel, false)
		rules.ignored(rel, true)
	})
}

// FuzzScopePattern checks that any pattern the scope accepts answers for
// any path without panicking.
func FuzzScopePattern(f *testing.F) {
	for _, seed := range []string{"*.go", "a/**/b", "[a-z]?", `\*`, "[]]", "[!]", "!x", "vendor"} {
		f.Add(seed, "x/y.go")
	}
	root := f.TempDir()
	f.Fuzz(func(t *testing.T, glob, rel string) {
		if checkEntry("p", glob) != nil || !hasGlobMeta(glob) {
			return // plain names are checked against the file system
		}
		p, fd := compileScopePattern(root, "p", glob)
		if fd != nil {
			return
		}
		p.matches(rel)
	})
}

// FuzzTerms checks that the byte-level word splitter agrees with
// splitIdent on ASCII identifiers.
func FuzzTerms(f *testing.F) {
	for _, seed := range []string{"parseHTTPRequest", "snake_case_v2", "XMLHttp", "a1B2c3", "__x__"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, id string) {
		for i := 0; i < len(id); i++ {
			if !isIdentByte(id[i]) || id[i] >= 0x80 {
				return
			}
		}
		var got []string
		for _, b := range identParts(id, nil) {
			got = append(got, id[b[0]:b[1]])
		}
		if want := splitIdent(id); !slices.Equal(got, want) {
			t.Errorf("identParts(%q): got %q, want %q", id, got, want)
		}
	})
}
