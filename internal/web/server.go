package web

import (
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// maxStateHistory is how many state changes the console keeps per server.
const maxStateHistory = 50

// stateChange is one change of a server's state, as the server page shows
// it.
type stateChange struct {
	Time      string `json:"time"`
	Label     string `json:"label"`
	Status    string `json:"status"`
	LastError string `json:"last_error"`
}

// stateHistory keeps each server's recent state changes, from the pool's
// change callbacks since the daemon started.
type stateHistory struct {
	mu   sync.Mutex
	byID map[string][]stateChange
}

// note records a server's view when its label, status or error changed.
func (h *stateHistory) note(now time.Time, v serverView) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byID == nil {
		h.byID = map[string][]stateChange{}
	}
	list := h.byID[v.Server]
	if n := len(list); n > 0 && list[n-1].Label == v.Label && list[n-1].Status == v.Status && list[n-1].LastError == v.LastError {
		return
	}
	list = append(list, stateChange{Time: now.UTC().Format("2006-01-02 15:04:05"), Label: v.Label, Status: v.Status, LastError: v.LastError})
	if len(list) > maxStateHistory {
		list = list[len(list)-maxStateHistory:]
	}
	h.byID[v.Server] = list
}

// get returns a server's changes, newest first.
func (h *stateHistory) get(server string) []stateChange {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := slices.Clone(h.byID[server])
	slices.Reverse(out)
	return out
}

// serverData is the server page's data.
type serverData struct {
	pageData
	View      serverView
	Config    string
	Source    string
	Editable  bool
	History   []stateChange
	Tools     []control.ToolInfo
	Prompts   []promptRow
	Resources []resourceRow
	Calls     []store.CallRecord
	Stats     string
	Error     *errorView
	Saved     bool
}

// serverPage shows one server: its configuration (secrets hidden, as
// `config show` hides them), its state and state history, the tail of its
// stderr, its tools, prompts and resources, its latest calls, charts of
// its calls, and enable/disable/refresh/edit/remove.
func (c *Console) serverPage(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	cfg := c.opts.Config()
	srv, ok := cfg.Server(name)
	if !ok {
		c.renderError(w, r, http.StatusNotFound, upstream.UnknownServer(cfg, name))
		return
	}
	d := &serverData{pageData: pageData{Title: name}, Config: string(config.MarshalServer(srv)), Source: cfg.Source,
		Editable: c.opts.Editor != nil, Saved: r.URL.Query().Get("saved") != ""}
	infos, err := c.servers(r)
	if err != nil {
		d.Error = newErrorView(err)
	}
	for _, si := range infos {
		if si.Snapshot.Server == name {
			d.View = c.serverView(si)
		}
	}
	if d.View.Server == "" {
		d.View = serverView{Server: name, Label: "unknown"}
	}
	d.History = c.states.get(name)
	list, _ := c.opts.Backend.Tools(r.Context(), name)
	d.Tools = list.Tools
	// A disabled server lists nothing (the catalog keeps what it listed
	// before), as the servers page's counts and the gateway say.
	listed := d.View.Enabled
	for _, p := range c.opts.Catalog.Prompts() {
		if p.Server == name && listed {
			d.Prompts = append(d.Prompts, promptRow{Server: p.Server, Name: p.Def.Name, Title: p.Def.Title, Description: p.Def.Description, Args: p.Def.Arguments})
		}
	}
	for _, rs := range c.opts.Catalog.Resources() {
		if rs.Server == name && listed {
			d.Resources = append(d.Resources, resourceRow{Server: rs.Server, Name: rs.Def.Name, URI: rs.Def.URI, MIME: rs.Def.MIMEType})
		}
	}
	for _, rt := range c.opts.Catalog.ResourceTemplates() {
		if rt.Server == name && listed {
			d.Resources = append(d.Resources, resourceRow{Server: rt.Server, Name: rt.Def.Name, URI: rt.Def.URITemplate, MIME: rt.Def.MIMEType, Template: true})
		}
	}
	calls, err := c.opts.Backend.History(r.Context(), store.CallFilter{Server: name, Limit: 20})
	if err != nil && d.Error == nil {
		d.Error = newErrorView(err)
	}
	d.Calls = calls
	if st, err := c.computeStats(r, "1h", name); err == nil {
		d.Stats = string(mustJSON(st))
	} else if d.Error == nil {
		d.Error = newErrorView(fault.Wrap(fault.Internal, err, "computing the charts"))
	}
	c.render(w, r, http.StatusOK, "server", d)
}
