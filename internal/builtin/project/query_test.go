package project_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboard-mcp/switchboard/internal/llm"
	"github.com/switchboard-mcp/switchboard/internal/llm/llmtest"
	"github.com/switchboard-mcp/switchboard/internal/redact"

	"github.com/switchboard-mcp/switchboard/internal/builtin/project"
)

// queryRepoFiles is the project most query tests search.
var queryRepoFiles = map[string]string{
	"go.mod": "module example.com/shop\n\ngo 1.26\n",
	"config/loader.go": `package config

import (
	"encoding/json"
	"os"
)

// Settings holds the shop's settings.
type Settings struct {
	Port int
}

// ParseConfigFile reads the settings from a JSON file.
func ParseConfigFile(path string) (*Settings, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s Settings
	return &s, json.Unmarshal(data, &s)
}
`,
	"server/http.go": `package server

import "net/http"

// StartHTTPServer listens on addr and serves the shop's pages.
func StartHTTPServer(addr string) error {
	mux := http.NewServeMux()
	mux.HandleFunc("/cart", handleCart)
	return http.ListenAndServe(addr, mux)
}

func handleCart(w http.ResponseWriter, r *http.Request) {
	w.Write([]byte("cart"))
}
`,
	"server/http_test.go": `package server

import "testing"

func TestStartHTTPServer(t *testing.T) {
	// StartHTTPServer is exercised by the integration suite.
}
`,
	"scripts/report.py": `import csv


class InventoryReport:
    """Summarises the stock levels."""

    def __init__(self, rows):
        self.rows = rows


def compute_stock_levels(rows):
    return {r["sku"]: int(r["count"]) for r in rows}
`,
	"web/cart.js": `// The shopping cart widget.
export class ShoppingCart {
  constructor() { this.items = []; }
}

export function addItemToCart(cart, item) {
  cart.items.push(item);
  return cart;
}
`,
	"vendor/lib/cart.go":   "package lib\n\n// VendoredCart is a vendored cart helper.\nfunc VendoredCart() {}\n",
	"docs/notes.md":        "# Notes\n\nThe cart is rendered by the web widget.\n",
	"build/output.log":     "cart build log: ParseConfigFile compiled\n",
	".gitignore":           "*.log\nbuild/\n",
	"assets/logo.bin":      "PNG\x00\x01\x02 cart ParseConfigFile",
	"internal/a/b/deep.go": "package b\n\n// DeepHelper is nested.\nfunc DeepHelper() {}\n",
}

// newQueryRepo creates a git repository holding files, committed.
func newQueryRepo(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	writeQueryFiles(t, dir, files)
	gitIn(t, dir, "init", "-q")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "initial")
	return dir
}

func writeQueryFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// gitIn runs git in dir with a fixed identity and no user configuration.
func gitIn(t testing.TB, dir string, args ...string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git is not installed: %v (install git, e.g. apt-get install git, or run make peers)", err)
	}
	cmd := exec.Command("git", append([]string{"-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// queryEnv is a running project server and a connected client.
type queryEnv struct {
	srv *project.Server
	cs  *mcp.ClientSession

	mu       sync.Mutex
	progress []*mcp.ProgressNotificationParams
}

// startQueryServer runs a project server for opts (Run included) and
// connects a client over in-memory transports. Both stop when the test
// ends.
func startQueryServer(t testing.TB, opts project.Options, hook func(rel string)) *queryEnv {
	t.Helper()
	srv, err := project.NewServer(opts)
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	srv.SetBeforeFile(hook)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := srv.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	env := &queryEnv{srv: srv}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatalf("server Connect: %v", err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			env.mu.Lock()
			env.progress = append(env.progress, req.Params)
			env.mu.Unlock()
		},
	})
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("client Connect: %v", err)
	}
	env.cs = cs
	t.Cleanup(func() {
		cs.Close()
		ss.Close()
		cancel()
		wg.Wait()
	})
	return env
}

// waitIndexed polls until the first index build is complete.
func (e *queryEnv) waitIndexed(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for e.srv.Progress().Status != project.StatusComplete {
		if time.Now().After(deadline) {
			t.Fatalf("index not complete after 30s: %+v", e.srv.Progress())
		}
		time.Sleep(5 * time.Millisecond) // polling with a deadline, not synchronising
	}
}

