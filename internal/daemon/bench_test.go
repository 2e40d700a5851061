package daemon

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/builtin/taskapi"
	"github.com/switchboard-mcp/switchboard/internal/builtin/tasks"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// The task server through the gateway, as `switchboard serve`'s embedded
// default runs it: the built-in task server in-process (a fresh
// tasks.Server on in-memory transports per dial, through
// DialOptions.NewTransport), in front of the reference task API on a
// loopback port keeping its tasks in a SQLite file. Clients call it over
// streamable HTTP with a bearer token, whose user the gateway passes to the
// task server in _meta.
//
//	go test -run '^$' -bench BenchmarkTasksThroughGateway -benchtime 5s ./internal/daemon/
//
// -tasks-backend-idle N gives the task server an HTTP client keeping N idle
// connections to the backend (serve's task server uses http.Client{}, which
// keeps 2), to measure what connection reuse would change:
//
//	go test -run '^$' -bench BenchmarkTasksThroughGateway ./internal/daemon/ -args -tasks-backend-idle 64

var tasksBackendIdle = flag.Int("tasks-backend-idle", 0,
	"idle connections per host of the task server's backend client in BenchmarkTasksThroughGateway (0: the default client, as serve runs it)")

const (
	benchServer       = "tasks"
	benchServiceToken = "bench-service-token-0123456789"
	// Two users, so that list_tasks reads a fixed number of tasks however
	// many create_task has made.
	benchCreateUser  = "bench-create"
	benchCreateToken = "bench-create-token"
	benchListUser    = "bench-list"
	benchListToken   = "bench-list-token"
	// benchListTasks is how many tasks list_tasks returns.
	benchListTasks = 10
)

// tasksGateway is a daemon serving the built-in task server.
type tasksGateway struct {
	url string
	// client is the HTTP client the sessions use; it keeps enough idle
	// connections for the busiest benchmark.
	client *http.Client
}

// startTasksGateway runs the reference task API and a daemon whose one
// server is the in-process task server in front of it, until tb ends.
func startTasksGateway(tb testing.TB) *tasksGateway {
	tb.Helper()
	ctx := context.Background()
	// A short path: unix socket paths are limited to ~100 bytes.
	dir, err := os.MkdirTemp("", "sbt")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })

	// The reference task API on SQLite, as the embedded default runs it.
	db, err := store.OpenTasks(ctx, filepath.Join(dir, "tasks.db"), store.Options{})
	if err != nil {
		tb.Fatalf("opening the task store: %v", err)
	}
	tb.Cleanup(func() { db.Close() })
	h, err := taskapi.NewHandler(taskapi.Options{Store: db, ServiceToken: benchServiceToken})
	if err != nil {
		tb.Fatal(err)
	}
	api := httptest.NewServer(h)
	tb.Cleanup(api.Close)
	var topts tasks.Options
	if *tasksBackendIdle > 0 {
		btr := http.DefaultTransport.(*http.Transport).Clone()
		btr.MaxIdleConnsPerHost = *tasksBackendIdle
		tb.Cleanup(btr.CloseIdleConnections)
		topts.HTTPClient = &http.Client{Transport: btr}
	}
	settings := tasks.Settings{ServiceAuthToken: benchServiceToken, BackendURL: api.URL, LogLevel: "WARNING",
		Port: 3000, BackendTimeout: 30 * time.Second, BackendMaxRetries: 2}

	cfg := testConfig(config.Server{
		Name: benchServer, Transport: config.TransportBuiltin, Enabled: true,
		LoadTools: true, LoadPrompts: true, LoadResources: true,
		ConnectTimeout: 10 * time.Second, RequestTimeout: 10 * time.Second, MaxRetries: 2,
	})
	cfg.Gateway.Tokens = []config.Token{
		{Name: "create", User: benchCreateUser, Secret: benchCreateToken},
		{Name: "list", User: benchListUser, Secret: benchListToken},
	}
	st, err := store.OpenSQLite(ctx, filepath.Join(dir, "switchboard.db"), store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	d, err := New(Options{Config: cfg, Store: st, StateDir: dir, Version: "bench", NoControl: true,
		DialOptions: func(server string, o *upstream.DialOptions) {
			if server != benchServer {
				return
			}
			// As internal/cli/embedded.go's transport.
			o.NewTransport = func(ctx context.Context) (mcp.Transport, error) {
				srv, err := tasks.NewServer(settings, topts)
				if err != nil {
					return nil, err
				}
				ct, stt := mcp.NewInMemoryTransports()
				if _, err := srv.Connect(context.WithoutCancel(ctx), stt, nil); err != nil {
					return nil, fmt.Errorf("starting the built-in %s server: %w", server, err)
				}
				return ct, nil
			}
		}})
	if err != nil {
		tb.Fatal(err)
	}
	if err := d.Listen(); err != nil {
		tb.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- d.Run(runCtx) }()
	tb.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				tb.Errorf("Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			tb.Error("the daemon did not shut down within 30s")
		}
		st.Close()
	})

	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	tb.Cleanup(tr.CloseIdleConnections)
	return &tasksGateway{url: "http://" + d.Addr(), client: &http.Client{Transport: tr}}
}

