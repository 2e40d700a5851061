package upstream

import (
	"bytes"
	"io"
)

// A stdio server must write only MCP messages to stdout, but some print a
// banner or a log line there as well (the TypeScript SDK's own
// toolWithSampleServer.js prints "MCP server is running..."). Clients
// built on the TypeScript SDK skip a line they cannot parse and go on;
// the go-sdk's transport ends the connection. Switchboard skips such a
// line as those clients do — one that holds no JSON object or array, so
// that it cannot be a message — and keeps it with the server's stderr,
// where `servers`, the console and a failed handshake's error show it.
// A line that looks like JSON but is not a valid message still ends the
// connection, as before.

// skippingNoise makes f skip the lines that cannot be MCP messages,
// writing each to noise; a nil noise skips nothing.
func (f *frameCap) skippingNoise(noise io.Writer) *frameCap {
	f.noise = noise
	return f
}

// skipNoise reports whether frame, a whole line, is to be skipped, and
// writes it to f.noise if so.
func (f *frameCap) skipNoise(frame []byte) bool {
	if f.noise == nil {
		return false
	}
	line := bytes.TrimSpace(frame)
	if len(line) == 0 || line[0] == '{' || line[0] == '[' {
		return false
	}
	if !f.noisy {
		f.noisy = true
		f.logger.Warn("the server wrote a line to stdout that is not an MCP message; skipped (a stdio server should log to stderr)", "bytes", len(frame))
	}
	var b bytes.Buffer
	b.WriteString("stdout (not an MCP message, skipped): ")
	b.Write(line)
	b.WriteByte('\n')
	_, _ = f.noise.Write(b.Bytes())
	return true
}