// call calls a tool and decodes its structured result.
func (e *queryEnv) call(t testing.TB, tool string, args any) (map[string]any, bool) {
	t.Helper()
	params := &mcp.CallToolParams{Name: tool, Arguments: args}
	res, err := e.cs.CallTool(context.Background(), params)
	if err != nil {
		t.Fatalf("CallTool %s: %v", tool, err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	var m map[string]any
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		t.Fatalf("result is not JSON: %v\n%s", err, text)
	}
	return m, res.IsError
}

// query calls general_query with the JSON format and decodes the response.
func (e *queryEnv) query(t testing.TB, args map[string]any) project.QueryResponse {
	t.Helper()
	if _, ok := args["responseFormat"]; !ok {
		args["responseFormat"] = project.FormatJSON
	}
	m, isErr := e.call(t, project.ToolGeneralQuery, args)
	if isErr {
		t.Fatalf("general_query(%v) failed: %v", args, m)
	}
	data, _ := json.Marshal(m)
	var resp project.QueryResponse
	var results project.QueryResults
	resp.Results = &results
	if err := json.Unmarshal(data, &resp); err != nil {
		t.Fatalf("decoding %s: %v", data, err)
	}
	return resp
}

func passagesOf(r project.QueryResponse) []project.Passage {
	return r.Results.(*project.QueryResults).Passages
}

func TestQueryFindsFileAndLine(t *testing.T) {
	env := startQueryServer(t, project.Options{Root: newQueryRepo(t, queryRepoFiles)}, nil)
	env.waitIndexed(t)
	tests := []struct {
		query    any
		wantFile string
		wantLine int
	}{
		{"where is ParseConfigFile defined?", "config/loader.go", 14},
		{"parse config file", "config/loader.go", 14},
		{"start the http server", "server/http.go", 6},
		{"compute stock levels", "scripts/report.py", 11},
		{"InventoryReport class", "scripts/report.py", 4},
		{"add item to cart", "web/cart.js", 6},
		{map[string]any{"symbols": []string{"DeepHelper"}}, "internal/a/b/deep.go", 4},
		{map[string]any{"text": "settings", "keywords": []string{"Port"}}, "config/loader.go", 9},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.query), func(t *testing.T) {
			resp := env.query(t, map[string]any{"query": tt.query})
			ps := passagesOf(resp)
			if len(ps) == 0 {
				t.Fatalf("got no passages, want %s:%d", tt.wantFile, tt.wantLine)
			}
			if got := fmt.Sprintf("%s:%d", ps[0].File, ps[0].Line); got != fmt.Sprintf("%s:%d", tt.wantFile, tt.wantLine) {
				t.Errorf("got top hit %s, want %s:%d (all: %+v)", got, tt.wantFile, tt.wantLine, ps)
			}
			if ps[0].StartLine > ps[0].Line || ps[0].Line > ps[0].EndLine {
				t.Errorf("got line %d outside its passage %d-%d", ps[0].Line, ps[0].StartLine, ps[0].EndLine)
			}
			if resp.IsPartialResult {
				t.Errorf("got a partial result (%s), want complete", resp.Missing)
			}
			md := resp.Metadata
			if md.BackgroundTaskProgress == nil || md.BackgroundTaskProgress.Status != project.StatusComplete || md.BackgroundTaskProgress.PercentComplete != 100 {
				t.Errorf("got backgroundTaskProgress %+v, want Complete at 100%%", md.BackgroundTaskProgress)
			}
			if md.FilesProcessed == 0 || len(md.Tools) != 2 || md.Tools[0].Name != project.ToolIndex || md.Tools[1].Name != project.ToolRetrieval {
				t.Errorf("got metadata %+v, want files processed and the index and retrieval tools", md)
			}
		})
	}
}

func TestQueryRespectsGitignoreAndSkipsBinaries(t *testing.T) {
	env := startQueryServer(t, project.Options{Root: newQueryRepo(t, queryRepoFiles)}, nil)
	env.waitIndexed(t)
	resp := env.query(t, map[string]any{"query": map[string]any{"text": "ParseConfigFile cart", "maxResults": 50}})
	for _, p := range passagesOf(resp) {
		if strings.HasPrefix(p.File, "build/") || strings.HasSuffix(p.File, ".log") || strings.HasSuffix(p.File, ".bin") {
			t.Errorf("got %s, want ignored and binary files left out", p.File)
		}
	}
	if len(passagesOf(resp)) < 3 {
		t.Errorf("got %d passages, want the loader, cart and notes files", len(passagesOf(resp)))
	}
}

