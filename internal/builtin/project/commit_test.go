package project_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/llm"
	"github.com/switchboard-mcp/switchboard/internal/llm/llmtest"

	"github.com/switchboard-mcp/switchboard/internal/builtin/project"
)

// commitRepo is a git repository a test creates.
type commitRepo struct {
	t   testing.TB
	dir string
}

// newCommitRepo creates an empty repository on branch main. git is a
// required peer: without it the test fails saying how to install it.
func newCommitRepo(t testing.TB) *commitRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git is not installed: install it (make peers) to run the commit_message tests: %v", err)
	}
	r := &commitRepo{t: t, dir: t.TempDir()}
	r.git("init", "-q", "-b", "main")
	return r
}

// git runs git in the repository with a fixed identity and no global or
// system configuration, and returns its trimmed output.
func (r *commitRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z")
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// write creates or replaces files (slash paths) in the work tree.
func (r *commitRepo) write(files map[string]string) {
	r.t.Helper()
	for name, content := range files {
		p := filepath.Join(r.dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
}

// commit stages everything and commits it, returning the hash.
func (r *commitRepo) commit(msg string) string {
	r.t.Helper()
	r.git("add", "-A")
	r.git("commit", "-q", "-m", msg)
	return r.git("rev-parse", "HEAD")
}

// commitFor calls CommitMessageFor on the repository without an LLM.
func (r *commitRepo) commitFor(req project.CommitRequest) (*project.CommitResponse, error) {
	return project.CommitMessageFor(context.Background(), project.CommitDeps{Root: r.dir}, req)
}

const baseGo = `package shop

// Cart holds items.
type Cart struct{ items []string }

// Add puts an item in the cart.
func (c *Cart) Add(item string) { c.items = append(c.items, item) }
`

// seedCommitRepo makes a repository with one commit of a small project.
func seedCommitRepo(t testing.TB) *commitRepo {
	r := newCommitRepo(t)
	r.write(map[string]string{
		"internal/shop/cart.go": baseGo,
		"internal/shop/old.go":  "package shop\n\n// Legacy is kept for old callers.\nfunc Legacy() {}\n",
		"README.md":             "# Shop\n",
	})
	r.commit("initial")
	return r
}

// checkFits checks the message limits: title at most 72 characters and
// maxLength, the whole message within maxLength.
func checkFits(t *testing.T, m project.CommitMessage, maxLength int) {
	t.Helper()
	if n := utf8.RuneCountInString(m.Title); n > 72 || n > maxLength || n == 0 {
		t.Errorf("got title of %d characters %q, want 1 to min(72, %d)", n, m.Title, maxLength)
	}
	if n := utf8.RuneCountInString(m.String()); n > maxLength {
		t.Errorf("got message of %d characters, want at most %d:\n%s", n, maxLength, m)
	}
	if strings.Contains(m.Title, "\n") {
		t.Errorf("got title %q, want one line", m.Title)
	}
}

func TestCommitMessageWorkingTree(t *testing.T) {
	scenarios := []struct {
		name    string
		change  func(r *commitRepo)
		want    []project.ChangedFile // Summary compared as a substring
		wantSub string                // in the Summary title
	}{
		{
			name: "added",
			change: func(r *commitRepo) {
				r.write(map[string]string{"internal/shop/checkout.go": "package shop\n\n// Checkout pays.\nfunc Checkout(c *Cart) error { return nil }\n"})
			},
			want:    []project.ChangedFile{{Path: "internal/shop/checkout.go", ChangeType: project.ChangeAdded, Summary: "adds func Checkout"}},
			wantSub: "Checkout",
		},
		{
			name: "modified",
			change: func(r *commitRepo) {
				r.write(map[string]string{"internal/shop/cart.go": strings.Replace(baseGo, "c.items = append(c.items, item)", "if item != \"\" {\n\t\tc.items = append(c.items, item)\n\t}", 1)})
			},
			want:    []project.ChangedFile{{Path: "internal/shop/cart.go", ChangeType: project.ChangeModified, Summary: "+3 -1 lines"}},
			wantSub: "cart.go",
		},
		{
			name:    "deleted",
			change:  func(r *commitRepo) { r.git("rm", "-q", "internal/shop/old.go") },
			want:    []project.ChangedFile{{Path: "internal/shop/old.go", ChangeType: project.ChangeDeleted, Summary: "removes func Legacy"}},
			wantSub: "Legacy",
		},
		{
			name:    "renamed",
			change:  func(r *commitRepo) { r.git("mv", "internal/shop/cart.go", "internal/shop/basket.go") },
			want:    []project.ChangedFile{{Path: "internal/shop/basket.go", ChangeType: project.ChangeRenamed, Summary: "renamed from internal/shop/cart.go"}},
			wantSub: "basket.go",
		},
	}
	for _, sc := range scenarios {
		// One repository per scenario, for its six formats and lengths:
		// CommitMessageFor only reads the repository (git with
		// GIT_OPTIONAL_LOCKS=0), so each subtest sees the same working
		// tree a fresh one would; seeding one per subtest ran git ~250
		// times more.
		t.Run(sc.name, func(t *testing.T) {
			r := seedCommitRepo(t)
			sc.change(r)
			for _, format := range []string{project.CommitConventional, project.CommitDetailed, project.CommitSummary} {
				for _, maxLength := range []int{0, 60} {
					t.Run(format+"/"+map[bool]string{true: "default", false: "60"}[maxLength == 0], func(t *testing.T) {
						resp, err := r.commitFor(project.CommitRequest{Format: format, MaxLength: maxLength})
						if err != nil {
							t.Fatal(err)
						}
						if len(resp.ChangedFiles) != len(sc.want) {
							t.Fatalf("got changed files %+v, want %+v", resp.ChangedFiles, sc.want)
						}
						for i, w := range sc.want {
							g := resp.ChangedFiles[i]
							if g.Path != w.Path || g.ChangeType != w.ChangeType || !strings.Contains(g.Summary, w.Summary) {
								t.Errorf("got changed file %+v, want %+v (summary containing)", g, w)
							}
						}
						limit := maxLength
						if limit == 0 {
							limit = project.DefaultCommitLength
						}
						checkFits(t, resp.CommitMessage, limit)
						m := resp.CommitMessage
						switch format {
						case project.CommitConventional:
							if !regexp.MustCompile(`^(feat|fix|refactor|chore)\(shop\)!?: `).MatchString(m.Title) {
								t.Errorf("got title %q, want a conventional title with scope shop", m.Title)
							}
						case project.CommitDetailed:
							if strings.Contains(m.Title, ": ") || m.Title[0] < 'A' || m.Title[0] > 'Z' {
								t.Errorf("got title %q, want a capitalised title without a type prefix", m.Title)
							}
							if maxLength == 0 && !strings.Contains(m.Body, sc.want[0].ChangeType+":") {
								t.Errorf("got body %q, want a %s section", m.Body, sc.want[0].ChangeType)
							}
						case project.CommitSummary:
							if m.Body != "" {
								t.Errorf("got body %q, want none in Summary", m.Body)
							}
						}
						if maxLength == 0 && !strings.Contains(m.Title, sc.wantSub) {
							t.Errorf("got title %q, want it to mention %q", m.Title, sc.wantSub)
						}
						if maxLength == 0 && format == project.CommitConventional && !strings.Contains(m.Body, sc.want[0].Path) {
							t.Errorf("got body %q, want it to list %s", m.Body, sc.want[0].Path)
						}
						wantFooter := "BREAKING CHANGE: removes exported func Legacy"
						if maxLength != 0 {
							wantFooter = "BREAKING CHANGE: removes" // cut to fit
						}
						if sc.name == "deleted" && !strings.HasPrefix(m.Footer, wantFooter) {
							t.Errorf("got footer %q, want a BREAKING CHANGE for the removed func", m.Footer)
						}
						if resp.Metadata.IsPartialResult || len(resp.Metadata.ModelsUsed) != 0 || resp.Metadata.TotalCost != 0 {
							t.Errorf("got metadata %+v, want a complete result with no model", resp.Metadata)
						}
						if resp.ImpactAnalysis != nil {
							t.Errorf("got impact %+v, want none unless asked", resp.ImpactAnalysis)
						}
					})
				}
			}
		})
	}
}

func TestCommitMessageUntrackedAndStaged(t *testing.T) {
	r := seedCommitRepo(t)
	r.write(map[string]string{
		"internal/shop/staged.go": "package shop\n",
		"notes/new.txt":           "one\ntwo\n",
		"ignored.log":             "noise\n",
		".gitignore":              "*.log\n",
	})
	r.git("add", "internal/shop/staged.go")
	r.write(map[string]string{"internal/shop/staged.go": "package shop\n\nvar X = 1\n"}) // unstaged on top
	resp, err := r.commitFor(project.CommitRequest{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range resp.ChangedFiles {
		got[f.Path] = f.ChangeType
	}
	want := map[string]string{".gitignore": project.ChangeAdded, "internal/shop/staged.go": project.ChangeAdded, "notes/new.txt": project.ChangeAdded}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("changed files mismatch (-want +got):\n%s", diff)
	}
	for _, f := range resp.ChangedFiles {
		if f.Path == "internal/shop/staged.go" && !strings.Contains(f.Summary, "+3 -0") {
			t.Errorf("got summary %q for the staged file, want the working tree's 3 lines", f.Summary)
		}
	}
}

func TestCommitMessageNoCommitsYet(t *testing.T) {
	r := newCommitRepo(t)
	r.write(map[string]string{"main.go": "package main\n\nfunc main() {}\n", "docs/guide.md": "# Guide\n"})
	r.git("add", "main.go")
	resp, err := r.commitFor(project.CommitRequest{IncludeImpact: true})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range resp.ChangedFiles {
		if f.ChangeType != project.ChangeAdded {
			t.Errorf("got %s %s, want Added in a repository with no commits", f.ChangeType, f.Path)
		}
		paths = append(paths, f.Path)
	}
	slices.Sort(paths)
	if diff := cmp.Diff([]string{"docs/guide.md", "main.go"}, paths); diff != "" {
		t.Errorf("paths mismatch (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(resp.CommitMessage.Title, "feat") {
		t.Errorf("got title %q, want feat for new code", resp.CommitMessage.Title)
	}
}

func TestCommitMessageSinceCommit(t *testing.T) {
	r := seedCommitRepo(t)
	first := r.git("rev-parse", "HEAD")
	r.write(map[string]string{"internal/shop/price.go": "package shop\n\n// Price is in cents.\ntype Price int\n"})
	r.commit("second")
	r.write(map[string]string{"README.md": "# Shop\n\nSells things.\n"})
	r.commit("third")
	r.write(map[string]string{"internal/shop/wip.go": "package shop\n"}) // uncommitted work counts too

	tests := []struct {
		ref  string
		want []string
	}{
		{ref: first[:7], want: []string{"README.md", "internal/shop/price.go", "internal/shop/wip.go"}},
		{ref: first, want: []string{"README.md", "internal/shop/price.go", "internal/shop/wip.go"}},
		{ref: "HEAD~1", want: []string{"README.md", "internal/shop/wip.go"}},
		{ref: "main", want: []string{"internal/shop/wip.go"}},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			resp, err := r.commitFor(project.CommitRequest{SinceCommit: tt.ref})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range resp.ChangedFiles {
				got = append(got, f.Path)
			}
			slices.Sort(got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("files since %s mismatch (-want +got):\n%s", tt.ref, diff)
			}
		})
	}

	// A tag made after the last change: nothing changed since.
	r2 := seedCommitRepo(t)
	r2.git("tag", "v1.0.0")
	_, err := r2.commitFor(project.CommitRequest{SinceCommit: "v1.0.0"})
	checkFieldError(t, err, "sinceCommit")
}

// checkFieldError checks that err is a validation error naming field.
func checkFieldError(t *testing.T, err error, field string) {
	t.Helper()
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Kind != fault.Validation {
		t.Fatalf("got error %v, want a validation error", err)
	}
	for _, f := range fe.Fields {
		if f.Field == field {
			return
		}
	}
	t.Errorf("got fields %+v, want one for %s", fe.Fields, field)
}

func TestCommitMessageRejectsBadRefs(t *testing.T) {
	r := seedCommitRepo(t)
	out := filepath.Join(t.TempDir(), "pwned")
	for _, ref := range []string{
		"--output=" + out,
		"-p",
		"HEAD;touch " + out,
		"$(touch " + out + ")",
		"main..HEAD",
		"../etc/passwd",
		"/etc/passwd",
		"@{-1}",
		"HEAD@{1}",
		"refs//heads",
		"main/",
		".hidden",
		"a b",
		"abc", // too short for a hash, but a valid ref name: no such commit
		strings.Repeat("a", 201),
		"deadbeef", // well formed, but no such commit
	} {
		t.Run(ref, func(t *testing.T) {
			_, err := r.commitFor(project.CommitRequest{SinceCommit: ref})
			checkFieldError(t, err, "sinceCommit")
		})
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("got %s created (err %v), want no file: a ref reached git as an option or a shell", out, err)
	}
}

func TestCommitMessageEmptyChangeSet(t *testing.T) {
	r := seedCommitRepo(t)
	_, err := r.commitFor(project.CommitRequest{})
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Kind != fault.Validation || !strings.Contains(fe.Message, "Nothing to commit") {
		t.Fatalf("got error %v, want a validation error saying there is nothing to commit", err)
	}
	_, err = r.commitFor(project.CommitRequest{SinceDiff: "just some text\nwith no diff in it\n"})
	checkFieldError(t, err, "sinceDiff")

	// A directory that is not a repository can only use sinceDiff.
	_, err = project.CommitMessageFor(context.Background(), project.CommitDeps{Root: t.TempDir()}, project.CommitRequest{})
	checkFieldError(t, err, "sinceDiff")
}

func TestCommitMessageValidation(t *testing.T) {
	tests := []struct {
		name  string
		req   project.CommitRequest
		field string
	}{
		{"unknown format", project.CommitRequest{Format: "Haiku"}, "format"},
		{"lower-case format", project.CommitRequest{Format: "conventional"}, "format"},
		{"scope with spaces", project.CommitRequest{Scope: "my scope"}, "scope"},
		{"scope too long", project.CommitRequest{Scope: strings.Repeat("s", 51)}, "scope"},
		{"maxLength too small", project.CommitRequest{MaxLength: 5}, "maxLength"},
		{"maxLength too large", project.CommitRequest{MaxLength: project.MaxCommitLength + 1}, "maxLength"},
		{"negative maxLength", project.CommitRequest{MaxLength: -1}, "maxLength"},
		{"negative maxCost", project.CommitRequest{MaxCost: -0.5}, "maxCost"},
		{"maxCost too large", project.CommitRequest{MaxCost: project.MaxCommitCost + 1}, "maxCost"},
		{"both sources", project.CommitRequest{SinceDiff: sampleDiff, SinceCommit: "HEAD"}, "sinceCommit"},
		{"diff too large", project.CommitRequest{SinceDiff: strings.Repeat("x", project.MaxSinceDiffChars+1)}, "sinceDiff"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := project.CommitMessageFor(context.Background(), project.CommitDeps{Root: t.TempDir()}, tt.req)
			checkFieldError(t, err, tt.field)
		})
	}
}

func TestCommitInputSchemaMatchesValidation(t *testing.T) {
	c := jsonschema.NewCompiler()
	raw, err := json.Marshal(project.CommitInputSchema())
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource("commit.json", doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("commit.json")
	if err != nil {
		t.Fatalf("CommitInputSchema does not compile: %v", err)
	}
	cases := []string{
		`{}`,
		`{"format":"Conventional","scope":"api","maxLength":72,"maxCost":0.5,"includeImpact":true}`,
		`{"format":"Detailed"}`, `{"format":"Summary"}`, `{"format":"summary"}`, `{"format":"Haiku"}`,
		`{"sinceCommit":"3f2a9c1"}`, `{"sinceCommit":"HEAD~2"}`, `{"sinceCommit":"HEAD^"}`, `{"sinceCommit":"release/v1.2.0"}`,
		`{"sinceCommit":"--output=x"}`, `{"sinceCommit":"a..b"}`, `{"sinceCommit":"@{-1}"}`, `{"sinceCommit":"x/"}`,
		`{"sinceCommit":".x"}`, `{"sinceCommit":"a b"}`,
		`{"scope":"parser"}`, `{"scope":"a b"}`, `{"scope":"-x"}`, `{"scope":"` + strings.Repeat("s", 51) + `"}`,
		`{"maxLength":19}`, `{"maxLength":20}`, `{"maxLength":20000}`, `{"maxLength":20001}`,
		`{"maxCost":-1}`, `{"maxCost":100}`, `{"maxCost":100.5}`,
		`{"sinceDiff":"diff","sinceCommit":"HEAD"}`,
	}
	for _, js := range cases {
		t.Run(js, func(t *testing.T) {
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(js))
			if err != nil {
				t.Fatal(err)
			}
			schemaOK := schema.Validate(inst) == nil
			var req project.CommitRequest
			if err := json.Unmarshal([]byte(js), &req); err != nil {
				t.Fatal(err)
			}
			codeOK := project.ValidateCommitRequest(&req) == nil
			if schemaOK != codeOK {
				t.Errorf("got schema valid %v, code valid %v; want them to agree", schemaOK, codeOK)
			}
		})
	}
}

// sampleDiff is git diff output covering every kind of change.
var sampleDiff = readSampleDiff()

// readSampleDiff reads testdata/sample.diff (the tests run in the package's directory).
func readSampleDiff() string {
	b, err := os.ReadFile(filepath.Join("testdata", "sample.diff"))
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestCommitMessageSinceDiff(t *testing.T) {
	resp, err := project.CommitMessageFor(context.Background(), project.CommitDeps{}, project.CommitRequest{SinceDiff: sampleDiff, IncludeImpact: true, Format: project.CommitDetailed})
	if err != nil {
		t.Fatal(err)
	}
	var got []project.ChangedFile
	for _, f := range resp.ChangedFiles {
		got = append(got, project.ChangedFile{Path: f.Path, ChangeType: f.ChangeType})
	}
	want := []project.ChangedFile{
		{"internal/api/handler.go", project.ChangeModified, ""}, {"docs/new name.md", project.ChangeRenamed, ""},
		{"assets/logo.png", project.ChangeAdded, ""}, {"scripts/run.sh", project.ChangeModified, ""},
		{"migrations/0001_init.sql", project.ChangeDeleted, ""}, {"with\ttab.txt", project.ChangeAdded, ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("changed files mismatch (-want +got):\n%s", diff)
	}
	sums := map[string]string{}
	for _, f := range resp.ChangedFiles {
		sums[f.Path] = f.Summary
	}
	for path, sub := range map[string]string{
		"internal/api/handler.go": "adds func Serve; removes func Old",
		"assets/logo.png":         "binary file",
		"scripts/run.sh":          "mode 100644 → 100755",
		"docs/new name.md":        "renamed from docs/old name.md",
	} {
		if !strings.Contains(sums[path], sub) {
			t.Errorf("got summary %q for %s, want it to contain %q", sums[path], path, sub)
		}
	}
	ia := resp.ImpactAnalysis
	if ia == nil {
		t.Fatal("got no impact analysis, want one")
	}
	if ia.Severity != project.SeverityMajor {
		t.Errorf("got severity %s, want Major (exported API removed, migration deleted)", ia.Severity)
	}
	if diff := cmp.Diff([]string{"(root)", "assets", "docs", "internal/api", "migrations", "scripts"}, ia.AffectedAreas); diff != "" {
		t.Errorf("affected areas mismatch (-want +got):\n%s", diff)
	}
	focus := strings.Join(ia.SuggestedReviewFocus, "\n")
	for _, sub := range []string{"Removed exported API (func Old)", "migration", "Binary files changed: assets/logo.png",
		"File mode changed: scripts/run.sh", "Code changed without test changes in internal/api\n"} {
		if !strings.Contains(focus+"\n", sub) {
			t.Errorf("got review focus %q, want it to mention %q", focus, sub)
		}
	}
	if !strings.Contains(resp.CommitMessage.Footer, "BREAKING CHANGE: removes exported func Old") {
		t.Errorf("got footer %q, want the breaking change", resp.CommitMessage.Footer)
	}
	if !strings.Contains(resp.CommitMessage.Body, "Impact: Major") {
		t.Errorf("got body %q, want the impact in a Detailed message", resp.CommitMessage.Body)
	}
}

// fileDiff is a git diff adding (or, with removed lines, modifying) one file.
func fileDiff(path string, added, removed []string) string {
	var b strings.Builder
	b.WriteString("diff --git a/" + path + " b/" + path + "\n--- a/" + path + "\n+++ b/" + path + "\n")
	b.WriteString("@@ -1," + strconv.Itoa(len(removed)) + " +1," + strconv.Itoa(len(added)) + " @@\n")
	for _, l := range removed {
		b.WriteString("-" + l + "\n")
	}
	for _, l := range added {
		b.WriteString("+" + l + "\n")
	}
	return b.String()
}

func TestCommitTypeAndScope(t *testing.T) {
	tests := []struct {
		name      string
		diff      string
		scope     string
		wantTitle string // prefix
		severity  string
	}{
		{"docs only", fileDiff("docs/guide.md", []string{"More words."}, []string{"Words."}), "", "docs: ", project.SeverityNone},
		{"tests only", fileDiff("internal/shop/cart_test.go", []string{"\tt.Log(1)"}, []string{"\tt.Log(0)"}), "", "test(shop): ", project.SeverityMinor},
		{"makefile", fileDiff("Makefile", []string{"test: lint"}, []string{"test:"}), "", "build: ", project.SeverityModerate},
		{"workflow", fileDiff(".github/workflows/ci.yml", []string{"  go: 1.26"}, []string{"  go: 1.25"}), "", "ci(workflows): ", project.SeverityModerate},
		{"new exported func", fileDiff("internal/shop/cart.go", []string{"func Total() int { return 0 }"}, nil), "", "feat(shop): add Total", project.SeverityModerate},
		{"removed exported func", fileDiff("internal/shop/cart.go", nil, []string{"func Total() int { return 0 }"}), "", "fix(shop)!: remove Total", project.SeverityMajor},
		{"whitespace", fileDiff("internal/shop/cart.go", []string{"\tx  :=  1"}, []string{"\tx := 1"}), "", "style(shop): ", project.SeverityNone},
		{"small fix", fileDiff("internal/shop/cart.go", []string{"\tif c == nil { return }"}, []string{"\treturn"}), "", "fix(shop): ", project.SeverityMinor},
		{"given scope", fileDiff("internal/shop/cart.go", []string{"\tif c == nil { return }"}, []string{"\treturn"}), "checkout", "fix(checkout): ", project.SeverityMinor},
		{"security-sensitive", fileDiff("internal/auth/token.go", []string{"\treturn 2"}, []string{"\treturn 1"}), "", "fix(auth): ", project.SeverityModerate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := project.CommitMessageFor(context.Background(), project.CommitDeps{}, project.CommitRequest{SinceDiff: tt.diff, Scope: tt.scope, IncludeImpact: true})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(resp.CommitMessage.Title, tt.wantTitle) {
				t.Errorf("got title %q, want prefix %q", resp.CommitMessage.Title, tt.wantTitle)
			}
			if got := resp.ImpactAnalysis.Severity; got != tt.severity {
				t.Errorf("got severity %s, want %s", got, tt.severity)
			}
		})
	}
}

func TestCommitMessageMaxLength(t *testing.T) {
	var diff strings.Builder
	for i := range 40 {
		diff.WriteString(fileDiff("internal/pkg"+string(rune('a'+i%26))+"/file"+strconv.Itoa(i)+".go",
			[]string{"func Exported" + string(rune('A'+i%26)) + "() {}"}, nil))
	}
	for _, format := range []string{project.CommitConventional, project.CommitDetailed, project.CommitSummary} {
		for _, maxLength := range []int{20, 50, 72, 120, 400} {
			resp, err := project.CommitMessageFor(context.Background(), project.CommitDeps{}, project.CommitRequest{SinceDiff: diff.String(), Format: format, MaxLength: maxLength, IncludeImpact: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Run(format+"/"+strconv.Itoa(maxLength), func(t *testing.T) {
				checkFits(t, resp.CommitMessage, maxLength)
				if format != project.CommitSummary && maxLength >= 120 && !strings.Contains(resp.CommitMessage.Body, "more lines not shown") {
					t.Errorf("got body %q, want an indicator of what was cut", resp.CommitMessage.Body)
				}
			})
		}
	}
}

// commitLLM is a client of a scripted endpoint.
func commitLLM(t *testing.T, srv *llmtest.Server, promptPrice, completionPrice float64, timeout time.Duration) *llm.Client {
	t.Helper()
	c, err := llm.New(llm.Config{BaseURL: srv.URL(), Model: "scripted", PromptPrice: promptPrice, CompletionPrice: completionPrice, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCommitMessageWithLLM(t *testing.T) {
	r := seedCommitRepo(t)
	r.write(map[string]string{"internal/shop/checkout.go": "package shop\n\n// Checkout pays.\nfunc Checkout(c *Cart) error { return nil }\n\nconst password = \"hunter2-s3cret-value\"\n"})
	srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response {
		return llmtest.Response{
			Text:         "```\nadd checkout to the shop\n\nCheckout pays for a cart so that orders can be\ncompleted.\n\nRefs: #42\n```",
			PromptTokens: 900, CompletionTokens: 40,
		}
	})
	client := commitLLM(t, srv, 1, 2, 0)
	resp, err := project.CommitMessageFor(context.Background(), project.CommitDeps{Root: r.dir, LLM: client}, project.CommitRequest{MaxCost: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	want := project.CommitMessage{
		Title:  "feat(shop): add checkout to the shop",
		Body:   "Checkout pays for a cart so that orders can be\ncompleted.",
		Footer: "Refs: #42",
	}
	if diff := cmp.Diff(want, resp.CommitMessage); diff != "" {
		t.Errorf("message mismatch (-want +got):\n%s", diff)
	}
	wantMeta := project.CommitMetadata{ModelsUsed: []string{"scripted"}, TotalCost: (900*1 + 40*2) / 1e6}
	resp.Metadata.ExecutionTimeMs = 0
	if diff := cmp.Diff(wantMeta, resp.Metadata); diff != "" {
		t.Errorf("metadata mismatch (-want +got):\n%s", diff)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("got %d LLM requests, want 1", len(reqs))
	}
	prompt := reqs[0].Messages[len(reqs[0].Messages)-1].Content
	for _, sub := range []string{"Added internal/shop/checkout.go", "func Checkout", "+func Checkout(c *Cart) error"} {
		if !strings.Contains(prompt, sub) {
			t.Errorf("got prompt %q, want it to contain %q", prompt, sub)
		}
	}
	if strings.Contains(prompt, "hunter2-s3cret-value") {
		t.Errorf("got prompt %q, want the credential redacted before it reaches the model", prompt)
	}
	if reqs[0].MaxTokens <= 0 {
		t.Errorf("got max_tokens %d, want a bound derived from maxCost", reqs[0].MaxTokens)
	}
}

func TestCommitMessageWithLLMWithinMaxLength(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Request) llmtest.Response {
		return llmtest.Response{Text: "fix(api): " + strings.Repeat("very long title ", 10) + "\n\n- " + strings.Repeat("a bullet far too long ", 8) + "\n" + strings.Repeat("A long body line.\n", 50) +
			"\nBREAKING CHANGE: everything"}
	})
	resp, err := project.CommitMessageFor(context.Background(), project.CommitDeps{LLM: commitLLM(t, srv, 0, 0, 0)},
		project.CommitRequest{SinceDiff: sampleDiff, MaxLength: 200})
	if err != nil {
		t.Fatal(err)
	}
	checkFits(t, resp.CommitMessage, 200)
	for _, line := range strings.Split(resp.CommitMessage.Body, "\n") {
		if n := utf8.RuneCountInString(line); n > 72 {
			t.Errorf("got body line of %d characters %q, want it wrapped at 72", n, line)
		}
	}
	if !strings.HasPrefix(resp.CommitMessage.Title, "fix(api): very long") || !strings.HasPrefix(resp.CommitMessage.Footer, "BREAKING CHANGE: everything") {
		t.Errorf("got %+v, want the drafted title and footer", resp.CommitMessage)
	}
}

func TestCommitMessageWithLLMPartial(t *testing.T) {
	tests := []struct {
		name         string
		resp         llmtest.Response
		promptPrice  float64
		maxCost      float64
		timeout      time.Duration
		wantRequests int
		wantMissing  string
		wantModel    bool
	}{
		{
			name: "prompt over budget", resp: llmtest.Response{Text: "never"},
			promptPrice: 1000, maxCost: 0.0001, wantRequests: 0, wantMissing: "maxCost budget",
		},
		{
			name: "answer cut at max_tokens", resp: llmtest.Response{Text: "feat: half a", FinishReason: "length", PromptTokens: 100, CompletionTokens: 3},
			promptPrice: 1, maxCost: 0.5, wantRequests: 1, wantMissing: "cut off by the maxCost budget", wantModel: true,
		},
		// A request that was made is recorded even when it failed.
		{
			name: "too slow", resp: llmtest.Response{Text: "late", Delay: 10 * time.Second},
			timeout: 300 * time.Millisecond, wantRequests: 1, wantMissing: "did not answer in time", wantModel: true,
		},
		{
			name: "endpoint fails", resp: llmtest.Response{Status: 500, Text: "boom"},
			wantRequests: 1, wantMissing: "HTTP 500", wantModel: true,
		},
		{
			name: "empty answer", resp: llmtest.Response{Text: "  \n"},
			wantRequests: 1, wantMissing: "no usable message", wantModel: true,
		},
	}
	rule, err := project.CommitMessageFor(context.Background(), project.CommitDeps{}, project.CommitRequest{SinceDiff: sampleDiff})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, func(llmtest.Request) llmtest.Response { return tt.resp })
			client := commitLLM(t, srv, tt.promptPrice, 1, tt.timeout)
			resp, err := project.CommitMessageFor(context.Background(), project.CommitDeps{LLM: client}, project.CommitRequest{SinceDiff: sampleDiff, MaxCost: tt.maxCost})
			if err != nil {
				t.Fatal(err)
			}
			if n := len(srv.Requests()); n != tt.wantRequests {
				t.Errorf("got %d LLM requests, want %d", n, tt.wantRequests)
			}
			if !resp.Metadata.IsPartialResult || !strings.Contains(resp.Metadata.Missing, tt.wantMissing) {
				t.Errorf("got partial %v, missing %q; want partial with %q", resp.Metadata.IsPartialResult, resp.Metadata.Missing, tt.wantMissing)
			}
			if diff := cmp.Diff(rule.CommitMessage, resp.CommitMessage); diff != "" {
				t.Errorf("got a message other than the rule-based one (-want +got):\n%s", diff)
			}
			if got := len(resp.Metadata.ModelsUsed) > 0; got != tt.wantModel {
				t.Errorf("got models used %v, want a model listed: %v", resp.Metadata.ModelsUsed, tt.wantModel)
			}
		})
	}
}

func TestCommitMessageRootBelowRepository(t *testing.T) {
	r := seedCommitRepo(t)
	r.write(map[string]string{"internal/shop/cart.go": baseGo + "\n// More.\n", "README.md": "# Changed\n", "internal/shop/new.go": "package shop\n"})
	resp, err := project.CommitMessageFor(context.Background(), project.CommitDeps{Root: filepath.Join(r.dir, "internal")}, project.CommitRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var got []project.ChangedFile
	for _, f := range resp.ChangedFiles {
		got = append(got, project.ChangedFile{Path: f.Path, ChangeType: f.ChangeType})
	}
	want := []project.ChangedFile{{Path: "shop/cart.go", ChangeType: project.ChangeModified}, {Path: "shop/new.go", ChangeType: project.ChangeAdded}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("changed files under the root mismatch (-want +got):\n%s", diff)
	}
}

// commitSession seeds a commit repo with one changed file and returns an
// MCP client session to a project server on it, closed when the test ends.
func commitSession(t *testing.T) *mcp.ClientSession {
	t.Helper()
	r := seedCommitRepo(t)
	r.write(map[string]string{"internal/shop/checkout.go": "package shop\n\n// Checkout pays.\nfunc Checkout() {}\n"})
	srv, err := project.NewServer(project.Options{Root: r.dir, RescanInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestCommitMessageOverMCP(t *testing.T) {
	cs := commitSession(t)
	ctx := context.Background()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	for _, tool := range tools.Tools {
		if tool.Name == "commit_message" {
			raw, _ := json.Marshal(tool.InputSchema)
			_ = json.Unmarshal(raw, &schema)
		}
	}
	props, _ := schema["properties"].(map[string]any)
	if _, ok := props["sinceCommit"]; !ok {
		t.Fatalf("got commit_message schema %v, want CommitInputSchema's properties", schema)
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "commit_message", Arguments: map[string]any{"includeImpact": true, "maxLength": 200}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("got error result %v, want a message", res.Content)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var got project.CommitResponse
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if got.CommitMessage.Title != "feat(shop): add Checkout" || got.ImpactAnalysis == nil ||
		len(got.ChangedFiles) != 1 || got.ChangedFiles[0].ChangeType != project.ChangeAdded {
		t.Errorf("got %s, want feat(shop): add Checkout with the added file and an impact analysis", raw)
	}
	checkFits(t, got.CommitMessage, 200)

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "commit_message", Arguments: map[string]any{"sinceCommit": "--output=/tmp/x"}})
	if err != nil {
		t.Fatal(err)
	}
	text := ""
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	if !res.IsError || !strings.Contains(text, "validation_error") || !strings.Contains(text, "sinceCommit") {
		t.Errorf("got isError %v, %s; want a validation error naming sinceCommit", res.IsError, text)
	}
}

// TestCommitMessageEmptySource checks that an empty sinceDiff or
// sinceCommit is a validation error naming it, reported with the request's
// other problems, rather than a silent fall-back to the working tree.
func TestCommitMessageEmptySource(t *testing.T) {
	cs := commitSession(t)
	ctx := context.Background()
	tests := []struct {
		args       map[string]any
		wantFields []string
	}{
		{map[string]any{"sinceDiff": ""}, []string{"sinceDiff"}},
		{map[string]any{"sinceCommit": ""}, []string{"sinceCommit"}},
		{map[string]any{"sinceDiff": "", "format": "Haiku"}, []string{"sinceDiff", "format"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.args), func(t *testing.T) {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "commit_message", Arguments: tt.args})
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := json.Marshal(res.StructuredContent)
			var got struct {
				ErrorType string `json:"error_type"`
				Details   struct {
					Fields []fault.FieldDetail `json:"fields"`
				} `json:"details"`
			}
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			var fields []string
			for _, f := range got.Details.Fields {
				fields = append(fields, f.Field)
			}
			if !res.IsError || got.ErrorType != "validation_error" || !slices.Equal(fields, tt.wantFields) {
				t.Errorf("got isError %v, %s; want a validation error on %v", res.IsError, raw, tt.wantFields)
			}
		})
	}
	// Left out, the working tree is described.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "commit_message", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("got %v, %v; want a message for the working tree", err, res)
	}
}
