// Package soak accounts for a soak test of the gateway: every request the
// load sends is entered in a [Ledger] before it goes out and settled when
// its answer comes back; at the end the ledger is checked against the
// history the daemon kept, and a [Report] says how many calls were
// answered, refused, failed or lost (by id), with the daemon's memory,
// goroutines and open files sampled along the way.
//
// The load itself — a real switchboard daemon, real upstreams, a killed
// upstream and reloads — is TestSoak in this package, run by `make soak`
// (docs/operations.md, "Soak test").
package soak

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// Outcome is how a request ended, as the client saw it.
type Outcome int

// The outcomes of a request.
const (
	// Pending: sent, not answered (yet). At the end this is a lost request.
	Pending Outcome = iota
	// OK: answered with a result.
	OK
	// Failed: answered with an error that is expected of the request (a
	// tool that reports an error by design).
	Failed
	// Refused: answered with an error that explains why it was not run:
	// a rate limit, a limit, a server that was down at the time.
	Refused
	// Unexplained: answered with an error the load did not expect.
	Unexplained
	// Dropped: the client gave up without an answer (the connection
	// failed, or no answer came within the call's deadline).
	Dropped
)

// String names the outcome for the report.
func (o Outcome) String() string {
	switch o {
	case Pending:
		return "pending"
	case OK:
		return "ok"
	case Failed:
		return "error"
	case Refused:
		return "refused"
	case Unexplained:
		return "unexplained"
	case Dropped:
		return "dropped"
	}
	return fmt.Sprintf("outcome(%d)", int(o))
}

// Request is one request the load sends.
type Request struct {
	// ID names the request in the report: worker and sequence number.
	ID string
	// User is the identity of the token it was sent with.
	User string
	// Method is the MCP method: tools/call, tools/list, ...
	Method string
	// Server and Tool are set for tools/call.
	Server, Tool string
	// Marker, when set, is a string the history row of this call holds in
	// its arguments (a unique message), so that the call is found in the
	// history by id; calls without one are matched by count per user,
	// server and tool.
	Marker string
	// Sent is when it went out.
	Sent time.Time
}

// entry is a request and how it ended.
type entry struct {
	Request
	outcome Outcome
	kind    string // the error's type (connection_error, tool_error, ...), or ""
	detail  string // for unexplained and dropped requests: what came back
}

