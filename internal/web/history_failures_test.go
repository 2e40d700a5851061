package web

import (
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/control"
)

// TestOverviewShowsHistoryWriteFailures: when the daemon could not write
// call records to its history (its disk full), the overview — where an
// operator looks first — and every other page say so, as switchboard
// servers does; with none, nothing is said.
func TestOverviewShowsHistoryWriteFailures(t *testing.T) {
	failures := int64(7)
	b := &fakeBackend{status: func() (control.Status, error) {
		return control.Status{HistoryWriteFailures: failures}, nil
	}}
	c, err := New(Options{Backend: b, Catalog: catalog.New(catalog.Options{}), Config: config.Default})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(c.Handler())
	t.Cleanup(ts.Close)
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar}
	for _, p := range []string{"overview", "tools"} {
		code, body := get(t, hc, ts.URL+Prefix+p)
		if code != http.StatusOK {
			t.Fatalf("%s: got %d", p, code)
		}
		for _, want := range []string{`id="history-failures"`, "could not write 7 call records to its history", "switchboard_history_write_failures_total"} {
			if !strings.Contains(body, want) {
				t.Errorf("%s: want %q in the page", p, want)
			}
		}
	}
	failures = 1
	if _, body := get(t, hc, ts.URL+Prefix+"overview"); !strings.Contains(body, "could not write 1 call record to its history") {
		t.Errorf("overview with one failure: want it said in the singular")
	}
	failures = 0
	if _, body := get(t, hc, ts.URL+Prefix+"overview"); strings.Contains(body, "history-failures") {
		t.Errorf("overview without failures: got the warning")
	}
}
