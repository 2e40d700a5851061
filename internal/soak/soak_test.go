package soak_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/errgroup"

	"github.com/switchboard-mcp/switchboard/internal/soak"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

func TestMain(m *testing.M) {
	testserver.Init() // the upstream alpha is this binary in the "ok" mode
	os.Exit(m.Run())
}

// Environment of the soak.
const (
	envSoak     = "SWITCHBOARD_SOAK" // 1 runs TestSoak
	envDuration = "SOAK_DURATION"    // the load's length, a Go duration (default 10m)
	envReport   = "SOAK_REPORT"      // a file to write the Markdown report to
)

// Timing of the soak. The load runs for the duration; alpha is killed
// every killEvery (first at killEvery/2) and the configuration reloaded
// every reloadEvery (first at reloadEvery/2); the daemon's figures are
// sampled every sampleEvery.
const (
	killEvery      = time.Minute
	reloadEvery    = 2 * time.Minute
	sampleEvery    = time.Minute
	sessionTimeout = 30 * time.Second // gateway.session_timeout
	callTimeout    = 2 * time.Minute  // a request without an answer by then is lost
	// setupMargin is what the soak needs besides the load: building,
	// starting, the idle wait and the history check.
	setupMargin = 4 * time.Minute
)

// users are the tokens' identities: alice and bob call at a moderate
// pace, carol faster than limits.rate allows.
var users = []string{"alice", "bob", "carol"}

// TestSoak runs mixed load through a real switchboard daemon's gateway for
// SOAK_DURATION (default 10m): several users calling tools (fast, slow,
// failing) and listing, sessions opening and closing, sessions abandoned
// mid-handshake, the stdio upstream alpha killed with SIGKILL every minute
// and the configuration reloaded every two minutes. It then checks every
// request was answered, every error explained and every answered call is
// in the history, and reports the daemon's memory, goroutines and open
// files over the run. Run it with `make soak`.
func TestSoak(t *testing.T) {
	if os.Getenv(envSoak) != "1" {
		t.Skip("the soak runs only when asked: make soak, or SWITCHBOARD_SOAK=1 go test -run '^TestSoak$' -timeout 20m -v ./internal/soak (SOAK_DURATION=1m for a short run)")
	}
	duration := 10 * time.Minute
	if s := os.Getenv(envDuration); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 30*time.Second {
			t.Fatalf("%s=%q: want a Go duration of at least 30s, such as 1m or 10m (err: %v)", envDuration, s, err)
		}
		duration = d
	}
	if dl, ok := t.Deadline(); ok && time.Until(dl) < duration+setupMargin {
		t.Fatalf("the test's -timeout leaves %s, too little for %s=%s and about %s of setup and checks: run with -timeout %s or more (make soak SOAK_TIMEOUT=...)",
			time.Until(dl).Round(time.Second), envDuration, duration, setupMargin, (duration + setupMargin + time.Minute).Round(time.Minute))
	}

	s := newSoak(t, duration)
	report := s.run(t)
	run := soak.Run{
		Date:     s.ev.start,
		Duration: duration,
		Machine:  machine(),
		Load:     s.loadNote(),
	}
	md := report.Markdown(run, 50)
	fmt.Println(md) // the report, whatever the outcome
	if path := os.Getenv(envReport); path != "" {
		if err := os.WriteFile(path, []byte(md), 0o644); err != nil {
			t.Errorf("writing the report to %s=%s: %v", envReport, path, err)
		}
	}
	for _, v := range report.Verdicts() {
		if !v.Met {
			t.Errorf("aim not met: %s: %s", v.Aim, v.Figures)
		}
	}
}

// soakRun is one soak: the daemon, the ledger and what happened.
type soakRun struct {
	d        *daemon
	duration time.Duration
	ledger   *soak.Ledger
	ev       events
	client   *http.Client // shared by every session, one pool of connections
	testBin  string
	node     string   // node, for the memory server
	memArgs  []string // the memory server's arguments

	gapsMu sync.Mutex
	gaps   []gap // when alpha was down

	samples []soak.Sample
	extraMu sync.Mutex
	extra   []soak.Verdict // checks of the kills and reloads
}

