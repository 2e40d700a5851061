package daemon

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/config"
)

// startupUpstream is a streamable-HTTP server with a go-sdk server of its
// own per session that, like server-everything, adds a tool ("late") as
// the session's notifications/initialized arrives and says so. It reads
// out that start-up change in the order that makes it hardest for the
// gateway: after its answer to the session's first tools/list. Its
// tools/list_changed on a session's standalone stream is held until the
// session lists prompts — which the gateway's session of a client does
// only after it has given the client its first tools/list — as if the
// notification, sent before the list's answer on another stream, were
// read after it.
type startupUpstream struct {
	url string

	mu       sync.Mutex
	servers  []*mcp.Server            // by session, in the order they opened
	sids     []string                 // their Mcp-Session-Ids, likewise
	release  map[string]chan struct{} // by session: closed at its first prompts/list
	echoed   map[string]chan struct{} // by session: closed once its held tools/list_changed went out
	toolList map[string]*atomic.Int32 // by session: its tools/list requests
	listed   map[string]chan struct{} // by session: a signal per tools/list
	opened   chan struct{}            // a signal per session initialized
}

func newStartupUpstream(t *testing.T) *startupUpstream {
	t.Helper()
	u := &startupUpstream{
		release: map[string]chan struct{}{}, echoed: map[string]chan struct{}{},
		toolList: map[string]*atomic.Int32{}, listed: map[string]chan struct{}{},
		opened: make(chan struct{}, 16),
	}
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		var s *mcp.Server
		s = mcp.NewServer(&mcp.Implementation{Name: "startup", Version: "1"}, &mcp.ServerOptions{
			InitializedHandler: func(_ context.Context, req *mcp.InitializedRequest) {
				s.AddTool(&mcp.Tool{Name: "late", InputSchema: map[string]any{"type": "object"}}, emptyTool)
				u.mu.Lock()
				u.servers, u.sids = append(u.servers, s), append(u.sids, req.Session.ID())
				u.mu.Unlock()
				u.opened <- struct{}{}
			},
		})
		s.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}}, emptyTool)
		s.AddPrompt(&mcp.Prompt{Name: "hello"}, emptyPrompt)
		return s
	}, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sid := r.Header.Get("Mcp-Session-Id")
		switch r.Method {
		case http.MethodGet:
			u.mu.Lock()
			rel, echoed := u.chans(sid)
			u.mu.Unlock()
			sdk.ServeHTTP(&holdingWriter{ResponseWriter: w, ctx: r.Context(), release: rel, echoed: echoed}, r)
			return
		case http.MethodPost:
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if sid == "" {
				break // initialize
			}
			u.mu.Lock()
			rel, _ := u.chans(sid)
			n, listed := u.toolList[sid], u.listed[sid]
			u.mu.Unlock()
			switch {
			case bytes.Contains(body, []byte(`"prompts/list"`)):
				select {
				case <-rel:
				default:
					close(rel)
				}
			case bytes.Contains(body, []byte(`"tools/list"`)):
				n.Add(1)
				select {
				case listed <- struct{}{}:
				default:
				}
			}
		}
		sdk.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close) // after the daemon, whose sessions hold streams open
	u.url = hs.URL
	return u
}

// chans returns session sid's channels, made on first use; u.mu is held.
func (u *startupUpstream) chans(sid string) (release, echoed chan struct{}) {
	if u.release[sid] == nil {
		u.release[sid], u.echoed[sid] = make(chan struct{}), make(chan struct{})
		u.toolList[sid], u.listed[sid] = new(atomic.Int32), make(chan struct{}, 64)
	}
	return u.release[sid], u.echoed[sid]
}

// session returns the server and id of the i-th session, waiting for it
// to be initialized.
func (u *startupUpstream) session(t *testing.T, i int) (*mcp.Server, string) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		u.mu.Lock()
		var s *mcp.Server
		var sid string
		if i < len(u.servers) && i < len(u.sids) {
			s, sid = u.servers[i], u.sids[i]
		}
		u.mu.Unlock()
		if s != nil {
			return s, sid
		}
		select {
		case <-u.opened:
		case <-deadline:
			t.Fatalf("upstream session %d did not open within 20s", i)
		}
	}
}

