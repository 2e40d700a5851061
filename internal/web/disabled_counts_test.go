package web_test

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDisabledServerShowsNoCounts: the catalog keeps what a server listed
// before it was disabled, but a disabled server lists nothing (the gateway
// serves none of it), so the servers page shows no counts for it, in the
// page and in its API, and its own page lists no prompts or resources.
func TestDisabledServerShowsNoCounts(t *testing.T) {
	t.Parallel()
	r := startDaemon(t, testConfig(libraryServer(t)))
	cl := newClient(t, r.url)
	type row struct {
		Server, Label  string
		Tools, Prompts *int
		Resources      *int
		Enabled        bool
	}
	servers := func() row {
		t.Helper()
		var out struct{ Servers []row }
		cl.json("GET", "/ui/api/servers", "", 200, &out)
		if len(out.Servers) != 1 {
			t.Fatalf("got %d servers, want 1", len(out.Servers))
		}
		return out.Servers[0]
	}
	deadline := time.Now().Add(30 * time.Second)
	for s := servers(); s.Tools == nil || *s.Tools == 0 || *s.Prompts == 0 || *s.Resources == 0; s = servers() {
		if time.Now().After(deadline) {
			t.Fatalf("library never listed its tools, prompts and resources: %+v", s)
		}
		time.Sleep(50 * time.Millisecond)
	}

	cl.json("POST", "/ui/api/servers/library/disable", "", 200, nil)
	if s := servers(); s.Enabled || s.Tools != nil || s.Prompts != nil || s.Resources != nil {
		t.Errorf("disabled, /ui/api/servers: got enabled %v, tools %v, prompts %v, resources %v, want false and null counts", s.Enabled, s.Tools, s.Prompts, s.Resources)
	}
	_, page := cl.do("GET", "/", "", "")
	for _, field := range []string{"tools", "prompts", "resources"} {
		cell := regexp.MustCompile(`data-field="` + field + `">([^<]*)</td>`).FindStringSubmatch(page)
		if cell == nil || cell[1] != "" {
			t.Errorf("disabled, servers page: %s cell %q, want it blank", field, cell)
		}
	}
	_, page = cl.do("GET", "/ui/server?name=library", "", "")
	for _, want := range []string{"Tools (0)", "Prompts (0)", "Resources (0)"} {
		if !strings.Contains(page, want) {
			t.Errorf("disabled, the server's page: want %q", want)
		}
	}
	if strings.Contains(page, "library://notes.md") || strings.Contains(page, "recommend") {
		t.Errorf("disabled, the server's page lists what the server listed before it was disabled")
	}
	// Its tool's page (the catalog keeps it) says that a call fails.
	_, page = cl.do("GET", "/ui/tool?server=library&name=bump", "", "")
	if !strings.Contains(page, `id="disabled-banner"`) || !strings.Contains(page, "calls fail until it is enabled") {
		t.Errorf("disabled, the tool's page: want a banner saying the server is disabled")
	}
	cl.json("POST", "/ui/api/servers/library/enable", "", 200, nil)
	if _, page = cl.do("GET", "/ui/tool?server=library&name=bump", "", ""); strings.Contains(page, `id="disabled-banner"`) {
		t.Errorf("enabled again, the tool's page: got the disabled banner")
	}
}