// gap is a time alpha was down: from its kill to a call answered by the
// restarted process (to is zero while it lasts).
type gap struct{ from, to time.Time }

func newSoak(t *testing.T, duration time.Duration) *soakRun {
	testBin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	node, memArgs := testpeer.MemoryCommand(t)
	node, err = filepath.Abs(node)
	if err != nil {
		t.Fatal(err)
	}
	d := &daemon{bin: buildSwitchboard(t), state: filepath.Join(t.TempDir(), "state"), token: map[string]string{}}
	var env []string
	for _, u := range users {
		b := make([]byte, 16)
		rand.Read(b)
		d.token[u] = hex.EncodeToString(b)
		env = append(env, "SOAK_TOKEN_"+strings.ToUpper(u)+"="+d.token[u])
	}
	d.config = filepath.Join(t.TempDir(), "switchboard.yaml")
	s := &soakRun{d: d, duration: duration, ledger: soak.NewLedger(), testBin: testBin,
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: time.Minute}}}
	s.node, s.memArgs = node, memArgs
	if err := s.writeConfig(0); err != nil {
		t.Fatal(err)
	}
	d.start(t, env)
	s.ev.start = time.Now()
	return s
}

// writeConfig writes the soak's configuration; reload is the number that
// the gateway's instructions carry (the harmless change a reload makes).
func (s *soakRun) writeConfig(reload int) error {
	var b strings.Builder
	fmt.Fprintf(&b, "gateway:\n  session_timeout: %s\n  instructions: \"soak reload %d\"\n  tokens:\n", sessionTimeout, reload)
	for _, u := range users {
		fmt.Fprintf(&b, "    - {name: %s, user: %s, token_env: SOAK_TOKEN_%s}\n", u, u, strings.ToUpper(u))
	}
	b.WriteString("limits:\n  max_concurrent: 25\n  rate:\n    per_user: {calls_per_second: 15, burst: 30}\n")
	b.WriteString("history:\n  record_values: true\n  keep: 10000000\n")
	fmt.Fprintf(&b, "security:\n  allowed_commands: [%q, %q]\n", s.testBin, s.node)
	b.WriteString("servers:\n")
	fmt.Fprintf(&b, "  - name: alpha\n    command: %q\n    env: %s\n", s.testBin, testserver.EnvYAML("ok"))
	args, _ := json.Marshal(s.memArgs)
	fmt.Fprintf(&b, "  - name: memory\n    command: %q\n    args: %s\n", s.node, args)
	if err := os.WriteFile(s.d.config, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("writing the soak's configuration: %w", err)
	}
	return nil
}

// bearer adds a user's token to every request.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// connect opens a go-sdk client session on the gateway as user; the
// attempt is a request of the ledger.
func (s *soakRun) connect(id, user string) *mcp.ClientSession {
	s.ledger.Send(soak.Request{ID: id, User: user, Method: "initialize", Sent: time.Now()})
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "soak-" + user, Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{
		Endpoint:   s.d.url + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{s.d.token[user], s.client.Transport}},
	}
	cs, err := c.Connect(ctx, tr, nil)
	if err != nil {
		s.settleErr(soak.Request{ID: id, User: user, Method: "initialize"}, err, time.Now())
		return nil
	}
	s.ledger.Settle(id, soak.OK, "", "")
	return cs
}

// op is one kind of request the callers make.
type op struct {
	name   string
	weight int
}

// ops is the callers' mix.
var ops = []op{
	{"echo", 40}, {"add", 8}, {"slow", 8}, {"fail", 6},
	{"search", 14}, {"create", 2},
	{"tools/list", 8}, {"prompts/list", 4}, {"resources/list", 4}, {"prompts/get", 6},
}

func pick(rng *mrand.Rand) string {
	total := 0
	for _, o := range ops {
		total += o.weight
	}
	n := rng.IntN(total)
	for _, o := range ops {
		if n < o.weight {
			return o.name
		}
		n -= o.weight
	}
	panic("unreachable")
}