func TestQueryScope(t *testing.T) {
	env := startQueryServer(t, project.Options{Root: newQueryRepo(t, queryRepoFiles)}, nil)
	env.waitIndexed(t)
	tests := []struct {
		name  string
		scope map[string]any
		ok    func(file string) bool
		want  string // a file that must be found
	}{
		{"directories", map[string]any{"directories": []string{"server"}},
			func(f string) bool { return strings.HasPrefix(f, "server/") }, "server/http.go"},
		{"filePatterns", map[string]any{"filePatterns": []string{"*.js", "scripts/*.py"}},
			func(f string) bool { return f == "web/cart.js" || f == "scripts/report.py" }, "web/cart.js"},
		{"excludePatterns", map[string]any{"excludePatterns": []string{"vendor", "*.md", "web/**"}},
			func(f string) bool {
				return !strings.HasPrefix(f, "vendor/") && !strings.HasSuffix(f, ".md") && !strings.HasPrefix(f, "web/")
			}, "server/http.go"},
		{"all three", map[string]any{"directories": []string{"./server", "vendor"}, "filePatterns": []string{"**/*.go"}, "excludePatterns": []string{"*_test.go"}},
			func(f string) bool { return f == "server/http.go" || f == "vendor/lib/cart.go" }, "vendor/lib/cart.go"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := env.query(t, map[string]any{"query": map[string]any{"text": "cart handleCart server StartHTTPServer VendoredCart", "maxResults": 50}, "scope": tt.scope})
			found := false
			for _, p := range passagesOf(resp) {
				if !tt.ok(p.File) {
					t.Errorf("got %s, want only files in scope %v", p.File, tt.scope)
				}
				found = found || p.File == tt.want
			}
			if !found {
				t.Errorf("got %v, want %s among the results", passagesOf(resp), tt.want)
			}
		})
	}
}

func TestQueryRejectsTraversal(t *testing.T) {
	root := newQueryRepo(t, queryRepoFiles)
	outside := t.TempDir()
	writeQueryFiles(t, outside, map[string]string{"secret.go": "package secret\n", "dir/x.go": "package x\n"})
	for link, target := range map[string]string{
		"linkfile":  filepath.Join(outside, "secret.go"),
		"linkdir":   filepath.Join(outside, "dir"),
		"server/up": "../..",  // relative, to the root's parent
		"innerlink": "server", // inside: allowed
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	env := startQueryServer(t, project.Options{Root: root}, nil)
	tests := []struct {
		scope     map[string]any
		wantField string
		wantMsg   string
	}{
		{map[string]any{"directories": []string{"../x"}}, "scope.directories[0]", "'..'"},
		{map[string]any{"directories": []string{"server/../../x"}}, "scope.directories[0]", "'..'"},
		{map[string]any{"directories": []string{"/etc"}}, "scope.directories[0]", "absolute path outside"},
		{map[string]any{"directories": []string{outside}}, "scope.directories[0]", "absolute path outside"},
		{map[string]any{"directories": []string{"linkdir"}}, "scope.directories[0]", "symbolic link"},
		{map[string]any{"directories": []string{"linkdir/"}}, "scope.directories[0]", "symbolic link"},
		{map[string]any{"directories": []string{"server", "server/up"}}, "scope.directories[1]", "symbolic link"},
		{map[string]any{"filePatterns": []string{"linkfile"}}, "scope.filePatterns[0]", "symbolic link"},
		{map[string]any{"filePatterns": []string{"linkdir/x.go"}}, "scope.filePatterns[0]", "symbolic link"},
		{map[string]any{"filePatterns": []string{"../**/*.go"}}, "scope.filePatterns[0]", "'..'"},
		{map[string]any{"filePatterns": []string{"/etc/passwd"}}, "scope.filePatterns[0]", "absolute path outside"},
		{map[string]any{"excludePatterns": []string{"/etc/*"}}, "scope.excludePatterns[0]", "relative to the project root"},
		{map[string]any{"directories": []string{"no/such/dir"}}, "scope.directories[0]", "does not exist"},
		{map[string]any{"directories": []string{"go.mod"}}, "scope.directories[0]", "is not a directory"},
		{map[string]any{"directories": []string{"server", "config/loader.go"}}, "scope.directories[1]", "is not a directory"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.scope), func(t *testing.T) {
			m, isErr := env.call(t, project.ToolGeneralQuery, map[string]any{"query": "cart", "scope": tt.scope})
			if !isErr {
				t.Fatalf("got a result %v, want a validation error", m)
			}
			if got, want := m["error_type"], "validation_error"; got != want {
				t.Errorf("got error_type %v, want %v", got, want)
			}
			details, _ := m["details"].(map[string]any)
			fields, _ := details["fields"].([]any)
			if len(fields) != 1 {
				t.Fatalf("got fields %v, want one", m["details"])
			}
			f := fields[0].(map[string]any)
			if got := f["field"]; got != tt.wantField {
				t.Errorf("got field %v, want %s", got, tt.wantField)
			}
			if msg, _ := f["message"].(string); !strings.Contains(msg, tt.wantMsg) {
				t.Errorf("got message %q, want it to mention %q", msg, tt.wantMsg)
			}
		})
	}
	// A link that stays inside the root is fine, and links are never
	// followed by the index.
	env.waitIndexed(t)
	resp := env.query(t, map[string]any{"query": "secret package", "scope": map[string]any{"directories": []string{"innerlink"}}})
	for _, p := range passagesOf(resp) {
		if !strings.HasPrefix(p.File, "server/") {
			t.Errorf("got %s, want files of server/ (innerlink's target)", p.File)
		}
	}
	resp = env.query(t, map[string]any{"query": "package secret"})
	for _, p := range passagesOf(resp) {
		if strings.Contains(p.Snippet, "package secret") {
			t.Errorf("got %s with the outside file's content, want links out never read", p.File)
		}
	}
}