// waitEchoed waits until session sid's start-up tools/list_changed went
// out, after its first tools/list was answered.
func (u *startupUpstream) waitEchoed(t *testing.T, sid string) {
	t.Helper()
	u.mu.Lock()
	_, echoed := u.chans(sid)
	u.mu.Unlock()
	select {
	case <-echoed:
	case <-time.After(20 * time.Second):
		t.Fatal("the upstream's start-up tools/list_changed did not go out within 20s")
	}
}

// holdingWriter is the response writer of a standalone stream that holds
// an event with a tools/list_changed until release is closed, and closes
// echoed once it went out.
type holdingWriter struct {
	http.ResponseWriter
	ctx     context.Context
	release chan struct{}
	echoed  chan struct{}
	once    sync.Once
}

func (w *holdingWriter) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("notifications/tools/list_changed")) {
		select {
		case <-w.release:
		case <-w.ctx.Done():
			return 0, w.ctx.Err()
		}
		n, err := w.ResponseWriter.Write(p)
		w.Flush()
		w.once.Do(func() { close(w.echoed) })
		return n, err
	}
	return w.ResponseWriter.Write(p)
}

func (w *holdingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *holdingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// TestOwnedSessionStartupIsAsDirectly: what a client's own upstream
// session says as it starts (a tool it adds at initialized) does not reach
// a client that would not have heard it directly, in whatever order the
// gateway reads it; a later change does.
func TestOwnedSessionStartupIsAsDirectly(t *testing.T) {
	t.Parallel()
	pc, pu := newStartupUpstream(t), newStartupUpstream(t)
	other := mcp.NewServer(&mcp.Implementation{Name: "other", Version: "1"}, nil)
	other.AddTool(&mcp.Tool{Name: "hi", InputSchema: map[string]any{"type": "object"}}, emptyTool)
	pcSrv, puSrv, otherSrv := httpUpstream("pc", pc.url), httpUpstream("pu", pu.url), httpUpstream("other", serveHTTP(t, other, nil))
	pcSrv.Session, puSrv.Session = config.SessionPerClient, config.SessionPerUser
	cfg := testConfig(pcSrv, puSrv, otherSrv)
	cfg.Gateway.Tokens = []config.Token{{Name: "ada", User: "ada", Secret: "ada-secret"}}
	cfg.Gateway.Views = []config.View{
		{Name: "pc", Servers: []string{"pc"}, Prefix: config.PrefixNever},
		{Name: "pu", Servers: []string{"pu", "other"}},
	}
	r := start(t, cfg)
	ada := http.Header{"Authorization": {"Bearer ada-secret"}}
	// The shared sessions' own start-up changes reach the catalog before
	// any client connects (a view's server is made at its first
	// request), so that no catalog change comes while the clients start.
	for _, u := range []*startupUpstream{pc, pu} {
		_, sid := u.session(t, 0)
		u.waitEchoed(t, sid)
	}
	eventually(t, "the catalog has the tools the shared sessions added as they started", func() bool {
		return slices.ContainsFunc(r.d.cat.ServerTools("pc"), isLate) && slices.ContainsFunc(r.d.cat.ServerTools("pu"), isLate)
	})

	// A client that opens its standalone stream only after its
	// notifications/initialized was accepted (the TypeScript SDK's) does
	// not hear, directly, what the server says as its session starts.
	t.Run("per_client, no stream at initialized", func(t *testing.T) {
		s := newRawSession(t, r.url+"/mcp/pc", ada)
		st := s.openStandalone()
		if got := readAll(t, s.post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, nil)); !strings.Contains(got, `"late"`) {
			t.Fatalf("the first tools/list lacks the tool the session added as it started:\n%s", got)
		}
		own, sid := pc.session(t, 1)
		before := pc.toolLists(sid)
		readAll(t, s.post(`{"jsonrpc":"2.0","id":3,"method":"prompts/list"}`, nil)) // releases the start-up change
		pc.waitEchoed(t, sid)
		// The gateway has read it: it either tells the client or looks
		// at the list again.
		pc.waitToolListOr(t, sid, before, func() bool { return strings.Contains(st.String(), "tools/list_changed") })
		// Then a change of another kind, which the client is told of,
		// comes after anything the start-up change made it be sent.
		own.AddPrompt(&mcp.Prompt{Name: "more"}, emptyPrompt)
		if !st.waitFor("notifications/prompts/list_changed", 20*time.Second) {
			t.Fatalf("no prompts/list_changed on the client's stream within 20s:\n%s", st)
		}
		if strings.Contains(st.String(), "tools/list_changed") {
			t.Errorf("the client was told of the tool its own session added as it started, which it was already given and would not have heard directly:\n%s", st)
		}
		// A later change is told, as directly.
		own.AddTool(&mcp.Tool{Name: "later", InputSchema: map[string]any{"type": "object"}}, emptyTool)
		if !st.waitFor("notifications/tools/list_changed", 20*time.Second) {
			t.Fatalf("a later change of the session's tools did not reach the client within 20s:\n%s", st)
		}
		if got := readAll(t, s.post(`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, nil)); !strings.Contains(got, `"later"`) {
			t.Errorf("tools/list after the change lacks it:\n%s", got)
		}
	})

	// per_user: the start-up of the user's session, opened by one of her
	// clients, is nothing another of her clients would have heard.
	t.Run("per_user, another client of the user", func(t *testing.T) {
		bTools := make(chan struct{}, 16)
		bPrompts := make(chan struct{}, 16)
		b := r.connect(t, "/mcp/pu", ada, &mcp.ClientOptions{
			ToolListChangedHandler:   func(context.Context, *mcp.ToolListChangedRequest) { bTools <- struct{}{} },
			PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) { bPrompts <- struct{}{} },
		})
		call(t, b, "other__hi", nil) // a request: the gateway knows b as ada's
		a := r.connect(t, "/mcp/pu", ada, nil)
		waitTools(t, a, "the first client's tools", has("pu__late")) // opens ada's session of pu
		own, sid := pu.session(t, 1)
		if _, err := b.ListPrompts(context.Background(), nil); err != nil { // releases the start-up change
			t.Fatal(err)
		}
		pu.waitEchoed(t, sid)
		own.AddPrompt(&mcp.Prompt{Name: "more"}, emptyPrompt)
		waitSignal(t, bPrompts, "the second client's prompts/list_changed")
		select {
		case <-bTools:
			t.Errorf("the second client was told of the tool ada's session added as it started, opened by her first client")
		default:
		}
		if names := toolNames(t, b); !has("pu__late", "other__hi")(names) {
			t.Errorf("the second client lists %v, want pu__late and other__hi", names)
		}
	})
}

func isLate(t catalog.Tool) bool { return t.Def != nil && t.Def.Name == "late" }

// toolLists returns how many tools/list session sid was sent.
func (u *startupUpstream) toolLists(sid string) int32 {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.chans(sid)
	return u.toolList[sid].Load()
}

// waitToolListOr waits until session sid was sent more tools/list than
// before, or done reports true.
func (u *startupUpstream) waitToolListOr(t *testing.T, sid string, before int32, done func() bool) {
	t.Helper()
	u.mu.Lock()
	u.chans(sid)
	n, listed := u.toolList[sid], u.listed[sid]
	u.mu.Unlock()
	deadline := time.After(20 * time.Second)
	for n.Load() <= before && !done() {
		select {
		case <-listed:
		case <-time.After(10 * time.Millisecond):
			// done is the client's stream, which signals nothing here
		case <-deadline:
			t.Fatal("the gateway neither told the client nor looked at its list again within 20s")
		}
	}
}
