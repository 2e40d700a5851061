package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// The console's MCP sessions. A browser session of the console that
// subscribes to a resource (or opens the Protocol log and starts one) gets
// its own MCP client session with the gateway, in process: the gateway
// serves it as it serves `serve --stdio` (the default view), over an
// in-memory transport. Every JSON-RPC message of that session, in and
// out, is kept for the Protocol log page and streamed to it. Tool calls
// from "Try it" do not use it: they run in the engine with source web,
// as before, and show in the History.
const (
	// maxMCPSessions bounds the console's MCP sessions; the least
	// recently used closes first.
	maxMCPSessions = 32
	// mcpIdle closes a console MCP session unused this long (its
	// subscriptions end with it).
	mcpIdle = 30 * time.Minute
	// maxLogEntries is how many messages a session's protocol log keeps.
	maxLogEntries = 500
	// maxLogMessage cuts a logged message's text.
	maxLogMessage = 64 << 10
	// maxUpdateText cuts the text of a re-read resource sent to the page.
	maxUpdateText = 4 << 10
)

// logEntry is one JSON-RPC message of a console MCP session.
type logEntry struct {
	Seq int64 `json:"seq"`
	// Dir is "out" (the console to the gateway) or "in".
	Dir    string `json:"dir"`
	Time   string `json:"time"`
	Kind   string `json:"kind"` // request, notification, response, error
	Method string `json:"method,omitempty"`
	ID     string `json:"id,omitempty"`
	JSON   string `json:"json"`
}

// subscription is one resource a console MCP session subscribed to.
type subscription struct {
	server, uri string
}

// mcpSession is a console session's MCP client session with the gateway.
type mcpSession struct {
	owner  string // console session id
	cs     *mcp.ClientSession
	cancel context.CancelFunc
	done   chan struct{} // closed when the gateway's side returned

	mu   sync.Mutex
	used time.Time
	seq  int64
	log  []logEntry
	subs map[string]subscription // exposed URI → server and URI
}

// mcpSessions holds the console's MCP sessions by console session id.
type mcpSessions struct {
	mu    sync.Mutex
	byID  map[string]*mcpSession
	start sync.Mutex // one session started at a time
}

// loggingConn records every message that crosses a connection.
type loggingConn struct {
	mcp.Connection
	note func(dir string, msg jsonrpc.Message)
}

func (c *loggingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err == nil {
		c.note("in", m)
	}
	return m, err
}

func (c *loggingConn) Write(ctx context.Context, m jsonrpc.Message) error {
	c.note("out", m)
	return c.Connection.Write(ctx, m)
}

// loggingTransport connects a loggingConn.
type loggingTransport struct {
	mcp.Transport
	note func(dir string, msg jsonrpc.Message)
}

func (t *loggingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &loggingConn{Connection: c, note: t.note}, nil
}

// note appends a message to the session's log and streams it to the
// owner's pages.
func (c *Console) note(s *mcpSession, dir string, msg jsonrpc.Message) {
	e := logEntry{Dir: dir, Time: c.now().UTC().Format("15:04:05.000")}
	switch m := msg.(type) {
	case *jsonrpc.Request:
		e.Method = m.Method
		e.Kind = "notification"
		if m.ID.IsValid() {
			e.Kind, e.ID = "request", fmt.Sprint(m.ID.Raw())
		}
	case *jsonrpc.Response:
		e.Kind, e.ID = "response", fmt.Sprint(m.ID.Raw())
		if m.Error != nil {
			e.Kind = "error"
		}
	}
	if b, err := jsonrpc.EncodeMessage(msg); err == nil {
		e.JSON = prettyJSON(b)
		if len(e.JSON) > maxLogMessage {
			e.JSON = e.JSON[:maxLogMessage] + "\n… (cut)"
		}
	}
	s.mu.Lock()
	s.seq++
	e.Seq = s.seq
	s.log = append(s.log, e)
	if len(s.log) > maxLogEntries {
		s.log = s.log[len(s.log)-maxLogEntries:]
	}
	s.mu.Unlock()
	c.hub.publish(event{name: "protocol", session: s.owner, data: mustJSON(e)})
}

