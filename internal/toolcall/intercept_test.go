package toolcall_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
)

// scriptedInterceptor decides by tool name and remembers what it saw.
type scriptedInterceptor struct {
	mu     sync.Mutex
	before []toolcall.Request
	after  []afterSeen
}

type afterSeen struct {
	req  toolcall.Request
	res  *toolcall.Result
	kind fault.Kind
}

func (s *scriptedInterceptor) Before(_ context.Context, req *toolcall.Request) (map[string]any, error) {
	s.mu.Lock()
	s.before = append(s.before, *req)
	s.mu.Unlock()
	switch req.Tool {
	case "fail":
		return nil, fault.New(fault.Authorization, "denied by hook guard: not today")
	case "echo":
		if req.Arguments["message"] == "secret plan" {
			return map[string]any{"message": "redacted plan"}, nil
		}
	case "add":
		if req.Arguments["a"] == json.Number("1") {
			return map[string]any{"a": "not a number"}, nil // a rewrite that breaks the schema
		}
	}
	return nil, nil
}

func (s *scriptedInterceptor) After(_ context.Context, req *toolcall.Request, res *toolcall.Result, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := afterSeen{req: *req, res: res}
	if err != nil {
		seen.kind = fault.KindOf(err)
	}
	s.after = append(s.after, seen)
}

func TestInterceptor(t *testing.T) {
	f := newFixture(t, []config.Server{okServer(t, "alpha")}, nil)
	icpt := &scriptedInterceptor{}
	f.eng.SetInterceptor(icpt)
	ctx := context.Background()

	// Allowed unchanged: the raw arguments reach Before decoded.
	res, err := f.eng.Call(ctx, toolcall.Request{Server: "alpha", Tool: "add", RawArguments: json.RawMessage(`{"a": 40, "b": 2}`)})
	if err != nil || textOf(res) != "42" {
		t.Fatalf("allowed call: got %v, %v; want 42", res, err)
	}
	if got := icpt.before[0].Arguments["a"]; got != json.Number("40") {
		t.Errorf("Before saw a = %#v, want json.Number(40)", got)
	}

	// Rewritten: the server gets the new arguments.
	res, err = f.eng.Call(ctx, toolcall.Request{Server: "alpha", Tool: "echo", Arguments: map[string]any{"message": "secret plan"}})
	if err != nil || textOf(res) != "redacted plan" {
		t.Fatalf("rewritten call: got %v, %v; want the rewritten message echoed", res, err)
	}

	// Denied: the caller gets the interceptor's error, and history has it.
	_, err = f.eng.Call(ctx, toolcall.Request{Server: "alpha", Tool: "fail"})
	if fe := fault.As(err); fe.Kind != fault.Authorization || fe.Message != "denied by hook guard: not today" {
		t.Fatalf("denied call: got %v, want the guard's authorization error", err)
	}

	// A rewrite is validated like the caller's arguments.
	_, err = f.eng.Call(ctx, toolcall.Request{Server: "alpha", Tool: "add", Arguments: map[string]any{"a": json.Number("1"), "b": json.Number("2")}})
	if fault.KindOf(err) != fault.Validation {
		t.Fatalf("invalid rewrite: got %v, want a validation error", err)
	}

	// A call refused before Before (unknown tool) still reaches After,
	// and so does one its caller refused itself (Refuse).
	if _, err := f.eng.Call(ctx, toolcall.Request{Server: "alpha", Tool: "nope"}); err == nil {
		t.Fatal("unknown tool: got no error")
	}
	refused := fault.New(fault.Authorization, "tool alpha__echo is not part of view narrow")
	if err := f.eng.Refuse(ctx, toolcall.Request{Server: "alpha", Tool: "echo", Source: toolcall.SourceGateway, RawArguments: json.RawMessage(`{"message": "hi"}`)}, refused); err != refused {
		t.Fatalf("Refuse: got %v, want its error back", err)
	}

	icpt.mu.Lock()
	defer icpt.mu.Unlock()
	if len(icpt.before) != 4 || len(icpt.after) != 6 {
		t.Fatalf("got %d Before and %d After calls, want 4 and 6", len(icpt.before), len(icpt.after))
	}
	if got := icpt.after[5].req.Arguments["message"]; got != "hi" {
		t.Errorf("After of the refused call saw message %v, want its decoded arguments", got)
	}
	wantKinds := []fault.Kind{"", "", fault.Authorization, fault.Validation, fault.NotFound, fault.Authorization}
	for i, a := range icpt.after {
		if a.kind != wantKinds[i] {
			t.Errorf("After %d: got error kind %q, want %q", i, a.kind, wantKinds[i])
		}
	}
	if got := icpt.after[1].req.Arguments["message"]; got != "redacted plan" {
		t.Errorf("After of the rewritten call saw message %v, want the rewritten arguments", got)
	}
	if icpt.after[1].res == nil || textOf(icpt.after[1].res) != "redacted plan" {
		t.Errorf("After of the rewritten call: got result %v, want the server's", icpt.after[1].res)
	}

	recs := f.rec.all()
	var denied, refusedRecs int
	for _, r := range recs {
		if r.Tool == "fail" && r.ErrorKind == string(fault.Authorization) {
			denied++
		}
		if r.Tool == "echo" && r.Source == string(toolcall.SourceGateway) && r.ErrorKind == string(fault.Authorization) && r.Status == string(toolcall.StatusError) && string(r.Args) == `{"message":"string"}` {
			refusedRecs++
		}
	}
	if denied != 1 || refusedRecs != 1 {
		t.Errorf("history has %d denied and %d refused calls, want 1 and 1: %+v", denied, refusedRecs, recs)
	}

	// Removing the interceptor: no more calls to it.
	f.eng.SetInterceptor(nil)
	if _, err := f.eng.Call(ctx, toolcall.Request{Server: "alpha", Tool: "echo", Arguments: map[string]any{"message": "x"}}); err != nil {
		t.Fatal(err)
	}
	if len(icpt.before) != 4 {
		t.Errorf("after SetInterceptor(nil): got %d Before calls, want still 4", len(icpt.before))
	}
}
