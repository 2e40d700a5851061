package control

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// Components are the in-process parts a [NewLocal] backend serves from.
// A command that needs only some of them (history needs only Store)
// leaves the others nil; a method that needs a missing one fails with an
// Internal error.
type Components struct {
	// Config returns the configuration in force.
	Config func() *config.Config
	// Pool, Catalog and Engine are the connected servers, their lists and
	// the execution engine.
	Pool    *upstream.Pool
	Catalog *catalog.Catalog
	Engine  *toolcall.Engine
	// Store is the history and state store.
	Store store.Store
	// Flush, if set, writes the calls recorded so far (the history is
	// written in batches); history reads call it first, so that a call
	// that has returned is in the history read after it.
	Flush func(context.Context) error
	// HistoryWriteFailures, if set, counts the records the history store
	// failed to write (store.Recorder.WriteFailures), for Status.
	HistoryWriteFailures func() int64
	// HistoryUnavailable, if set, says since when the history store has
	// been unavailable (store.Recorder.Unavailable), for Status.
	HistoryUnavailable func() (since time.Time, waiting int, err error)
	// StopFlag is the stop switch file in the state directory: Stop writes
	// it and Resume removes it, so sessions in other processes, which poll
	// it, stop and resume too.
	StopFlag string
	// Reload reloads the configuration; nil means reload is unsupported
	// (no daemon).
	Reload func(ctx context.Context) (ReloadReport, error)
	// Version, Address and StartedAt describe the serving process for
	// Status.
	Version   string
	Address   string
	StartedAt time.Time
}

// local is a Backend over in-process components.
type local struct {
	c     Components
	tasks taskBook // tasks its calls started (tasks.go)
}

var _ Backend = (*local)(nil)

// NewLocal returns a Backend served from in-process components: the CLI
// uses it when no daemon runs, and the daemon serves it on its socket.
func NewLocal(c Components) Backend { return &local{c: c} }

// listSettle is how long after a server connected Tool waits for
// it to list a tool before reporting it as not found (see Tool).
const listSettle = 2 * time.Second

func missing(what string) error {
	return fault.New(fault.Internal, "this backend has no %s", what)
}

func (l *local) config() (*config.Config, error) {
	if l.c.Config == nil {
		return nil, missing("configuration")
	}
	return l.c.Config(), nil
}

// Status implements Backend.
func (l *local) Status(context.Context) (Status, error) {
	st := Status{Version: l.c.Version, PID: os.Getpid(), Address: l.c.Address, StartedAt: l.c.StartedAt}
	if cfg, err := l.config(); err == nil && cfg.Source != "" {
		st.ConfigSource = AbsSource(cfg.Source)
	}
	if l.c.Engine != nil {
		st.Stopped = l.c.Engine.Stopped()
	}
	if l.c.HistoryWriteFailures != nil {
		st.HistoryWriteFailures = l.c.HistoryWriteFailures()
	}
	if l.c.HistoryUnavailable != nil {
		if since, waiting, err := l.c.HistoryUnavailable(); !since.IsZero() {
			o := &HistoryOutage{Since: since, Waiting: waiting}
			if err != nil {
				o.Error = err.Error()
			}
			st.HistoryUnavailable = o
		}
	}
	if l.c.StopFlag != "" {
		if _, err := os.Stat(l.c.StopFlag); err == nil {
			st.Stopped = true
		}
	}
	return st, nil
}

// AbsSource returns a configuration source as an absolute, clean path, so
// that two processes can tell whether they serve the same file; "" (the
// embedded default) stays "".
func AbsSource(src string) string {
	if src == "" {
		return ""
	}
	if abs, err := filepath.Abs(src); err == nil {
		return abs
	}
	return filepath.Clean(src)
}

// Servers implements Backend.
func (l *local) Servers(ctx context.Context) ([]ServerInfo, error) {
	cfg, err := l.config()
	if err != nil {
		return nil, err
	}
	if l.c.Pool == nil || l.c.Catalog == nil {
		return nil, missing("servers")
	}
	snaps := l.c.Pool.Snapshots()
	rows := make([]ServerInfo, 0, len(snaps))
	for _, snap := range snaps {
		row := ServerInfo{Snapshot: snap}
		if c, err := l.c.Pool.Client(snap.Server); err == nil {
			pctx, cancel := context.WithTimeout(ctx, cfg.Defaults.Health.PingTimeout)
			if lat, err := c.Ping(pctx); err == nil {
				row.Latency = lat
				row.LatencyMS = fmt.Sprintf("%.1f", float64(lat)/float64(time.Millisecond))
			}
			cancel()
		}
		row.Tools, row.Prompts, row.Resources = l.counts(snap.Server)
		rows = append(rows, row)
	}
	return rows, nil
}

