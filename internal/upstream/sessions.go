package upstream

//lint:file-ignore SA1019 sampling, elicitation, roots and logging are deprecated only from protocol 2026-07-28; clients and servers use them today, and the gateway forwards them.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// A server whose session: is per_client or per_user has, besides its
// shared session (which the supervisor keeps connected, and from which
// the catalog is discovered), one upstream session per gateway client
// session or per user: opened on the owner's first request, with the
// same launch, connection and sign-in as the shared one, and closed when
// the owner's last gateway session ends (Pool.EndSession) or when the
// server ends it. What such a session's server sends outside a request —
// sampling, elicitation and roots requests, log messages — reaches the
// DialOptions' handlers with the session's SessionKey in their context,
// so that the gateway sends it to that owner's client.

// Owner is whom a request is made for, as far as upstream sessions go.
type Owner struct {
	// Session names the gateway client session the request came in; ""
	// for a caller without one (the CLI, the console, hooks, documents,
	// the agent, stateless gateway requests), which uses the shared
	// session.
	Session string
	// User is the caller's user.
	User string
	// Capabilities are what the gateway client session declared at its
	// initialize (empty when it declared nothing; nil when unknown): a
	// per_client session declares the same sampling, elicitation (modes
	// included) and roots to its server, so that the server offers and
	// asks only what that client can answer (ownedcaps.go).
	Capabilities *mcp.ClientCapabilities
	// ProtocolVersion is the protocol version the gateway client session
	// offered at its initialize ("" when unknown): a per_client session
	// offers the same to its server, which so negotiates the version it
	// would negotiate with that client directly.
	ProtocolVersion string
	// PassInputRequests says that the gateway passes a server's multi
	// round-trip input requests (protocol 2026-07-28) on to the client,
	// which answers them itself, as directly: a per_client session opened
	// for it returns them as the server sent them (DialOptions).
	PassInputRequests bool
}

type ownerKey struct{}

// WithOwner returns a context whose requests to a per_client or per_user
// server go to o's own upstream session.
func WithOwner(ctx context.Context, o Owner) context.Context {
	return context.WithValue(ctx, ownerKey{}, o)
}

// OwnerFrom returns the owner WithOwner put in ctx.
func OwnerFrom(ctx context.Context) (Owner, bool) {
	o, ok := ctx.Value(ownerKey{}).(Owner)
	return o, ok
}

// SessionKey names one owned upstream session of a server.
type SessionKey struct {
	Mode config.SessionMode
	// ID is the owner's gateway session (per_client) or user (per_user).
	ID string
}

type sessionKeyKey struct{}

// SessionKeyFrom returns the owned upstream session that a server's
// request or log message came from, as its handler's context carries it;
// false for the shared session.
func SessionKeyFrom(ctx context.Context) (SessionKey, bool) {
	k, ok := ctx.Value(sessionKeyKey{}).(SessionKey)
	return k, ok
}

// ErrTooManySessions is the cause of the error a request gets when its
// server already has max_sessions owned sessions open.
var ErrTooManySessions = errors.New("too many upstream sessions")

// ownedSessions are the owned upstream sessions of one supervisor.
type ownedSessions struct {
	s *Supervisor
	// ctx ends when closeAll runs: it bounds every dial.
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	m      map[SessionKey]*ownedSession
	closed bool
	wg     sync.WaitGroup // watchers of the open sessions
}

// ownedSession is one owned upstream session: dialling until ready is
// closed, then open (client) or failed (err).
type ownedSession struct {
	key    SessionKey
	ready  chan struct{}
	client *Client
	err    error
	// holders are the gateway sessions that have used it: it is closed
	// when the last of them ends.
	holders map[string]struct{}
}

