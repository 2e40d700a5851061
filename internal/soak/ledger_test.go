package soak_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/soak"
)

// TestLedgerFindsLostCalls: a request never answered is lost by its id, an
// answered call with a marker missing from the history is lost by its id,
// one without is lost by count, and an unexplained error is listed.
func TestLedgerFindsLostCalls(t *testing.T) {
	t.Parallel()
	l := soak.NewLedger()
	now := time.Now()
	send := func(id, user, method, server, tool, marker string) {
		l.Send(soak.Request{ID: id, User: user, Method: method, Server: server, Tool: tool, Marker: marker, Sent: now})
	}
	send("w00-1", "alice", "tools/call", "alpha", "echo", "soak-w00-1")
	l.Settle("w00-1", soak.OK, "", "")
	send("w00-2", "alice", "tools/call", "alpha", "echo", "soak-w00-2") // answered, not in the history
	l.Settle("w00-2", soak.OK, "", "")
	send("w00-3", "alice", "tools/call", "alpha", "echo", "soak-w00-3") // never answered
	send("w01-1", "bob", "tools/call", "alpha", "slow", "")
	l.Settle("w01-1", soak.OK, "", "")
	send("w01-2", "bob", "tools/call", "alpha", "slow", "") // one of two slow calls missing
	l.Settle("w01-2", soak.Refused, "rate_limited_error", "")
	send("w01-3", "bob", "tools/list", "", "", "")
	l.Settle("w01-3", soak.Unexplained, "jsonrpc_-32603", "boom")
	send("w01-4", "bob", "tools/call", "alpha", "fail", "")
	l.Settle("w01-4", soak.Failed, "tool_error", "")

	history := []soak.HistoryRow{
		{Identity: "alice", Server: "alpha", Tool: "echo", Args: `{"message":"soak-w00-1"}`},
		{Identity: "bob", Server: "alpha", Tool: "slow", Args: `{"seconds":0.5}`},
		{Identity: "bob", Server: "alpha", Tool: "fail", Args: `{}`},
		// A prefix of another id is not that id.
		{Identity: "alice", Server: "alpha", Tool: "echo", Args: `{"message":"soak-w00-2x"}`},
	}
	r := l.Check(history)

	if r.Sent != 7 || r.Calls != 6 || r.AnsweredCalls != 5 || r.HistoryRows != 4 {
		t.Errorf("sent %d, calls %d, answered calls %d, history rows %d: want 7, 6, 5, 4", r.Sent, r.Calls, r.AnsweredCalls, r.HistoryRows)
	}
	if r.Lost != 3 {
		t.Errorf("lost: got %d, want 3 (w00-3 unanswered, w00-2 and one slow call not in the history)", r.Lost)
	}
	if len(r.Unanswered) != 1 || !strings.HasPrefix(r.Unanswered[0], "w00-3 ") {
		t.Errorf("unanswered: got %q, want w00-3", r.Unanswered)
	}
	if len(r.NotInHistory) != 2 || !strings.HasPrefix(r.NotInHistory[0], "w00-2 ") || !strings.Contains(r.NotInHistory[1], "1 of 2 answered calls of bob to alpha/slow") {
		t.Errorf("not in history: got %q, want w00-2 and 1 of 2 slow calls of bob", r.NotInHistory)
	}
	if len(r.Unexplained) != 1 || !strings.HasPrefix(r.Unexplained[0], "w01-3 ") || !strings.Contains(r.Unexplained[0], "boom") {
		t.Errorf("unexplained: got %q, want w01-3 with what came back", r.Unexplained)
	}
	want := map[soak.Outcome]int{soak.OK: 3, soak.Refused: 1, soak.Unexplained: 1, soak.Failed: 1, soak.Dropped: 1}
	if diff := cmp.Diff(want, r.Count); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	if r.Extra != 1 {
		t.Errorf("extra history rows: got %d, want 1 (the row of another id)", r.Extra)
	}
	for _, v := range r.Verdicts() {
		if v.Met {
			t.Errorf("verdict %q met by a ledger with lost calls, an unexplained error and a history short of calls: %s", v.Aim, v.Figures)
		}
	}
}

