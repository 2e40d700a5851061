package taskwire_test

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/builtin/taskwire"
)

func TestParseDueDate(t *testing.T) {
	tests := []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"2025-12-20T10:00:00Z", time.Date(2025, 12, 20, 10, 0, 0, 0, time.UTC), true},
		{"2025-12-20T11:00:00+01:00", time.Date(2025, 12, 20, 10, 0, 0, 0, time.UTC), true},
		{"2025-12-20T10:00:00.5Z", time.Date(2025, 12, 20, 10, 0, 0, 5e8, time.UTC), true},
		{"2025-12-20T10:00:00", time.Date(2025, 12, 20, 10, 0, 0, 0, time.UTC), true},
		{"2025-12-20", time.Date(2025, 12, 20, 0, 0, 0, 0, time.UTC), true},
		{"0001-01-01T00:00:00Z", time.Time{}, false},
		{"tomorrow", time.Time{}, false},
		{"2025-12-20 10:00:00", time.Time{}, false},
		{"20/12/2025", time.Time{}, false},
		{"", time.Time{}, false},
	}
	for _, tt := range tests {
		got, ok := taskwire.ParseDueDate(tt.in)
		if ok != tt.ok || !got.Equal(tt.want) || (ok && got.Location() != time.UTC) {
			t.Errorf("ParseDueDate(%q): got %v, %v, want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestTextProblem(t *testing.T) {
	tests := []struct {
		in      string
		problem bool
	}{
		{"Buy milk", false},
		{"tab\tand\nnewline", false},
		{"é 🎉", false},
		{"\x00", true},
		{"a\x00b", true},
		{"bad \xff utf-8", true},
	}
	for _, tt := range tests {
		if got := taskwire.TextProblem(tt.in); (got != "") != tt.problem {
			t.Errorf("TextProblem(%q): got %q, want a problem: %v", tt.in, got, tt.problem)
		}
	}
}

func TestUserIDProblem(t *testing.T) {
	tests := []struct {
		in   string
		want string // substring of the problem; "" for none
	}{
		{"alice", ""},
		{"user@example.com", ""},
		{strings.Repeat("é", taskwire.MaxUserIDLength), ""},
		{"", "empty"},
		{"a\nb", "control characters"},
		{"a\x00b", "control characters"},
		{"\xff", "UTF-8"},
		{strings.Repeat("a", taskwire.MaxUserIDLength+1), "longer than 200 characters"},
	}
	for _, tt := range tests {
		got := taskwire.UserIDProblem(tt.in)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("UserIDProblem(%.20q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}
