package toolcall_test

import (
	"context"
	"regexp"
	"strconv"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// TestTruncationMarkerCountsWhatWasOmitted: a result larger than a stdio
// message may be (16 MiB by default) is cut short by the transport, then cut to
// limits.max_output by the engine; the marker the caller reads must count
// the bytes omitted from what the server sent (Result.Bytes less the text
// kept), not from the transport's shortened copy. Issue 18 item 5 ("the
// truncation marker counts the wrong number of omitted bytes").
func TestTruncationMarkerCountsWhatWasOmitted(t *testing.T) {
	// The result is larger than the largest message held in memory (here
	// 256 KiB, not the default 16 MiB: every byte through the pipe costs CPU
	// under the race detector), so the stdio frame cap cuts it before the
	// engine's limit does: the marker must count what both omitted.
	const limit, sent = 256 << 10, 512 << 10
	f := newFixture(t, []config.Server{okServer(t, "alpha")}, func(c *config.Config) { c.Limits.MaxOutputBytes = 1000 },
		func(o *upstream.PoolOptions) {
			o.DialOptions = func(_ string, d *upstream.DialOptions) { d.MaxMessageBytes = limit }
		})
	// Give it the most time a request may have, not the fixture's 10 s, so
	// that a loaded machine does not fail it.
	res, err := f.eng.Call(context.Background(), toolcall.Request{Server: "alpha", Tool: "big", Arguments: map[string]any{"bytes": sent}, Timeout: config.MaxRequestTimeout})
	if err != nil {
		t.Fatal(err)
	}
	text := textOf(res)
	m := regexp.MustCompile(`^(x*)\n\[truncated by switchboard: (\d+) bytes omitted\]$`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("got text %.80q…, want 1000 bytes of x and a marker", text)
	}
	omitted, _ := strconv.ParseInt(m[2], 10, 64)
	if kept := int64(len(m[1])); kept != 1000 || omitted < sent-kept {
		t.Errorf("kept %d bytes and the marker says %d omitted; the server sent %d bytes of text (Result.Bytes %d), so at least %d were", kept, omitted, sent, res.Bytes, sent-kept)
	}
}