// mcpSession returns the console session's MCP session, starting it when
// it has none (or its last one ended).
func (c *Console) mcpSession(ctx context.Context, owner string) (*mcpSession, error) {
	if c.opts.Connect == nil {
		return nil, fault.New(fault.Config, "this console has no MCP session with the gateway").
			WithSuggestions("run the console under switchboard serve")
	}
	ms := &c.mcp
	ms.mu.Lock()
	if s, ok := ms.byID[owner]; ok && !s.ended() {
		s.touch(c.now())
		ms.mu.Unlock()
		return s, nil
	}
	ms.mu.Unlock()
	ms.start.Lock()
	defer ms.start.Unlock()
	ms.mu.Lock()
	if s, ok := ms.byID[owner]; ok && !s.ended() {
		ms.mu.Unlock()
		return s, nil
	}
	ms.mu.Unlock()
	if !c.track() {
		return nil, fault.New(fault.Cancelled, "the daemon is shutting down")
	}
	sctx, cancel := context.WithCancel(c.ctx)
	s := &mcpSession{owner: owner, cancel: cancel, done: make(chan struct{}), used: c.now(), subs: map[string]subscription{}}
	client, server := mcp.NewInMemoryTransports()
	go func() {
		defer c.wg.Done()
		defer close(s.done)
		if err := c.opts.Connect(sctx, server); err != nil {
			c.logger.Info("a console MCP session ended", logKeyErr, err)
		}
	}()
	cl := mcp.NewClient(&mcp.Implementation{Name: "switchboard-console", Version: c.opts.Version}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			c.resourceUpdated(s, req.Params.URI)
		},
	})
	// The session outlives the request that opened it: it connects
	// under the console's context, bounded in time.
	cctx, ccancel := context.WithTimeout(sctx, 30*time.Second)
	defer ccancel()
	cs, err := cl.Connect(cctx, &loggingTransport{Transport: client, note: func(dir string, m jsonrpc.Message) { c.note(s, dir, m) }}, nil)
	if err != nil {
		cancel()
		<-s.done
		return nil, fault.Wrap(fault.Connection, err, "opening the console's MCP session with the gateway")
	}
	s.cs = cs
	ms.mu.Lock()
	if ms.byID == nil {
		ms.byID = map[string]*mcpSession{}
	}
	if old, ok := ms.byID[owner]; ok {
		old.close()
	}
	ms.byID[owner] = s
	var victim *mcpSession
	if len(ms.byID) > maxMCPSessions {
		for _, o := range ms.byID {
			if o != s && (victim == nil || o.lastUsed().Before(victim.lastUsed())) {
				victim = o
			}
		}
		delete(ms.byID, victim.owner)
	}
	ms.mu.Unlock()
	if victim != nil {
		victim.close()
	}
	return s, nil
}

func (s *mcpSession) ended() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

func (s *mcpSession) touch(now time.Time) {
	s.mu.Lock()
	s.used = now
	s.mu.Unlock()
}

func (s *mcpSession) lastUsed() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}

// close ends the session (and with it its subscriptions at the gateway).
func (s *mcpSession) close() {
	if s.cs != nil {
		_ = s.cs.Close()
	}
	s.cancel()
}

// closeMCP ends one console session's MCP session (logout).
func (c *Console) closeMCP(owner string) {
	c.mcp.mu.Lock()
	s, ok := c.mcp.byID[owner]
	delete(c.mcp.byID, owner)
	c.mcp.mu.Unlock()
	if ok {
		s.close()
	}
}

// expireMCP closes the MCP sessions unused for mcpIdle, or all of them
// when all is set (shutdown).
func (c *Console) expireMCP(all bool) {
	now := c.now()
	var closing []*mcpSession
	c.mcp.mu.Lock()
	for id, s := range c.mcp.byID {
		if all || s.ended() || now.Sub(s.lastUsed()) > mcpIdle {
			delete(c.mcp.byID, id)
			closing = append(closing, s)
		}
	}
	c.mcp.mu.Unlock()
	for _, s := range closing {
		s.close()
	}
}

// resourceUpdated reads an updated resource again through the session (so
// the log shows the read) and tells the owner's pages what it now holds.
func (c *Console) resourceUpdated(s *mcpSession, exposed string) {
	s.mu.Lock()
	sub, ok := s.subs[exposed]
	s.mu.Unlock()
	if !ok || !c.track() {
		return
	}
	// Not in the notification handler: the read needs the connection's
	// reader, which is busy delivering this notification.
	go func() {
		defer c.wg.Done()
		ctx, cancel := context.WithTimeout(c.ctx, 30*time.Second)
		defer cancel()
		ev := map[string]any{"server": sub.server, "uri": sub.uri, "time": c.now().UTC().Format("15:04:05")}
		res, err := s.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: exposed})
		switch {
		case err != nil:
			ev["error"] = err.Error()
		case len(res.Contents) > 0:
			rc := res.Contents[0]
			text := rc.Text
			if rc.Blob != nil {
				text = fmt.Sprintf("%d bytes of %s", len(rc.Blob), orUnknown(rc.MIMEType))
			}
			if len(text) > maxUpdateText {
				text = text[:maxUpdateText] + "…"
			}
			ev["text"] = text
		}
		c.hub.publish(event{name: "resource", session: s.owner, data: mustJSON(ev)})
	}()
}

// exposedURI finds the URI under which the gateway's default view offers
// a server's resource: the server's own URI, or, when several servers
// list the same URI, switchboard://SERVER/URI for every server but the
// first (the gateway's rule). A URI no listed resource has (a template's)
// is offered as it is.
func exposedURI(ctx context.Context, cs *mcp.ClientSession, server, uri string) string {
	alias := "switchboard://" + url.PathEscape(server) + "/" + url.PathEscape(uri)
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			break
		}
		if r.URI == alias {
			return alias
		}
	}
	return uri
}