// TestLedgerAllAccounted: a run where everything is answered and recorded
// meets every aim, and the report says so.
func TestLedgerAllAccounted(t *testing.T) {
	t.Parallel()
	l := soak.NewLedger()
	now := time.Now()
	l.Send(soak.Request{ID: "a", User: "alice", Method: "tools/call", Server: "alpha", Tool: "echo", Marker: "soak-a", Sent: now})
	l.Settle("a", soak.OK, "", "")
	l.Send(soak.Request{ID: "b", User: "carol", Method: "tools/call", Server: "alpha", Tool: "echo", Marker: "soak-b", Sent: now})
	l.Settle("b", soak.Refused, "rate_limited_error", "")
	r := l.Check([]soak.HistoryRow{
		{Identity: "carol", Server: "alpha", Tool: "echo", Args: `{"message":"soak-b"}`, ErrorKind: "rate_limited"},
		{Identity: "alice", Server: "alpha", Tool: "echo", Args: `{"message":"soak-a"}`},
	})
	r.Samples = []soak.Sample{
		{Label: "start", RSS: 40 << 20, Goroutines: 40, FDs: 20, Children: 2},
		{Label: "1m", RSS: 60 << 20, Goroutines: 100, FDs: 30, Sessions: 6, Children: 2},
		{Label: "end", RSS: 62 << 20, Goroutines: 101, FDs: 30, Children: 2},
		{Label: "idle", RSS: 62 << 20, Goroutines: 45, FDs: 21, Children: 2},
	}
	for _, v := range r.Verdicts() {
		if !v.Met {
			t.Errorf("verdict %q not met: %s", v.Aim, v.Figures)
		}
	}
	md := r.Markdown(soak.Run{Date: now, Duration: time.Minute, Machine: "2 CPUs"}, 10)
	for _, want := range []string{"| refused (explained) | 1 | rate_limited_error 1 |", "| 0 lost requests | yes |", "| idle | 62.0 | 45 | 21 | 0 | 2 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("report: want %q in\n%s", want, md)
		}
	}

	// Goroutines that stay after the load are a leak.
	r.Samples[3].Goroutines = 101
	leak := false
	for _, v := range r.Verdicts() {
		if strings.HasPrefix(v.Aim, "idle again") && !v.Met {
			leak = true
		}
	}
	if !leak {
		t.Error("101 goroutines idle after 40 at the start: want the idle verdict not met")
	}
}

// TestShortRunJudgesNoTrend: a run without a sample at one minute is not
// judged on RSS or goroutines under load (its only earlier sample is
// before any load), but still on going idle again.
func TestShortRunJudgesNoTrend(t *testing.T) {
	t.Parallel()
	r := soak.NewLedger().Check(nil)
	r.Samples = []soak.Sample{
		{Label: "start", RSS: 40 << 20, Goroutines: 40, FDs: 20, Children: 2},
		{Label: "end", RSS: 70 << 20, Goroutines: 120, FDs: 30, Children: 2},
		{Label: "idle", RSS: 70 << 20, Goroutines: 60, FDs: 21, Children: 2},
	}
	var aims []string
	for _, v := range r.Verdicts() {
		aims = append(aims, v.Aim)
		if strings.Contains(v.Aim, "under load") {
			t.Errorf("a run without a 1m sample judged %q: %s", v.Aim, v.Figures)
		}
		if strings.HasPrefix(v.Aim, "idle again") && v.Met {
			t.Errorf("60 goroutines idle after 40 at the start: want %q not met", v.Aim)
		}
	}
	if !strings.Contains(strings.Join(aims, "\n"), "idle again") {
		t.Errorf("verdicts %q: want the idle one", aims)
	}
}
