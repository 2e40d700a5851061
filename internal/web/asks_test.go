package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/internal/web"
)

// askState is the part of a console call's state the tests read.
type askState struct {
	ID     string `json:"id"`
	Done   bool   `json:"done"`
	Status string `json:"status"`
	Asks   []struct {
		ID      string         `json:"id"`
		Kind    string         `json:"kind"`
		Message string         `json:"message"`
		Schema  map[string]any `json:"schema"`
		URL     string         `json:"url"`
		Host    string         `json:"host"`
		NoModel string         `json:"no_model"`
	} `json:"asks"`
}

// startCall starts a console call and returns its id.
func (cl *client) startCall(server, tool string) string {
	cl.t.Helper()
	var st askState
	cl.json("POST", web.Prefix+"api/calls", `{"server":`+jsString(server)+`,"tool":`+jsString(tool)+`}`, http.StatusAccepted, &st)
	return st.ID
}

// waitCall polls a call's state until cond holds (the state is what the
// page gets over the event stream; polling it is the page's fallback).
func (cl *client) waitCall(id, what string, cond func(askState) bool) askState {
	cl.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var st askState
		cl.json("GET", web.Prefix+"api/calls/"+id, "", http.StatusOK, &st)
		if cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			cl.t.Fatalf("call %s: %s: still %+v after 30s", id, what, st)
		}
		time.Sleep(20 * time.Millisecond) // polling the daemon: nothing to wait on
	}
}

// answer posts an answer and returns the status and body.
func (cl *client) answer(call, ask, body string) (int, string) {
	cl.t.Helper()
	resp, b := cl.do("POST", web.Prefix+"api/calls/"+call+"/asks/"+ask, "application/json", body)
	return resp.StatusCode, b
}

// TestAnswerRefusals: a question a server asks during a console call is
// answered through its own endpoint, which refuses another user, an
// unknown question, an action the question does not have, content that
// does not fit the requested schema (naming the fields), a second answer
// and a question withdrawn when its call was cancelled; the accepted
// answer reaches the server.
func TestAnswerRefusals(t *testing.T) {
	t.Parallel()
	cfg := testConfig(testserver.Server(t, "asks", "asks"))
	cfg.Gateway.Tokens = []config.Token{{Name: "a", User: "alice", Secret: "alice-secret"}, {Name: "b", User: "bob", Secret: "bob-secret"}}
	r := startDaemon(t, cfg)
	if _, err := r.d.Pool().WaitConnected(context.Background(), "asks", 20*time.Second); err != nil {
		t.Fatal(err)
	}
	alice, bob := loginClient(t, r.url, "alice-secret"), loginClient(t, r.url, "bob-secret")

	id := alice.startCall("asks", "ask")
	st := alice.waitCall(id, "the question", func(s askState) bool { return len(s.Asks) == 1 })
	q := st.Asks[0]
	if q.Kind != "form" || q.Message != "Sign up for the trip" || q.Schema["properties"] == nil || len(q.ID) < 20 {
		t.Fatalf("the question: got %+v, want the form with its schema and an unguessable id", q)
	}
	good := `{"action":"accept","content":{"login":"amy","seats":3,"tags":["b"]}}`
	for _, c := range []struct {
		name   string
		cl     *client
		call   string
		ask    string
		body   string
		status int
		want   []string
	}{
		{"another user", bob, id, q.ID, good, http.StatusNotFound, []string{"no call"}},
		{"an unknown question", alice, id, "nosuchquestion", good, http.StatusNotFound, []string{"has no question"}},
		{"an unknown call", alice, "nosuchcall", q.ID, good, http.StatusNotFound, []string{"no call"}},
		{"an action a form does not have", alice, id, q.ID, `{"action":"approve"}`, http.StatusBadRequest, []string{"accept, decline, cancel"}},
		{"content with a decline", alice, id, q.ID, `{"action":"decline","content":{"login":"amy"}}`, http.StatusBadRequest, []string{"content goes only with accepting"}},
		{"content that is not an object", alice, id, q.ID, `{"action":"accept","content":[1]}`, http.StatusBadRequest, []string{"JSON object"}},
		{"content that does not fit", alice, id, q.ID, `{"action":"accept","content":{"login":"AB","seats":9}}`, http.StatusBadRequest,
			[]string{"does not fit its form", `"field":"login"`, `"field":"seats"`}},
		{"a required field missing", alice, id, q.ID, `{"action":"accept","content":{"login":"amy"}}`, http.StatusBadRequest, []string{`"field":"seats"`}},
	} {
		status, body := c.cl.answer(c.call, c.ask, c.body)
		if status != c.status {
			t.Errorf("%s: got %d %s, want %d", c.name, status, body, c.status)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: got %s, want it to contain %s", c.name, body, w)
			}
		}
	}
	// Without the CSRF token the answer is refused.
	csrf := alice.csrf
	alice.csrf = ""
	if status, body := alice.answer(id, q.ID, good); status != http.StatusForbidden {
		t.Errorf("no CSRF token: got %d %s, want 403", status, body)
	}
	alice.csrf = csrf

	if status, body := alice.answer(id, q.ID, good); status != http.StatusOK {
		t.Fatalf("the good answer: got %d %s", status, body)
	}
	if status, body := alice.answer(id, q.ID, good); status != http.StatusConflict || !strings.Contains(body, "already answered") {
		t.Errorf("a second answer: got %d %s, want 409 already answered", status, body)
	}
	st = alice.waitCall(id, "the call's end", func(s askState) bool { return s.Done })
	if st.Status != "success" || len(st.Asks) != 0 {
		t.Errorf("the call after the answer: %+v, want success and no question left", st)
	}
	_, page := alice.do("GET", web.Prefix+"tool?server=asks&name=ask&call="+id, "", "")
	for _, w := range []string{"accept", "amy", "seats", "3"} {
		if !strings.Contains(page, w) {
			t.Errorf("the call's result does not show %q (the server did not get the answer)", w)
		}
	}

	// A call cancelled while its question waits withdraws the question:
	// the call ends at once, and an answer then finds nothing to answer.
	id = alice.startCall("asks", "confirm")
	st = alice.waitCall(id, "the question", func(s askState) bool { return len(s.Asks) == 1 })
	alice.json("POST", web.Prefix+"api/calls/"+id+"/cancel", "", http.StatusOK, nil)
	st2 := alice.waitCall(id, "the cancelled call's end", func(s askState) bool { return s.Done })
	if st2.Status != "cancelled" || len(st2.Asks) != 0 {
		t.Errorf("the cancelled call: %+v, want cancelled with no question left", st2)
	}
	if status, body := alice.answer(id, st.Asks[0].ID, `{"action":"accept","content":{"ok":true}}`); status != http.StatusNotFound {
		t.Errorf("answering a withdrawn question: got %d %s, want 404", status, body)
	}
}