// caller makes requests as user until ctx ends, pausing pace between
// them, on a session it replaces every 50 requests.
func (s *soakRun) caller(ctx context.Context, w int, user string, pace time.Duration) {
	rng := mrand.New(mrand.NewPCG(uint64(w), 1))
	var cs *mcp.ClientSession
	defer func() {
		if cs != nil {
			cs.Close()
		}
	}()
	for n := 0; ctx.Err() == nil; n++ {
		id := fmt.Sprintf("w%02d-%06d", w, n)
		if cs == nil || n%50 == 0 {
			if cs != nil {
				cs.Close()
			}
			if cs = s.connect(id+"-init", user); cs == nil {
				wait(ctx, time.Second)
				continue
			}
		}
		s.request(cs, rng, id, user, pick(rng))
		wait(ctx, pace)
	}
}

// churner opens a session, lists the tools, makes one call and closes it,
// once a second, as a short-lived client does.
func (s *soakRun) churner(ctx context.Context, w int, user string) {
	rng := mrand.New(mrand.NewPCG(uint64(w), 1))
	for n := 0; ctx.Err() == nil; n++ {
		id := fmt.Sprintf("w%02d-%06d", w, n)
		if cs := s.connect(id+"-init", user); cs != nil {
			s.request(cs, rng, id+"-list", user, "tools/list")
			s.request(cs, rng, id, user, "echo")
			cs.Close()
		}
		wait(ctx, time.Second)
	}
}

// abandoner sends initialize over raw HTTP and never finishes the
// handshake (no notifications/initialized, no DELETE), every 2 s.
func (s *soakRun) abandoner(ctx context.Context, w int, user string) {
	for n := 0; ctx.Err() == nil; n++ {
		id := fmt.Sprintf("w%02d-%06d", w, n)
		s.ledger.Send(soak.Request{ID: id, User: user, Method: "initialize (abandoned)", Sent: time.Now()})
		o, kind, detail := s.halfOpen(user)
		s.ledger.Settle(id, o, kind, detail)
		wait(ctx, 2*time.Second)
	}
}

func (s *soakRun) halfOpen(user string) (soak.Outcome, string, string) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"soak-abandoned","version":"1"}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.d.url+"/mcp", strings.NewReader(body))
	if err != nil {
		return soak.Dropped, "", err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+s.d.token[user])
	resp, err := s.client.Do(req)
	if err != nil {
		return soak.Dropped, "", err.Error()
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	switch {
	case err != nil:
		return soak.Dropped, "", "reading the answer: " + err.Error()
	case resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusTooManyRequests:
		return soak.Refused, fmt.Sprintf("http_%d", resp.StatusCode), ""
	case resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" || !bytes.Contains(b, []byte(`"protocolVersion"`)):
		return soak.Unexplained, fmt.Sprintf("http_%d", resp.StatusCode), fmt.Sprintf("session id %q, body %.200s", resp.Header.Get("Mcp-Session-Id"), b)
	}
	return soak.OK, "", ""
}

