package web

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// pageData is what every page's layout needs.
type pageData struct {
	Title     string
	Nav       string
	CSRF      string
	User      string
	LoginUsed bool
	Stopped   bool
	Version   string
	// HistoryWriteFailures counts the call records the daemon's history
	// could not write (control.Status): every page says so, as servers
	// does on the command line, since the overview's charts and the
	// history miss those calls.
	HistoryWriteFailures int64
	// HistoryUnavailable is set while the daemon's history store cannot
	// be reached (control.Status): every page says since when.
	HistoryUnavailable *control.HistoryOutage
}

func (p *pageData) base() *pageData { return p }

type page interface{ base() *pageData }

// templateFuncs are the helpers the templates use.
var templateFuncs = template.FuncMap{
	"toolURL":     toolURL,
	"promptURL":   promptURL,
	"resourceURL": resourceURL,
	"templateURL": templateURL,
	"time": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05")
	},
	"dur": func(d time.Duration) string {
		if d <= 0 {
			return ""
		}
		return d.Round(time.Millisecond).String()
	},
	"deref": func(b *bool) bool { return b != nil && *b },
	// field bundles a form field for the editfield and editarea
	// templates.
	"field": func(key, label, value string, errs map[string][]string, help string, required bool) formField {
		return formField{Key: key, Label: label, Value: value, Errors: errs[key], Help: help, Required: required}
	},
	"short": func(s string) string {
		if len(s) > 8 {
			return s[:8]
		}
		return s
	},
}

// formField is one field of the server form.
type formField struct {
	Key, Label, Value, Help string
	Errors                  []string
	Required                bool
}

// parseTemplates returns each page parsed with the layout. The pages are
// embedded and their functions fixed, so a process parses them once and
// its consoles share them (a parsed html/template executes concurrently):
// parsing costs milliseconds of CPU, which the tests paid at every daemon
// start.
var parseTemplates = sync.OnceValues(parsePages)

// parsePages parses each page with the layout.
func parsePages() (map[string]*template.Template, error) {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	pages := map[string]*template.Template{}
	for _, n := range names {
		name := strings.TrimSuffix(path.Base(n), ".html")
		if name == "layout" {
			continue
		}
		t, err := template.New(name).Funcs(templateFuncs).ParseFS(templateFS, "templates/layout.html", n)
		if err != nil {
			return nil, fmt.Errorf("parsing the %s page: %w", name, err)
		}
		pages[name] = t
	}
	return pages, nil
}

