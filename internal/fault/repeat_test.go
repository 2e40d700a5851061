package fault_test

import (
	"errors"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// wrapper is an error that adds nothing to its cause's words (as
// upstream's "never delivered" mark).
type wrapper struct{ err error }

func (w wrapper) Error() string { return w.err.Error() }
func (w wrapper) Unwrap() error { return w.err }

// TestErrorDoesNotRepeatItsCause: a message that already quotes its
// cause's message (a call failing because the connection ended, in the
// connection's words) is followed only by what the cause adds beyond it,
// not by the cause's message again — also through wrappers that add no
// words of their own.
func TestErrorDoesNotRepeatItsCause(t *testing.T) {
	root := errors.New("the server no longer has the session")
	ended := fault.Wrap(fault.Connection, root, "http://h/mcp no longer has this session (HTTP 404)")
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"direct", fault.Wrap(fault.Connection, ended, "calling a/b: %s", ended.Message),
			"calling a/b: http://h/mcp no longer has this session (HTTP 404): the server no longer has the session"},
		{"through a wrapper", fault.Wrap(fault.Connection, wrapper{ended}, "calling a/b: %s", ended.Message),
			"calling a/b: http://h/mcp no longer has this session (HTTP 404): the server no longer has the session"},
		{"a cause not quoted", fault.Wrap(fault.Connection, ended, "calling a/b"),
			"calling a/b: http://h/mcp no longer has this session (HTTP 404): the server no longer has the session"},
		{"a cause quoted whole", fault.Wrap(fault.Connection, root, "calling a/b: %s", root),
			"calling a/b: the server no longer has the session"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