// request makes one request of kind what on cs and settles it.
func (s *soakRun) request(cs *mcp.ClientSession, rng *mrand.Rand, id, user, what string) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	marker := "soak-" + id
	call := func(server, tool string, args map[string]any, markerInArgs bool, check func(*mcp.CallToolResult) string) {
		r := soak.Request{ID: id, User: user, Method: "tools/call", Server: server, Tool: tool, Sent: time.Now()}
		if markerInArgs {
			r.Marker = marker
		}
		s.ledger.Send(r)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: server + "__" + tool, Arguments: args})
		if err != nil {
			s.settleErr(r, err, time.Now())
			return
		}
		if res.IsError {
			s.settleToolError(r, res, time.Now())
			return
		}
		if bad := check(res); bad != "" {
			s.ledger.Settle(id, soak.Unexplained, "wrong_result", bad)
			return
		}
		s.ledger.Settle(id, soak.OK, "", "")
	}
	wantText := func(want string) func(*mcp.CallToolResult) string {
		return func(res *mcp.CallToolResult) string {
			if got := textOf(res); got != want {
				return fmt.Sprintf("got %.100q, want %q", got, want)
			}
			return ""
		}
	}
	anything := func(*mcp.CallToolResult) string { return "" }
	list := func(method string, do func() error) {
		r := soak.Request{ID: id, User: user, Method: method, Sent: time.Now()}
		s.ledger.Send(r)
		if err := do(); err != nil {
			s.settleErr(r, err, time.Now())
			return
		}
		s.ledger.Settle(id, soak.OK, "", "")
	}
	switch what {
	case "echo":
		call("alpha", "echo", map[string]any{"message": marker}, true, wantText(marker))
	case "add":
		a, b := rng.IntN(1000), rng.IntN(1000)
		call("alpha", "add", map[string]any{"a": a, "b": b}, false, wantText(fmt.Sprint(a+b)))
	case "slow":
		call("alpha", "slow", map[string]any{"seconds": 0.2 + rng.Float64()}, false, wantText("done"))
	case "fail":
		call("alpha", "fail", map[string]any{}, false, func(*mcp.CallToolResult) string { return "a tool that always fails succeeded" })
	case "search":
		call("memory", "search_nodes", map[string]any{"query": marker}, true, anything)
	case "create":
		call("memory", "create_entities", map[string]any{"entities": []any{map[string]any{"name": marker, "entityType": "soak", "observations": []string{"made by the soak"}}}}, true, anything)
	case "tools/list":
		list(what, func() error {
			res, err := cs.ListTools(ctx, nil)
			if err == nil && len(res.Tools) == 0 {
				return errors.New("the gateway listed no tools")
			}
			return err
		})
	case "prompts/list":
		list(what, func() error { _, err := cs.ListPrompts(ctx, nil); return err })
	case "resources/list":
		list(what, func() error { _, err := cs.ListResources(ctx, nil); return err })
	case "prompts/get":
		r := soak.Request{ID: id, User: user, Method: what, Server: "alpha", Sent: time.Now()}
		s.ledger.Send(r)
		res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "alpha__greet", Arguments: map[string]string{"name": marker}})
		switch {
		case err != nil:
			s.settleErr(r, err, time.Now())
		case len(res.Messages) != 1 || !strings.Contains(textContent(res.Messages[0].Content), marker):
			s.ledger.Settle(id, soak.Unexplained, "wrong_result", fmt.Sprintf("prompt messages %v", res.Messages))
		default:
			s.ledger.Settle(id, soak.OK, "", "")
		}
	default:
		panic("unknown op " + what)
	}
}

// settleErr settles a request that got err instead of a result: a
// JSON-RPC error is an answer, anything else (a broken connection, no
// answer within callTimeout) is not.
func (s *soakRun) settleErr(r soak.Request, err error, at time.Time) {
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) {
		s.ledger.Settle(r.ID, soak.Dropped, "", err.Error())
		return
	}
	kind := fmt.Sprintf("jsonrpc_%d", werr.Code)
	var data struct {
		ErrorType string `json:"error_type"`
	}
	if json.Unmarshal(werr.Data, &data) == nil && data.ErrorType != "" {
		kind = data.ErrorType
	}
	s.ledger.Settle(r.ID, s.explain(r, kind, at), kind, werr.Message)
}

// settleToolError settles a call answered with isError: the gateway's
// structured error (its error_type), or the tool's own error.
func (s *soakRun) settleToolError(r soak.Request, res *mcp.CallToolResult, at time.Time) {
	text := textOf(res)
	kind := "tool_error"
	var data struct {
		ErrorType string `json:"error_type"`
	}
	if json.Unmarshal([]byte(text), &data) == nil && data.ErrorType != "" {
		kind = data.ErrorType
	}
	s.ledger.Settle(r.ID, s.explain(r, kind, at), kind, fmt.Sprintf("%.300s", text))
}

// explain decides whether an error answer is expected: a rate limit or a
// limit refusal, a connection error of alpha while it was down, the
// failing tool's error.
func (s *soakRun) explain(r soak.Request, kind string, answered time.Time) soak.Outcome {
	switch kind {
	case "rate_limited_error", "limit_exceeded_error":
		return soak.Refused
	case "connection_error", "jsonrpc_-32603":
		// A call, or a prompts/get (-32603, an unreachable upstream), to
		// alpha while it was down.
		if r.Server == "alpha" && s.inGap(r.Sent, answered) {
			return soak.Refused
		}
	case "tool_error":
		if r.Tool == "fail" {
			return soak.Failed
		}
	}
	return soak.Unexplained
}

