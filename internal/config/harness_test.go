package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// problemCase is a configuration with problems: what follows a fixed
// head of servers in the file, and the exact lines Parse must report, in
// order.
type problemCase struct {
	name string
	src  string // after the head
	want []string
}

// checkProblems parses head+src of each case as sb.yaml with opts and
// compares the problems reported with the case's, each of which must keep
// its cause (Problem.Err).
func checkProblems(t *testing.T, head string, opts config.Options, tests []problemCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Parse("sb.yaml", []byte(head+tt.src), opts)
			var ve *config.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("got error %v (%T), want %d problems in a *config.ValidationError", err, err, len(tt.want))
			}
			if diff := cmp.Diff(tt.want, strings.Split(strings.TrimSpace(err.Error()), "\n")); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			for _, p := range ve.Problems {
				if p.Err == nil {
					t.Errorf("problem %q has no Err", p)
				}
			}
		})
	}
}

// sameConfig reports where got, a configuration read back from what was
// written of want (MarshalResolved, Import), differs from it: servers
// (positions aside), defaults, limits, history and the allowlist.
func sameConfig(t *testing.T, want, got *config.Config) {
	t.Helper()
	for _, c := range []struct {
		what      string
		want, got any
		opts      cmp.Options
	}{
		{"servers", want.Servers, got.Servers, config.IgnorePos},
		{"defaults", want.Defaults, got.Defaults, nil},
		{"limits", want.Limits, got.Limits, nil},
		{"history", want.History, got.History, nil},
		{"allowlist", want.AllowedCommands, got.AllowedCommands, nil},
	} {
		if diff := cmp.Diff(c.want, c.got, c.opts); diff != "" {
			t.Errorf("%s differ when read back (-want +got):\n%s", c.what, diff)
		}
	}
}
