package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// FuzzSSEMessage posts arbitrary bodies to a real SSE session's message
// endpoint (POST /sse?sessionid=ID) of a gateway served on 127.0.0.1.
// Properties: the gateway never answers 5xx nor hangs; it accepts a
// message (202, the answer goes on the stream) or refuses it with a
// JSON-RPC error of a specification code (or -32001 for a session it does
// not have) whose id is null or, byte for byte, the id sent; and the
// session still takes a well-formed message afterwards.
func FuzzSSEMessage(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope","arguments":{},"_meta":{"progressToken":1}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`,
		`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`{"jsonrpc":"1.0","id":3,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":4}`,
		`{"jsonrpc":"2.0","id":5,"result":{}}`,
		`[{"jsonrpc":"2.0","id":6,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":7,"method":"no/such/method"}`,
		`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`,
		`{`,
		``,
	} {
		f.Add(seed, false)
	}
	f.Add(`{"jsonrpc":"2.0","id":8,"method":"ping"}`, true)

	r := newRig(f, nil, "gateway:\n  handshake_timeout: 0s\n")
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.srv.URL+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	var endpoint string
	for endpoint == "" {
		line, err := br.ReadString('\n')
		if err != nil {
			f.Fatalf("reading the endpoint event: %v", err)
		}
		if data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
			endpoint = data
		}
	}
	// The answers come on the stream: read it, so that the gateway never
	// waits on a full connection.
	var drained sync.WaitGroup
	drained.Go(func() { _, _ = io.Copy(io.Discard, br) })
	f.Cleanup(func() {
		cancel()
		resp.Body.Close()
		drained.Wait()
	})

	post := func(t *testing.T, url, body string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("posting %q: %v", body, err)
		}
		defer resp.Body.Close()
		answer, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, answer
	}
	f.Fuzz(func(t *testing.T, body string, otherSession bool) {
		url := r.srv.URL + endpoint
		if otherSession {
			url = r.srv.URL + "/sse?sessionid=NOSUCHSESSION"
		}
		status, answer := post(t, url, body)
		switch {
		case status == http.StatusAccepted:
		case status >= 500:
			t.Fatalf("posting %q: got %d %s", body, status, answer)
		default:
			var sent struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal([]byte(body), &sent) != nil {
				sent.ID = nil
			}
			checkAnswer(t, status, answer, sent.ID)
		}
		if status, answer := post(t, r.srv.URL+endpoint, `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`); status != http.StatusAccepted {
			t.Fatalf("after posting %q the session takes no message: got %d %s", body, status, answer)
		}
	})
}

// checkAnswer checks that a refusal is a JSON-RPC error of a
// specification code (or -32001, no such session) whose id is null or
// exactly sent.
func checkAnswer(t *testing.T, status int, answer []byte, sent json.RawMessage) {
	t.Helper()
	var e struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(answer, &e); err != nil || e.JSONRPC != "2.0" || e.Error == nil || e.Error.Message == "" {
		t.Fatalf("HTTP %d: the answer is not a JSON-RPC error with a message: %q", status, answer)
	}
	switch e.Error.Code {
	case -32700, -32600, -32601, -32602, -32001:
	default:
		t.Fatalf("HTTP %d: code %d is not a specification code: %s", status, e.Error.Code, answer)
	}
	if string(e.ID) != "null" && !bytes.Equal(e.ID, sent) {
		t.Fatalf("HTTP %d: the answer's id %s is neither null nor the id sent (%s)", status, e.ID, sent)
	}
}