// pageMCP returns the MCP session of the request's console session,
// opening it when needed; a script's bearer request gets refusal instead,
// since only a page receives what the session brings.
func (c *Console) pageMCP(w http.ResponseWriter, r *http.Request, refusal error) (*mcpSession, bool) {
	se := sessionOf(r)
	if se.bearer {
		writeFault(w, http.StatusBadRequest, refusal)
		return nil, false
	}
	s, err := c.mcpSession(r.Context(), se.id)
	if err != nil {
		writeFault(w, statusOf(err), err)
		return nil, false
	}
	s.touch(c.now())
	return s, true
}

// subscribeRequest is the body of POST /ui/api/subscriptions.
type subscribeRequest struct {
	Server string `json:"server"`
	URI    string `json:"uri"`
	// Unsubscribe ends the subscription instead.
	Unsubscribe bool `json:"unsubscribe"`
}

// apiSubscribe subscribes the console session's MCP session to a
// resource (or unsubscribes it); updates arrive as "resource" events.
func (c *Console) apiSubscribe(w http.ResponseWriter, r *http.Request) {
	var req subscribeRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil || req.Server == "" || req.URI == "" {
		writeFault(w, http.StatusBadRequest, fault.New(fault.Validation, "want a JSON object with server and uri"))
		return
	}
	s, ok := c.pageMCP(w, r, fault.New(fault.Validation, "subscriptions are for the console's pages, which receive the updates over /ui/events").
		WithSuggestions("subscribe through the gateway's /mcp endpoint (resources/subscribe) from a script"))
	if !ok {
		return
	}
	var err error
	exposed := exposedURI(r.Context(), s.cs, req.Server, req.URI)
	if req.Unsubscribe {
		err = s.cs.Unsubscribe(r.Context(), &mcp.UnsubscribeParams{URI: exposed})
		s.mu.Lock()
		delete(s.subs, exposed)
		s.mu.Unlock()
	} else {
		s.mu.Lock()
		s.subs[exposed] = subscription{server: req.Server, uri: req.URI}
		s.mu.Unlock()
		if err = s.cs.Subscribe(r.Context(), &mcp.SubscribeParams{URI: exposed}); err != nil {
			s.mu.Lock()
			delete(s.subs, exposed)
			s.mu.Unlock()
		}
	}
	if err != nil {
		verb := "subscribing to"
		if req.Unsubscribe {
			verb = "unsubscribing from"
		}
		writeFault(w, http.StatusBadGateway, fault.Wrap(fault.Connection, err, "%s %s on %s", verb, req.URI, req.Server))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"server": req.Server, "uri": req.URI, "subscribed": !req.Unsubscribe, "exposed_uri": exposed})
}

// protocolData is the protocol log page's data.
type protocolData struct {
	pageData
	Open    bool
	Entries []logEntry
	Subs    []subView
}

// subView is a subscription, for the page.
type subView struct{ Server, URI string }

// protocolPage shows the console session's MCP traffic with the gateway.
func (c *Console) protocolPage(w http.ResponseWriter, r *http.Request) {
	d := &protocolData{pageData: pageData{Title: "Protocol log"}}
	c.mcp.mu.Lock()
	s, ok := c.mcp.byID[sessionOf(r).id]
	c.mcp.mu.Unlock()
	if ok && !s.ended() {
		d.Open = true
		s.mu.Lock()
		d.Entries = append(d.Entries, s.log...)
		for _, sub := range s.subs {
			d.Subs = append(d.Subs, subView{Server: sub.server, URI: sub.uri})
		}
		s.mu.Unlock()
	}
	c.render(w, r, http.StatusOK, "protocol", d)
}

// apiProtocol returns the log as JSON; POST /ui/api/protocol/ping opens
// the session when needed and pings the gateway through it.
func (c *Console) apiProtocol(w http.ResponseWriter, r *http.Request) {
	c.mcp.mu.Lock()
	s, ok := c.mcp.byID[sessionOf(r).id]
	c.mcp.mu.Unlock()
	out := []logEntry{}
	if ok {
		s.mu.Lock()
		out = append(out, s.log...)
		s.mu.Unlock()
	}
	writeJSON(w, http.StatusOK, map[string]any{"entries": out})
}

// apiProtocolPing opens the console session's MCP session (when needed)
// and sends a ping through it.
func (c *Console) apiProtocolPing(w http.ResponseWriter, r *http.Request) {
	s, ok := c.pageMCP(w, r, fault.New(fault.Validation, "the protocol log belongs to a console page's session").
		WithSuggestions("open /ui/protocol in a browser"))
	if !ok {
		return
	}
	if err := s.cs.Ping(r.Context(), nil); err != nil {
		writeFault(w, http.StatusBadGateway, fault.Wrap(fault.Connection, err, "pinging the gateway"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true})
}