// session opens a client session on /mcp with token, closed when tb
// ends, and waits until the gateway lists the task server's tools.
func (g *tasksGateway) session(tb testing.TB, token string) *mcp.ClientSession {
	tb.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "bench-client", Version: "1"}, nil)
	h := http.Header{"Authorization": {"Bearer " + token}}
	tr := &mcp.StreamableClientTransport{Endpoint: g.url + "/mcp", MaxRetries: -1,
		HTTPClient: &http.Client{Transport: headerTransport{h, g.client.Transport}}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, tr, nil)
	if err != nil {
		tb.Fatalf("connecting to %s/mcp: %v", g.url, err)
	}
	tb.Cleanup(func() { cs.Close() })

	want := []string{benchServer + "__" + tasks.ToolCreateTask, benchServer + "__" + tasks.ToolListTasks}
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			tb.Fatalf("tools/list: %v", err)
		}
		var names []string
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
		}
		if !slices.ContainsFunc(want, func(n string) bool { return !slices.Contains(names, n) }) {
			return cs
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the gateway never listed %v; it lists %v", want, names)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// callTask calls a task tool through the gateway and returns the result's
// JSON object, or an error saying why the call failed.
func callTask(ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any) (map[string]any, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: benchServer + "__" + tool, Arguments: args})
	if err != nil {
		return nil, fmt.Errorf("calling %s: %w", tool, err)
	}
	if res.IsError {
		return nil, fmt.Errorf("%s failed: %s", tool, textOf(res))
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(textOf(res)), &m); err != nil {
		return nil, fmt.Errorf("%s: result is not a JSON object: %w: %q", tool, err, textOf(res))
	}
	return m, nil
}

// TestTasksThroughGatewayFixture checks the benchmark's fixture: calls
// reach the in-process task server and its backend, each token's user
// owns the tasks it creates, and neither user sees the other's.
func TestTasksThroughGatewayFixture(t *testing.T) {
	t.Parallel()
	g := startTasksGateway(t)
	ctx := context.Background()
	creator, lister := g.session(t, benchCreateToken), g.session(t, benchListToken)

	task, err := callTask(ctx, creator, tasks.ToolCreateTask, map[string]any{"title": "through the gateway"})
	if err != nil {
		t.Fatal(err)
	}
	if task["user_id"] != benchCreateUser || task["title"] != "through the gateway" {
		t.Errorf("created task: got %v, want the title, owned by %s", task, benchCreateUser)
	}
	for _, c := range []struct {
		cs   *mcp.ClientSession
		user string
		want int
	}{{creator, benchCreateUser, 1}, {lister, benchListUser, 0}} {
		list, err := callTask(ctx, c.cs, tasks.ToolListTasks, map[string]any{})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := list["tasks"].([]any); len(got) != c.want {
			t.Errorf("list_tasks as %s: got %v, want %d tasks", c.user, list, c.want)
		}
	}
}

// BenchmarkTasksThroughGateway measures task server calls through the
// gateway at 1 and 16 callers sharing one client session: create_task
// (an INSERT) and list_tasks (reading benchListTasks tasks). Besides
// ns/op (wall time over calls), it reports calls/s and the p50 and p99
// latency of a call.
func BenchmarkTasksThroughGateway(b *testing.B) {
	g := startTasksGateway(b)
	ctx := context.Background()
	creator, lister := g.session(b, benchCreateToken), g.session(b, benchListToken)
	for i := range benchListTasks {
		if _, err := callTask(ctx, lister, tasks.ToolCreateTask, map[string]any{"title": fmt.Sprintf("task %d", i)}); err != nil {
			b.Fatal(err)
		}
	}

	for _, bc := range []struct {
		tool string
		cs   *mcp.ClientSession
		args func(i int64) map[string]any
		// check says what is wrong with a result, or "".
		check func(m map[string]any) string
	}{
		{
			tool: tasks.ToolCreateTask, cs: creator,
			args: func(i int64) map[string]any {
				return map[string]any{"title": fmt.Sprintf("bench %d", i), "priority": "High"}
			},
			check: func(m map[string]any) string {
				if m["user_id"] != benchCreateUser || m["priority"] != "High" {
					return fmt.Sprintf("got %v, want a High task owned by %s", m, benchCreateUser)
				}
				return ""
			},
		},
		{
			tool: tasks.ToolListTasks, cs: lister,
			args: func(int64) map[string]any { return map[string]any{} },
			check: func(m map[string]any) string {
				if got, _ := m["tasks"].([]any); len(got) != benchListTasks {
					return fmt.Sprintf("got %d tasks, want %d", len(got), benchListTasks)
				}
				return ""
			},
		},
	} {
		for _, callers := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/callers=%d", bc.tool, callers), func(b *testing.B) {
				var (
					next      atomic.Int64
					wg        sync.WaitGroup
					latencies = make([][]time.Duration, callers)
				)
				b.ResetTimer()
				for c := range callers {
					wg.Go(func() {
						for {
							i := next.Add(1)
							if i > int64(b.N) {
								return
							}
							start := time.Now()
							m, err := callTask(ctx, bc.cs, bc.tool, bc.args(i))
							latencies[c] = append(latencies[c], time.Since(start))
							if err != nil {
								b.Error(err)
								return
							}
							if msg := bc.check(m); msg != "" {
								b.Errorf("%s: %s", bc.tool, msg)
								return
							}
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				all := slices.Concat(latencies...)
				slices.Sort(all)
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
				b.ReportMetric(quantileMs(all, 0.50), "p50-ms")
				b.ReportMetric(quantileMs(all, 0.99), "p99-ms")
			})
		}
	}
}

// quantileMs returns the q quantile of sorted durations, in milliseconds.
func quantileMs(sorted []time.Duration, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := min(int(q*float64(len(sorted))), len(sorted)-1)
	return float64(sorted[i]) / float64(time.Millisecond)
}
