package web

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// fakeBackend is a control.Backend whose methods return nothing unless a
// test sets the function.
type fakeBackend struct {
	status func() (control.Status, error)
}

var _ control.Backend = (*fakeBackend)(nil)

func (f *fakeBackend) Status(context.Context) (control.Status, error) {
	if f.status != nil {
		return f.status()
	}
	return control.Status{}, nil
}
func (f *fakeBackend) Servers(context.Context) ([]control.ServerInfo, error) { return nil, nil }
func (f *fakeBackend) ServerAction(context.Context, string, string) (control.ActionResult, error) {
	return control.ActionResult{}, nil
}
func (f *fakeBackend) Tools(context.Context, string) (control.ToolList, error) {
	return control.ToolList{}, nil
}
func (f *fakeBackend) Tool(context.Context, string, string) (control.ToolInfo, error) {
	return control.ToolInfo{}, nil
}
func (f *fakeBackend) Call(context.Context, control.CallRequest) (*control.CallResult, error) {
	return nil, nil
}
func (f *fakeBackend) History(context.Context, store.CallFilter) ([]store.CallRecord, error) {
	return nil, nil
}
func (f *fakeBackend) HistoryCall(context.Context, string) (store.CallRecord, error) {
	return store.CallRecord{}, nil
}
func (f *fakeBackend) Stop(context.Context) (int, error)    { return 0, nil }
func (f *fakeBackend) Resume(context.Context) (bool, error) { return false, nil }
func (f *fakeBackend) Reload(context.Context) (control.ReloadReport, error) {
	return control.ReloadReport{}, nil
}
func (f *fakeBackend) Prompts(context.Context, string) (control.PromptList, error) {
	return control.PromptList{}, nil
}
func (f *fakeBackend) Prompt(context.Context, control.PromptRequest) (*mcp.GetPromptResult, error) {
	return nil, nil
}
func (f *fakeBackend) Resources(context.Context, string) (control.ResourceList, error) {
	return control.ResourceList{}, nil
}
func (f *fakeBackend) ReadResource(context.Context, string, string) (*mcp.ReadResourceResult, error) {
	return nil, nil
}

// fakeHooks is a HookSource with function fields.
type fakeHooks struct {
	hooks func() ([]HookInfo, error)
	runs  func(HookRunFilter) ([]HookRun, error)
	fire  func(event string, fields map[string]any, dryRun bool) (FireReport, error)
}

var _ HookSource = (*fakeHooks)(nil)

func (f *fakeHooks) Hooks(context.Context) ([]HookInfo, error) { return f.hooks() }
func (f *fakeHooks) Runs(_ context.Context, fl HookRunFilter) ([]HookRun, error) {
	return f.runs(fl)
}
func (f *fakeHooks) Fire(_ context.Context, e string, fields map[string]any, dry bool) (FireReport, error) {
	return f.fire(e, fields, dry)
}

// consoleServer serves a console over fakes on httptest.
func consoleServer(t *testing.T, hooks HookSource) (*httptest.Server, *http.Client) {
	t.Helper()
	c, err := New(Options{Backend: &fakeBackend{}, Catalog: catalog.New(catalog.Options{}), Config: config.Default, Hooks: hooks})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(c.Handler())
	t.Cleanup(ts.Close)
	jar, _ := cookiejar.New(nil)
	return ts, &http.Client{Jar: jar}
}

var csrfRE = regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)">`)