// render executes a page with the layout, filling the layout's data.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name string, data page) {
	t, ok := c.pages[name]
	if !ok {
		http.Error(w, "no page "+name, http.StatusInternalServerError)
		return
	}
	se := sessionOf(r)
	b := data.base()
	b.Nav, b.CSRF, b.User, b.LoginUsed, b.Version = name, se.csrf, se.user, se.authed, c.opts.Version
	if b.Title == "" {
		b.Title = name
	}
	if st, err := c.opts.Backend.Status(r.Context()); err == nil {
		b.Stopped, b.HistoryWriteFailures, b.HistoryUnavailable = st.Stopped, st.HistoryWriteFailures, st.HistoryUnavailable
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", data); err != nil {
		c.logger.Error("rendering a console page", "page", name, logKeyErr, err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// errorData is the error page's data.
type errorData struct {
	pageData
	Error *errorView
}

func (c *Console) renderError(w http.ResponseWriter, r *http.Request, status int, err error) {
	c.render(w, r, status, "error", &errorData{pageData: pageData{Title: "Error"}, Error: newErrorView(err)})
}

// toolURL is the tool page of a server's tool.
func toolURL(server, tool string) string {
	return Prefix + "tool?server=" + url.QueryEscape(server) + "&name=" + url.QueryEscape(tool)
}

// serverView is one server as the page shows it, in the page and in
// "server" events.
type serverView struct {
	Server         string `json:"server"`
	Transport      string `json:"transport"`
	State          string `json:"state"`
	Status         string `json:"status"`
	Label          string `json:"label"`
	Enabled        bool   `json:"enabled"`
	AutoDisabled   bool   `json:"auto_disabled"`
	DisabledReason string `json:"disabled_reason"`
	Since          string `json:"since"`
	LatencyMS      string `json:"latency_ms"`
	Failures       int    `json:"consecutive_failures"`
	Retry          string `json:"retry"`
	LastError      string `json:"last_error"`
	Stderr         string `json:"stderr"`
	// Tools, Prompts and Resources count what the server lists; nil
	// (shown blank, as its latency) for a disabled server, which lists
	// nothing: the catalog keeps what it listed before.
	Tools     *int   `json:"tools"`
	Prompts   *int   `json:"prompts"`
	Resources *int   `json:"resources"`
	Hint      string `json:"hint"` // what to try about LastError: its suggestions
	// SignIn offers the "Sign in" button: the server needs a sign-in and
	// the console can run one (Options.SignIn).
	SignIn bool `json:"sign_in"`
}

// serverView builds a server's view; counts come from the catalog.
func (c *Console) serverView(si control.ServerInfo) serverView {
	s := si.Snapshot
	v := serverView{
		Server: s.Server, Transport: s.Transport, State: string(s.State), Status: string(s.Status),
		Enabled: s.Enabled, AutoDisabled: s.AutoDisabled, DisabledReason: s.DisabledReason,
		LatencyMS: si.LatencyMS, Failures: s.ConsecutiveFailures, LastError: s.LastError, Stderr: s.Stderr,
	}
	if len(s.Suggestions) > 0 && s.LastError != "" {
		v.Hint = "Try: " + strings.Join(s.Suggestions, "; ")
	}
	if !s.Since.IsZero() {
		v.Since = s.Since.UTC().Format("15:04:05")
	}
	if v.LatencyMS == "" && s.Latency > 0 && s.State == upstream.StateConnected {
		v.LatencyMS = fmt.Sprintf("%.1f", float64(s.Latency)/float64(time.Millisecond))
	}
	if s.Retrying {
		v.Retry = fmt.Sprintf("retry %d at %s", s.Attempt, s.NextRetryAt.UTC().Format("15:04:05"))
	}
	v.Label = string(s.State)
	switch {
	case !s.Enabled && s.AutoDisabled:
		v.Label = "auto-disabled"
	case !s.Enabled:
		v.Label = "disabled"
	}
	if s.Enabled {
		tools, prompts, resources := c.counts(s.Server)
		v.Tools, v.Prompts, v.Resources = &tools, &prompts, &resources
	}
	v.SignIn = s.State == upstream.StateNeedsAuth && s.Enabled && c.opts.SignIn != nil
	return v
}

// serversData is the servers page's data.
type serversData struct {
	pageData
	Servers      []serverView
	AutoDisabled []serverView
	Error        *errorView
	Editable     bool
	Removed      string
}

// serversPage shows every server with its health.
func (c *Console) serversPage(w http.ResponseWriter, r *http.Request) {
	d := &serversData{pageData: pageData{Title: "Servers"}, Editable: c.opts.Editor != nil, Removed: r.URL.Query().Get("removed")}
	infos, err := c.servers(r)
	if err != nil {
		d.Error = newErrorView(err)
	}
	for _, si := range infos {
		v := c.serverView(si)
		d.Servers = append(d.Servers, v)
		if v.AutoDisabled && !v.Enabled {
			d.AutoDisabled = append(d.AutoDisabled, v)
		}
	}
	c.render(w, r, http.StatusOK, "servers", d)
}

// apiServers returns every server's view (the page resynchronises with it
// when its event stream opens).
func (c *Console) apiServers(w http.ResponseWriter, r *http.Request) {
	infos, err := c.servers(r)
	if err != nil {
		writeFault(w, statusOf(err), err)
		return
	}
	out := []serverView{}
	for _, si := range infos {
		out = append(out, c.serverView(si))
	}
	st, _ := c.opts.Backend.Status(r.Context())
	writeJSON(w, http.StatusOK, map[string]any{"servers": out, "stopped": st.Stopped})
}

// servers returns every server: the pool's snapshots when the console has
// them, otherwise Backend.Servers.
func (c *Console) servers(r *http.Request) ([]control.ServerInfo, error) {
	if c.opts.Snapshots == nil {
		return c.opts.Backend.Servers(r.Context())
	}
	snaps := c.opts.Snapshots()
	out := make([]control.ServerInfo, 0, len(snaps))
	for _, s := range snaps {
		out = append(out, control.ServerInfo{Snapshot: s})
	}
	return out, nil
}

// apiServerAction enables, disables or refreshes a server.
func (c *Console) apiServerAction(w http.ResponseWriter, r *http.Request) {
	name, action := r.PathValue("name"), r.PathValue("action")
	if action == "signin" {
		c.apiSignIn(w, r, name)
		return
	}
	if !slices.Contains([]string{"enable", "disable", "refresh"}, action) {
		writeFault(w, http.StatusNotFound, fault.New(fault.NotFound, "unknown server action %q; want enable, disable, refresh or signin", action))
		return
	}
	res, err := c.opts.Backend.ServerAction(r.Context(), action, name)
	if err != nil {
		writeFault(w, statusOf(err), err)
		return
	}
	c.logger.Info("console server action", logKeyServer, name, "action", action, "user", sessionOf(r).user)
	writeJSON(w, http.StatusOK, res)
}

// apiStop sets the stop switch.
func (c *Console) apiStop(w http.ResponseWriter, r *http.Request) {
	n, err := c.opts.Backend.Stop(r.Context())
	if err != nil {
		writeFault(w, statusOf(err), err)
		return
	}
	c.logger.Warn("stop switch set from the console", "cancelled", n, "user", sessionOf(r).user)
	c.publishStop(true)
	writeJSON(w, http.StatusOK, map[string]any{"stopped": true, "cancelled": n})
}

// apiResume lifts the stop switch.
func (c *Console) apiResume(w http.ResponseWriter, r *http.Request) {
	was, err := c.opts.Backend.Resume(r.Context())
	if err != nil {
		writeFault(w, statusOf(err), err)
		return
	}
	c.logger.Info("stop switch lifted from the console", "user", sessionOf(r).user)
	c.publishStop(false)
	writeJSON(w, http.StatusOK, map[string]any{"stopped": false, "was_stopped": was})
}

// toolsData is the catalog page's data.
type toolsData struct {
	pageData
	Kind        string
	Server      string
	Query       string
	Servers     []string
	Tools       []control.ToolInfo
	Prompts     []promptRow
	Resources   []resourceRow
	Unavailable []string
	Error       *errorView
}

type promptRow struct {
	Server, Name, Title, Description string
	Args                             []*mcp.PromptArgument
}

type resourceRow struct {
	Server, Name, URI, MIME, Description string
	Template                             bool
}

// matches reports whether a search matches any of the texts.
func matches(q string, texts ...string) bool {
	if q == "" {
		return true
	}
	q = strings.ToLower(q)
	for _, t := range texts {
		if strings.Contains(strings.ToLower(t), q) {
			return true
		}
	}
	return false
}

// toolsPage lists tools, prompts or resources, by server and search.
func (c *Console) toolsPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d := &toolsData{pageData: pageData{Title: "Tools"}, Kind: cmp.Or(q.Get("kind"), "tools"), Server: q.Get("server"), Query: strings.TrimSpace(q.Get("q"))}
	d.Servers = c.opts.Catalog.Servers()
	if d.Server != "" && !slices.Contains(d.Servers, d.Server) {
		c.renderError(w, r, http.StatusNotFound, upstream.UnknownServer(c.opts.Config(), d.Server))
		return
	}
	cat := c.opts.Catalog
	switch d.Kind {
	case "prompts":
		d.Title = "Prompts"
		for _, p := range cat.Prompts() {
			if (d.Server == "" || p.Server == d.Server) && matches(d.Query, p.Def.Name, p.Def.Title, p.Def.Description) {
				d.Prompts = append(d.Prompts, promptRow{Server: p.Server, Name: p.Def.Name, Title: p.Def.Title, Description: p.Def.Description, Args: p.Def.Arguments})
			}
		}
	case "resources":
		d.Title = "Resources"
		for _, rs := range cat.Resources() {
			if (d.Server == "" || rs.Server == d.Server) && matches(d.Query, rs.Def.Name, rs.Def.URI, rs.Def.Description) {
				d.Resources = append(d.Resources, resourceRow{Server: rs.Server, Name: rs.Def.Name, URI: rs.Def.URI, MIME: rs.Def.MIMEType, Description: rs.Def.Description})
			}
		}
		for _, rt := range cat.ResourceTemplates() {
			if (d.Server == "" || rt.Server == d.Server) && matches(d.Query, rt.Def.Name, rt.Def.URITemplate, rt.Def.Description) {
				d.Resources = append(d.Resources, resourceRow{Server: rt.Server, Name: rt.Def.Name, URI: rt.Def.URITemplate, MIME: rt.Def.MIMEType, Description: rt.Def.Description, Template: true})
			}
		}
	default:
		d.Kind = "tools"
		list, err := c.opts.Backend.Tools(r.Context(), d.Server)
		if err != nil {
			d.Error = newErrorView(err)
		}
		for _, t := range list.Tools {
			if matches(d.Query, t.Name, t.Exposed, t.Title, t.Description) {
				d.Tools = append(d.Tools, t)
			}
		}
		d.Unavailable = list.Unavailable
	}
	c.render(w, r, http.StatusOK, "tools", d)
}

// toolData is the tool page's data.
type toolData struct {
	pageData
	Tool       control.ToolInfo
	Schema     string // compact JSON, for the form builder
	SchemaText string // indented, for reading
	Call       string
	Running    bool
	Args       string
	Result     *resultView
	CallError  *errorView
	// CLI and Curl make the same call from a shell: with the call's
	// arguments once there is a call, else with none.
	CLI        string
	Curl       string
	TokensUsed bool
	// Disabled is set when the tool's server is disabled: the catalog
	// keeps its tools, but a call fails until it is enabled.
	Disabled bool
}

// toolPage shows a tool's schema and its "Try it" form, and, with
// ?call=ID, the outcome of a call made from it.
func (c *Console) toolPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	server, name := q.Get("server"), q.Get("name")
	if server == "" || name == "" {
		c.renderError(w, r, http.StatusBadRequest, fault.New(fault.Validation, "name a server and a tool").
			WithSuggestions("pick a tool from the Tools page"))
		return
	}
	ti, err := c.opts.Backend.Tool(r.Context(), server, name)
	if err != nil {
		c.renderError(w, r, statusOf(err), err)
		return
	}
	d := &toolData{pageData: pageData{Title: ti.Name}, Tool: ti, Args: "{}"}
	schema := ti.InputSchema
	if schema == nil {
		schema = map[string]any{"type": "object"}
	}
	d.Schema = string(mustJSON(schema))
	d.SchemaText = prettyJSON(mustJSON(schema))
	if id := q.Get("call"); id != "" {
		wc, ok := c.calls.get(id, sessionOf(r).id)
		if !ok {
			d.CallError = newErrorView(fault.New(fault.NotFound, "the result of call %s is no longer held", id).
				WithSuggestions("results stay for an hour after a call; the History page lists every call"))
		} else {
			d.Call, d.Args = wc.id, string(wc.args)
			wc.mu.Lock()
			if wc.done {
				d.Result = newResultView(wc.result, wc.err)
				d.Result.TaskServer = ti.Server
				if wc.cancelled && d.Result.Error != nil {
					d.Result.Status = "cancelled"
				}
			} else {
				d.Running = true
			}
			wc.mu.Unlock()
		}
	}
	if infos, err := c.servers(r); err == nil {
		for _, si := range infos {
			d.Disabled = d.Disabled || si.Server == ti.Server && !si.Enabled
		}
	}
	cfg := c.opts.Config()
	d.TokensUsed = cfg.Gateway.AuthRequired()
	d.CLI = cliCall(ti.Server, ti.Name, json.RawMessage(d.Args))
	d.Curl = curlCall(gatewayEndpoint(r), ti.Exposed, json.RawMessage(d.Args), cfg.Gateway.Stateless, cfg.Gateway.AuthRequired())
	c.render(w, r, http.StatusOK, "tool", d)
}

