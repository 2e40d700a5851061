package control_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// TestUnknownToolAnswersAtOnceWhenTheListIsSettled asks for a tool the
// test server does not have, once its list has settled (its "late" tool,
// announced with list_changed, is listed: newFixture waits for it), both
// in-process and through the control socket: each says not found at
// once. Before, every miss on a server that announces list changes waited
// 2 s for the tool to appear, however long ago the server had connected.
func TestUnknownToolAnswersAtOnceWhenTheListIsSettled(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// Tool still waits for a tool during the two seconds after alpha
	// connected (servers add tools right after initialize). The condition
	// is the clock itself: wait until those two seconds are behind us.
	<-time.After(2 * time.Second)
	for _, b := range []struct {
		name string
		tool func(ctx context.Context, server, name string) error
	}{
		{"local", func(ctx context.Context, server, name string) error {
			_, err := f.local.Tool(ctx, server, name)
			return err
		}},
		{"socket", func(ctx context.Context, server, name string) error {
			_, err := f.client.Tool(ctx, server, name)
			return err
		}},
	} {
		start := time.Now()
		err := b.tool(ctx, "alpha", "no_such_tool")
		took := time.Since(start)
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Kind != fault.NotFound {
			t.Errorf("%s: alpha/no_such_tool: got %v, want a not_found error", b.name, err)
		}
		// A refetch of a stdio server's list takes milliseconds; the old
		// wait took 2 s.
		if took >= time.Second {
			t.Errorf("%s: alpha/no_such_tool took %s, want an answer at once (the list has settled)", b.name, took)
		}
	}
}
