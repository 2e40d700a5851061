package web

import (
	"fmt"
	"net/http"
	"sync"
	"time"
)

// event is one server-sent event.
type event struct {
	name string
	data []byte
	// session limits the event to one session's streams ("" for all):
	// a call's progress goes only to the session that started it.
	session string
}

// subscriberBuffer is how many events a slow page may fall behind before
// its stream is ended (EventSource reconnects, and the page resynchronises
// from /ui/api/servers).
const subscriberBuffer = 256

// heartbeat keeps idle streams (and proxies) alive.
const heartbeat = 15 * time.Second

// hub fans events out to the open event streams.
type hub struct {
	mu     sync.Mutex
	subs   map[*subscriber]struct{}
	closed bool
}

type subscriber struct {
	session string
	ch      chan event
}

func newHub() *hub { return &hub{subs: map[*subscriber]struct{}{}} }

// subscribe adds a stream; the channel is closed when the hub drops it.
func (h *hub) subscribe(session string) *subscriber {
	s := &subscriber{session: session, ch: make(chan event, subscriberBuffer)}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		close(s.ch)
		return s
	}
	h.subs[s] = struct{}{}
	return s
}

func (h *hub) unsubscribe(s *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[s]; ok {
		delete(h.subs, s)
		close(s.ch)
	}
}

// publish sends an event to every matching stream without blocking; a
// stream whose buffer is full is dropped.
func (h *hub) publish(e event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if e.session != "" && e.session != s.session {
			continue
		}
		select {
		case s.ch <- e:
		default:
			delete(h.subs, s)
			close(s.ch)
		}
	}
}

// close ends every stream; later subscribers get a closed channel.
func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for s := range h.subs {
		delete(h.subs, s)
		close(s.ch)
	}
}

// events serves the page's event stream: "server" (a server's state),
// "catalog" (a server's list counts), "stop" (the stop switch), "call"
// (progress and completion of this session's calls) and "task" (the
// status of a task this session was shown).
func (c *Console) events(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	sub := c.hub.subscribe(sessionOf(r).id)
	defer c.hub.unsubscribe(sub)
	// The first event says the stream is open: the page then fetches the
	// current state, so nothing published before it is missed.
	fmt.Fprintf(w, "retry: 2000\nevent: hello\ndata: {}\n\n")
	// A task's status announced between the page's rendering and now
	// (taskfollow.go).
	for _, data := range c.followers.missed(sub.session) {
		fmt.Fprintf(w, "event: task\ndata: %s\n\n", data)
	}
	if err := rc.Flush(); err != nil {
		return
	}
	t := time.NewTicker(heartbeat)
	defer t.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case e, ok := <-sub.ch:
			if !ok {
				return
			}
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e.name, e.data)
		case <-t.C:
			// A logout, an expiry or a token removed by a reload ends
			// the stream.
			se, ok := c.sessions.get(r.Context(), sub.session)
			if !ok || !loggedIn(se, c.opts.Config()) {
				return
			}
			fmt.Fprint(w, ": ping\n\n")
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
}