// gapSlack is how long after a restarted alpha answered a call its
// reconnection may still be settling (tools being rediscovered).
const gapSlack = 2 * time.Second

func (s *soakRun) inGap(sent, answered time.Time) bool {
	s.gapsMu.Lock()
	defer s.gapsMu.Unlock()
	for _, g := range s.gaps {
		to := g.to.Add(gapSlack)
		if g.to.IsZero() {
			to = answered
		}
		if !sent.After(to) && !answered.Before(g.from) {
			return true
		}
	}
	return false
}

// killer kills alpha's process with SIGKILL every killEvery, then waits
// until a call to the restarted alpha is answered.
func (s *soakRun) killer(ctx context.Context) {
	if !wait(ctx, killEvery/2) {
		return
	}
	for k := 1; ; k++ {
		var alpha []proc
		for _, p := range children(s.d.cmd.Process.Pid) {
			if p.exe == s.testBin && !p.zombie {
				alpha = append(alpha, p)
			}
		}
		if len(alpha) != 1 {
			s.ev.add("kill %d: want one alpha process among the daemon's children, found %d: not killed", k, len(alpha))
			s.check(soak.Verdict{Aim: fmt.Sprintf("kill %d found alpha's process", k), Met: false, Figures: fmt.Sprintf("%d alpha processes", len(alpha))})
		} else {
			from := time.Now()
			s.gapsMu.Lock()
			s.gaps = append(s.gaps, gap{from: from})
			s.gapsMu.Unlock()
			syscall.Kill(alpha[0].pid, syscall.SIGKILL)
			// Back when a call reaches the restarted process, on a session
			// opened for it: one kept from the last kill would have been
			// closed by gateway.session_timeout meanwhile, although the
			// go-sdk client keeps its event stream open (docs/benchmarks.md,
			// Soak).
			back, last := s.probe(k, from)
			s.gapsMu.Lock()
			s.gaps[len(s.gaps)-1].to = time.Now()
			s.gapsMu.Unlock()
			if back == 0 {
				s.ev.add("kill -9 of alpha (pid %d): NOT back within 2m; the last probe got: %s", alpha[0].pid, last)
				s.check(soak.Verdict{Aim: fmt.Sprintf("alpha restarted after kill %d", k), Met: false, Figures: "no answer within 2m"})
			} else {
				s.ev.add("kill -9 of alpha (pid %d): answering again after %s", alpha[0].pid, back.Round(10*time.Millisecond))
			}
		}
		if !wait(ctx, killEvery) {
			return
		}
	}
}

// probe calls alpha's echo until it answers, at most for 2 minutes from
// from, and returns how long that took (0 if it did not) and the last
// failure.
func (s *soakRun) probe(k int, from time.Time) (back time.Duration, last string) {
	var cs *mcp.ClientSession
	defer func() {
		if cs != nil {
			cs.Close()
		}
	}()
	for n := 0; time.Since(from) < 2*time.Minute; n++ {
		if cs == nil {
			if cs = s.connect(fmt.Sprintf("k%02d-%03d-init", k, n), "alice"); cs == nil {
				last = "could not open a session"
			}
		}
		if cs != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"message": "probe"}})
			cancel()
			switch {
			case err == nil && !res.IsError:
				return time.Since(from), ""
			case err != nil:
				last = err.Error()
				var werr *jsonrpc.Error
				if !errors.As(err, &werr) {
					cs.Close() // the session is broken: open another
					cs = nil
				}
			default:
				last = textOf(res)
			}
		}
		time.Sleep(100 * time.Millisecond) // polling the restart, at most every 100 ms
	}
	return 0, last
}

