package web

import (
	"cmp"
	"net/http"
	"slices"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// statsWindow is a time window the charts cover, cut into buckets.
type statsWindow struct {
	Name   string
	Label  string
	Span   time.Duration
	Bucket time.Duration
}

// statsWindows are the windows the overview offers.
var statsWindows = []statsWindow{
	{Name: "1h", Label: "Last hour", Span: time.Hour, Bucket: time.Minute},
	{Name: "24h", Label: "Last day", Span: 24 * time.Hour, Bucket: 15 * time.Minute},
}

// maxStatsCalls bounds the calls one chart reads from the history; past
// it the charts say they cover only the newest calls.
const maxStatsCalls = 50000

// statsBucket is one slice of time of a chart.
type statsBucket struct {
	// T is the bucket's start, Unix milliseconds.
	T      int64 `json:"t"`
	Calls  int   `json:"calls"`
	Errors int   `json:"errors"`
	// PerMinute is the calls per minute in the bucket.
	PerMinute float64 `json:"per_minute"`
	// ErrorRate is errors / calls (0 when there were none).
	ErrorRate float64 `json:"error_rate"`
	// P50 and P95 are latency percentiles in milliseconds (0 when there
	// were no calls).
	P50 float64 `json:"p50_ms"`
	P95 float64 `json:"p95_ms"`
}

// statsRow sums up one server's or one tool's calls in the window.
type statsRow struct {
	Server    string  `json:"server"`
	Tool      string  `json:"tool,omitempty"`
	Calls     int     `json:"calls"`
	Errors    int     `json:"errors"`
	ErrorRate float64 `json:"error_rate"`
	P50       float64 `json:"p50_ms"`
	P95       float64 `json:"p95_ms"`
}

// statsView is what the charts and tables draw.
type statsView struct {
	Window    string        `json:"window"`
	Label     string        `json:"label"`
	Server    string        `json:"server,omitempty"`
	BucketSec int           `json:"bucket_seconds"`
	Buckets   []statsBucket `json:"buckets"`
	Servers   []statsRow    `json:"servers"`
	Tools     []statsRow    `json:"tools"`
	Total     statsRow      `json:"total"`
	// Capped says the window held more than maxStatsCalls calls: the
	// charts cover the newest of them.
	Capped bool `json:"capped"`
}

// isError says whether a recorded call counts as an error: anything but
// success, a cancellation by the caller, and a task's creation (whose
// outcome is recorded apart).
func isError(status string) bool {
	return status != "success" && status != "cancelled" && status != "task"
}

// percentile returns the p-th percentile (nearest rank) of sorted
// durations, in milliseconds.
func percentile(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.999999) - 1
	i = max(0, min(i, len(sorted)-1))
	return float64(sorted[i]) / float64(time.Millisecond)
}

// acc accumulates calls for a bucket or a row.
type acc struct {
	calls, errors int
	durs          []time.Duration
}

func (a *acc) add(rec store.CallRecord) {
	a.calls++
	if isError(rec.Status) {
		a.errors++
	}
	a.durs = append(a.durs, rec.Duration)
}

func (a *acc) row() statsRow {
	slices.Sort(a.durs)
	r := statsRow{Calls: a.calls, Errors: a.errors, P50: percentile(a.durs, .5), P95: percentile(a.durs, .95)}
	if a.calls > 0 {
		r.ErrorRate = float64(a.errors) / float64(a.calls)
	}
	return r
}

// computeStats reads the calls of the window (of one server, or all) from
// the history and sums them up per bucket, per server and per tool.
func (c *Console) computeStats(r *http.Request, windowName, server string) (*statsView, error) {
	i := slices.IndexFunc(statsWindows, func(w statsWindow) bool { return w.Name == windowName })
	if i < 0 {
		return nil, fault.New(fault.Validation, "unknown window %q; want 1h or 24h", windowName)
	}
	w := statsWindows[i]
	now := c.now()
	start := now.Add(-w.Span).Truncate(w.Bucket).Add(w.Bucket)
	recs, err := c.opts.Backend.History(r.Context(), store.CallFilter{Server: server, Since: start, Limit: maxStatsCalls})
	if err != nil {
		return nil, err
	}
	n := int(w.Span / w.Bucket)
	buckets := make([]acc, n)
	servers, tools := map[string]*acc{}, map[[2]string]*acc{}
	var total acc
	for _, rec := range recs {
		b := int(rec.StartedAt.Sub(start) / w.Bucket)
		if b < 0 || b >= n {
			continue
		}
		buckets[b].add(rec)
		total.add(rec)
		if servers[rec.Server] == nil {
			servers[rec.Server] = &acc{}
		}
		servers[rec.Server].add(rec)
		k := [2]string{rec.Server, rec.Tool}
		if tools[k] == nil {
			tools[k] = &acc{}
		}
		tools[k].add(rec)
	}
	v := &statsView{Window: w.Name, Label: w.Label, Server: server, BucketSec: int(w.Bucket / time.Second),
		Capped: len(recs) >= maxStatsCalls, Servers: []statsRow{}, Tools: []statsRow{}}
	for i := range buckets {
		row := buckets[i].row()
		v.Buckets = append(v.Buckets, statsBucket{T: start.Add(time.Duration(i) * w.Bucket).UnixMilli(), Calls: row.Calls, Errors: row.Errors,
			PerMinute: float64(row.Calls) / w.Bucket.Minutes(), ErrorRate: row.ErrorRate, P50: row.P50, P95: row.P95})
	}
	for name, a := range servers {
		row := a.row()
		row.Server = name
		v.Servers = append(v.Servers, row)
	}
	for k, a := range tools {
		row := a.row()
		row.Server, row.Tool = k[0], k[1]
		v.Tools = append(v.Tools, row)
	}
	byCalls := func(a, b statsRow) int {
		return cmp.Or(cmp.Compare(b.Calls, a.Calls), cmp.Compare(a.Server, b.Server), cmp.Compare(a.Tool, b.Tool))
	}
	slices.SortFunc(v.Servers, byCalls)
	slices.SortFunc(v.Tools, byCalls)
	v.Total = total.row()
	return v, nil
}

// apiStats returns the charts' data: ?window=1h|24h, ?server= for one
// server.
func (c *Console) apiStats(w http.ResponseWriter, r *http.Request) {
	v, err := c.computeStats(r, cmp.Or(r.URL.Query().Get("window"), "1h"), r.URL.Query().Get("server"))
	if err != nil {
		writeFault(w, statusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// overviewData is the overview page's data.
type overviewData struct {
	pageData
	Windows []statsWindow
	Window  string
	Stats   *statsView
	JSON    string
	Error   *errorView
	Servers []serverView
}

// overviewPage shows charts of the history: calls per minute, error rate,
// p50/p95 latency, and the same per server and per tool; the page
// refreshes them every few seconds.
func (c *Console) overviewPage(w http.ResponseWriter, r *http.Request) {
	d := &overviewData{pageData: pageData{Title: "Overview"}, Windows: statsWindows, Window: cmp.Or(r.URL.Query().Get("window"), "1h")}
	st, err := c.computeStats(r, d.Window, "")
	if err != nil {
		d.Error = newErrorView(err)
		d.Window = "1h"
		st, _ = c.computeStats(r, d.Window, "")
	}
	d.Stats = st
	d.JSON = string(mustJSON(st))
	if infos, err := c.servers(r); err == nil {
		for _, si := range infos {
			d.Servers = append(d.Servers, c.serverView(si))
		}
	}
	c.render(w, r, http.StatusOK, "overview", d)
}