func TestQueryValidation(t *testing.T) {
	env := startQueryServer(t, project.Options{Root: newQueryRepo(t, queryRepoFiles)}, nil)
	many := make([]string, project.MaxScopeEntries+1)
	for i := range many {
		many[i] = "*.go"
	}
	tests := []struct {
		name      string
		args      map[string]any
		wantField string
	}{
		{"missing query", map[string]any{}, "query"},
		{"empty query", map[string]any{"query": ""}, "query"},
		{"query of stop words", map[string]any{"query": "what is the"}, "query"},
		{"query too long", map[string]any{"query": strings.Repeat("a ", project.MaxQueryLength)}, "query"},
		{"query a number", map[string]any{"query": 42}, "query"},
		{"unknown field", map[string]any{"query": "cart", "verbose": true}, "verbose"},
		{"unknown query field", map[string]any{"query": map[string]any{"txt": "cart"}}, "query.txt"},
		{"maxResults too big", map[string]any{"query": map[string]any{"text": "cart", "maxResults": 51}}, "query.maxResults"},
		{"queryType mismatch", map[string]any{"query": "cart", "queryType": "StructuredJSON"}, "queryType"},
		{"queryType unknown", map[string]any{"query": "cart", "queryType": "SQL"}, "queryType"},
		{"responseFormat", map[string]any{"query": "cart", "responseFormat": "XML"}, "responseFormat"},
		{"timeout 0", map[string]any{"query": "cart", "timeout": 0}, "timeout"},
		{"timeout 301", map[string]any{"query": "cart", "timeout": 301}, "timeout"},
		{"timeout fractional", map[string]any{"query": "cart", "timeout": 1.5}, "timeout"},
		{"timeout a string", map[string]any{"query": "cart", "timeout": "10"}, "timeout"},
		{"maxCost negative", map[string]any{"query": "cart", "maxCost": -0.01}, "maxCost"},
		{"maxCost too big", map[string]any{"query": "cart", "maxCost": 1000}, "maxCost"},
		{"context not an object", map[string]any{"query": "cart", "context": "hi"}, "context"},
		{"context too big", map[string]any{"query": "cart", "context": map[string]any{"x": strings.Repeat("y", project.MaxContextBytes)}}, "context"},
		{"too many patterns", map[string]any{"query": "cart", "scope": map[string]any{"filePatterns": many}}, "scope.filePatterns"},
		{"pattern too long", map[string]any{"query": "cart", "scope": map[string]any{"excludePatterns": []string{strings.Repeat("a", project.MaxScopeEntry+1)}}}, "scope.excludePatterns[0]"},
		{"empty directory", map[string]any{"query": "cart", "scope": map[string]any{"directories": []string{" "}}}, "scope.directories[0]"},
		{"bad glob", map[string]any{"query": "cart", "scope": map[string]any{"filePatterns": []string{"[a-"}}}, "scope.filePatterns[0]"},
		{"unknown scope field", map[string]any{"query": "cart", "scope": map[string]any{"dirs": []string{"x"}}}, "scope.dirs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, isErr := env.call(t, project.ToolGeneralQuery, tt.args)
			if !isErr {
				t.Fatalf("got a result, want a validation error on %s", tt.wantField)
			}
			if got, want := m["error_type"], "validation_error"; got != want {
				t.Errorf("got error_type %v, want %v (%v)", got, want, m)
			}
			details, _ := m["details"].(map[string]any)
			fields, _ := details["fields"].([]any)
			var names []string
			for _, f := range fields {
				names = append(names, fmt.Sprint(f.(map[string]any)["field"]))
			}
			if len(names) == 0 || names[0] != tt.wantField {
				t.Errorf("got fields %v, want %s (%v)", names, tt.wantField, m)
			}
		})
	}
	// The whole request is bounded too.
	m, isErr := env.call(t, project.ToolGeneralQuery, map[string]any{"query": "cart", "context": map[string]any{"x": strings.Repeat("y", project.MaxArgumentsBytes)}})
	if !isErr || !strings.Contains(fmt.Sprint(m["message"]), "bytes") {
		t.Errorf("got %v, want the request size rejected", m)
	}
}