// reloader changes the gateway's instructions every reloadEvery and has
// the daemon reload, alternately with `switchboard reload` and SIGHUP,
// then waits until a new session sees the new instructions.
func (s *soakRun) reloader(ctx context.Context) {
	if !wait(ctx, reloadEvery/2) {
		return
	}
	for n := 1; ; n++ {
		if err := s.writeConfig(n); err != nil {
			s.ev.add("reload %d: %v", n, err)
			s.check(soak.Verdict{Aim: fmt.Sprintf("reload %d applied", n), Met: false, Figures: err.Error()})
			return
		}
		from := time.Now()
		how := "switchboard reload"
		if n%2 == 0 {
			how = "SIGHUP"
			s.d.cmd.Process.Signal(syscall.SIGHUP)
		} else {
			out, err := exec.Command(s.d.bin, "reload", "--config", s.d.config, "--state-dir", s.d.state).CombinedOutput()
			if err != nil {
				s.ev.add("reload %d by %s FAILED: %v: %s", n, how, err, strings.TrimSpace(string(out)))
				s.check(soak.Verdict{Aim: fmt.Sprintf("reload %d applied", n), Met: false, Figures: err.Error()})
				if !wait(ctx, reloadEvery) {
					return
				}
				continue
			}
		}
		want := fmt.Sprintf("soak reload %d", n)
		applied := false
		for i := 0; time.Since(from) < time.Minute; i++ {
			cs := s.connect(fmt.Sprintf("r%02d-%03d-init", n, i), "bob")
			if cs != nil {
				got := cs.InitializeResult().Instructions
				cs.Close()
				if strings.Contains(got, want) {
					applied = true
					break
				}
			}
			time.Sleep(100 * time.Millisecond) // polling the reload, at most every 100 ms
		}
		if applied {
			s.ev.add("reload %d by %s: new sessions see it after %s", n, how, time.Since(from).Round(10*time.Millisecond))
		} else {
			s.ev.add("reload %d by %s: NOT seen by new sessions within 1m", n, how)
			s.check(soak.Verdict{Aim: fmt.Sprintf("reload %d applied", n), Met: false, Figures: "instructions unchanged after 1m"})
		}
		if !wait(ctx, reloadEvery) {
			return
		}
	}
}

// check adds a check of the kills and reloads to the report.
func (s *soakRun) check(v soak.Verdict) {
	s.extraMu.Lock()
	defer s.extraMu.Unlock()
	s.extra = append(s.extra, v)
}

// sample records the daemon's figures under label.
func (s *soakRun) sample(label string) error {
	pid := s.d.cmd.Process.Pid
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := s.d.metrics(ctx)
	if err != nil {
		return err
	}
	r, err := rss(pid)
	if err != nil {
		return err
	}
	fds, err := openFDs(pid)
	if err != nil {
		return err
	}
	s.samples = append(s.samples, soak.Sample{
		At: time.Since(s.ev.start), Label: label, RSS: r, FDs: fds,
		Goroutines: int(m["go_goroutines"]),
		Sessions:   int(sumPrefix(m, "switchboard_gateway_sessions")),
		Children:   len(children(pid)),
	})
	return nil
}

