package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/internal/web"
)

// urlsState is the part of a console call's state that shows the pages a
// server requires before it answers (error -32042).
type urlsState struct {
	ID     string `json:"id"`
	Done   bool   `json:"done"`
	Status string `json:"status"`
	Asks   []struct {
		ID   string `json:"id"`
		Kind string `json:"kind"`
		URLs []struct {
			Message string `json:"message"`
			URL     string `json:"url"`
			Host    string `json:"host"`
		} `json:"urls"`
	} `json:"asks"`
}

// TestURLElicitationRequired: a server that answers a console call with
// -32042 (URL elicitation required) has its page shown in the call's page,
// with its host. Declined, the call fails saying what the server
// required; said done without the page being completed, the call is made
// once more and fails again (one retry, as on the terminal); when the
// server says the page is complete, the question goes by itself and the
// call is made again and succeeds.
func TestURLElicitationRequired(t *testing.T) {
	t.Parallel()
	r := startDaemon(t, testConfig(testserver.Server(t, "urlelicit", "urlelicit")))
	if _, err := r.d.Pool().WaitConnected(context.Background(), "urlelicit", 20*time.Second); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, r.url)
	waitURLs := func(id string) urlsState {
		t.Helper()
		var st urlsState
		deadline := time.Now().Add(30 * time.Second)
		for {
			cl.json("GET", web.Prefix+"api/calls/"+id, "", http.StatusOK, &st)
			if len(st.Asks) == 1 || st.Done || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond) // polling the daemon: nothing to wait on
		}
		if len(st.Asks) != 1 || st.Asks[0].Kind != "urls" || len(st.Asks[0].URLs) != 1 {
			t.Fatalf("call %s: got %+v, want one question of kind urls with one page", id, st)
		}
		u := st.Asks[0].URLs[0]
		if u.Message != "Connect your account" || !strings.HasPrefix(u.URL, "http://"+u.Host+"/connect/") || !strings.HasPrefix(u.Host, "127.0.0.1:") {
			t.Fatalf("the page: got %+v, want the server's message, URL and host", u)
		}
		return st
	}
	errorOf := func(id string) string {
		t.Helper()
		end := cl.waitCall(id, "the call's end", func(s askState) bool { return s.Done })
		_, page := cl.do("GET", web.Prefix+"tool?server=urlelicit&name=connect&call="+id, "", "")
		return end.Status + " " + page
	}

	// Declined: the call fails with the server's requirement.
	id := cl.startCall("urlelicit", "connect")
	st := waitURLs(id)
	if status, body := cl.answer(id, st.Asks[0].ID, `{"action":"accept"}`); status != http.StatusBadRequest || !strings.Contains(body, "done, decline") {
		t.Errorf("an action the question does not have: got %d %s, want 400 naming done, decline", status, body)
	}
	if status, body := cl.answer(id, st.Asks[0].ID, `{"action":"decline"}`); status != http.StatusOK {
		t.Fatalf("declining: got %d %s", status, body)
	}
	if got := errorOf(id); !strings.HasPrefix(got, "error ") || !strings.Contains(got, "elicitation_required") || !strings.Contains(got, "Connect your account") {
		t.Errorf("the declined call: got %.300s, want an elicitation_required error naming the step", got)
	}

	// Done without completing it: made once more, refused again.
	id = cl.startCall("urlelicit", "connect")
	st = waitURLs(id)
	if status, body := cl.answer(id, st.Asks[0].ID, `{"action":"done"}`); status != http.StatusOK {
		t.Fatalf("done: got %d %s", status, body)
	}
	if got := errorOf(id); !strings.HasPrefix(got, "error ") || !strings.Contains(got, "elicitation_required") {
		t.Errorf("the call said done but not completed: got %.300s, want elicitation_required after one more try", got)
	}

	// Completed at the server: the question goes, the call succeeds.
	id = cl.startCall("urlelicit", "connect")
	st = waitURLs(id)
	resp, err := http.Get(st.Asks[0].URLs[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	end := cl.waitCall(id, "the call's end", func(s askState) bool { return s.Done })
	if end.Status != "success" || len(end.Asks) != 0 {
		t.Fatalf("the completed call: got %+v, want success and no question left", end)
	}
	_, page := cl.do("GET", web.Prefix+"tool?server=urlelicit&name=connect&call="+id, "", "")
	if !strings.Contains(page, "connected after 5 calls") {
		t.Errorf("the result page does not show the second attempt's answer (connected after 5 calls)")
	}

	// The history says which call needed the URL elicitation: the one
	// made again and answered, and the one made again and refused.
	var recs []store.CallRecord
	deadline := time.Now().Add(30 * time.Second)
	for len(recs) < 3 && time.Now().Before(deadline) {
		if recs, err = r.store.Calls(context.Background(), store.CallFilter{Server: "urlelicit"}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond) // the recorder writes in the background: nothing to wait on
	}
	var got []string
	for _, rec := range recs { // newest first
		got = append(got, fmt.Sprintf("%s/%d", rec.Status, rec.URLElicitations))
	}
	if want := "success/1 error/1 error/0"; strings.Join(got, " ") != want {
		t.Errorf("the history (status/url_elicitations, newest first): got %q, want %q", strings.Join(got, " "), want)
	}
	_, hist := cl.do("GET", web.Prefix+"history", "", "")
	if !strings.Contains(hist, "after URL elicitation") {
		t.Errorf("the history page does not mark the call made again after its URL elicitation")
	}
}
