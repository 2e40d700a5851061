package upstream

import (
	"bytes"
	"io"
)

// This file reads an error a go-sdk server wrote into its event stream
// as plain JSON, which the SDK's client would lose.
//
// On protocol 2026-07-28 the go-sdk's streamable server (1.8) gives an
// error response of code -32601, -32602, -32021 or -32022 an HTTP status
// and writes it as a plain JSON body; when the request's event stream
// has begun (progress went first), the status cannot be sent, and the
// JSON lands in the stream as a line of its own, without its "data:"
// field, and without the blank line that ends an event. An SSE reader
// ignores such a line (a field named `{"jsonrpc"…`), so the SDK's client
// reads the stream's end and "request terminated without response". No
// line of an event stream begins with "{" (a line is a field, a comment
// beginning with ":", or blank), so lateErrorBody gives such a line the
// "data: " it lacks and ends its event, and the client reads the error.
// A workaround of the SDK's fault (gateway/lateerror.go is its server
// side), for as long as the go-sdk in go.mod has it.

// lateErrorBody is a streamable-HTTP POST's event stream, with each line
// that begins with "{" made the data of an event of its own.
type lateErrorBody struct {
	io.ReadCloser
	midLine bool   // the last byte read ended no line
	stray   bool   // the line being read is such a message
	pending []byte // rewritten bytes not yet returned
	err     error  // the inner reader's error, once pending is out
}

func (b *lateErrorBody) Read(p []byte) (int, error) {
	if len(b.pending) == 0 && b.err != nil {
		return 0, b.err
	}
	if len(b.pending) > 0 {
		n := copy(p, b.pending)
		b.pending = b.pending[n:]
		return n, nil
	}
	n, err := b.ReadCloser.Read(p)
	chunk := p[:n]
	if !b.stray && !b.strays(chunk) && err == nil {
		if n > 0 {
			b.midLine = chunk[n-1] != '\n'
		}
		return n, nil // the usual case: nothing to change
	}
	out := b.frame(chunk)
	if err != nil {
		if b.stray {
			out = append(out, "\n\n"...) // the stream ended the message
			b.stray = false
		}
		b.err = err
	}
	k := copy(p, out)
	b.pending = out[k:]
	if len(b.pending) == 0 && b.err != nil {
		return k, b.err
	}
	return k, nil
}

// strays reports whether a line of chunk begins with "{".
func (b *lateErrorBody) strays(chunk []byte) bool {
	if len(chunk) == 0 {
		return false
	}
	return (!b.midLine && chunk[0] == '{') || bytes.Contains(chunk, []byte("\n{"))
}

// frame returns chunk with "data: " before each line that begins with
// "{", and a blank line after it.
func (b *lateErrorBody) frame(chunk []byte) []byte {
	out := make([]byte, 0, len(chunk)+16)
	for _, c := range chunk {
		if !b.midLine && c == '{' {
			out = append(out, "data: "...)
			b.stray = true
		}
		out = append(out, c)
		b.midLine = c != '\n'
		if c == '\n' && b.stray {
			out = append(out, '\n')
			b.stray = false
		}
	}
	return out
}