// wait waits d or until ctx ends, and reports whether d passed.
func wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// run runs the load, the kills, the reloads and the samples, stops the
// daemon and checks the history.
func (s *soakRun) run(t *testing.T) *soak.Report {
	if err := s.sample("start"); err != nil {
		t.Fatalf("sampling the daemon at the start: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.duration)
	defer cancel()
	var load errgroup.Group
	w := 0
	add := func(f func()) {
		w++
		load.Go(func() error { f(); return nil })
	}
	for _, c := range []struct {
		user string
		pace time.Duration
		n    int
	}{{"alice", 50 * time.Millisecond, 2}, {"bob", 100 * time.Millisecond, 1}, {"carol", 10 * time.Millisecond, 2}} {
		for range c.n {
			id, user, pace := w, c.user, c.pace
			add(func() { s.caller(ctx, id, user, pace) })
		}
	}
	id := w
	add(func() { s.churner(ctx, id, "bob") })
	id2 := w
	add(func() { s.abandoner(ctx, id2, "carol") })
	load.Go(func() error { s.killer(ctx); return nil })
	load.Go(func() error { s.reloader(ctx); return nil })
	load.Go(func() error {
		for m := 1; wait(ctx, sampleEvery); m++ {
			if err := s.sample(fmt.Sprintf("%dm", m)); err != nil {
				s.ev.add("sampling at %dm failed: %v", m, err)
			}
		}
		return nil
	})
	load.Wait()
	s.ev.add("load stopped; every worker's last request answered or given up")
	s.client.Transport.(*http.Transport).CloseIdleConnections() // the daemon's side of them would count as goroutines
	if err := s.sample("end"); err != nil {
		t.Errorf("sampling the daemon at the end: %v", err)
	}

	// Idle: every session closed or abandoned is gone after the session
	// timeout, and the goroutines with them.
	start := s.samples[0]
	idleFrom := time.Now()
	deadline := idleFrom.Add(sessionTimeout + time.Minute)
	for {
		m, err := s.d.metrics(context.Background())
		if err == nil && sumPrefix(m, "switchboard_gateway_sessions") == 0 && int(m["go_goroutines"]) <= start.Goroutines+10 {
			break
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second) // polling the idle daemon, once a second
	}
	if err := s.sample("idle"); err != nil {
		t.Errorf("sampling the idle daemon: %v", err)
	}
	idle := s.samples[len(s.samples)-1]
	s.ev.add("idle %s after the load (sessions %d, goroutines %d)", time.Since(idleFrom).Round(time.Second), idle.Sessions, idle.Goroutines)

	s.d.stop(t)
	st, err := store.OpenSQLite(context.Background(), filepath.Join(s.d.state, "switchboard.db"), store.Options{})
	if err != nil {
		t.Fatalf("opening the history: %v", err)
	}
	defer st.Close()
	recs, err := st.Calls(context.Background(), store.CallFilter{Source: "gateway", Limit: 1 << 30})
	if err != nil {
		t.Fatalf("reading the history: %v", err)
	}
	rows := make([]soak.HistoryRow, 0, len(recs))
	for _, r := range recs {
		if r.Identity == "alice" && r.Tool == "echo" && strings.Contains(string(r.Args), `"probe"`) {
			continue // the killer's probes are not in the ledger
		}
		rows = append(rows, soak.HistoryRow{Identity: r.Identity, Server: r.Server, Tool: r.Tool, Args: string(r.Args), ErrorKind: r.ErrorKind})
	}
	rep := s.ledger.Check(rows)
	rep.Samples = s.samples
	s.ev.mu.Lock()
	for i, what := range s.ev.list {
		rep.Events = append(rep.Events, soak.Event{At: s.ev.at[i], What: what})
	}
	s.ev.mu.Unlock()
	rep.Checks = s.extra
	return rep
}

// textOf returns the text of a result's first content.
func textOf(res *mcp.CallToolResult) string {
	if len(res.Content) == 0 {
		return ""
	}
	return textContent(res.Content[0])
}

func textContent(c mcp.Content) string {
	if tc, ok := c.(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

// loadNote describes the load for the report.
func (s *soakRun) loadNote() string {
	return fmt.Sprintf("through one `switchboard serve` (built from this tree) with two stdio upstreams, alpha (the test server, killed with SIGKILL every %s) and memory (@modelcontextprotocol/server-memory); "+
		"callers: alice 2 (50 ms apart), bob 1 (100 ms), carol 2 (10 ms, over `limits.rate.per_user` 15/s burst 30), each on a go-sdk streamable-HTTP session replaced every 50 requests, mixing echo, add, slow (0.2–1.2 s), fail, memory search/create, tools/prompts/resources lists and prompts/get; "+
		"a churner opening, using and closing a session every second; an abandoner sending initialize over raw HTTP and never finishing the handshake every 2 s; "+
		"a reload every %s (alternately `switchboard reload` and SIGHUP); gateway.session_timeout %s", killEvery, reloadEvery, sessionTimeout)
}

// machine describes where the soak ran.
func machine() string {
	load, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(load))
	la := ""
	if len(f) >= 3 {
		la = fmt.Sprintf(", load average %s %s %s at the end", f[0], f[1], f[2])
	}
	return fmt.Sprintf("%d CPUs, %s %s/%s%s", runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH, la)
}