// get returns the owned session of key, opening it on first use; holder is
// the gateway session the request came in.
func (o *ownedSessions) get(ctx context.Context, key SessionKey, holder string) (*Client, error) {
	name := o.s.Name()
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return nil, fault.New(fault.Connection, "server %s is stopping", name).WithDetail("server", name)
	}
	e, ok := o.m[key]
	if !ok {
		max := o.s.opts.Server.MaxSessions
		if max <= 0 {
			max = config.DefaultMaxUpstreamSessions
		}
		if len(o.m) >= max {
			o.mu.Unlock()
			return nil, fault.Wrap(fault.LimitExceeded, ErrTooManySessions,
				"server %s already has %d %s sessions open, its max_sessions", name, max, key.Mode).
				WithDetail("server", name).WithDetail("field", "servers."+name+".max_sessions").WithDetail("limit", max).
				WithSuggestions(fmt.Sprintf("raise max_sessions for %s, or close idle clients; a session's upstream session closes when the session ends", name))
		}
		e = &ownedSession{key: key, ready: make(chan struct{}), holders: map[string]struct{}{}}
		o.m[key] = e
		o.wg.Add(1)
		go o.open(ctx, e)
	}
	e.holders[holder] = struct{}{}
	o.mu.Unlock()
	select {
	case <-e.ready:
	case <-ctx.Done():
		return nil, fault.Wrap(fault.Cancelled, ctx.Err(), "opening a %s session of %s was cancelled", key.Mode, name)
	}
	if e.err != nil {
		return nil, e.err
	}
	return e.client, nil
}

// open dials e and watches it until it ends or is closed; o.wg counts it.
// The dial runs under o's context, not the request's: a request that
// gives up waiting leaves the session to whoever comes next, and nothing
// of the first request's context (its call, its stream) stays with the
// session. Only the caller's identity is kept, for the headers and the
// per-user sign-in of the handshake.
func (o *ownedSessions) open(ctx context.Context, e *ownedSession) {
	defer o.wg.Done()
	dctx := o.ctx
	if id, ok := IdentityFrom(ctx); ok {
		dctx = WithIdentity(dctx, id)
	}
	d := o.dialOptions(e.key)
	if ow, ok := OwnerFrom(ctx); ok && e.key.Mode == config.SessionPerClient {
		d.Requests = d.Requests.declaring(ow.Capabilities, len(o.s.opts.Server.Roots) > 0)
		d.ProtocolVersion = ow.ProtocolVersion
		d.PassInputRequests = ow.PassInputRequests
	}
	c, err := Dial(dctx, o.s.opts.Server, d)
	if err == nil && o.s.opts.OnSessionOpen != nil {
		o.s.opts.OnSessionOpen(e.key, c)
	}
	o.mu.Lock()
	e.client, e.err = c, err
	if err != nil && o.m[e.key] == e {
		delete(o.m, e.key)
	}
	o.mu.Unlock()
	close(e.ready)
	if err != nil {
		o.s.logger.Warn("opening an owned upstream session failed", logKeySessionMode, string(e.key.Mode), logKeyErr, fault.As(err).Message)
		return
	}
	o.s.logger.Info("owned upstream session opened", logKeySessionMode, string(e.key.Mode))
	o.watch(c)
	// Closed by end or closeAll, or ended by the server (or found dead by
	// a ping): forget it either way, so that the next request opens a
	// new one.
	o.mu.Lock()
	died := o.m[e.key] == e
	if died {
		delete(o.m, e.key)
	}
	o.mu.Unlock()
	if died {
		// Its owner's lists were this session's: the next one's may
		// differ. Told before the close, which waits for a hung child.
		o.notify(e.key, listChangedMethods...)
	}
	_ = c.Close()
	o.s.logger.Info("owned upstream session closed", logKeySessionMode, string(e.key.Mode))
}

// logKeySessionMode is the log attribute of an owned session's mode.
const logKeySessionMode = "session_mode"

