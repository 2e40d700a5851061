package upstream

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestLateErrorBody: a line of an event stream that begins with "{" (a
// go-sdk server's error written as plain JSON after its stream began)
// becomes the data of an event of its own; everything else passes as it
// is, however the reads split it.
func TestLateErrorBody(t *testing.T) {
	t.Parallel()
	progress := "event: message\ndata: {\"method\":\"notifications/progress\"}\n\n"
	answer := `{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"no"}}`
	tests := []struct{ name, in, want string }{
		{"events only", progress + ": comment\n\n" + progress, progress + ": comment\n\n" + progress},
		{"the error after progress, at the end", progress + answer, progress + "data: " + answer + "\n\n"},
		{"the error after progress, with a newline", progress + answer + "\n", progress + "data: " + answer + "\n\n"},
		{"the error alone", answer, "data: " + answer + "\n\n"},
		{"a brace inside a data line", "data: {\"a\":\"\\n{\"}\n\n", "data: {\"a\":\"\\n{\"}\n\n"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		for _, how := range []struct {
			name string
			wrap func(io.Reader) io.Reader
		}{{"whole", func(r io.Reader) io.Reader { return r }}, {"byte by byte", iotest.OneByteReader}, {"by halves", iotest.HalfReader}} {
			for _, small := range []bool{false, true} {
				var r io.Reader = &lateErrorBody{ReadCloser: io.NopCloser(how.wrap(strings.NewReader(tt.in)))}
				if small {
					r = iotest.OneByteReader(r) // the reader's buffer is one byte
				}
				got, err := io.ReadAll(r)
				if err != nil {
					t.Errorf("%s, %s (one-byte buffer: %v): reading: %v", tt.name, how.name, small, err)
				}
				if string(got) != tt.want {
					t.Errorf("%s, %s (one-byte buffer: %v): got %q, want %q", tt.name, how.name, small, got, tt.want)
				}
			}
		}
	}
}