// TestSamplingWithoutModel: with no llm: model configured, a sampling
// request asked in the console says so, cannot be approved, and its
// decline reaches the server with the reason.
func TestSamplingWithoutModel(t *testing.T) {
	t.Parallel()
	r := startDaemon(t, testConfig(testserver.Server(t, "asks", "asks")))
	if _, err := r.d.Pool().WaitConnected(context.Background(), "asks", 20*time.Second); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, r.url)
	id := cl.startCall("asks", "sample")
	st := cl.waitCall(id, "the sampling question", func(s askState) bool { return len(s.Asks) == 1 })
	q := st.Asks[0]
	if q.Kind != "sampling" || q.NoModel == "" {
		t.Fatalf("the question: %+v, want sampling with the reason there is no model", q)
	}
	if status, body := cl.answer(id, q.ID, `{"action":"approve"}`); status != http.StatusBadRequest || !strings.Contains(body, "no model is configured") {
		t.Errorf("approving with no model: got %d %s, want 400 saying no model is configured", status, body)
	}
	if status, body := cl.answer(id, q.ID, `{"action":"decline"}`); status != http.StatusOK {
		t.Fatalf("declining: got %d %s", status, body)
	}
	st = cl.waitCall(id, "the call's end", func(s askState) bool { return s.Done })
	_, page := cl.do("GET", web.Prefix+"tool?server=asks&name=sample&call="+id, "", "")
	if !strings.Contains(page, "declined") {
		t.Errorf("the call's result (%s) does not say the request was declined", st.Status)
	}
}

// TestQuestionOutlivedByTimeout: nobody answers (the page was closed), so
// the call's timeout applies: the call ends as timed out, and its
// question is withdrawn with it.
func TestQuestionOutlivedByTimeout(t *testing.T) {
	t.Parallel()
	srv := testserver.Server(t, "asks", "asks")
	srv.RequestTimeout = 3 * time.Second
	r := startDaemon(t, testConfig(srv))
	if _, err := r.d.Pool().WaitConnected(context.Background(), "asks", 20*time.Second); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, r.url)
	id := cl.startCall("asks", "confirm")
	st := cl.waitCall(id, "the question", func(s askState) bool { return len(s.Asks) == 1 })
	end := cl.waitCall(id, "the call's timeout", func(s askState) bool { return s.Done })
	if end.Status != "timeout" || len(end.Asks) != 0 {
		t.Errorf("the unanswered call: %+v, want timeout with no question left", end)
	}
	if status, body := cl.answer(id, st.Asks[0].ID, `{"action":"decline"}`); status != http.StatusNotFound {
		t.Errorf("answering after the timeout: got %d %s, want 404", status, body)
	}
}