// dialOptions are the supervisor's dial options for an owned session: the
// same launch, connection and sign-in, with the session's key in the
// context of every request and log message its server sends. Its own
// list changes and resource updates go to its owner alone
// (OnSessionNotify); the catalog is the shared session's.
func (o *ownedSessions) dialOptions(key SessionKey) DialOptions {
	d := o.s.opts.Dial
	d.Transport = nil // one dial only: the shared session's
	tag := func(ctx context.Context) context.Context { return context.WithValue(ctx, sessionKeyKey{}, key) }
	ev := d.Events
	d.Events = Events{
		ListChanged:     func(ctx context.Context, lc ListChange) { o.notifyList(ctx, key, lc) },
		ResourceUpdated: func(ctx context.Context, uri string) { o.notifyUpdated(ctx, key, uri) },
	}
	if f := ev.TaskStatus; f != nil {
		// Tagged too: two sessions may number their tasks alike.
		d.Events.TaskStatus = func(ctx context.Context, p json.RawMessage) { f(tag(ctx), p) }
	}
	if f := ev.Log; f != nil {
		d.Events.Log = func(ctx context.Context, p *mcp.LoggingMessageParams) { f(tag(ctx), p) }
	}
	if f := ev.ElicitationComplete; f != nil {
		d.Events.ElicitationComplete = func(ctx context.Context, p *mcp.ElicitationCompleteParams) { f(tag(ctx), p) }
	}
	r := d.Requests
	if f := r.CreateMessage; f != nil {
		d.Requests.CreateMessage = func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			return f(tag(ctx), p)
		}
	}
	if f := r.CreateMessageWithTools; f != nil {
		d.Requests.CreateMessageWithTools = func(ctx context.Context, p *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
			return f(tag(ctx), p)
		}
	}
	if f := r.Elicit; f != nil {
		d.Requests.Elicit = func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) { return f(tag(ctx), p) }
	}
	if f := r.Ping; f != nil {
		d.Requests.Ping = func(ctx context.Context, p *mcp.PingParams) (json.RawMessage, error) { return f(tag(ctx), p) }
	}
	if f := r.ListRoots; f != nil && len(o.s.opts.Server.Roots) == 0 {
		// The client's roots, forwarded: so are its changes of them.
		d.Requests.RootsListChanged = true
		d.Requests.ListRoots = func(ctx context.Context, p *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
			return f(tag(ctx), p)
		}
	}
	return d
}

// end releases holder (a gateway session that ended) from every owned
// session, closing those it was the last holder of.
func (o *ownedSessions) end(holder string) {
	var closing []*Client
	o.mu.Lock()
	for k, e := range o.m {
		if _, ok := e.holders[holder]; !ok {
			continue
		}
		delete(e.holders, holder)
		if len(e.holders) > 0 {
			continue
		}
		delete(o.m, k)
		select {
		case <-e.ready:
			if e.client != nil {
				closing = append(closing, e.client)
			}
		default:
			// Still dialling: close it once it is open.
			o.wg.Add(1)
			go func() {
				defer o.wg.Done()
				<-e.ready
				if e.client != nil {
					_ = e.client.Close()
				}
			}()
		}
	}
	o.mu.Unlock()
	for _, c := range closing {
		_ = c.Close()
	}
}

// closeAll closes every owned session and waits until each has ended
// (a stdio child exited and reaped); none is opened afterwards.
func (o *ownedSessions) closeAll() {
	o.mu.Lock()
	o.closed = true
	o.cancel()
	var open []*ownedSession
	for k, e := range o.m {
		open = append(open, e)
		delete(o.m, k)
	}
	o.mu.Unlock()
	for _, e := range open {
		<-e.ready
		if e.client != nil {
			_ = e.client.Close()
		}
	}
	o.wg.Wait()
}

func newOwnedSessions(s *Supervisor) *ownedSessions {
	ctx, cancel := context.WithCancel(context.Background())
	return &ownedSessions{s: s, ctx: ctx, cancel: cancel, m: map[SessionKey]*ownedSession{}}
}

// count returns how many owned sessions are open or opening.
func (o *ownedSessions) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.m)
}