// counts returns how many tools, prompts and resources a server lists.
func (l *local) counts(server string) (tools, prompts, resources int) {
	tools = len(l.c.Catalog.ServerTools(server))
	for _, p := range l.c.Catalog.Prompts() {
		if p.Server == server {
			prompts++
		}
	}
	for _, r := range l.c.Catalog.Resources() {
		if r.Server == server {
			resources++
		}
	}
	return tools, prompts, resources
}

// ServerAction implements Backend. Enable and disable change the state kept
// between runs (and the live supervisor, when there is a pool); refresh
// rediscovers the server's tools, prompts and resources.
func (l *local) ServerAction(ctx context.Context, action, name string) (ActionResult, error) {
	cfg, err := l.config()
	if err != nil {
		return ActionResult{}, err
	}
	srv, ok := cfg.Server(name)
	if !ok {
		return ActionResult{}, upstream.UnknownServer(cfg, name)
	}
	res := ActionResult{Server: name, Action: action}
	var sup *upstream.Supervisor
	if l.c.Pool != nil {
		sup, _ = l.c.Pool.Supervisor(name)
	}
	switch action {
	case "refresh":
		if l.c.Pool == nil || l.c.Catalog == nil {
			return res, missing("servers")
		}
		if _, err := l.c.Pool.WaitConnected(ctx, name, time.Minute); err != nil {
			return res, err
		}
		if err := l.c.Catalog.Refresh(ctx, name); err != nil {
			return res, err
		}
		res.Tools, res.Prompts, res.Resources = l.counts(name)
		return res, nil
	case "enable":
		if !srv.Enabled {
			return res, fault.New(fault.Config, "server %s is disabled in the configuration file %s", name, cfg.Source).
				WithSuggestions(fmt.Sprintf("set enabled: true for %s there", name))
		}
		if sup != nil {
			res.Changed = !sup.Snapshot().Enabled
			return res, sup.Enable(ctx)
		}
		if l.c.Store == nil {
			return res, missing("store")
		}
		rec, err := l.c.Store.LoadState(ctx, name)
		if err != nil {
			return res, err
		}
		res.Changed = rec.Disabled
		return res, l.c.Store.SaveState(ctx, name, upstream.Record{LastConnectedAt: rec.LastConnectedAt})
	case "disable":
		if sup != nil {
			res.Changed = sup.Snapshot().Enabled
			return res, sup.Disable(ctx)
		}
		if l.c.Store == nil {
			return res, missing("store")
		}
		rec, err := l.c.Store.LoadState(ctx, name)
		if err != nil {
			return res, err
		}
		res.Changed = !rec.Disabled
		rec.Disabled, rec.AutoDisabled, rec.DisabledAt, rec.Reason = true, false, time.Now().UTC(), "disabled by a user"
		return res, l.c.Store.SaveState(ctx, name, rec)
	}
	return res, fault.New(fault.Validation, "unknown server action %q; want enable, disable or refresh", action)
}

// Tools implements Backend.
func (l *local) Tools(ctx context.Context, server string) (ToolList, error) {
	cfg, err := l.config()
	if err != nil {
		return ToolList{}, err
	}
	if l.c.Pool == nil || l.c.Catalog == nil {
		return ToolList{}, missing("servers")
	}
	if server != "" {
		if _, ok := cfg.Server(server); !ok {
			return ToolList{}, upstream.UnknownServer(cfg, server)
		}
	}
	l.c.Catalog.EnsureFresh(ctx)
	list := ToolList{Tools: []ToolInfo{}}
	off := l.disabled()
	for _, t := range l.c.Catalog.Tools() {
		if (server == "" || t.Server == server) && !off[t.Server] {
			list.Tools = append(list.Tools, l.withTaskSupport(ToolInfoOf(t)))
		}
	}
	for _, c := range l.c.Catalog.Collisions() {
		col := Collision{Name: c.Name}
		in := server == ""
		for _, k := range c.Keys {
			col.Keys = append(col.Keys, k.Server+"/"+k.Name)
			in = in || k.Server == server
		}
		if in {
			list.Collisions = append(list.Collisions, col)
		}
	}
	list.Unavailable = l.unavailable(server)
	return list, nil
}

// ToolInfoOf returns the wire form of a catalog tool.
func ToolInfoOf(t catalog.Tool) ToolInfo {
	return ToolInfo{
		Server: t.Server, Name: t.Def.Name, Exposed: t.Exposed, Title: t.Def.Title,
		Description: t.Def.Description, InputSchema: t.Def.InputSchema, OutputSchema: t.Def.OutputSchema,
		Annotations: t.Def.Annotations, SchemaError: t.SchemaError,
	}
}