func TestQueryResponseFormats(t *testing.T) {
	env := startQueryServer(t, project.Options{Root: newQueryRepo(t, queryRepoFiles)}, nil)
	env.waitIndexed(t)
	tests := []struct {
		format string
		want   []string
	}{
		{project.FormatConcise, []string{"config/loader.go:14  func ParseConfigFile(path string) (*Settings, error) {"}},
		{project.FormatDetailed, []string{"[1] config/loader.go:14 (lines 1-21", "defines ParseConfigFile", "14: func ParseConfigFile"}},
		{project.FormatMarkdown, []string{"### config/loader.go:14 (lines 1-21)", "```go\npackage config"}},
		{"", []string{"### config/loader.go:14"}}, // Markdown is the default
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			args := map[string]any{"query": "ParseConfigFile"}
			if tt.format != "" {
				args["responseFormat"] = tt.format
			}
			m, isErr := env.call(t, project.ToolGeneralQuery, args)
			if isErr {
				t.Fatalf("got error %v", m)
			}
			text, ok := m["results"].(string)
			if !ok {
				t.Fatalf("got results %T, want a string", m["results"])
			}
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("got results\n%s\nwant them to contain %q", text, w)
				}
			}
		})
	}
	resp := env.query(t, map[string]any{"query": "ParseConfigFile", "responseFormat": project.FormatJSON})
	ps := passagesOf(resp)
	if len(ps) == 0 || !strings.Contains(ps[0].Snippet, "func ParseConfigFile(path string)") || len(ps[0].Symbols) == 0 {
		t.Errorf("got passages %+v, want the loader with its snippet and matched symbol", ps)
	}
	if len(resp.Suggestions) == 0 {
		t.Errorf("got no suggestions, want related queries")
	}
}

func TestQueryPartialWhileIndexing(t *testing.T) {
	files := map[string]string{}
	for i := range 20 {
		files[fmt.Sprintf("pkg/file%02d.go", i)] = fmt.Sprintf("package pkg\n\n// Widget%d does things.\nfunc Widget%d() {}\n", i, i)
	}
	root := newQueryRepo(t, files)
	release := make(chan struct{})
	var releaseOnce sync.Once
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	var seen sync.Map
	hook := func(rel string) {
		seen.Store(rel, true)
		if rel == "pkg/file05.go" {
			<-release // hold the first build here
		}
	}
	env := startQueryServer(t, project.Options{Root: root}, hook)
	params := &mcp.CallToolParams{Name: project.ToolGeneralQuery, Arguments: map[string]any{"query": "Widget2 Widget3 Widget12", "timeout": 1, "responseFormat": project.FormatJSON}}
	params.SetProgressToken("tok-1")
	start := time.Now()
	res, err := env.cs.CallTool(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("got the answer after %s, want it within the 1 s timeout", d)
	}
	var resp project.QueryResponse
	var results project.QueryResults
	resp.Results = &results
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &resp); err != nil {
		t.Fatal(err)
	}
	if !resp.IsPartialResult || !strings.Contains(resp.Missing, "index: only 5 of 20 files") {
		t.Errorf("got isPartialResult %v missing %q, want partial with 5 of 20 files indexed", resp.IsPartialResult, resp.Missing)
	}
	if !resp.Metadata.Tools[0].IsPartialResult {
		t.Errorf("got tools %+v, want the index step partial", resp.Metadata.Tools)
	}
	p := resp.Metadata.BackgroundTaskProgress
	if p == nil || p.Status != project.StatusInProgress || p.TotalFiles != 20 || p.ProcessedFiles != 5 || p.PercentComplete != 25 || p.CurrentActivity == "" {
		t.Errorf("got backgroundTaskProgress %+v, want InProgress 5/20 (25%%)", p)
	}
	// What was indexed is searchable: Widget2 and Widget3 are, Widget12 not yet.
	var got []string
	for _, ps := range results.Passages {
		got = append(got, ps.File)
	}
	if len(got) != 2 || got[0] != "pkg/file02.go" && got[0] != "pkg/file03.go" {
		t.Errorf("got %v, want the two indexed widget files", got)
	}
	env.mu.Lock()
	notes := append([]*mcp.ProgressNotificationParams(nil), env.progress...)
	env.mu.Unlock()
	if len(notes) == 0 {
		t.Fatal("got no progress notifications, want some while the index was being built")
	}
	// The query may arrive while the files are still being listed (no
	// total yet); once they are, the total is 20.
	counted := 0
	for _, n := range notes {
		listing := n.Total == 0 && strings.Contains(n.Message, "Listing")
		if n.ProgressToken != "tok-1" || (n.Total != 20 && !listing) || !strings.Contains(n.Message, "InProgress") {
			t.Errorf("got notification %+v, want token tok-1, the status, and total 20 (or none while listing files)", n)
		}
		if n.Total == 20 {
			counted++
		}
	}
	if counted == 0 {
		t.Errorf("got notifications %+v, want at least one with the total of 20 files", notes)
	}

	releaseOnce.Do(func() { close(release) })
	env.waitIndexed(t)
	resp = env.query(t, map[string]any{"query": "Widget12"})
	if resp.IsPartialResult || len(passagesOf(resp)) == 0 || passagesOf(resp)[0].File != "pkg/file12.go" {
		t.Errorf("got %+v, want a complete result finding pkg/file12.go", resp)
	}
}

