package web

import (
	"testing"
	"time"
)

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"plain-word_1.0":  "plain-word_1.0",
		"":                "''",
		"two words":       "'two words'",
		"it's":            `'it'\''s'`,
		`{"a":1}`:         `'{"a":1}'`,
		"$HOME":           "'$HOME'",
		"a;rm -rf /":      "'a;rm -rf /'",
		"k=v":             "k=v",
		"back`tick`":      "'back`tick`'",
		"new\nline":       "'new\nline'",
		"glob*?[x]":       "'glob*?[x]'",
		"http://h:1/mcp":  "http://h:1/mcp",
		"tilde~and!bang":  "'tilde~and!bang'",
		"semi;colon&amp;": "'semi;colon&amp;'",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q): got %s, want %s", in, got, want)
		}
	}
}

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	cases := []struct {
		durs    []time.Duration
		p, want float64
	}{
		{nil, .5, 0},
		{ms(7), .95, 7},
		{ms(1, 2, 3, 4), .5, 2},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 100), .95, 19},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 100), .5, 10},
	}
	for _, c := range cases {
		if got := percentile(c.durs, c.p); got != c.want {
			t.Errorf("percentile(%v, %v): got %v, want %v", c.durs, c.p, got, c.want)
		}
	}
}

func TestDownloadName(t *testing.T) {
	for _, c := range []struct{ uri, mime, want string }{
		{"library://data.bin", "application/octet-stream", "data.bin"},
		{"file:///tmp/report.pdf", "application/pdf", "report.pdf"},
		{"demo://resource/dynamic/blob/1", "text/plain", "1.txt"},
		{"x://h/../../etc/passwd", "", "passwd.bin"},
		{"x://h/a b;c\"d", "", "a_b_c_d.bin"},
		{"", "", "resource.bin"},
	} {
		if got := downloadName(c.uri, c.mime); got != c.want {
			t.Errorf("downloadName(%q, %q): got %q, want %q", c.uri, c.mime, got, c.want)
		}
	}
}

func TestStateHistory(t *testing.T) {
	var h stateHistory
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h.note(now, serverView{Server: "a", Label: "connecting"})
	h.note(now, serverView{Server: "a", Label: "connecting"}) // no change: not kept
	h.note(now.Add(time.Second), serverView{Server: "a", Label: "connected", Status: "available"})
	got := h.get("a")
	if len(got) != 2 || got[0].Label != "connected" || got[1].Label != "connecting" {
		t.Errorf("history: got %+v, want connected then connecting (newest first)", got)
	}
	for i := range maxStateHistory + 10 {
		h.note(now, serverView{Server: "b", Label: "x", LastError: string(rune('a'+i%26)) + string(rune(i))})
	}
	if n := len(h.get("b")); n != maxStateHistory {
		t.Errorf("history bound: got %d, want %d", n, maxStateHistory)
	}
}