// SessionClient returns the connection a request made with ctx uses: for
// a server whose session is per_client or per_user, the upstream session
// of the owner in ctx (WithOwner), opened on first use; otherwise, or for
// a caller without a gateway session, the shared one. The shared session
// must be connected either way: its state (disabled, needs sign-in,
// reconnecting) is the server's. Past the server's max_sessions it
// returns a limit_exceeded error wrapping ErrTooManySessions.
func (s *Supervisor) SessionClient(ctx context.Context) (*Client, error) {
	shared, err := s.Client()
	if err != nil {
		return nil, err
	}
	o, _ := OwnerFrom(ctx)
	key, ok := o.KeyFor(s.opts.Server.Session)
	if !ok {
		return shared, nil
	}
	return s.owned.get(ctx, key, o.Session)
}

// KeyFor names the upstream session o's requests use on a server whose
// session mode is mode: its own (per_client: its gateway session's;
// per_user: its user's), or — false — the shared one, for a shared
// server or an owner without a gateway session.
func (o Owner) KeyFor(mode config.SessionMode) (SessionKey, bool) {
	if !mode.Owned() || o.Session == "" {
		return SessionKey{}, false
	}
	id := o.Session
	if mode == config.SessionPerUser {
		id = o.User
	}
	return SessionKey{Mode: mode, ID: id}, true
}

// SessionClient is Supervisor.SessionClient for the named server.
func (p *Pool) SessionClient(ctx context.Context, name string) (*Client, error) {
	s, ok := p.Supervisor(name)
	if !ok {
		return nil, fault.New(fault.NotFound, "no server named %q", name).WithDetail("server", name)
	}
	return s.SessionClient(ctx)
}

// EndSession closes the upstream sessions that belonged to a gateway
// client session that ended: its own on per_client servers, and on
// per_user servers its user's, once no other session of that user that
// used it is left. It returns when they are closed.
func (p *Pool) EndSession(session string) {
	if session == "" {
		return
	}
	p.mu.RLock()
	sups := make([]*Supervisor, 0, len(p.sups))
	for _, s := range p.sups {
		sups = append(sups, s)
	}
	p.mu.RUnlock()
	for _, s := range sups {
		s.owned.end(session)
	}
}

// captureConn returns t, noting the connection it makes in c.conn.
func (c *Client) captureConn(t mcp.Transport) mcp.Transport {
	return &captureTransport{Transport: t, c: c}
}

type captureTransport struct {
	mcp.Transport
	c *Client
}

func (t *captureTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err == nil {
		t.c.conn = conn // before Dial returns: no reader yet
	}
	return conn, err
}

// NotifyRootsChanged tells the server that its client's roots changed
// (notifications/roots/list_changed), as a client that declared
// roots.listChanged does; the server asks for them again. The SDK's
// client sends it only when its own root set changes, which an owned
// session's forwarded roots are not, so it is written on the session's
// connection as the SDK writes a notification.
func (c *Client) NotifyRootsChanged(ctx context.Context) error {
	if c.conn == nil {
		return fmt.Errorf("telling %s that the roots changed: no connection", c.server.Name)
	}
	err := c.conn.Write(ctx, &jsonrpc.Request{Method: "notifications/roots/list_changed", Params: json.RawMessage(`{}`)})
	if err != nil {
		return c.classify(ctx, err, "telling "+c.server.Name+" that the roots changed")
	}
	return nil
}

// OwnedSession returns the open owned session of key, if there is one:
// what a client's notification to its own sessions is sent on.
func (p *Pool) OwnedSession(server string, key SessionKey) (*Client, bool) {
	s, ok := p.Supervisor(server)
	if !ok {
		return nil, false
	}
	o := s.owned
	o.mu.Lock()
	e := o.m[key]
	o.mu.Unlock()
	if e == nil {
		return nil, false
	}
	select {
	case <-e.ready:
		return e.client, e.client != nil
	default:
		return nil, false
	}
}
