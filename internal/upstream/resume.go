package upstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// A streamable-HTTP server may close a call's event stream before the
// response (to free a connection during long work, SEP-1699) and expect
// the client to reconnect: with a GET carrying the last event id it saw,
// after the delay its last retry: field gave. The SDK's transport does so
// for the calls it carries and for the standalone stream; this file does
// it for the lean path's calls (fastcall.go).

// Limits of resuming a call's event stream.
const (
	// maxResumesWithoutProgress is how many reconnects in a row may bring
	// no new event before the call fails (the SDK transport's MaxRetries,
	// set in launch.go, is the same).
	maxResumesWithoutProgress = 2
	// defaultResumeDelay is the wait before a reconnect when the server
	// gave no retry: field.
	defaultResumeDelay = time.Second
)

// errStreamEnded marks an event stream that ended, or broke, before the
// call's response arrived.
var errStreamEnded = errors.New("the event stream ended before the response")

// eventCursor follows an event stream's fields that resuming it needs.
type eventCursor struct {
	lastID  string        // the id of the last event dispatched
	pending string        // the id field of the event being read
	hasID   bool          // the event being read has an id field
	retry   time.Duration // the last retry: field, 0 if none
	asks    serverAsks    // the server's requests on the stream being answered
}

// field reads an event-stream line that is not data.
func (c *eventCursor) field(line []byte) {
	name, value, _ := bytes.Cut(line, []byte(":"))
	value = bytes.TrimPrefix(value, []byte(" "))
	switch string(name) {
	case "id":
		if bytes.IndexByte(value, 0) < 0 { // per the SSE specification
			c.pending, c.hasID = string(value), true
		}
	case "retry":
		if ms, err := strconv.ParseUint(string(value), 10, 31); err == nil {
			c.retry = time.Duration(ms) * time.Millisecond
		}
	}
}

// dispatched notes the end of an event: its id becomes the last one.
func (c *eventCursor) dispatched() {
	if c.hasID {
		c.lastID, c.hasID = c.pending, false
	}
}

// resumable reports whether a stream that ended with err may be resumed:
// it ended before the response, and the server gave its events ids.
func (c *eventCursor) resumable(err error) bool {
	return errors.Is(err, errStreamEnded) && c.lastID != ""
}

// resume reconnects to the event stream of call id, which the server
// closed before the response, until the response arrives: each time after
// the server's retry interval, with a GET carrying Last-Event-ID, reading
// what the server replays and sends next. It gives up after
// maxResumesWithoutProgress reconnects in a row that bring no new event.
func (f *fastCaller) resume(ctx context.Context, id string, cur *eventCursor) (*wireMessage, error) {
	seen, idle := "", 0
	var lastErr error = errStreamEnded
	for {
		if cur.lastID != seen {
			seen, idle = cur.lastID, 0
		} else if idle++; idle > maxResumesWithoutProgress {
			return nil, fmt.Errorf("%d reconnects to the call's event stream after event %q brought nothing new: %w",
				idle, cur.lastID, lastErr)
		}
		delay := cur.retry
		if delay <= 0 {
			delay = defaultResumeDelay
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		msg, err := f.resumeOnce(ctx, id, cur)
		switch {
		case err == nil:
			return msg, nil
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(err, errSessionExpired), !errors.Is(err, errStreamEnded) && !isNetError(err):
			return nil, err
		}
		lastErr = err
	}
}

// resumeOnce makes one reconnect of resume.
func (f *fastCaller) resumeOnce(ctx context.Context, id string, cur *eventCursor) (*wireMessage, error) {
	req, err := http.NewRequestWithContext(context.WithValue(ctx, fastRequestKey{}, true), http.MethodGet, f.url, nil)
	if err != nil {
		return nil, err
	}
	h := req.Header
	h.Set("Accept", "text/event-stream")
	h.Set("Mcp-Session-Id", f.session)
	h.Set("Mcp-Protocol-Version", f.version)
	h.Set("Last-Event-ID", cur.lastID)
	resp, err := f.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("resuming the call's event stream: %w", err)
	}
	// The server may keep the stream open after the response (as a
	// standalone stream): close it rather than read to its end.
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		if f.c.expired.Load() {
			return nil, errSessionExpired
		}
		return nil, fmt.Errorf("resuming the call's event stream after event %q: the server answered %s", cur.lastID, resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return nil, fmt.Errorf("resuming the call's event stream: unexpected content type %q", ct)
	}
	return f.stream(ctx, resp.Body, id, cur)
}