// gatewayEndpoint is the gateway's /mcp URL as the browser reached the
// console (the same address serves both).
func gatewayEndpoint(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + "/mcp"
}

// historyData is the history page's data.
type historyData struct {
	pageData
	Filter store.CallFilter
	Within string
	Since  string
	Calls  []store.CallRecord
	Older  string
	// Newest leads back to the first page (the same filters) from an
	// older one.
	Newest string
	// Unknown says, when nothing matched, that no server has the name
	// the server filter gives, and the closest names.
	Unknown string
	Error   *errorView
	Sources []string
	Status  []string
}

// withinChoices are the history page's time filters.
var withinChoices = map[string]time.Duration{
	"15m": 15 * time.Minute, "1h": time.Hour, "24h": 24 * time.Hour, "7d": 7 * 24 * time.Hour, "30d": 30 * 24 * time.Hour,
}

// historyLimit is the number of calls a history page shows.
const historyLimit = 50

// historyPage shows recorded calls with filters.
func (c *Console) historyPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d := &historyData{pageData: pageData{Title: "History"},
		Filter: store.CallFilter{
			Server: q.Get("server"), Tool: q.Get("tool"), Status: q.Get("status"),
			Source: q.Get("source"), Identity: q.Get("identity"), Limit: historyLimit, BeforeID: q.Get("before"),
		},
		Within:  q.Get("within"),
		Since:   q.Get("since"),
		Sources: []string{"cli", "gateway", "hook", "document", "agent", string(Source)},
		Status:  []string{"success", "error", "timeout", "cancelled", "output_invalid", "task", "input_required"},
	}
	if dur, ok := withinChoices[d.Within]; ok {
		d.Filter.Since = c.now().Add(-dur)
	}
	if d.Since != "" {
		t, err := parseSince(d.Since)
		if err != nil {
			d.Error = newErrorView(err)
		} else if t.After(d.Filter.Since) {
			d.Filter.Since = t
		}
	}
	if d.Error == nil {
		// One more than the page, to know whether there is an older one.
		page := d.Filter
		page.Limit++
		calls, err := c.opts.Backend.History(r.Context(), page)
		if err != nil {
			d.Error = newErrorView(err)
		}
		more := len(calls) > historyLimit
		calls = calls[:min(len(calls), historyLimit)]
		d.Calls = calls
		if _, ok := c.opts.Config().Server(d.Filter.Server); len(calls) == 0 && d.Filter.Server != "" && !ok {
			// The history keeps the calls of servers removed since, so
			// the name is no error; but with nothing found, a mistyped
			// name would read as "no calls".
			fe := fault.As(upstream.UnknownServer(c.opts.Config(), d.Filter.Server))
			d.Unknown = strings.Join(append([]string{fe.Message}, fe.Suggestions...), "; ")
		}
		if more {
			next := r.URL.Query()
			next.Set("before", calls[len(calls)-1].ID)
			d.Older = Prefix + "history?" + next.Encode()
		}
	}
	if d.Filter.BeforeID != "" {
		first := r.URL.Query()
		first.Del("before")
		d.Newest = Prefix + "history"
		if len(first) > 0 {
			d.Newest += "?" + first.Encode()
		}
	}
	c.render(w, r, http.StatusOK, "history", d)
}

