package toolcall_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

func TestMain(m *testing.M) {
	testserver.Init()
	os.Exit(m.Run())
}

// memRecorder keeps records in memory (the store has its own suite).
type memRecorder struct {
	mu   sync.Mutex
	recs []store.CallRecord
}

var _ toolcall.Recorder = (*memRecorder)(nil)

func (m *memRecorder) Commit(_ context.Context, r store.CallRecord) error {
	m.mu.Lock()
	m.recs = append(m.recs, r)
	m.mu.Unlock()
	return nil
}

func (m *memRecorder) all() []store.CallRecord {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]store.CallRecord(nil), m.recs...)
}

type fixture struct {
	eng  *toolcall.Engine
	pool *upstream.Pool
	cat  *catalog.Catalog
	rec  *memRecorder
}

// newFixture runs the given servers supervised, with a catalog and an
// engine; change adjusts the configuration first, pool the pool's options.
func newFixture(t *testing.T, servers []config.Server, change func(*config.Config), pool ...func(*upstream.PoolOptions)) *fixture {
	t.Helper()
	cfg := &config.Config{Servers: servers, Defaults: config.Defaults{
		RequestTimeout: 10 * time.Second,
		Health: config.Health{PingInterval: time.Hour, PingTimeout: time.Second,
			Backoff: []time.Duration{20 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond}, MaxFailures: 3},
	}}
	cfg.Limits = config.Limits{MaxConcurrent: 25, MaxQueue: 1000, SessionLimit: -1, MaxOutputBytes: 1 << 20}
	if change != nil {
		change(cfg)
	}
	f := &fixture{rec: &memRecorder{}}
	var err error
	popts := upstream.PoolOptions{
		Config:    cfg,
		OnConnect: func(c *upstream.Client) { f.cat.Connected(c.Server().Name) },
	}
	for _, o := range pool {
		o(&popts)
	}
	f.pool, err = upstream.NewPool(popts)
	if err != nil {
		t.Fatal(err)
	}
	f.cat = catalog.New(catalog.Options{Source: f.pool, Servers: cfg.Servers})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = f.pool.Run(ctx) }()
	go func() { defer wg.Done(); _ = f.cat.Run(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
	for _, s := range servers {
		if _, err := f.pool.WaitConnected(context.Background(), s.Name, 20*time.Second); err != nil {
			t.Fatalf("connecting %s: %v", s.Name, err)
		}
		if err := f.cat.Refresh(context.Background(), s.Name); err != nil {
			t.Fatalf("discovering %s: %v", s.Name, err)
		}
	}
	f.eng, err = toolcall.New(toolcall.Options{Config: cfg, Upstreams: f.pool, Catalog: f.cat, Recorder: f.rec})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func okServer(t *testing.T, name string) config.Server {
	s := testserver.Server(t, name, "ok")
	s.MaxRetries = 2
	return s
}

func textOf(r *toolcall.Result) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

func TestLifecycle(t *testing.T) {
	f := newFixture(t, []config.Server{okServer(t, "alpha")}, nil)
	ctx := context.Background()
	tests := []struct {
		name       string
		req        toolcall.Request
		wantStatus toolcall.Status
		wantKind   fault.Kind
		wantText   string
		check      func(t *testing.T, res *toolcall.Result, err error)
	}{
		{name: "success", req: toolcall.Request{Server: "alpha", Tool: "echo", Arguments: map[string]any{"message": "hi"}},
			wantStatus: toolcall.StatusSuccess, wantText: "hi"},
		{name: "raw arguments forwarded", req: toolcall.Request{Server: "alpha", Tool: "add", RawArguments: json.RawMessage(`{"a": 40, "b": 2}`)},
			wantStatus: toolcall.StatusSuccess, wantText: "42"},
		{name: "raw arguments not an object", req: toolcall.Request{Server: "alpha", Tool: "add", RawArguments: json.RawMessage(`[1, 2]`)},
			wantStatus: toolcall.StatusError, wantKind: fault.Validation,
			check: func(t *testing.T, _ *toolcall.Result, err error) {
				if msg := err.Error(); !strings.Contains(msg, "the arguments are an array; they must be a JSON object") || strings.Contains(msg, "map[string]") {
					t.Errorf("got %q, want it to say the arguments are an array, not a Go type", msg)
				}
			}},
		{name: "tool error", req: toolcall.Request{Server: "alpha", Tool: "fail"}, wantStatus: toolcall.StatusError, wantText: "the gizmo is broken"},
		{name: "validation error with field details", req: toolcall.Request{Server: "alpha", Tool: "add", Arguments: map[string]any{"a": "x"}},
			wantStatus: toolcall.StatusError, wantKind: fault.Validation,
			check: func(t *testing.T, _ *toolcall.Result, err error) {
				fe := fault.As(err)
				fields := map[string]string{}
				for _, d := range fe.Fields {
					fields[d.Field] = d.Message
				}
				if fields["b"] != "required, but missing" || fields["a"] == "" {
					t.Errorf("field details: got %+v, want a wrong-type a and a missing b", fe.Fields)
				}
			}},
		{name: "not found with suggestions", req: toolcall.Request{Server: "alpha", Tool: "ehco"}, wantStatus: toolcall.StatusError, wantKind: fault.NotFound,
			check: func(t *testing.T, _ *toolcall.Result, err error) {
				if s := fault.As(err).Suggestions; len(s) == 0 || s[0] != "echo" {
					t.Errorf("suggestions: got %v, want echo first", s)
				}
			}},
		{name: "unknown server", req: toolcall.Request{Server: "nope", Tool: "echo"}, wantStatus: toolcall.StatusError, wantKind: fault.NotFound},
		{name: "timeout out of range", req: toolcall.Request{Server: "alpha", Tool: "echo", Timeout: 10 * time.Minute}, wantStatus: toolcall.StatusError, wantKind: fault.Validation},
		{name: "image kept byte for byte", req: toolcall.Request{Server: "alpha", Tool: "image"}, wantStatus: toolcall.StatusSuccess,
			check: func(t *testing.T, res *toolcall.Result, _ error) {
				img, ok := res.Content[0].(*mcp.ImageContent)
				if !ok || string(img.Data) != string(testserver.PNG) || res.ContentType != toolcall.ContentImage {
					t.Errorf("image: got %#v (%s), want the PNG bytes, content type image", res.Content[0], res.ContentType)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := f.eng.Call(ctx, tt.req)
			if tt.wantKind != "" {
				if got := fault.KindOf(err); got != tt.wantKind {
					t.Fatalf("kind: got %q (%v), want %q", got, err, tt.wantKind)
				}
			} else if err != nil {
				t.Fatalf("Call: %v", err)
			}
			if res != nil {
				if res.Status != tt.wantStatus {
					t.Errorf("status: got %s, want %s", res.Status, tt.wantStatus)
				}
				if tt.wantText != "" && textOf(res) != tt.wantText {
					t.Errorf("text: got %q, want %q", textOf(res), tt.wantText)
				}
			}
			if tt.check != nil {
				tt.check(t, res, err)
			}
		})
	}
	// Every call was recorded with its status.
	recs := f.rec.all()
	if len(recs) != len(tests) {
		t.Fatalf("records: got %d, want %d", len(recs), len(tests))
	}
	for i, r := range recs {
		if r.Status != string(tests[i].wantStatus) {
			t.Errorf("record %d (%s): status %s, want %s", i, tests[i].name, r.Status, tests[i].wantStatus)
		}
		if r.ID == "" || r.Source != string(toolcall.SourceCLI) || r.FinishedAt.Before(r.StartedAt) {
			t.Errorf("record %d: incomplete: %+v", i, r)
		}
	}
	// History keeps argument shapes, not values.
	if got := string(recs[0].Args); got != `{"message":"string"}` {
		t.Errorf("recorded args: got %s, want the shape", got)
	}
}

func TestTimeoutCancelsUpstream(t *testing.T) {
	f := newFixture(t, []config.Server{okServer(t, "alpha")}, nil)
	start := time.Now()
	_, err := f.eng.Call(context.Background(), toolcall.Request{Server: "alpha", Tool: "slow", Arguments: map[string]any{"seconds": 30}, Timeout: time.Second})
	if fault.KindOf(err) != fault.Timeout || !strings.Contains(err.Error(), "did not answer within 1s") {
		t.Fatalf("got %v, want a timeout naming 1s", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("timeout took %s", d)
	}
	c, _ := f.pool.Client("alpha")
	eventually(t, 5*time.Second, "the server to see the cancellation", func() bool {
		return strings.Contains(c.Stderr(), "slow: cancelled")
	})
	if recs := f.rec.all(); recs[len(recs)-1].Status != string(toolcall.StatusTimeout) {
		t.Errorf("recorded status: got %s, want timeout", recs[len(recs)-1].Status)
	}
}

func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestRetries(t *testing.T) {
	f := newFixture(t, []config.Server{okServer(t, "alpha")}, nil)
	ctx := context.Background()
	flag := filepath.Join(t.TempDir(), "crash")

	// An idempotent tool whose server dies mid-call is retried once the
	// supervisor has reconnected.
	os.WriteFile(flag, nil, 0o600)
	res, err := f.eng.Call(ctx, toolcall.Request{Server: "alpha", Tool: "crash-once", Arguments: map[string]any{"flag": flag}})
	if err != nil {
		t.Fatalf("idempotent call across a crash: %v", err)
	}
	if textOf(res) != "survived" || res.Retries != 1 {
		t.Errorf("got %q after %d retries, want survived after 1", textOf(res), res.Retries)
	}

	// A tool that may have acted is not retried: a connection error at once.
	if _, err := f.pool.WaitConnected(ctx, "alpha", 20*time.Second); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(flag, nil, 0o600)
	_, err = f.eng.Call(ctx, toolcall.Request{Server: "alpha", Tool: "crash-once-unsafe", Arguments: map[string]any{"flag": flag}})
	if fault.KindOf(err) != fault.Connection {
		t.Fatalf("non-idempotent call across a crash: got %v, want a connection error", err)
	}
	if recs := f.rec.all(); recs[len(recs)-1].Retries != 0 {
		t.Errorf("non-idempotent call was retried %d times", recs[len(recs)-1].Retries)
	}
}

// TestLimits fires 1,000 calls at a limit of 25: every one is accounted for
// as success or limit_exceeded, and the server never sees more than 25.
func TestLimits(t *testing.T) {
	f := newFixture(t, []config.Server{okServer(t, "alpha")}, nil)
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	counts := map[string]int{}
	for range 1000 {
		wg.Go(func() {
			res, err := f.eng.Call(ctx, toolcall.Request{Server: "alpha", Tool: "hold", Arguments: map[string]any{"ms": 30}})
			key := "success"
			if err != nil {
				key = string(fault.KindOf(err))
			} else if res.Status != toolcall.StatusSuccess {
				key = string(res.Status)
			}
			mu.Lock()
			counts[key]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if counts["success"]+counts["limit_exceeded"] != 1000 || counts["success"] < 25 || counts["limit_exceeded"] == 0 {
		t.Errorf("outcomes: got %v, want 1000 split between success and limit_exceeded", counts)
	}
	if n := len(f.rec.all()); n != 1000 {
		t.Errorf("records: got %d, want 1000", n)
	}
	res, err := f.eng.Call(ctx, toolcall.Request{Server: "alpha", Tool: "maxseen"})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := strconv.Atoi(textOf(res)); err != nil || n > 25 || n < 2 {
		t.Errorf("the server saw %q concurrent calls, want between 2 and 25", textOf(res))
	}
	if st := f.eng.Stats(); st.InFlight != 0 || st.Waiting != 0 {
		t.Errorf("after the burst: %+v, want nothing in flight", st)
	}
}

func TestQueueAndPerServerLimit(t *testing.T) {
	srv := okServer(t, "alpha")
	srv.MaxConcurrent = 2
	f := newFixture(t, []config.Server{srv}, func(c *config.Config) {
		c.Limits.QueueWait = 10 * time.Second
		c.Limits.MaxQueue = 100
	})
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() {
			if _, err := f.eng.Call(context.Background(), toolcall.Request{Server: "alpha", Tool: "hold", Arguments: map[string]any{"ms": 20}}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("queued call failed: %v", err)
	}
	res, _ := f.eng.Call(context.Background(), toolcall.Request{Server: "alpha", Tool: "maxseen"})
	if n, err := strconv.Atoi(textOf(res)); err != nil || n < 1 || n > 2 {
		t.Errorf("server saw %q concurrent calls, want at most its max_concurrent 2", textOf(res))
	}
}

func TestSessionLimit(t *testing.T) {
	f := newFixture(t, []config.Server{okServer(t, "alpha")}, func(c *config.Config) { c.Limits.SessionLimit = 2 })
	for i := range 3 {
		_, err := f.eng.Call(context.Background(), toolcall.Request{Server: "alpha", Tool: "echo", Arguments: map[string]any{"message": "x"}})
		if i < 2 && err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if i == 2 && fault.KindOf(err) != fault.LimitExceeded {
			t.Fatalf("call 3: got %v, want limit_exceeded", err)
		}
	}
}

func TestStopSwitch(t *testing.T) {
	f := newFixture(t, []config.Server{okServer(t, "alpha")}, nil)
	errc := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := f.eng.Call(context.Background(), toolcall.Request{Server: "alpha", Tool: "slow", Arguments: map[string]any{"seconds": 30}})
			errc <- err
		}()
	}
	eventually(t, 10*time.Second, "3 calls in flight", func() bool { return f.eng.Stats().InFlight == 3 })
	if n := f.eng.Stop(); n != 3 {
		t.Errorf("Stop cancelled %d calls, want 3", n)
	}
	for range 3 {
		if err := <-errc; fault.KindOf(err) != fault.Cancelled || !strings.Contains(err.Error(), "switchboard resume") {
			t.Errorf("in-flight call: got %v, want cancelled by the stop switch", err)
		}
	}
	_, err := f.eng.Call(context.Background(), toolcall.Request{Server: "alpha", Tool: "echo", Arguments: map[string]any{"message": "x"}})
	if fault.KindOf(err) != fault.Cancelled {
		t.Errorf("call while stopped: got %v, want refused", err)
	}
	f.eng.Resume()
	if _, err := f.eng.Call(context.Background(), toolcall.Request{Server: "alpha", Tool: "echo", Arguments: map[string]any{"message": "x"}}); err != nil {
		t.Errorf("call after resume: %v", err)
	}
}

func TestBudgets(t *testing.T) {
	f := newFixture(t, []config.Server{okServer(t, "alpha")}, nil)
	ctx := context.Background()
	var mu sync.Mutex
	var seen []toolcall.Progress
	res, err := f.eng.Call(ctx, toolcall.Request{Server: "alpha", Tool: "stream",
		Arguments: map[string]any{"steps": 50, "step_ms": 50},
		Budget:    toolcall.Budget{MaxDuration: 400 * time.Millisecond},
		OnProgress: func(p toolcall.Progress) {
			mu.Lock()
			seen = append(seen, p)
			mu.Unlock()
		}})
	if err != nil {
		t.Fatalf("duration budget: %v", err)
	}
	if !res.Partial || !res.BudgetExceeded || res.Meta[toolcall.MetaPartial] != true || !strings.Contains(res.Missing, "of 50 steps were not completed") {
		t.Errorf("duration budget: got %+v, want a partial result saying what is missing", res)
	}
	mu.Lock()
	if len(seen) == 0 {
		t.Error("no progress was forwarded to the caller")
	}
	mu.Unlock()

	res, err = f.eng.Call(ctx, toolcall.Request{Server: "alpha", Tool: "stream",
		Arguments: map[string]any{"steps": 50, "step_ms": 20, "cost_per": 0.01},
		Budget:    toolcall.Budget{MaxCost: 0.05}})
	if err != nil {
		t.Fatalf("cost budget: %v", err)
	}
	if !res.Partial || res.Cost <= 0.05 || res.Progress == nil || res.Progress.Processed >= 50 {
		t.Errorf("cost budget: got partial=%v cost=%v progress=%+v; want ended just past 0.05", res.Partial, res.Cost, res.Progress)
	}
	recs := f.rec.all()
	if r := recs[len(recs)-1]; !r.Partial || r.ErrorKind != string(fault.BudgetExceeded) {
		t.Errorf("record: got %+v, want partial with budget_exceeded", r)
	}
}

func TestOutputLimit(t *testing.T) {
	f := newFixture(t, []config.Server{okServer(t, "alpha")}, func(c *config.Config) { c.Limits.MaxOutputBytes = 1000 })
	res, err := f.eng.Call(context.Background(), toolcall.Request{Server: "alpha", Tool: "big", Arguments: map[string]any{"bytes": 5000}})
	if err != nil {
		t.Fatal(err)
	}
	text := textOf(res)
	if !res.Truncated || res.Meta[toolcall.MetaTruncated] != true || !strings.HasPrefix(text, strings.Repeat("x", 1000)) ||
		!strings.Contains(text, "[truncated by switchboard: 4000 bytes omitted]") || res.Bytes != 5000 {
		t.Errorf("got truncated=%v meta=%v bytes=%d text %q…; want 1000 bytes and a marker", res.Truncated, res.Meta, res.Bytes, text[:min(len(text), 40)])
	}
}

func TestRecordValuesRedacted(t *testing.T) {
	f := newFixture(t, []config.Server{okServer(t, "alpha")}, func(c *config.Config) { c.History.RecordValues = true })
	secret := "ghp_" + strings.Repeat("A", 36)
	_, err := f.eng.Call(context.Background(), toolcall.Request{Server: "alpha", Tool: "echo", Arguments: map[string]any{"message": "token " + secret}})
	if err != nil {
		t.Fatal(err)
	}
	got := string(f.rec.all()[0].Args)
	if strings.Contains(got, secret) || !strings.Contains(got, "[REDACTED]") {
		t.Errorf("recorded values: got %s, want the token redacted", got)
	}
}

func TestUnavailableServer(t *testing.T) {
	dead := testserver.Server(t, "dead", "exit")
	f := newFixture(t, []config.Server{okServer(t, "alpha")}, func(c *config.Config) { c.Servers = append(c.Servers, dead) })
	f.eng.SetRetryWait(0)
	_, err := f.eng.Call(context.Background(), toolcall.Request{Server: "dead", Tool: "echo"})
	if fault.KindOf(err) != fault.Connection || !strings.Contains(err.Error(), "dead") {
		t.Errorf("call to a dead server: got %v, want a connection error naming it", err)
	}
}

func TestRedactResults(t *testing.T) {
	srv := okServer(t, "alpha")
	srv.RedactResults = true
	srv.Env["MY_API_KEY"] = "configured-secret-value-42"
	srv.Secrets = []string{"MY_API_KEY"}
	f := newFixture(t, []config.Server{srv}, nil)
	token := "ghp_" + strings.Repeat("b", 36)
	res, err := f.eng.Call(context.Background(), toolcall.Request{Server: "alpha", Tool: "echo",
		Arguments: map[string]any{"message": "token " + token + " and configured-secret-value-42"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(res); strings.Contains(got, token) || strings.Contains(got, "configured-secret-value-42") || strings.Count(got, "[REDACTED]") != 2 {
		t.Errorf("redacted result: got %q, want both secrets replaced", got)
	}
}

// TestOneLogEventPerCall checks the structured log: one event per call with
// the request id, server, tool, status, duration and error kind — and never
// an argument value.
func TestOneLogEventPerCall(t *testing.T) {
	f := newFixture(t, []config.Server{okServer(t, "alpha")}, nil)
	var buf syncBuf
	f.eng.SetLogger(slog.New(slog.NewJSONHandler(&buf, nil)))
	_, _ = f.eng.Call(context.Background(), toolcall.Request{Server: "alpha", Tool: "echo", Identity: "ada", Arguments: map[string]any{"message": "s3cr3t-argument"}})
	_, _ = f.eng.Call(context.Background(), toolcall.Request{Server: "alpha", Tool: "add", Arguments: map[string]any{"a": "not a number"}})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d log events, want 2:\n%s", len(lines), buf.String())
	}
	if strings.Contains(buf.String(), "s3cr3t-argument") || strings.Contains(buf.String(), "not a number") {
		t.Errorf("the log contains an argument value:\n%s", buf.String())
	}
	var first, second map[string]any
	json.Unmarshal([]byte(lines[0]), &first)
	json.Unmarshal([]byte(lines[1]), &second)
	for _, k := range []string{"request_id", "source", "server", "tool", "status", "duration", "identity"} {
		if _, ok := first[k]; !ok {
			t.Errorf("log event lacks %q: %s", k, lines[0])
		}
	}
	if second["error_kind"] != "validation" || second["status"] != "error" {
		t.Errorf("failed call's event: %s; want status error, error_kind validation", lines[1])
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRetriesACallTheServerNeverProcessed: a streamable-HTTP server that
// restarted answers 404 for the old session, so the call never ran: even a
// tool that is neither read-only nor idempotent is sent again, on the new
// session the supervisor starts, and runs once.
func TestRetriesACallTheServerNeverProcessed(t *testing.T) {
	var runs atomic.Int32
	generation := func() http.Handler {
		s := mcp.NewServer(&mcp.Implementation{Name: "restarting", Version: "1"}, nil)
		s.AddTool(&mcp.Tool{Name: "write", InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(runs.Add(1))}}}, nil
			})
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	}
	var current atomic.Pointer[http.Handler]
	first := generation()
	current.Store(&first)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*current.Load()).ServeHTTP(w, r) }))
	t.Cleanup(hs.Close)
	srv := config.Server{Name: "restarting", Transport: config.TransportHTTP, URL: hs.URL, Enabled: true, LoadTools: true,
		MaxRetries: 2, ConnectTimeout: 10 * time.Second, RequestTimeout: 10 * time.Second, TerminateOnClose: true}
	f := newFixture(t, []config.Server{srv}, nil)

	// The server restarts: the new one knows none of the old sessions.
	second := generation()
	current.Store(&second)
	res, err := f.eng.Call(context.Background(), toolcall.Request{Server: "restarting", Tool: "write"})
	if err != nil {
		t.Fatalf("a call the restarted server never processed: got %v, want it sent again on a new session", err)
	}
	if got := textOf(res); got != "1" || res.Retries != 1 || runs.Load() != 1 {
		t.Errorf("got %q after %d retries, the tool ran %d times; want 1 after 1 retry, run once", got, res.Retries, runs.Load())
	}
}