func TestQueryRefreshesIndex(t *testing.T) {
	root := newQueryRepo(t, queryRepoFiles)
	env := startQueryServer(t, project.Options{Root: root, RescanInterval: 20 * time.Millisecond}, nil)
	env.waitIndexed(t)
	writeQueryFiles(t, root, map[string]string{"server/late.go": "package server\n\nfunc LateArrival() {}\n"})
	if err := os.Remove(filepath.Join(root, "web", "cart.js")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		late := passagesOf(env.query(t, map[string]any{"query": "LateArrival"}))
		gone := passagesOf(env.query(t, map[string]any{"query": "addItemToCart"}))
		ps := append(late, gone...)
		if len(late) > 0 && late[0].File == "server/late.go" && !slices.ContainsFunc(gone, func(p project.Passage) bool { return p.File == "web/cart.js" }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("got %+v after 10s, want the new file found and the deleted one gone", ps)
		}
		time.Sleep(10 * time.Millisecond) // polling with a deadline
	}
}

func TestQueryRedactsAndTruncates(t *testing.T) {
	long := strings.Repeat("x", 3000)
	files := map[string]string{
		"conf/creds.go":   "package conf\n\n// DatabaseSecret is the password.\nconst DatabaseSecret = \"hunter2-very-secret\"\n",
		"auth/secrets.go": "package auth\n" + strings.Repeat("\n", 108) + "// RotateSigningKeys replaces the keys.\nfunc RotateSigningKeys() {}\n",
	}
	for i := range 60 {
		var b strings.Builder
		for l := range 30 {
			fmt.Fprintf(&b, "// bulky line %d %s\n", l, long)
		}
		files[fmt.Sprintf("bulk/f%02d.txt", i)] = b.String()
	}
	env := startQueryServer(t, project.Options{Root: newQueryRepo(t, files), Redactor: redact.New([]string{"hunter2-very-secret"})}, nil)
	env.waitIndexed(t)

	m, _ := env.call(t, project.ToolGeneralQuery, map[string]any{"query": "DatabaseSecret password"})
	text := fmt.Sprint(m["results"])
	if strings.Contains(text, "hunter2-very-secret") || !strings.Contains(text, redact.Marker) {
		t.Errorf("got results\n%s\nwant the secret replaced by %s", text, redact.Marker)
	}

	// A citation of a file named like a credential is not taken for one.
	m, _ = env.call(t, project.ToolGeneralQuery, map[string]any{"query": "RotateSigningKeys", "responseFormat": project.FormatConcise})
	if text := fmt.Sprint(m["results"]); !strings.Contains(text, "auth/secrets.go:111  func RotateSigningKeys") {
		t.Errorf("got results %q, want the citation auth/secrets.go:111 intact", text)
	}

	for _, format := range []string{project.FormatJSON, project.FormatMarkdown} {
		params := &mcp.CallToolParams{Name: project.ToolGeneralQuery, Arguments: map[string]any{"query": map[string]any{"text": "bulky line", "maxResults": 50}, "responseFormat": format}}
		res, err := env.cs.CallTool(context.Background(), params)
		if err != nil {
			t.Fatal(err)
		}
		raw := res.Content[0].(*mcp.TextContent).Text
		if len(raw) > project.MaxResponseBytes+1024 {
			t.Errorf("%s: got %d bytes, want at most about %d", format, len(raw), project.MaxResponseBytes)
		}
		var resp project.QueryResponse
		if err := json.Unmarshal([]byte(raw), &resp); err != nil {
			t.Fatal(err)
		}
		if !resp.Truncated || !resp.IsPartialResult || !strings.Contains(resp.Missing, "truncated") {
			t.Errorf("%s: got truncated %v partial %v missing %q, want the truncation marked", format, resp.Truncated, resp.IsPartialResult, resp.Missing)
		}
	}
}