// Tool implements Backend. A tool that is not in the catalog is looked for
// in a fresh copy of the server's list, and reported as not found at once
// when that list can be taken as complete: the server does not announce
// list changes (tools.listChanged), or it connected listSettle ago or more,
// so that a change it announced has reached the catalog. A server that
// connected just now may still be adding tools (servers add them right
// after initialize, and over streamable HTTP a list_changed sent before
// the client's event stream opened is lost): then Tool waits until
// listSettle after the connection for the tool to appear, refetching on
// every change notification and every 250 ms.
func (l *local) Tool(ctx context.Context, server, name string) (ToolInfo, error) {
	if l.c.Pool == nil || l.c.Catalog == nil {
		return ToolInfo{}, missing("servers")
	}
	cat := l.c.Catalog
	t, err := cat.Tool(server, name)
	if err == nil {
		return l.withTaskSupport(ToolInfoOf(t)), nil
	}
	changed := cat.Changed()
	if rerr := cat.RefreshKind(ctx, server, catalog.KindTools); rerr != nil {
		return ToolInfo{}, rerr
	}
	if t, err = cat.Tool(server, name); err == nil {
		return l.withTaskSupport(ToolInfoOf(t)), nil
	}
	settled := l.toolsSettledAt(server)
	if !time.Now().Before(settled) {
		return ToolInfo{}, err
	}
	deadline := time.NewTimer(time.Until(settled))
	defer deadline.Stop()
	poll := time.NewTicker(250 * time.Millisecond)
	defer poll.Stop()
	for {
		select {
		case <-changed:
		case <-poll.C:
		case <-deadline.C:
			return ToolInfo{}, err
		case <-ctx.Done():
			return ToolInfo{}, fault.Wrap(fault.Cancelled, ctx.Err(), "waiting for the tool list of %s", server)
		}
		changed = cat.Changed()
		if rerr := cat.RefreshKind(ctx, server, catalog.KindTools); rerr != nil {
			return ToolInfo{}, rerr
		}
		if t, err = cat.Tool(server, name); err == nil {
			return l.withTaskSupport(ToolInfoOf(t)), nil
		}
	}
}

// toolsSettledAt is when the tool list of a server can be taken as
// complete (see Tool): listSettle after a server that announces list
// changes connected; for any other server, or one not connected, the zero
// time (now).
func (l *local) toolsSettledAt(server string) time.Time {
	c, err := l.c.Pool.Client(server)
	if err != nil || c.Capabilities().Tools == nil || !c.Capabilities().Tools.ListChanged {
		return time.Time{}
	}
	sup, ok := l.c.Pool.Supervisor(server)
	if !ok {
		return time.Time{}
	}
	return sup.Snapshot().LastConnectedAt.Add(listSettle)
}

// Call implements Backend.
func (l *local) Call(ctx context.Context, req CallRequest) (*CallResult, error) {
	if l.c.Engine == nil {
		return nil, missing("engine")
	}
	if req.LogLevel != "" {
		//lint:ignore SA1019 shown to the person who made the call.
		ctx = upstream.WithLogLevel(ctx, mcp.LoggingLevel(req.LogLevel))
	}
	res, err := l.c.Engine.Call(ctx, toolcall.Request{
		Server:       req.Server,
		Tool:         req.Tool,
		RawArguments: req.Arguments,
		Source:       toolcall.Source(req.Source),
		Identity:     req.Identity,
		Origin:       req.Origin,
		Timeout:      req.Timeout,
		Budget:       toolcall.Budget{MaxDuration: req.Budget.MaxDuration, MaxCost: req.Budget.MaxCost},
		OnProgress:   req.OnProgress,
		Task:         req.Task,
	})
	if err != nil {
		return nil, err
	}
	l.booked(toolcall.Request{Server: req.Server, Tool: req.Tool, RawArguments: req.Arguments, Source: toolcall.Source(req.Source), Identity: req.Identity}, res)
	return CallResultOf(res), nil
}

// CallResultOf returns the wire form of a call's result.
func CallResultOf(r *toolcall.Result) *CallResult {
	return &CallResult{
		ID: r.ID, Status: string(r.Status), Result: r.CallToolResult,
		ContentType: string(r.ContentType), Display: string(r.Display),
		Duration: r.Duration, Retries: r.Retries, Bytes: r.Bytes,
		Truncated: r.Truncated, Partial: r.Partial, BudgetExceeded: r.BudgetExceeded,
		Missing: r.Missing, Cost: r.Cost, Progress: r.Progress, OutputError: r.OutputError, Task: r.Task,
	}
}

