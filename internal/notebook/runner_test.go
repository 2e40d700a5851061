package notebook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yuin/goldmark"
	gmhtml "github.com/yuin/goldmark/renderer/html"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"

	"github.com/switchboard-mcp/switchboard/internal/notebook"
)

// fakeCaller answers calls with a function.
type fakeCaller struct {
	call func(ctx context.Context, req toolcall.Request) (*toolcall.Result, error)
}

var _ notebook.Caller = (*fakeCaller)(nil)

func (f *fakeCaller) Call(ctx context.Context, req toolcall.Request) (*toolcall.Result, error) {
	return f.call(ctx, req)
}

// textResult is a successful text result.
func textResult(s string) *toolcall.Result {
	return &toolcall.Result{Status: toolcall.StatusSuccess, ContentType: toolcall.ContentText, Display: toolcall.DisplayInline,
		CallToolResult: &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}}
}

// echoCaller echoes the message argument.
func echoCaller() *fakeCaller {
	return &fakeCaller{call: func(_ context.Context, req toolcall.Request) (*toolcall.Result, error) {
		m, _ := req.Arguments["message"].(string)
		return textResult(m), nil
	}}
}

func writeDoc(t testing.TB, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "doc.md")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readDoc(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const twoBlocks = "# Doc\n\n```alpha\ntool: echo\nmessage: one\n```\n\n```alpha\ntool: echo\nmessage: two\n```\n"

func statuses(r *notebook.Report) []string {
	var out []string
	for _, b := range r.Blocks {
		out = append(out, b.Status)
	}
	return out
}

func TestCheckMissingAndStale(t *testing.T) {
	cfg := testConfig(okServers(t, "alpha")...)
	p := writeDoc(t, twoBlocks)
	steps := []struct {
		name       string
		change     func()
		wantStatus string
		wantFailed int
	}{
		{name: "before any run", wantStatus: "missing missing", wantFailed: 2},
		{name: "after a run", change: func() {
			if _, err := notebook.Run(context.Background(), p, notebook.Options{Config: cfg, Caller: echoCaller()}); err != nil {
				t.Fatal(err)
			}
		}, wantStatus: "success success"},
		{name: "after editing a block", change: func() {
			if err := os.WriteFile(p, []byte(strings.Replace(readDoc(t, p), "message: two", "message: deux", 1)), 0o644); err != nil {
				t.Fatal(err)
			}
		}, wantStatus: "success stale", wantFailed: 1},
		{name: "after rebinding the section", change: func() {
			cfg.Servers = append(cfg.Servers, config.Server{Name: "beta", Enabled: true})
			if err := os.WriteFile(p, []byte(strings.Replace(readDoc(t, p), "```alpha\ntool: echo\nmessage: one", "```beta\ntool: echo\nmessage: one", 1)), 0o644); err != nil {
				t.Fatal(err)
			}
		}, wantStatus: "stale stale", wantFailed: 2},
	}
	for _, s := range steps {
		if s.change != nil {
			s.change()
		}
		rep, err := notebook.Inspect(p, cfg)
		if err != nil {
			t.Fatalf("%s: Inspect: %v", s.name, err)
		}
		if got := strings.Join(statuses(rep), " "); got != s.wantStatus || rep.Failed != s.wantFailed {
			t.Errorf("%s: got %q with %d failed, want %q with %d", s.name, got, rep.Failed, s.wantStatus, s.wantFailed)
		}
	}
}

func TestConcurrentEditIsNotOverwritten(t *testing.T) {
	cfg := testConfig(okServers(t, "alpha")...)
	p := writeDoc(t, twoBlocks)
	edited := twoBlocks + "\nA line the user typed during the run.\n"
	var once sync.Once
	caller := &fakeCaller{call: func(_ context.Context, req toolcall.Request) (*toolcall.Result, error) {
		once.Do(func() {
			if err := os.WriteFile(p, []byte(edited), 0o644); err != nil {
				t.Error(err)
			}
		})
		return textResult("x"), nil
	}}
	_, err := notebook.Run(context.Background(), p, notebook.Options{Config: cfg, Caller: caller})
	if !errors.Is(err, notebook.ErrChanged) {
		t.Fatalf("Run: got %v, want ErrChanged", err)
	}
	if !strings.Contains(err.Error(), "changed while its blocks ran") {
		t.Errorf("error: got %q, want it to say the document changed", err)
	}
	if got := readDoc(t, p); got != edited {
		t.Errorf("document: got\n%s\nwant the user's edit kept:\n%s", got, edited)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(p), ".doc.md.switchboard-*")); len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

func TestOnlyAndDryRun(t *testing.T) {
	cfg := testConfig(okServers(t, "alpha")...)
	p := writeDoc(t, twoBlocks)
	var calls []string
	var mu sync.Mutex
	caller := &fakeCaller{call: func(_ context.Context, req toolcall.Request) (*toolcall.Result, error) {
		mu.Lock()
		calls = append(calls, req.Arguments["message"].(string))
		mu.Unlock()
		if req.Source != toolcall.SourceDocument {
			t.Errorf("source: got %q, want %q", req.Source, toolcall.SourceDocument)
		}
		return textResult("ok"), nil
	}}

	rep, err := notebook.Run(context.Background(), p, notebook.Options{Config: cfg, Caller: caller, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(statuses(rep), " "); got != "dry-run dry-run" || len(calls) != 0 || readDoc(t, p) != twoBlocks {
		t.Errorf("dry run: got statuses %q, calls %v, document changed %v; want dry-run twice, no calls, no change", got, calls, readDoc(t, p) != twoBlocks)
	}

	// Line 10 is the second block's "message: two" line.
	var origin string
	caller.call = func(_ context.Context, req toolcall.Request) (*toolcall.Result, error) {
		mu.Lock()
		calls = append(calls, req.Arguments["message"].(string))
		origin = req.Origin
		mu.Unlock()
		return textResult("ok"), nil
	}
	rep, err = notebook.Run(context.Background(), p, notebook.Options{Config: cfg, Caller: caller, Only: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Blocks) != 1 || len(calls) != 1 || calls[0] != "two" {
		t.Errorf("--only 10: got %d blocks and calls %v, want the second block only", len(rep.Blocks), calls)
	}
	// The history says which document and block made the call.
	if want := "document " + p + ":8"; origin != want {
		t.Errorf("origin: got %q, want %q", origin, want)
	}
	ins, _ := notebook.Inspect(p, cfg)
	if got := strings.Join(statuses(ins), " "); got != "missing success" {
		t.Errorf("after --only: got %q, want %q", got, "missing success")
	}

	_, err = notebook.Run(context.Background(), p, notebook.Options{Config: cfg, Caller: caller, Only: 1})
	if fault.KindOf(err) != fault.NotFound {
		t.Errorf("--only 1 (a heading): got %v, want not_found", err)
	}
}

func TestFrontMatterProblems(t *testing.T) {
	cfg := testConfig(okServers(t, "alpha")...)
	doc := "---\ntitle: x\nswitchboard:\n  bindings:\n    - heading: A\n      block: b\n      server: alpha\n    - start_line: 9\n      end_line: 3\n      server: gamma\n---\n# A\n"
	p := writeDoc(t, doc)
	_, err := notebook.Run(context.Background(), p, notebook.Options{Config: cfg, Caller: echoCaller()})
	var ve *config.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("Run: got %v, want a *config.ValidationError", err)
	}
	want := []string{
		p + ":5:7: switchboard.bindings[0]: a binding takes exactly one of heading, block or start_line/end_line",
		p + ":9:17: switchboard.bindings[1].end_line: end_line 3 is not after start_line 9",
		p + `:10:15: switchboard.bindings[1].server: unknown server "gamma"`,
	}
	got := err.Error()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("problems: got\n%s\nwant a line starting %q", got, w)
		}
	}
}

func TestConcurrencyKeepsDocumentOrder(t *testing.T) {
	cfg := testConfig(okServers(t, "alpha")...)
	eng := newEngine(t, cfg)
	var doc strings.Builder
	doc.WriteString("# Hold\n")
	for range 4 {
		doc.WriteString("\n```alpha\ntool: hold\nms: 300\n```\n")
	}
	doc.WriteString("\n```alpha\ntool: echo\nmessage: last\n```\n")
	p := writeDoc(t, doc.String())
	var progress []int
	rep, err := notebook.Run(context.Background(), p, notebook.Options{Config: cfg, Caller: eng, Concurrency: 4,
		Progress: func(done, total int) { progress = append(progress, done) }})
	if err != nil || rep.Failed != 0 {
		t.Fatalf("Run: got %v with %d failed, want success", err, rep.Failed)
	}
	res, err := eng.Call(context.Background(), toolcall.Request{Server: "alpha", Tool: "maxseen"})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got == "0" || got == "1" {
		t.Errorf("most hold calls at once: got %s, want 2 or more with --concurrency 4", got)
	}
	if len(progress) != 5 || progress[4] != 5 {
		t.Errorf("progress: got %v, want 5 reports ending at 5", progress)
	}
	text := readDoc(t, p)
	if strings.Count(text, "`held`") != 4 || strings.Index(text, "`last`") < strings.LastIndex(text, "`held`") {
		t.Errorf("results out of document order:\n%s", text)
	}
}

func TestEverything(t *testing.T) {
	srv := config.Server{Name: "everything", Transport: config.TransportStdio, Enabled: true,
		LoadTools: true, TerminateOnClose: true, ConnectTimeout: 30 * time.Second, RequestTimeout: 30 * time.Second}
	srv.Command, srv.Args = testpeer.EverythingCommand(t) // fails with `make peers` when missing
	cfg := testConfig(srv)
	eng := newEngine(t, cfg)
	doc := "# Everything\n\n```everything\ntool: echo\nmessage: hello from a document\n```\n\n" +
		"```mcp\ntool: get-sum\na: 40\nb: 2\n```\n\n" +
		"- ```everything ^img\n  tool: get-tiny-image\n  ```\n"
	p := writeDoc(t, doc)
	rep, err := notebook.Run(context.Background(), p, notebook.Options{Config: cfg, Caller: eng})
	if err != nil || rep.Failed != 0 {
		t.Fatalf("Run: got %v with %d failed (%+v), want success", err, rep.Failed, rep.Blocks)
	}
	text := readDoc(t, p)
	for _, want := range []string{"hello from a document", "42", "![image 1](doc."} {
		if !strings.Contains(text, want) {
			t.Errorf("document lacks %q:\n%s", want, text)
		}
	}
	if imgs, _ := filepath.Glob(filepath.Join(filepath.Dir(p), "doc.*.png")); len(imgs) != 1 {
		t.Errorf("image files: got %v, want one PNG", imgs)
	}
	rep, err = notebook.Run(context.Background(), p, notebook.Options{Config: cfg, Caller: eng})
	if err != nil || rep.Written || readDoc(t, p) != text {
		t.Errorf("second run: got %v, written %v; want no change", err, rep.Written)
	}
}

func TestImagesDir(t *testing.T) {
	cfg := testConfig(okServers(t, "alpha")...)
	cfg.Notebook.ImagesDir = "assets"
	p := writeDoc(t, "```alpha\ntool: image\n```\n")
	img := &fakeCaller{call: func(context.Context, toolcall.Request) (*toolcall.Result, error) {
		return &toolcall.Result{Status: toolcall.StatusSuccess, ContentType: toolcall.ContentImage, Display: toolcall.DisplayBlock,
			CallToolResult: &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: []byte("PNG"), MIMEType: "image/png"}}}}, nil
	}}
	if _, err := notebook.Run(context.Background(), p, notebook.Options{Config: cfg, Caller: img}); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(p), "assets", "doc.*.1.png"))
	if len(files) != 1 {
		t.Fatalf("got image files %v, want one under assets/", files)
	}
	if rel := "assets/" + filepath.Base(files[0]); !strings.Contains(readDoc(t, p), "![image 1]("+rel+")") {
		t.Errorf("document does not link %s:\n%s", rel, readDoc(t, p))
	}
	data, _ := os.ReadFile(files[0])
	if !bytes.Equal(data, []byte("PNG")) {
		t.Errorf("image: got %q, want %q", data, "PNG")
	}
}

