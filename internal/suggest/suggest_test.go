package suggest_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/suggest"
)

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "", 3},
		{"kitten", "sitting", 3},
		{"url", "urll", 1},
		{"échec", "echec", 1},
		{"ulr", "url", 1}, // two adjacent runes swapped: one edit
		{"ca", "abc", 3},  // no substring is edited twice (optimal string alignment)
		{"clal", "call", 1},
	}
	for _, tt := range tests {
		if got := suggest.Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestClosest(t *testing.T) {
	cands := []string{"echo", "get-sum", "get-env", "trigger-long-running-operation", "printEnv"}
	tests := []struct {
		name string
		want []string
	}{
		{"ecoh", []string{"echo"}},
		{"get-sun", []string{"get-sum"}},
		{"get-", []string{"get-sum", "get-env"}},
		{"long-running", []string{"trigger-long-running-operation"}},
		{"zzzzzz", []string{}},
		{"echo", []string{}}, // an exact match is not a suggestion
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := suggest.Closest(tt.name, cands, 3)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Closest(%q) mismatch (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}
