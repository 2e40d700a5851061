package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// specCodes are the JSON-RPC error codes the gateway answers a refused
// message with before the SDK sees it.
var specCodes = map[int64]bool{-32700: true, -32600: true, -32601: true, -32602: true}

// FuzzPrecheck feeds the streamable-HTTP endpoint's decoding and checks
// (readMessage, precheck, replyID) arbitrary bodies, protocol versions
// and session ids. Properties: no panic; a message let through is a
// JSON-RPC 2.0 message with an id the gateway echoes exactly (or a batch
// of a protocol that has them); a refused one is answered 202 (an unknown
// notification) or with a JSON-RPC error of a specification code whose id
// is null or, byte for byte, the id the client sent.
func FuzzPrecheck(f *testing.F) {
	for _, seed := range []struct {
		body, version string
		session       bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, "", false},
		{`{"jsonrpc":"2.0","id":"x-7","method":"tools/call","params":{"name":"a__echo","arguments":{},"_meta":{"progressToken":"p"}}}`, "2025-06-18", true},
		{`{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"t"}}`, "2025-06-18", true},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, "", true},
		{`{"jsonrpc":"2.0","id":"\u0041","method":"ping"}`, "", true},
		{`{"jsonrpc":"2.0","id":-0,"method":"ping"}`, "", true},
		{`{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, "", true},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`, "", true},
		{`{"jsonrpc":"2.0","id":4,"result":{}}`, "", true},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, "2025-03-26", true},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, "2025-06-18", true},
		{`{"jsonrpc":"1.0","id":[1],"method":"ping"}`, "", true},
		{`{"jsonrpc":"2.0","id":2,"method":"nope"}`, "2026-07-28", false},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, "", false},
		{`{"jsonrpc":"2.0","id":{},"method":"ping"}`, "", true},
		{`not json`, "", false},
		{``, "", false},
	} {
		f.Add(seed.body, seed.version, seed.session)
	}
	f.Fuzz(func(t *testing.T, body, version string, session bool) {
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		if version != "" {
			r.Header.Set(protocolHeader, version)
		}
		sid := ""
		if session {
			sid = "s1"
		}
		m, err := readMessage(r)
		if err != nil {
			t.Fatalf("readMessage of an in-memory body: %v", err)
		}
		if id := m.replyID(); id != nil && (!bytes.Equal(id, m.ID) || m.idProblem() != "") {
			t.Fatalf("replyID %s of id %s: not the id sent, or one the gateway refuses", id, m.ID)
		}
		w := httptest.NewRecorder()
		if !precheck(w, r, m, true, sid) {
			if m.batch {
				if version >= "2025-06-18" {
					t.Fatalf("a batch on protocol %q was let through", version)
				}
				return
			}
			if m.parseErr != nil || m.JSONRPC != "2.0" || m.idProblem() != "" {
				t.Fatalf("let through: parse error %v, jsonrpc %q, id problem %q", m.parseErr, m.JSONRPC, m.idProblem())
			}
			if m.hasID() && m.ID[0] != '"' {
				if _, err := strconv.ParseInt(string(m.ID), 10, 64); err != nil {
					t.Fatalf("let through an id the SDK would not echo exactly: %s", m.ID)
				}
			}
			return
		}
		if w.Code == http.StatusAccepted {
			if w.Body.Len() != 0 || m.hasID() {
				t.Fatalf("202 with a body %q or for a request with id %s", w.Body, m.ID)
			}
			return
		}
		checkRPCError(t, w.Body.Bytes(), m.ID)
	})
}

// checkRPCError checks that answer is a JSON-RPC error of a specification
// code whose id is null or exactly sent.
func checkRPCError(t *testing.T, answer []byte, sent json.RawMessage) {
	t.Helper()
	var e struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(answer, &e); err != nil {
		t.Fatalf("the answer is not JSON: %q: %v", answer, err)
	}
	if e.JSONRPC != "2.0" || e.Error == nil || e.Error.Message == "" {
		t.Fatalf("the answer is not a JSON-RPC error with a message: %s", answer)
	}
	if !specCodes[e.Error.Code] && e.Error.Code != codeSessionNotFound {
		t.Fatalf("code %d is not a specification code: %s", e.Error.Code, answer)
	}
	if string(e.ID) != "null" && !bytes.Equal(e.ID, sent) {
		t.Fatalf("the answer's id %s is neither null nor the id sent (%s)", e.ID, sent)
	}
}

// FuzzCancelMatching checks that a notifications/cancelled cancels the
// lean-path call (and the call the SDK runs under a request's tag) whose
// id it names, and no other: ids are the same when both are the same
// string (however escaped) or the same integer.
func FuzzCancelMatching(f *testing.F) {
	for _, seed := range [][2]string{
		{`1`, `1`}, {`1`, `2`}, {`"1"`, `1`}, {`"A"`, `"\u0041"`}, {`0`, `-0`},
		{`"x-7"`, `"x-7"`}, {`"é"`, `"\u00e9"`}, {`9007199254740991`, `9007199254740991`},
		{`1`, `1.0`}, {`"a"`, `null`}, {`2`, `[2]`},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, callID, cancelID string) {
		call, err := readMessage(httptest.NewRequest(http.MethodPost, "/mcp",
			strings.NewReader(`{"jsonrpc":"2.0","id":`+callID+`,"method":"tools/call","params":{"name":"t"}}`)))
		if err != nil || call.parseErr != nil || !call.hasID() || call.idProblem() != "" {
			return // refused before it could run (FuzzPrecheck)
		}
		note, err := readMessage(httptest.NewRequest(http.MethodPost, "/mcp",
			strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+cancelID+`}}`)))
		if err != nil || note.parseErr != nil {
			return
		}
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(note.Params, &p) != nil {
			return
		}
		want := sameID(call.ID, p.RequestID)

		g := &Gateway{}
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		fast, done, ok := g.beginFastCall(context.Background(), "s1", call.ID)
		if !ok {
			t.Fatal("a first call was refused as a duplicate")
		}
		defer done()
		tagged, end := g.reqCalls.begin(r, g.requester(r, "s1", "", call.ID), call.ID)
		defer end()
		sdk, leave := g.reqCalls.join(context.Background(), tagged.Header.Get(requestKeyHeader))
		defer leave()
		// Another session's call with the same id is never touched.
		other, otherDone, _ := g.beginFastCall(context.Background(), "s2", call.ID)
		defer otherDone()

		g.cancelFast(r, "s1", note)
		if got := fast.Err() != nil; got != want {
			t.Errorf("call id %s, cancelled names %s: lean-path call cancelled %v, want %v", call.ID, p.RequestID, got, want)
		}
		if got := sdk.Err() != nil; got != want {
			t.Errorf("call id %s, cancelled names %s: SDK-path call cancelled %v, want %v", call.ID, p.RequestID, got, want)
		}
		if other.Err() != nil {
			t.Errorf("call id %s: another session's call was cancelled", call.ID)
		}
	})
}

// sameID reports whether two JSON-RPC ids are the same id: the same
// string, or the same integer.
func sameID(a, b json.RawMessage) bool {
	if len(a) > 0 && len(b) > 0 && a[0] == '"' && b[0] == '"' {
		var sa, sb string
		return json.Unmarshal(a, &sa) == nil && json.Unmarshal(b, &sb) == nil && sa == sb
	}
	na, errA := strconv.ParseInt(string(a), 10, 64)
	nb, errB := strconv.ParseInt(string(b), 10, 64)
	return errA == nil && errB == nil && na == nb
}