// Ledger records every request and its answer. It is safe for concurrent
// use.
type Ledger struct {
	mu      sync.Mutex
	entries map[string]*entry
	order   []string
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger {
	return &Ledger{entries: map[string]*entry{}}
}

// Send enters a request before it is sent. Its ID must be new.
func (l *Ledger) Send(r Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, dup := l.entries[r.ID]; dup {
		panic("soak: request id used twice: " + r.ID)
	}
	l.entries[r.ID] = &entry{Request: r}
	l.order = append(l.order, r.ID)
}

// Settle records how the request id ended: its outcome, the error's type
// (empty for OK) and, for unexplained and dropped requests, what came
// back.
func (l *Ledger) Settle(id string, o Outcome, kind, detail string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.entries[id]
	if !ok {
		panic("soak: settling a request never sent: " + id)
	}
	e.outcome, e.kind, e.detail = o, kind, detail
}

// HistoryRow is one call of the daemon's history, as much as the check
// needs.
type HistoryRow struct {
	Identity, Server, Tool string
	// Args is the recorded arguments (values, as the soak's configuration
	// records them).
	Args string
	// ErrorKind is the error kind the history recorded, or "".
	ErrorKind string
}

// Report is the ledger checked against the history, with the samples and
// events of the run.
type Report struct {
	// Sent counts every request; Calls the tools/call among them.
	Sent, Calls int
	// Count is the number of requests per outcome.
	Count map[Outcome]int
	// Kinds is, per outcome, the number of requests per error type.
	Kinds map[Outcome]map[string]int
	// Methods is the number of requests per method and outcome.
	Methods map[string]map[Outcome]int
	// Unexplained and Unanswered list those requests: id, what and what
	// came back.
	Unexplained, Unanswered []string
	// AnsweredCalls is the tools/call answered (any outcome but Pending
	// and Dropped): each must be in the history.
	AnsweredCalls int
	// HistoryRows is the number of gateway calls in the history.
	HistoryRows int
	// NotInHistory lists answered calls missing from the history: by id
	// for calls with a marker, by count for the others.
	NotInHistory []string
	// Extra is the number of history rows no answered call accounts for
	// (calls the client never heard back from, or counted twice).
	Extra int
	// Lost is len(Unanswered) plus the answered calls missing from the
	// history.
	Lost int

	// Samples are the daemon's figures over time; Events what the soak
	// did to it (kills, reloads) and what followed.
	Samples []Sample
	Events  []Event
	// Checks are further aims of the run (each kill restarted the
	// upstream, each reload was applied), added to the verdicts.
	Checks []Verdict
}

// Sample is the daemon's resources at one moment.
type Sample struct {
	At         time.Duration // since the load started
	Label      string        // "start", "1m", ..., "end", "idle"
	RSS        int64         // bytes, VmRSS of /proc/PID/status
	Goroutines int           // go_goroutines from /metrics
	FDs        int           // entries of /proc/PID/fd
	Sessions   int           // switchboard_gateway_sessions, all views
	Children   int           // the daemon's child processes (upstreams)
}

// Event is something the soak did to the daemon, and what followed.
type Event struct {
	At   time.Duration
	What string
}

// Check settles every request still pending as unanswered, compares the
// answered calls with the history rows, and returns the report.
func (l *Ledger) Check(history []HistoryRow) *Report {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := &Report{
		Count:   map[Outcome]int{},
		Kinds:   map[Outcome]map[string]int{},
		Methods: map[string]map[Outcome]int{},
	}
	type group struct{ user, server, tool string }
	unmarked := map[group]int{}
	markers := map[string]*entry{}
	for _, id := range l.order {
		e := l.entries[id]
		r.Sent++
		o := e.outcome
		if o == Pending {
			o = Dropped
			if e.detail == "" {
				e.detail = "no answer and no error by the end"
			}
		}
		r.Count[o]++
		if e.kind != "" {
			if r.Kinds[o] == nil {
				r.Kinds[o] = map[string]int{}
			}
			r.Kinds[o][e.kind]++
		}
		if r.Methods[e.Method] == nil {
			r.Methods[e.Method] = map[Outcome]int{}
		}
		r.Methods[e.Method][o]++
		what := fmt.Sprintf("%s (%s, %s", e.ID, e.User, e.Method)
		if e.Tool != "" {
			what += " " + e.Server + "/" + e.Tool
		}
		what += fmt.Sprintf(", sent at +%s)", e.Sent.Sub(l.entries[l.order[0]].Sent).Round(time.Millisecond))
		switch o {
		case Unexplained:
			r.Unexplained = append(r.Unexplained, what+": "+e.kind+": "+e.detail)
		case Dropped:
			r.Unanswered = append(r.Unanswered, what+": "+e.detail)
		}
		if e.Method != "tools/call" {
			continue
		}
		r.Calls++
		if o == Dropped {
			continue
		}
		r.AnsweredCalls++
		if e.Marker != "" {
			markers[e.Marker] = e
		} else {
			unmarked[group{e.User, e.Server, e.Tool}]++
		}
	}
	r.HistoryRows = len(history)
	found := map[string]bool{}
	rows := map[group]int{}
	for _, h := range history {
		if m := markerIn(h.Args, markers); m != "" && !found[m] {
			found[m] = true
			continue
		}
		rows[group{h.Identity, h.Server, h.Tool}]++
	}
	var missing []string
	for m, e := range markers {
		if !found[m] {
			missing = append(missing, fmt.Sprintf("%s (%s, %s/%s, answered %s)", e.ID, e.User, e.Server, e.Tool, e.outcome))
		}
	}
	sort.Strings(missing)
	r.NotInHistory = missing
	var groups []group
	for g := range unmarked {
		groups = append(groups, g)
	}
	sort.Slice(groups, func(i, j int) bool {
		a, b := groups[i], groups[j]
		return a.user+"\x00"+a.server+"\x00"+a.tool < b.user+"\x00"+b.server+"\x00"+b.tool
	})
	for _, g := range groups {
		if have, want := rows[g], unmarked[g]; have < want {
			r.NotInHistory = append(r.NotInHistory, fmt.Sprintf("%d of %d answered calls of %s to %s/%s (matched by count: these carry no id in their arguments)", want-have, want, g.user, g.server, g.tool))
		}
	}
	for g, n := range rows {
		if n > unmarked[g] {
			r.Extra += n - unmarked[g]
		}
	}
	r.Lost = len(r.Unanswered)
	for g, want := range unmarked {
		if have := rows[g]; have < want {
			r.Lost += want - have
		}
	}
	r.Lost += len(missing)
	return r
}

// markerIn returns the marker of markers that args holds as a JSON string
// ("marker", quotes included), or "".
func markerIn(args string, markers map[string]*entry) string {
	for rest := args; ; {
		i := strings.IndexByte(rest, '"')
		if i < 0 {
			return ""
		}
		rest = rest[i+1:]
		j := strings.IndexByte(rest, '"')
		if j < 0 {
			return ""
		}
		if _, ok := markers[rest[:j]]; ok {
			return rest[:j]
		}
		rest = rest[j+1:]
	}
}
