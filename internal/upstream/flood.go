package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A server may send notifications faster than they can be handled: the
// handlers forward them to a gateway's clients, as fast as those read.
// The SDK reads every message as it comes and queues each notification
// for its one handler goroutine in a slice without bound
// (internal/jsonrpc2/conn.go, Connection.acceptRequest, "We enqueue
// requests that have not been preempted to an unbounded slice"), so a
// server that sends progress as fast as it can grew the daemon by
// gigabytes. The SDK offers no bound; what it reads is ours to choose.
//
// noticeGate sits between the wire and the SDK (progressConn): a pump
// reads the wire without pause, and the SDK is handed the notifications
// it has to handle — progress, log messages, list changes, resource
// updates, elicitation completions — only while fewer than
// maxQueuedNotices of their kind wait for its handler (per progress
// token; progressOrder counts them: handed out, not yet delivered), so
// that one call's flood does not coalesce another call's progress. Past
// that they are held here, in order, bounded by what they mean:
//   - progress is a latest-value signal: a newer notification for a token
//     takes the place of the held one (one held per token; progress for a
//     token no call of this connection awaits is dropped, as the handler
//     would drop it);
//   - a list change or a resource update says "look again": one held per
//     kind (and URI);
//   - log messages are held up to maxHeldLogs; past that they are dropped
//     and counted, and once the held ones have been handed on, the SDK is
//     handed a warning of its own saying how many were lost (the
//     DialOptions.DroppedLogs counter adds them up for the metric).
//
// Everything else — responses, the server's requests, other
// notifications — is handed on at once, and whatever is held ahead of it
// with it: a call's result never overtakes its progress (the newest
// value) nor the log messages sent before it.
type noticeGate struct {
	o       *progressOrder
	server  string
	wanted  func(token string) bool
	dropped *atomic.Uint64 // may be nil

	mu    sync.Mutex
	q     []*heldMessage          // q[0] goes next
	byKey map[string]*heldMessage // the newest held entry of each coalescing key
	held  map[string]int          // held entries per progressOrder key
	logs  int                     // log messages in q
	pass  int                     // entries in q that go at once (and take what is ahead)
	lost  int                     // log messages dropped since the last warning
	due   int                     // a warning of that many dropped is due
	err   error                   // the wire's, once the pump has stopped
	more  chan struct{}

	// Counts for tests: read from the wire, and notifications handed to
	// the SDK.
	read, handed atomic.Int64
}

// maxQueuedNotices bounds the notifications of one key (a progress
// token; log messages; the other notices) handed to the SDK and not yet
// handled. Small: the handler forwards each to a client as it goes, so a
// longer queue only adds latency, and a returning call waits for it
// (answerOrder).
const maxQueuedNotices = 64

// maxHeldLogs bounds the log messages held while the SDK's queue is full.
const maxHeldLogs = 256

type heldKind uint8

const (
	heldPass heldKind = iota
	heldProgress
	heldLog
	heldNotice
)

type heldMessage struct {
	msg   jsonrpc.Message
	kind  heldKind
	order string // progressOrder key it is counted under when handed out
	key   string // coalescing key; "" when it coalesces with nothing
}

func newNoticeGate(o *progressOrder, server string, wanted func(string) bool, dropped *atomic.Uint64) *noticeGate {
	return &noticeGate{o: o, server: server, wanted: wanted, dropped: dropped,
		byKey: map[string]*heldMessage{}, held: map[string]int{}, more: make(chan struct{}, 1)}
}

// classify says what msg is to the gate.
func classify(msg jsonrpc.Message) heldMessage {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.IsCall() {
		return heldMessage{msg: msg}
	}
	switch m := req.Method; {
	case m == "notifications/progress":
		var p struct {
			Token any `json:"progressToken"`
		}
		if json.Unmarshal(req.Params, &p) != nil || p.Token == nil {
			return heldMessage{msg: msg}
		}
		k := tokenKey(p.Token)
		return heldMessage{msg: msg, kind: heldProgress, order: k, key: "p" + k}
	case m == "notifications/message":
		return heldMessage{msg: msg, kind: heldLog, order: logOrderKey}
	case isListChange(m):
		return heldMessage{msg: msg, kind: heldNotice, order: noticeOrderKey, key: "n" + m}
	case m == methodResourceUpdated:
		var p struct {
			URI string `json:"uri"`
		}
		if json.Unmarshal(req.Params, &p) != nil {
			return heldMessage{msg: msg}
		}
		return heldMessage{msg: msg, kind: heldNotice, order: noticeOrderKey, key: "u" + p.URI}
	case m == methodElicitationComplete:
		return heldMessage{msg: msg, kind: heldNotice, order: noticeOrderKey}
	}
	return heldMessage{msg: msg}
}

