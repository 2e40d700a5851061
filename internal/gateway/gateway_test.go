package gateway

import (
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

func TestRoute(t *testing.T) {
	tests := []struct {
		path, kind, view string
		ok               bool
	}{
		{"/mcp", "mcp", "default", true},
		{"/mcp/", "mcp", "default", true},
		{"/mcp/github", "mcp", "github", true},
		{"/sse", "sse", "default", true},
		{"/sse/a-b_c", "sse", "a-b_c", true},
		{"/mcp/a/b", "", "", false},
		{"/mcpx", "", "", false},
		{"/", "", "", false},
	}
	for _, tt := range tests {
		kind, view, ok := route(tt.path)
		if kind != tt.kind || view != tt.view || ok != tt.ok {
			t.Errorf("route(%q): got %q %q %v, want %q %q %v", tt.path, kind, view, ok, tt.kind, tt.view, tt.ok)
		}
	}
}

func TestHostAllowed(t *testing.T) {
	loop := config.Gateway{Listen: "127.0.0.1:7777"}
	open := config.Gateway{Listen: "0.0.0.0:7777"}
	proxied := config.Gateway{Listen: "0.0.0.0:7777", AllowedHosts: []string{"mcp.example.com"}}
	tests := []struct {
		name string
		gw   config.Gateway
		host string
		want bool
	}{
		{"loopback address", loop, "127.0.0.1:7777", true},
		{"localhost", loop, "localhost:7777", true},
		{"ipv6 loopback", loop, "[::1]:7777", true},
		{"rebinding name on loopback", loop, "evil.example:7777", false},
		{"allowed name on loopback", config.Gateway{Listen: "127.0.0.1:7777", AllowedHosts: []string{"box.local"}}, "box.local:7777", true},
		{"any name when listening everywhere with no allowances", open, "10.0.0.5:7777", true},
		{"allowance restricts an open listener", proxied, "10.0.0.5:7777", false},
		{"allowed name", proxied, "mcp.example.com", true},
		{"listen host itself", config.Gateway{Listen: "192.168.1.5:7777", AllowedHosts: []string{"x"}}, "192.168.1.5:7777", true},
	}
	for _, tt := range tests {
		if got := hostAllowed(tt.gw, tt.host); got != tt.want {
			t.Errorf("%s: hostAllowed(%q): got %v, want %v", tt.name, tt.host, got, tt.want)
		}
	}
}

func TestOriginAllowed(t *testing.T) {
	tests := []struct {
		name, origin, host string
		allowed            []string
		want               bool
	}{
		{"no origin (not a browser)", "", "127.0.0.1:7777", nil, true},
		{"same origin", "http://127.0.0.1:7777", "127.0.0.1:7777", nil, true},
		{"foreign origin", "https://evil.example", "127.0.0.1:7777", nil, false},
		{"configured origin", "https://app.example.com", "127.0.0.1:7777", []string{"https://app.example.com"}, true},
		{"wildcard", "https://anything.example", "127.0.0.1:7777", []string{"*"}, true},
		{"null origin", "null", "127.0.0.1:7777", nil, false},
		{"other port", "http://127.0.0.1:8080", "127.0.0.1:7777", nil, false},
		{"https origin on an http listener", "https://127.0.0.1:7777", "127.0.0.1:7777", nil, false},
		{"other scheme", "ftp://127.0.0.1:7777", "127.0.0.1:7777", nil, false},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("POST", "http://"+tt.host+"/mcp", nil)
		if tt.origin != "" {
			r.Header.Set("Origin", tt.origin)
		}
		if got := originAllowed(config.Gateway{AllowedOrigins: tt.allowed}, r); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

func testCfg() *config.Config {
	cfg := config.Default()
	cfg.Servers = []config.Server{{Name: "alpha"}, {Name: "beta"}, {Name: "gamma"}}
	return cfg
}

func TestNarrowing(t *testing.T) {
	cfg := testCfg()
	all := config.View{Name: "default"}
	ab := config.View{Name: "ab", Servers: []string{"alpha", "beta"}}
	tests := []struct {
		name        string
		view        config.View
		query       string
		wantServers []string
		wantTools   []string
		wantKind    fault.Kind
	}{
		{"nothing", all, "", nil, nil, ""},
		{"servers", all, "servers=beta,alpha,beta", []string{"alpha", "beta"}, nil, ""},
		{"tools", all, "tools=alpha__*, beta__echo", nil, []string{"alpha__*", "beta__echo"}, ""},
		{"within the view", ab, "servers=alpha", []string{"alpha"}, nil, ""},
		{"widening", ab, "servers=gamma", nil, nil, fault.Authorization},
		{"unknown server", all, "servers=delta", nil, nil, fault.Validation},
		{"bad glob", all, "tools=[", nil, nil, fault.Validation},
		{"typo", all, "server=alpha", nil, nil, fault.Validation},
		{"unknown parameter", all, "foo=1", nil, nil, fault.Validation},
		{"legacy SSE session", all, "sessionid=abc", nil, nil, ""},
	}
	for _, tt := range tests {
		q, _ := url.ParseQuery(tt.query)
		servers, tools, err := narrowing(tt.view, cfg, q)
		if fault.KindOf(err) != tt.wantKind || (err == nil) != (tt.wantKind == "") {
			t.Errorf("%s: got error %v, want kind %q", tt.name, err, tt.wantKind)
			continue
		}
		if tt.name == "typo" && !strings.Contains(err.Error(), `did you mean "servers"?`) {
			t.Errorf("typo: got %v, want a did-you-mean", err)
		}
		if !slices.Equal(servers, tt.wantServers) || !slices.Equal(tools, tt.wantTools) {
			t.Errorf("%s: got %v %v, want %v %v", tt.name, servers, tools, tt.wantServers, tt.wantTools)
		}
	}
}

func FuzzNarrowing(f *testing.F) {
	f.Add("servers=alpha&tools=alpha__*")
	f.Add("servers=,,gamma,&tools=[")
	f.Add("tools=*&servers=beta")
	cfg := testCfg()
	view := config.View{Name: "ab", Servers: []string{"alpha", "beta"}}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		servers, _, err := narrowing(view, cfg, q)
		if err != nil {
			if fault.As(err) == nil {
				t.Fatalf("narrowing(%q): untyped error %v", raw, err)
			}
			return
		}
		for _, s := range servers {
			if !slices.Contains(view.Servers, s) {
				t.Fatalf("narrowing(%q) widened the view with %q", raw, s)
			}
		}
	})
}

func TestViewNames(t *testing.T) {
	tool := func(server, name string) catalog.Tool {
		return catalog.Tool{Server: server, Exposed: catalog.ExposedName(server, name), Def: &mcp.Tool{Name: name, Description: "orig " + name}}
	}
	spec := viewSpec{view: config.View{
		Name:         "v",
		Include:      []string{"gh__*"},
		Exclude:      []string{"*delete*"},
		Rename:       map[string]string{"gh__create_issue": "new_issue"},
		Descriptions: map[string]string{"gh__create_issue": "Open an issue"},
	}, tools: []string{"gh__create*", "gh__list*"}}
	type out struct {
		Name, Desc string
		OK         bool
	}
	got := map[string]out{}
	for _, tl := range []catalog.Tool{tool("gh", "create_issue"), tool("gh", "delete_repo"), tool("gh", "list_prs"), tool("gh", "merge"), tool("fs", "read")} {
		n, ok := spec.toolName(tl)
		got[tl.Exposed] = out{n, spec.description(tl), ok}
	}
	want := map[string]out{
		"gh__create_issue": {"new_issue", "Open an issue", true},
		"gh__delete_repo":  {"", "orig delete_repo", false},
		"gh__list_prs":     {"gh__list_prs", "orig list_prs", true},
		"gh__merge":        {"", "orig merge", false},
		"fs__read":         {"", "orig read", false},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("names in the view (-want +got):\n%s", diff)
	}
	never := viewSpec{view: config.View{Name: "solo", Prefix: config.PrefixNever}}
	if n, ok := never.toolName(tool("gh", "merge")); n != "merge" || !ok {
		t.Errorf("prefix never: got %q %v, want the server's own name", n, ok)
	}
}

func TestObjectSchema(t *testing.T) {
	tests := []struct {
		in   any
		want any
	}{
		{nil, map[string]any{"type": "object"}},
		{map[string]any{"type": "object", "properties": map[string]any{}}, map[string]any{"type": "object", "properties": map[string]any{}}},
		{map[string]any{"properties": map[string]any{"x": map[string]any{}}}, map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{}}}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, objectSchema(tt.in)); diff != "" {
			t.Errorf("objectSchema(%v) (-want +got):\n%s", tt.in, diff)
		}
	}
}