func TestSectionServer(t *testing.T) {
	cfg := testConfig(config.Server{Name: "alpha", Enabled: true}, config.Server{Name: "beta", Enabled: true})
	p := copyDoc(t, "bindings.md")
	tests := []struct {
		section, server, why string
		kind                 fault.Kind
	}{
		{section: "## Beta section", server: "beta", why: `binding heading "## Beta section"`},
		{section: "Child", server: "beta", why: `binding heading "## Beta section"`},
		{section: "### Child", server: "beta", why: `binding heading "## Beta section"`},
		{section: "# Bindings", server: "alpha", why: "default"},
		{section: "## Child", kind: fault.NotFound},
		{section: "Weather", kind: fault.NotFound},
	}
	for _, tt := range tests {
		server, why, err := notebook.SectionServer(cfg, p, tt.section)
		if tt.kind != "" {
			if fault.KindOf(err) != tt.kind {
				t.Errorf("%q: got %v, want %s", tt.section, err, tt.kind)
			}
			continue
		}
		if err != nil || server != tt.server || !strings.HasPrefix(why, tt.why) {
			t.Errorf("%q: got %q (%q, %v), want %q (%q...)", tt.section, server, why, err, tt.server, tt.why)
		}
	}
	_, _, err := notebook.SectionServer(cfg, p, "## Beta sektion")
	fe := fault.As(err)
	if fe == nil || !strings.Contains(strings.Join(fe.Suggestions, "\n"), `did you mean "Beta section"?`) ||
		!strings.Contains(strings.Join(fe.Suggestions, "\n"), "## Beta section") {
		t.Errorf("unknown section: got %+v, want a suggestion and the list of headings", fe)
	}
}