// pump reads c until it fails, adding what it reads to the gate.
func (g *noticeGate) pump(ctx context.Context, read func(context.Context) (jsonrpc.Message, error)) {
	for {
		msg, err := read(ctx)
		g.mu.Lock()
		if err != nil {
			g.err = err
			g.mu.Unlock()
			g.signal()
			return
		}
		g.read.Add(1)
		g.add(msg)
		g.mu.Unlock()
		g.signal()
	}
}

func (g *noticeGate) signal() {
	select {
	case g.more <- struct{}{}:
	default:
	}
}

// add queues msg; g.mu is held.
func (g *noticeGate) add(msg jsonrpc.Message) {
	h := classify(msg)
	switch h.kind {
	case heldProgress:
		if !g.wanted(h.order) {
			return
		}
	case heldLog:
		if g.logs >= maxHeldLogs {
			g.lost++
			if g.dropped != nil {
				g.dropped.Add(1)
			}
			return
		}
		g.logs++
	case heldPass:
		g.pass++
	}
	if h.key != "" {
		// Coalesce only what is past the bound: while fewer wait, every
		// notification goes on.
		if e, ok := g.byKey[h.key]; ok && g.atBound(h.order) {
			e.msg = h.msg // the newest value, in the place of the one held
			return
		}
	}
	e := &h
	if h.key != "" {
		g.byKey[h.key] = e
	}
	if h.kind != heldPass {
		g.held[h.order]++
	}
	g.q = append(g.q, e)
}

// atBound reports whether maxQueuedNotices of key wait, handed to the SDK
// or held; g.mu is held.
func (g *noticeGate) atBound(key string) bool {
	g.o.mu.Lock()
	defer g.o.mu.Unlock()
	return g.o.pending[key]+g.held[key] >= maxQueuedNotices
}

// next returns the message to hand the SDK now, if any; g.mu is held.
// A notification goes when fewer than maxQueuedNotices of its key (its
// progress token; log messages; the other notices) wait for the handler,
// so that one call's flood does not hold back another call's progress;
// within a key they go in order. Everything goes, in order, while a
// message that goes at once is queued, and once the wire has failed.
func (g *noticeGate) next() jsonrpc.Message {
	flush := g.pass > 0 || g.err != nil
	g.o.mu.Lock()
	room := func(key string) bool { return flush || g.o.pending[key] < maxQueuedNotices }
	due := g.due > 0 && room(logOrderKey)
	at := -1
	if !due {
		for i, e := range g.q {
			if e.kind == heldPass || room(e.order) {
				at = i
				break
			}
		}
	}
	g.o.mu.Unlock()
	if due {
		n := g.due
		g.due = 0
		g.o.read(logOrderKey)
		g.handed.Add(1)
		return droppedLogsNotice(g.server, n)
	}
	if at < 0 {
		return nil
	}
	e := g.q[at]
	copy(g.q[at:], g.q[at+1:])
	g.q[len(g.q)-1] = nil
	g.q = g.q[:len(g.q)-1]
	if len(g.q) == 0 {
		g.q = nil // let the backing array go
	}
	if e.key != "" && g.byKey[e.key] == e {
		delete(g.byKey, e.key)
	}
	if e.kind != heldPass {
		if g.held[e.order]--; g.held[e.order] == 0 {
			delete(g.held, e.order)
		}
	}
	switch e.kind {
	case heldPass:
		g.pass--
		return e.msg
	case heldLog:
		g.logs--
		if g.logs == 0 && g.lost > 0 {
			g.due, g.lost = g.lost, 0
		}
	}
	g.o.read(e.order)
	g.handed.Add(1)
	return e.msg
}

// Read hands the SDK the next message: see noticeGate.
func (g *noticeGate) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		changed := g.o.changes()
		g.mu.Lock()
		msg := g.next()
		err := g.err
		empty := len(g.q) == 0 && g.due == 0
		g.mu.Unlock()
		if msg != nil {
			return msg, nil
		}
		if err != nil && empty {
			return nil, err
		}
		select {
		case <-g.more:
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// droppedLogsNotice is the log message that tells a client how many of
// server's log messages it did not get.
func droppedLogsNotice(server string, n int) jsonrpc.Message {
	what := "log messages"
	if n == 1 {
		what = "log message"
	}
	params, _ := json.Marshal(map[string]any{
		"level":  "warning",
		"logger": "switchboard",
		"data":   fmt.Sprintf("%d %s of server %s dropped: the client did not keep up", n, what, server),
	})
	return &jsonrpc.Request{Method: "notifications/message", Params: params}
}

// HeldNotifications reports, for tests, how many messages the
// connection has read from the server and how many notifications it has
// handed to the SDK's handler queue.
func (c *Client) HeldNotifications() (read, handed int64) {
	g := c.order.gate.Load()
	if g == nil {
		return 0, 0
	}
	return g.read.Load(), g.handed.Load()
}
