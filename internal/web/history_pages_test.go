package web_test

import (
	"context"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// TestHistoryPages: with more calls than a page shows, the history pages
// lead to the older calls and, from an older page, back to the newest,
// keeping the filters; the last page leads only back.
func TestHistoryPages(t *testing.T) {
	t.Parallel()
	r := startDaemon(t, testConfig())
	start := time.Now().Add(-time.Hour)
	var recs []store.CallRecord
	for i := range 120 {
		at := start.Add(time.Duration(i) * time.Second)
		recs = append(recs, store.CallRecord{Source: "cli", Identity: "ana", Server: "alpha", Tool: fmt.Sprintf("t%03d", i),
			Status: "success", StartedAt: at, FinishedAt: at.Add(time.Millisecond), Duration: time.Millisecond})
	}
	if err := r.store.RecordCalls(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, r.url)
	link := func(page, text string) string {
		m := regexp.MustCompile(`<a href="([^"]*)">` + text + `</a>`).FindStringSubmatch(page)
		if m == nil {
			return ""
		}
		return html.UnescapeString(m[1])
	}

	_, first := cl.do("GET", "/ui/history?status=success", "", "")
	if link(first, "Newest calls") != "" {
		t.Errorf("first page: it has a link to the newest calls, want none (it is them)")
	}
	older := link(first, "Older calls")
	if older == "" {
		t.Fatal("first page: no link to the older calls")
	}
	_, second := cl.do("GET", older, "", "")
	if got := link(second, "Newest calls"); got != "/ui/history?status=success" {
		t.Errorf("second page: link to the newest calls %q, want /ui/history?status=success", got)
	}
	_, third := cl.do("GET", link(second, "Older calls"), "", "")
	if link(third, "Older calls") != "" || link(third, "Newest calls") == "" {
		t.Errorf("last page: want a link to the newest calls and none to older ones")
	}

	// 100 calls from hooks: the second page holds the last 50 exactly,
	// and leads to no empty third page.
	var exact []store.CallRecord
	for i := range 100 {
		at := start.Add(-time.Duration(i+1) * time.Minute)
		exact = append(exact, store.CallRecord{Source: "hook", Identity: "bo", Server: "beta", Tool: "x",
			Status: "error", StartedAt: at, FinishedAt: at.Add(time.Millisecond), Duration: time.Millisecond})
	}
	if err := r.store.RecordCalls(context.Background(), exact); err != nil {
		t.Fatal(err)
	}
	_, first = cl.do("GET", "/ui/history?source=hook", "", "")
	_, second = cl.do("GET", link(first, "Older calls"), "", "")
	if got := link(second, "Older calls"); got != "" {
		t.Errorf("100 calls, second page: got a link to older calls %q, want none (there are none)", got)
	}
}

// TestHistoryUnknownServerSaysSo: filtering the history by a server name
// that no server has, with nothing found, says so with the closest name,
// as `switchboard history --server` does; a mistyped name would otherwise
// read as "no calls".
func TestHistoryUnknownServerSaysSo(t *testing.T) {
	t.Parallel()
	r := startDaemon(t, testConfig(libraryServer(t)))
	cl := newClient(t, r.url)
	_, page := cl.do("GET", "/ui/history?server=libary", "", "")
	for _, want := range []string{"No calls match.", "no server named &#34;libary&#34; is configured", "library"} {
		if !strings.Contains(page, want) {
			t.Errorf("history?server=libary: want %q in the page", want)
		}
	}
	_, page = cl.do("GET", "/ui/history?server=library", "", "")
	if strings.Contains(page, "is configured") {
		t.Errorf("history?server=library (configured, no calls): got a note that it is not configured")
	}
}