// newLLMClient returns a client for the scripted endpoint.
func newLLMClient(t *testing.T, srv *llmtest.Server, promptPrice, completionPrice float64) *llm.Client {
	t.Helper()
	c, err := llm.New(llm.Config{BaseURL: srv.URL(), Model: "test-model", APIKey: "sk-test-key-123456", PromptPrice: promptPrice, CompletionPrice: completionPrice})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestQueryWithLLM(t *testing.T) {
	root := newQueryRepo(t, queryRepoFiles)
	srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response {
		return llmtest.Response{Text: "ParseConfigFile reads the settings (config/loader.go:14).", PromptTokens: 1000, CompletionTokens: 100}
	})
	env := startQueryServer(t, project.Options{Root: root, LLM: newLLMClient(t, srv, 2, 10)}, nil)
	env.waitIndexed(t)
	resp := env.query(t, map[string]any{"query": "how is the config file parsed?", "context": map[string]any{"ticket": "SHOP-12"}, "maxCost": 0.5})
	res := resp.Results.(*project.QueryResults)
	if res.Answer != "ParseConfigFile reads the settings (config/loader.go:14)." {
		t.Errorf("got answer %q, want the model's", res.Answer)
	}
	if len(res.Passages) == 0 || res.Passages[0].File != "config/loader.go" {
		t.Errorf("got passages %+v, want the loader first", res.Passages)
	}
	if got, want := resp.Metadata.TotalCost, (1000*2+100*10)/1e6; got != want {
		t.Errorf("got totalCost %v, want %v", got, want)
	}
	if got := resp.Metadata.ModelsUsed; len(got) != 1 || got[0] != "test-model" {
		t.Errorf("got modelsUsed %v, want [test-model]", got)
	}
	if tools := resp.Metadata.Tools; len(tools) != 3 || tools[2].Name != project.ToolAnswer || tools[2].IsPartialResult {
		t.Errorf("got tools %+v, want a complete answer step", tools)
	}
	if resp.IsPartialResult {
		t.Errorf("got partial (%s), want complete", resp.Missing)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("got %d LLM requests, want 1", len(reqs))
	}
	prompt := reqs[0].Messages[len(reqs[0].Messages)-1].Content
	for _, want := range []string{"how is the config file parsed?", "SHOP-12", "--- config/loader.go:1-21 ---", "14: func ParseConfigFile"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("got prompt\n%s\nwant it to contain %q", prompt, want)
		}
	}
	if reqs[0].MaxTokens <= 0 {
		t.Errorf("got max_tokens %d, want a bound derived from maxCost", reqs[0].MaxTokens)
	}

	// The Concise format puts the answer first, with its sources.
	m, _ := env.call(t, project.ToolGeneralQuery, map[string]any{"query": "ParseConfigFile", "responseFormat": project.FormatConcise})
	if text := fmt.Sprint(m["results"]); !strings.HasPrefix(text, "ParseConfigFile reads the settings") || !strings.Contains(text, "Sources: config/loader.go:14") {
		t.Errorf("got concise results %q, want the answer and its sources", text)
	}
}

func TestQueryWithLLMOverBudget(t *testing.T) {
	root := newQueryRepo(t, queryRepoFiles)
	srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response {
		return llmtest.Response{Text: "should not be asked"}
	})
	env := startQueryServer(t, project.Options{Root: root, LLM: newLLMClient(t, srv, 1000, 1000)}, nil)
	env.waitIndexed(t)
	for _, maxCost := range []float64{0, 0.0001} {
		resp := env.query(t, map[string]any{"query": "ParseConfigFile", "maxCost": maxCost})
		res := resp.Results.(*project.QueryResults)
		if res.Answer != "" || len(res.Passages) == 0 {
			t.Errorf("maxCost %v: got answer %q and %d passages, want the passages only", maxCost, res.Answer, len(res.Passages))
		}
		if !resp.IsPartialResult || !strings.Contains(resp.Missing, "exceed maxCost") {
			t.Errorf("maxCost %v: got partial %v missing %q, want partial over budget", maxCost, resp.IsPartialResult, resp.Missing)
		}
		last := resp.Metadata.Tools[len(resp.Metadata.Tools)-1]
		if last.Name != project.ToolAnswer || !last.BudgetExceeded || !last.IsPartialResult {
			t.Errorf("maxCost %v: got tool %+v, want the answer step over budget", maxCost, last)
		}
		if resp.Metadata.TotalCost != 0 || len(resp.Metadata.ModelsUsed) != 0 {
			t.Errorf("maxCost %v: got totalCost %v and modelsUsed %v, want 0 and none", maxCost, resp.Metadata.TotalCost, resp.Metadata.ModelsUsed)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("got %d LLM requests, want none over budget", n)
	}
}

