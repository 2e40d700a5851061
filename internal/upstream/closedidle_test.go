package upstream

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// TestClosedIdleIsAConnectionError: net/http's "server closed idle
// connection" (a kept-alive connection the restarted server closed as a
// request went out on it; TestStreamableRestartBetweenCalls met it under
// load) is a connection error that says what happened, so that a
// read-only call is retried, and the supervisor is asked to check the
// connection. The error is net/http's unexported one, rebuilt from its
// text: it cannot be made to happen on demand.
func TestClosedIdleIsAConnectionError(t *testing.T) {
	c := &Client{server: config.Server{Name: "s", Transport: config.TransportHTTP, URL: "http://127.0.0.1:9/mcp"},
		done: make(chan struct{}), suspect: make(chan struct{}, 1), wire: &wireWatch{}, stderr: newTailBuffer(0)}
	c.check.monitored.Store(true)
	err := fmt.Errorf("Post %q: %w", c.server.URL, errors.New("http: server closed idle connection"))
	got := c.classify(context.Background(), err, "calling s/gen")
	if k := fault.KindOf(got); k != fault.Connection || !strings.Contains(got.Error(), "127.0.0.1:9 closed the connection as the request went out") {
		t.Errorf("got %s %v, want a connection error saying the server closed the connection", k, got)
	}
	if NotDelivered(got) {
		t.Errorf("got it marked never delivered; the server may have read it")
	}
	select {
	case <-c.suspect:
	default:
		t.Error("the supervisor was not asked to check the connection")
	}
}