func TestInterruptedRunKeepsWhatFinished(t *testing.T) {
	cfg := testConfig(okServers(t, "alpha")...)
	p := writeDoc(t, twoBlocks)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	caller := &fakeCaller{call: func(ctx context.Context, req toolcall.Request) (*toolcall.Result, error) {
		if req.Arguments["message"] == "two" {
			cancel() // the user presses ^C during the second call
			return nil, fault.Wrap(fault.Cancelled, ctx.Err(), "the call was cancelled")
		}
		return textResult("first"), nil
	}}
	rep, err := notebook.Run(ctx, p, notebook.Options{Config: cfg, Caller: caller})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := strings.Join(statuses(rep), " "); got != "success cancelled" || !rep.Written || rep.Failed != 0 || rep.Cancelled != 1 {
		t.Errorf("got statuses %q, written %v, %d failed, %d cancelled; want success cancelled, written, 0 failed, 1 cancelled",
			got, rep.Written, rep.Failed, rep.Cancelled)
	}
	ins, _ := notebook.Inspect(p, cfg)
	if got := strings.Join(statuses(ins), " "); got != "success missing" {
		t.Errorf("after the interrupted run: got %q, want the second block still missing", got)
	}
}

func TestSymlinkedDocument(t *testing.T) {
	cfg := testConfig(okServers(t, "alpha")...)
	docs, links := t.TempDir(), t.TempDir()
	real := filepath.Join(docs, "real.md")
	if err := os.WriteFile(real, []byte(twoBlocks), 0o600); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(links, real)
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(links, "link.md")
	if err := os.Symlink(rel, link); err != nil {
		t.Fatal(err)
	}
	checkLink := func(when string) {
		t.Helper()
		fi, err := os.Lstat(link)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s: link.md: got mode %v (%v), want it still a symbolic link", when, fi.Mode(), err)
		}
		fi, err = os.Stat(real)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: real.md: got mode %v (%v), want 0600 kept", when, fi.Mode().Perm(), err)
		}
		for _, dir := range []string{docs, links} {
			if left, _ := filepath.Glob(filepath.Join(dir, ".*.switchboard-*")); len(left) > 0 {
				t.Errorf("%s: temporary files left behind: %v", when, left)
			}
		}
	}

	rep, err := notebook.Run(context.Background(), link, notebook.Options{Config: cfg, Caller: echoCaller()})
	if err != nil || !rep.Written {
		t.Fatalf("Run through the link: got %v, written %v; want the results written", err, rep != nil && rep.Written)
	}
	checkLink("after a run")
	if got := readDoc(t, real); !strings.Contains(got, "`one`") || !strings.Contains(got, "`two`") {
		t.Errorf("real.md: got\n%s\nwant both results written into it", got)
	}

	// An edit of the real document during the run is seen through the link.
	edited := readDoc(t, real) + "\nA line the user typed during the run.\n"
	var once sync.Once
	caller := &fakeCaller{call: func(context.Context, toolcall.Request) (*toolcall.Result, error) {
		once.Do(func() {
			if err := os.WriteFile(real, []byte(edited), 0o600); err != nil {
				t.Error(err)
			}
		})
		return textResult("changed"), nil
	}}
	if _, err := notebook.Run(context.Background(), link, notebook.Options{Config: cfg, Caller: caller}); !errors.Is(err, notebook.ErrChanged) {
		t.Errorf("Run with an edit of real.md: got %v, want ErrChanged", err)
	}
	if got := readDoc(t, real); got != edited {
		t.Errorf("real.md: got\n%s\nwant the user's edit kept:\n%s", got, edited)
	}
	checkLink("after a concurrent edit")
}