// parseSince reads the history's "since" field: RFC 3339, or the
// datetime-local form (taken as UTC).
func parseSince(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fault.New(fault.Validation, "since %q is not a time", s).
		WithSuggestions("use 2006-01-02T15:04 (UTC) or RFC 3339")
}

// historyDetail is the history detail page's data.
type historyDetail struct {
	pageData
	Call store.CallRecord
	Args string
}

// historyDetailPage shows one recorded call.
func (c *Console) historyDetailPage(w http.ResponseWriter, r *http.Request) {
	rec, err := c.opts.Backend.HistoryCall(r.Context(), r.PathValue("id"))
	if err != nil {
		c.renderError(w, r, statusOf(err), err)
		return
	}
	d := &historyDetail{pageData: pageData{Title: "Call " + rec.ID}, Call: rec}
	if len(rec.Args) > 0 {
		d.Args = prettyJSON(rec.Args)
	}
	c.render(w, r, http.StatusOK, "historydetail", d)
}

// apiSignIn starts a server's sign-in and answers the URL the browser
// opens; the sign-in itself completes at the daemon's redirect listener.
func (c *Console) apiSignIn(w http.ResponseWriter, r *http.Request, name string) {
	if c.opts.SignIn == nil {
		writeFault(w, http.StatusNotFound, fault.New(fault.NotFound, "this console cannot run a sign-in").
			WithSuggestions("run: switchboard auth login "+name))
		return
	}
	user := sessionOf(r).user
	u, err := c.opts.SignIn(r.Context(), name, user)
	if err != nil {
		writeFault(w, statusOf(err), err)
		return
	}
	c.logger.Info("console sign-in started", logKeyServer, name, "user", user)
	writeJSON(w, http.StatusOK, map[string]string{"url": u})
}
