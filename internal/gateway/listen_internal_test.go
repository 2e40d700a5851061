package gateway

// White-box: the record of a session's listens is internal; what a client
// is sent through it is checked end to end in the daemon's listen_test.go.

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestListensFollowTheSDK: what a client session's listens opted in to is
// kept as the SDK keeps it — per list kind the latest listen, per URI the
// listen that subscribed it — and a listen that ends takes the session's
// list kinds and its own URIs with it; a session with nothing left is
// forgotten.
func TestListensFollowTheSDK(t *testing.T) {
	t.Parallel()
	var l listens
	ss := new(mcp.ServerSession)
	tools := "notifications/tools/list_changed"
	prompts := "notifications/prompts/list_changed"
	updated := "notifications/resources/updated"
	idOf := func(method, uri string) any {
		sub, ok := l.find(ss, method, uri)
		if !ok {
			return nil
		}
		return sub.id
	}

	ctx1, end1 := context.WithCancel(context.Background())
	defer end1()
	l.opened(ctx1, ss, int64(2), mcp.NotificationSubscriptions{ToolsListChanged: true})
	ctx2, end2 := context.WithCancel(context.Background())
	defer end2()
	l.opened(ctx2, ss, "r", mcp.NotificationSubscriptions{ResourceSubscriptions: []string{"x://a"}})
	ctx3, end3 := context.WithCancel(context.Background())
	defer end3()
	l.opened(ctx3, ss, int64(5), mcp.NotificationSubscriptions{ToolsListChanged: true, ResourceSubscriptions: []string{"x://b"}})

	for _, c := range []struct {
		method, uri string
		want        any
	}{
		{tools, "", int64(5)}, // the latest listen that opted in
		{prompts, "", nil},    // none did
		{updated, "x://a", "r"},
		{updated, "x://b", int64(5)},
		{updated, "x://c", nil},
	} {
		if got := idOf(c.method, c.uri); got != c.want {
			t.Errorf("%s %s: got listen %v, want %v", c.method, c.uri, got, c.want)
		}
	}

	// The resource listen ends: with it, as in the SDK, the session's list
	// kinds, and its own URI.
	end2()
	waitUntil(t, "the ended listen to be forgotten", func() bool { return idOf(updated, "x://a") == nil })
	if got := idOf(tools, ""); got != nil {
		t.Errorf("tools after a listen ended: got listen %v, want none (the SDK drops the session's list kinds)", got)
	}
	if got := idOf(updated, "x://b"); got != int64(5) {
		t.Errorf("x://b after another listen ended: got listen %v, want 5", got)
	}
	end3()
	waitUntil(t, "the session to be forgotten", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.m) == 0
	})
}

// waitUntil polls ok until it holds, failing the test after 10s.
func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: it did not happen within 10s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