func TestUnknownServerBlock(t *testing.T) {
	cfg := testConfig(config.Server{Name: "everything", Enabled: true})
	doc := "# Typo\n\n```everythng\ntool: echo\nmessage: hi\n```\n\n" +
		"```python\ntool: str = 'x'\n```\n\n" +
		"```yaml\ntool: echo\n```\n\n" +
		"```weather-api\ntool calls go here\n```\n\n" +
		"```notes\njust: text\n```\n"
	p := writeDoc(t, doc)
	ins, err := notebook.Inspect(p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(ins.Blocks) != 1 || ins.Failed != 1 {
		t.Fatalf("Inspect: got %d blocks, %d failed (%+v), want the everythng block only, invalid", len(ins.Blocks), ins.Failed, ins.Blocks)
	}
	b := ins.Blocks[0]
	if b.Line != 3 || b.Status != notebook.StatusInvalid || b.Error == nil ||
		!strings.Contains(b.Error.Message, `unknown server "everythng"`) || !slices.Contains(b.Error.Suggestions, `did you mean "everything"?`) {
		t.Errorf("block: got %+v, want line 3 invalid with unknown server \"everythng\" and a did-you-mean", b)
	}

	rep, err := notebook.Run(context.Background(), p, notebook.Options{Config: cfg, Caller: echoCaller()})
	if err != nil || rep.Failed != 1 || !rep.Written {
		t.Fatalf("Run: got %v, %d failed, written %v; want 1 failed, the error written", err, rep.Failed, rep.Written)
	}
	text := readDoc(t, p)
	if !strings.Contains(text, `**Error:** unknown server "everythng"`) || strings.Count(text, notebook.ResultMarker) != 1 {
		t.Errorf("document: got\n%s\nwant one result, the unknown-server error", text)
	}
	if rep, err := notebook.Run(context.Background(), p, notebook.Options{Config: cfg, Caller: echoCaller()}); err != nil || rep.Written {
		t.Errorf("second run: got %v, written %v; want no change", err, rep.Written)
	}
}

func TestDuplicateBlockIDs(t *testing.T) {
	cfg := testConfig(okServers(t, "alpha")...)
	p := writeDoc(t, "```alpha ^dup\ntool: echo\nmessage: one\n```\n\n```alpha ^dup\ntool: echo\nmessage: two\n```\n")
	rep, err := notebook.Run(context.Background(), p, notebook.Options{Config: cfg, Caller: echoCaller()})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(statuses(rep), " "); got != "success error" || rep.Failed != 1 {
		t.Fatalf("got %q with %d failed, want success error with 1 failed", got, rep.Failed)
	}
	// The report names both lines; the document, whose lines move as
	// results are written, names none.
	if e := rep.Blocks[1].Error; e == nil || e.Message != "duplicate block id ^dup: the block at line 1 has it too" {
		t.Errorf("report error: got %+v, want it to name line 1", e)
	}
	text := readDoc(t, p)
	if !strings.Contains(text, "**Error:** duplicate block id ^dup: a block above has it too") {
		t.Errorf("document: got\n%s\nwant the duplicate id error written after the second block", text)
	}
	if rep, err := notebook.Run(context.Background(), p, notebook.Options{Config: cfg, Caller: echoCaller()}); err != nil || rep.Written {
		t.Errorf("second run: got %v, written %v; want no change", err, rep.Written)
	}
}

func TestFrontMatterUnknownKeyPointsToDocuments(t *testing.T) {
	cfg := testConfig(okServers(t, "alpha")...)
	p := writeDoc(t, "---\nswitchboard:\n  zzzzzz: 1\n---\n# A\n")
	_, err := notebook.Inspect(p, cfg)
	if err == nil || !strings.Contains(err.Error(), "docs/documents.md lists the fields") || strings.Contains(err.Error(), "configuration.md") {
		t.Errorf("Inspect: got %v, want the fix to point to docs/documents.md", err)
	}
}

func TestTextResultsVerbatim(t *testing.T) {
	cfg := testConfig(okServers(t, "alpha")...)
	eng := newEngine(t, cfg) // the engine classifies the results
	texts := []string{
		"line1\n```\nline3",                     // taken for Markdown, fences unbalanced
		"see <!-- /switchboard:result --> here", // one line: a code span
		"a\n<!-- /switchboard:result -->\nb",    // a line that is the closing marker
		"x\n````\n```\ny",                       // backtick runs longer than a fence
	}
	var doc strings.Builder
	for _, s := range texts {
		js, _ := json.Marshal(s)
		fmt.Fprintf(&doc, "```alpha\ntool: echo\nmessage: %s\n```\n\n", js)
	}
	p := writeDoc(t, doc.String())
	rep, err := notebook.Run(context.Background(), p, notebook.Options{Config: cfg, Caller: eng})
	if err != nil || rep.Failed != 0 {
		t.Fatalf("Run: got %v with %d failed, want success", err, rep.Failed)
	}
	written := readDoc(t, p)
	var out bytes.Buffer
	md := goldmark.New(goldmark.WithRendererOptions(gmhtml.WithUnsafe()))
	if err := md.Convert([]byte(written), &out); err != nil {
		t.Fatal(err)
	}
	for _, s := range texts {
		if want := html.EscapeString(s); !strings.Contains(out.String(), want) {
			t.Errorf("result %q does not show verbatim: got HTML\n%s\nwant it to hold %q; document:\n%s", s, out.String(), want, written)
		}
	}
	ins, err := notebook.Inspect(p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(statuses(ins), " "); got != "success success success success" {
		t.Errorf("after the run: got %q, want every result intact", got)
	}
	if rep, err := notebook.Run(context.Background(), p, notebook.Options{Config: cfg, Caller: eng}); err != nil || rep.Written || readDoc(t, p) != written {
		t.Errorf("second run: got %v, written %v; want no change", err, rep.Written)
	}
}

// TestDocumentPathProblems checks that a document that is not there, or
// a folder, is said in words with how to fix it, never as lstat's text.
func TestDocumentPathProblems(t *testing.T) {
	cfg := testConfig()
	p := writeDoc(t, "# A\n")
	dir := filepath.Dir(p)
	tests := []struct {
		path string
		kind fault.Kind
		want []string
	}{
		{filepath.Join(dir, "dox.md"), fault.NotFound, []string{"document " + filepath.Join(dir, "dox.md") + " does not exist", "did you mean " + p + "?", "check the path: dox.md was looked for in " + dir}},
		{filepath.Join(dir, "nodir", "x.md"), fault.NotFound, []string{"does not exist", "the folder " + filepath.Join(dir, "nodir") + " does not exist either"}},
		{dir, fault.Validation, []string{dir + " is a folder, not a document", "give a Markdown file (FILE.md), not a folder, e.g. " + p}},
	}
	for _, tt := range tests {
		_, err := notebook.Inspect(tt.path, cfg)
		fe := fault.As(err)
		if fe == nil || fe.Kind != tt.kind {
			t.Errorf("%s: got %v, want a %s error", tt.path, err, tt.kind)
			continue
		}
		text := fe.Error() + "; " + strings.Join(fe.Suggestions, "; ")
		for _, w := range tt.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: got %q, want it to contain %q", tt.path, text, w)
			}
		}
		if strings.Contains(text, "lstat") || strings.Contains(text, "no such file") {
			t.Errorf("%s: got %q, want no raw system error", tt.path, text)
		}
	}
	if _, _, err := notebook.SectionServer(cfg, filepath.Join(dir, "dox.md"), "A"); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("SectionServer: got %v, want the document does not exist", err)
	}
}
