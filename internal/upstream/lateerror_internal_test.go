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

// FuzzLateErrorBody: however the reads split a stream, lateErrorBody
// gives the same bytes; a stream none of whose lines begins with "{"
// passes unchanged.
func FuzzLateErrorBody(f *testing.F) {
	f.Add("event: message\ndata: {}\n\n{\"jsonrpc\":\"2.0\"}")
	f.Add(": c\n\ndata: x\n\n")
	f.Add("{\n{")
	f.Fuzz(func(t *testing.T, in string) {
		read := func(r io.Reader) string {
			got, err := io.ReadAll(r)
			if err != nil {
				t.Fatalf("reading %q: %v", in, err)
			}
			return string(got)
		}
		whole := read(&lateErrorBody{ReadCloser: io.NopCloser(strings.NewReader(in))})
		split := read(iotest.OneByteReader(&lateErrorBody{ReadCloser: io.NopCloser(iotest.HalfReader(strings.NewReader(in)))}))
		if whole != split {
			t.Fatalf("%q: read whole %q, split %q", in, whole, split)
		}
		if !strings.HasPrefix(in, "{") && !strings.Contains(in, "\n{") && whole != in {
			t.Fatalf("%q has no line beginning with {, but came out as %q", in, whole)
		}
	})
}