// History implements Backend.
func (l *local) History(ctx context.Context, f store.CallFilter) ([]store.CallRecord, error) {
	if l.c.Store == nil {
		return nil, missing("store")
	}
	l.flush(ctx)
	ctx, cancel := context.WithTimeout(ctx, historyReadTimeout)
	defer cancel()
	calls, err := l.c.Store.Calls(ctx, f)
	if calls == nil && err == nil {
		calls = []store.CallRecord{}
	}
	return calls, readErr(ctx, err)
}

// historyReadTimeout bounds a read of the history: a database that does
// not answer (hung, or the network dropping its packets) is reported
// rather than waited for.
var historyReadTimeout = 10 * time.Second

// readErr says, of a history read that failed because ctx's deadline
// passed, that the database did not answer in time.
func readErr(ctx context.Context, err error) error {
	if err == nil || !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return err
	}
	return fault.Wrap(fault.Timeout, err, "reading the history: its database did not answer within %s", historyReadTimeout).
		WithSuggestions("check that the history's database (history.store) is up and reachable; `switchboard servers` says since when the daemon cannot write to it")
}

// HistoryCall implements Backend; it accepts the short ID the history
// table shows, or any other start of an ID that only one call has.
func (l *local) HistoryCall(ctx context.Context, id string) (store.CallRecord, error) {
	if l.c.Store == nil {
		return store.CallRecord{}, missing("store")
	}
	l.flush(ctx)
	ctx, cancel := context.WithTimeout(ctx, historyReadTimeout)
	defer cancel()
	c, err := l.c.Store.Call(ctx, id)
	if err == nil || id == "" || len(id) >= 36 || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return c, readErr(ctx, err)
	}
	// A short ID: the calls it starts, up to one more than a message lists.
	matches, lerr := l.c.Store.Calls(ctx, store.CallFilter{IDPrefix: id, Limit: maxListed + 1})
	switch {
	case lerr != nil || len(matches) == 0:
		return c, err
	case len(matches) == 1:
		return matches[0], nil
	}
	var ids []string
	for _, m := range matches[:min(len(matches), maxListed)] {
		ids = append(ids, m.ID)
	}
	count, more := strconv.Itoa(len(matches)), ""
	if len(matches) > maxListed {
		count, more = "more than "+strconv.Itoa(maxListed), ", …"
	}
	return store.CallRecord{}, fault.New(fault.Validation, "call id %q is ambiguous: %s recorded calls start with it (%s%s)",
		id, count, strings.Join(ids, ", "), more).
		WithSuggestions("give more of the id, or all of it, as `switchboard history` shows it with --json")
}

// maxListed is how many calls an ambiguous short ID's error names.
const maxListed = 3

// maxFlushWait bounds how long a history read waits for the calls
// recorded before it to be written.
const maxFlushWait = time.Second

// flush writes the calls recorded so far, waiting at most maxFlushWait; a
// failed write is the recorder's to report, and the read goes on.
func (l *local) flush(ctx context.Context) {
	if l.c.Flush == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, maxFlushWait)
	defer cancel()
	_ = l.c.Flush(ctx)
}

// Stop implements Backend.
func (l *local) Stop(context.Context) (int, error) {
	if l.c.StopFlag != "" {
		if err := os.MkdirAll(filepath.Dir(l.c.StopFlag), 0o700); err != nil {
			return 0, fmt.Errorf("setting the stop switch: %w", err)
		}
		if err := os.WriteFile(l.c.StopFlag, []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o600); err != nil {
			return 0, fmt.Errorf("setting the stop switch: %w", err)
		}
	}
	if l.c.Engine != nil {
		return l.c.Engine.Stop(), nil
	}
	return 0, nil
}

// Resume implements Backend.
func (l *local) Resume(context.Context) (bool, error) {
	was := false
	if l.c.StopFlag != "" {
		err := os.Remove(l.c.StopFlag)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return false, fmt.Errorf("lifting the stop switch: %w", err)
		}
		was = err == nil
	}
	if l.c.Engine != nil {
		was = was || l.c.Engine.Stopped()
		l.c.Engine.Resume()
	}
	return was, nil
}

// Reload implements Backend.
func (l *local) Reload(ctx context.Context) (ReloadReport, error) {
	if l.c.Reload == nil {
		return ReloadReport{}, fault.New(fault.Config, "no daemon is running, so there is nothing to reload").
			WithSuggestions("start one with 'switchboard serve'")
	}
	return l.c.Reload(ctx)
}
