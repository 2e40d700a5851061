package web

import (
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

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
	hc, base := consoleWithStatus(t, func() (control.Status, error) {
		return control.Status{HistoryWriteFailures: failures}, nil
	})
	for _, p := range []string{"overview", "tools"} {
		code, body := get(t, hc, base+Prefix+p)
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
	if _, body := get(t, hc, base+Prefix+"overview"); !strings.Contains(body, "could not write 1 call record to its history") {
		t.Errorf("overview with one failure: want it said in the singular")
	}
	failures = 0
	if _, body := get(t, hc, base+Prefix+"overview"); strings.Contains(body, "history-failures") {
		t.Errorf("overview without failures: got the warning")
	}
}

// TestPagesShowHistoryUnavailable: while the daemon's history database
// cannot be reached, every page says since when and how many records
// wait; once it is back, nothing is said.
func TestPagesShowHistoryUnavailable(t *testing.T) {
	since := time.Date(2026, 11, 27, 23, 5, 0, 0, time.UTC)
	outage := &control.HistoryOutage{Since: since, Waiting: 12, Error: "recording 1 calls: connection refused"}
	hc, base := consoleWithStatus(t, func() (control.Status, error) {
		return control.Status{HistoryUnavailable: outage}, nil
	})
	for _, p := range []string{"overview", "tools"} {
		code, body := get(t, hc, base+Prefix+p)
		if code != http.StatusOK {
			t.Fatalf("%s: got %d", p, code)
		}
		for _, want := range []string{`id="history-unavailable"`, "Since 2026-11-27 23:05:00 UTC", "12 call records wait", "connection refused", "switchboard_history_unavailable_seconds"} {
			if !strings.Contains(body, want) {
				t.Errorf("%s: want %q in the page", p, want)
			}
		}
	}
	outage = nil
	if _, body := get(t, hc, base+Prefix+"overview"); strings.Contains(body, "history-unavailable") {
		t.Errorf("overview with the history available: got the warning")
	}
}

// consoleWithStatus serves a console whose backend's status is status, until
// the test ends, and returns a client with a cookie jar and the server's URL.
func consoleWithStatus(t *testing.T, status func() (control.Status, error)) (*http.Client, string) {
	t.Helper()
	c, err := New(Options{Backend: &fakeBackend{status: status}, Catalog: catalog.New(catalog.Options{}), Config: config.Default})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(c.Handler())
	t.Cleanup(ts.Close)
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar}, ts.URL
}
