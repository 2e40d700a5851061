package upstream

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestReplayedResultAnswersTheFirstCallOnce: the result the lean path
// read answers the SDK's first post of a tools/call, with the SDK's own
// request id, once; anything else goes on to the server with its body
// intact.
func TestReplayedResultAnswersTheFirstCallOnce(t *testing.T) {
	rp := &replayedResult{result: []byte(`{"content":[],"inputRequests":{"r":{"method":"roots/list","params":{}}}}`)}
	post := func(body string) *http.Request {
		req, err := http.NewRequest(http.MethodPost, "http://server/mcp", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		return req
	}
	bodyOf := func(r io.Reader) string {
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	get, _ := http.NewRequest(http.MethodGet, "http://server/mcp", nil)
	if resp, next := rp.answer(get); resp != nil || next != get {
		t.Errorf("a GET: answered %v, want it sent on as it is", resp)
	}
	const note = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`
	resp, next := rp.answer(post(note))
	if resp != nil {
		t.Errorf("a notification: answered %v, want it sent on", resp)
	} else if got := bodyOf(next.Body); got != note {
		t.Errorf("a notification is sent on with body %q, want %q", got, note)
	}

	const call = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}`
	resp, _ = rp.answer(post(call))
	if resp == nil {
		t.Fatal("the first tools/call was sent on, want it answered with the result read")
	}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "application/json" {
		t.Errorf("the answer is HTTP %d %q, want 200 application/json", resp.StatusCode, ct)
	}
	if got, want := bodyOf(resp.Body), `{"jsonrpc":"2.0","id":7,"result":`+string(rp.result)+`}`; got != want {
		t.Errorf("the answer is %s, want %s", got, want)
	}

	const retry = `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"x","inputResponses":{"r":{"roots":[]}}}}`
	resp, next = rp.answer(post(retry))
	if resp != nil {
		t.Errorf("the retry was answered %v, want it sent to the server", resp)
	} else if got := bodyOf(next.Body); got != retry {
		t.Errorf("the retry is sent with body %q, want %q", got, retry)
	}
}