func TestQueryWithLLMTimeout(t *testing.T) {
	root := newQueryRepo(t, queryRepoFiles)
	srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response {
		return llmtest.Response{Text: "too late", Delay: 10 * time.Second}
	})
	env := startQueryServer(t, project.Options{Root: root, LLM: newLLMClient(t, srv, 0, 0)}, nil)
	env.waitIndexed(t)
	start := time.Now()
	resp := env.query(t, map[string]any{"query": "ParseConfigFile", "timeout": 1})
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("got the result after %s, want it soon after the 1 s timeout", d)
	}
	res := resp.Results.(*project.QueryResults)
	if res.Answer != "" || len(res.Passages) == 0 || res.Passages[0].File != "config/loader.go" {
		t.Errorf("got %+v, want the passages without an answer", res)
	}
	if !resp.IsPartialResult || !strings.Contains(resp.Missing, "time budget") {
		t.Errorf("got partial %v missing %q, want partial for the time budget", resp.IsPartialResult, resp.Missing)
	}
	last := resp.Metadata.Tools[len(resp.Metadata.Tools)-1]
	if last.Name != project.ToolAnswer || !last.IsPartialResult || last.BudgetExceeded {
		t.Errorf("got tool %+v, want the answer step partial, not over budget", last)
	}
	if got := resp.Metadata.ModelsUsed; len(got) != 1 || got[0] != "test-model" {
		t.Errorf("got modelsUsed %v, want [test-model]: a request was made", got)
	}
}

func TestQueryWithLLMFailure(t *testing.T) {
	root := newQueryRepo(t, queryRepoFiles)
	srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response {
		return llmtest.Response{Status: 500, Text: "model crashed"}
	})
	env := startQueryServer(t, project.Options{Root: root, LLM: newLLMClient(t, srv, 0, 0)}, nil)
	env.waitIndexed(t)
	resp := env.query(t, map[string]any{"query": "ParseConfigFile"})
	if !resp.IsPartialResult || !strings.Contains(resp.Missing, "language model failed") || len(passagesOf(resp)) == 0 {
		t.Errorf("got partial %v missing %q, want the passages and the failure named", resp.IsPartialResult, resp.Missing)
	}
}

func TestNewServerRejectsBadRoot(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{"", filepath.Join(t.TempDir(), "missing"), file} {
		if _, err := project.NewServer(project.Options{Root: root}); err == nil {
			t.Errorf("NewServer(%q): got no error, want one", root)
		}
	}
}

// TestCommitMessageTool calls commit_message through the MCP server: the
// registration, strict decoding and the progress added to its metadata.
func TestCommitMessageTool(t *testing.T) {
	root := newQueryRepo(t, queryRepoFiles)
	writeQueryFiles(t, root, map[string]string{
		"server/http.go":  strings.Replace(queryRepoFiles["server/http.go"], `"cart"`, `"your cart"`, 1),
		"server/admin.go": "package server\n\n// StartAdmin serves the admin pages.\nfunc StartAdmin() {}\n",
	})
	env := startQueryServer(t, project.Options{Root: root}, nil)
	m, isErr := env.call(t, project.ToolCommitMessage, map[string]any{"format": "Conventional", "includeImpact": true})
	if isErr {
		t.Fatalf("commit_message failed: %v", m)
	}
	msg, _ := m["commitMessage"].(map[string]any)
	if title, _ := msg["title"].(string); title == "" {
		t.Errorf("got commitMessage %v, want a title", m["commitMessage"])
	}
	files, _ := m["changedFiles"].([]any)
	if len(files) != 2 {
		t.Errorf("got changedFiles %v, want server/admin.go and server/http.go", m["changedFiles"])
	}
	md, _ := m["metadata"].(map[string]any)
	if p, _ := md["backgroundTaskProgress"].(map[string]any); p == nil || p["status"] == nil {
		t.Errorf("got metadata %v, want backgroundTaskProgress", md)
	}
	for _, tt := range []struct {
		args      map[string]any
		wantField string
	}{
		{map[string]any{"format": 5}, "format"},
		{map[string]any{"sinceCommitt": "HEAD"}, "sinceCommitt"},
	} {
		m, isErr := env.call(t, project.ToolCommitMessage, tt.args)
		details, _ := m["details"].(map[string]any)
		fields, _ := details["fields"].([]any)
		if !isErr || m["error_type"] != "validation_error" || len(fields) == 0 || fields[0].(map[string]any)["field"] != tt.wantField {
			t.Errorf("commit_message(%v): got %v, want a validation error on %s", tt.args, m, tt.wantField)
		}
	}
}
