package upstream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"unicode/utf8"
)

// Frame limits for stdio servers.
const (
	// DefaultMaxFrameBytes is the largest message from a stdio server held
	// in memory (the go-sdk's own default line limit).
	DefaultMaxFrameBytes = 16 << 20
	// frameReadBuffer is the read buffer of the frame cap.
	frameReadBuffer = 64 << 10
)

// frameCap sits between a stdio server's stdout and the SDK. Frames
// (newline-delimited JSON-RPC messages) up to limit bytes pass through
// unchanged. A larger frame is never held in memory: its first head bytes
// are kept, the rest is streamed through a scanner that finds the
// message's top-level "id" and kind, and the frame is replaced by a small
// one. A tools/call response becomes a result with the text that fit,
// marked truncated (the engine's size limit then applies as usual); any
// other response becomes a JSON-RPC error saying how large it was; an
// oversized request or notification from the server is dropped.
type frameCap struct {
	r      *bufio.Reader
	limit  int
	head   int
	calls  *callTracker
	logger *slog.Logger
	out    []byte // bytes ready for the SDK
	err    error  // returned once out is drained
	// noise, when set, receives the lines that cannot be MCP messages
	// (no JSON object or array), which are then skipped: a stdio server's
	// banner or log line on stdout (stdout.go).
	noise io.Writer
	noisy bool // a line was skipped already (logged once)
}

func newFrameCap(r io.Reader, limit, head int, calls *callTracker, logger *slog.Logger) *frameCap {
	if limit <= 0 {
		limit = DefaultMaxFrameBytes
	}
	head = min(head, limit)
	return &frameCap{r: bufio.NewReaderSize(r, frameReadBuffer), limit: limit, head: head, calls: calls, logger: logger}
}

func (f *frameCap) Read(p []byte) (int, error) {
	for len(f.out) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		f.next()
	}
	n := copy(p, f.out)
	f.out = f.out[n:]
	return n, nil
}

// next reads one frame into out (or its replacement), or records the
// read error.
func (f *frameCap) next() {
	var frame []byte
	for {
		chunk, err := f.r.ReadSlice('\n')
		frame = append(frame, chunk...)
		switch {
		case err == nil:
			switch {
			case len(frame) > f.limit:
				f.oversize(frame)
			case f.skipNoise(frame):
				frame = frame[:0]
				continue
			default:
				f.out = frame
			}
			return
		case errors.Is(err, bufio.ErrBufferFull):
			if len(frame) > f.limit {
				f.oversize(frame)
				return
			}
		default:
			if len(frame) > f.limit {
				f.oversize(frame)
			} else {
				f.out = frame
			}
			f.err = err
			return
		}
	}
}

// oversize streams the rest of an oversized frame through the scanner,
// keeping only its head, and queues the replacement.
func (f *frameCap) oversize(start []byte) {
	var sc topScanner
	sc.feed(start)
	head := append([]byte(nil), start[:min(len(start), f.head)]...)
	total := int64(len(start))
	if start[len(start)-1] != '\n' {
		for {
			chunk, err := f.r.ReadSlice('\n')
			sc.feed(chunk)
			total += int64(len(chunk))
			if err == nil {
				break
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				f.err = err
				break
			}
		}
	}
	id := bytes.TrimSpace(sc.id)
	method := ""
	if len(id) > 0 {
		method = f.calls.take(string(id))
	}
	f.logger.Warn("oversized message from server", "bytes", total, "limit", f.limit, "method", method)
	switch {
	case len(id) == 0 || sc.hasMethod:
		// A request or notification from the server: nothing to answer.
		return
	case method == "tools/call" && sc.hasResult:
		f.out = truncatedCallResult(id, head, total)
	default:
		f.out = oversizeError(id, method, total, f.limit)
	}
}

// MetaTruncated and MetaOriginalBytes are the _meta keys of a result cut
// short; the engine uses the same keys.
const (
	metaTruncated     = "truncated"
	metaOriginalBytes = "originalBytes"
)

func truncatedCallResult(id, head []byte, total int64) []byte {
	text := textPrefix(head)
	text += fmt.Sprintf("\n[truncated by switchboard: the server sent a %d-byte result; only the beginning was kept]", total)
	msg := map[string]any{
		"jsonrpc": "2.0",
		"id":      json.RawMessage(id),
		"result": map[string]any{
			"content": []any{map[string]any{"type": "text", "text": text}},
			"_meta":   map[string]any{metaTruncated: true, metaOriginalBytes: total},
		},
	}
	b, _ := json.Marshal(msg)
	return append(b, '\n')
}

func oversizeError(id []byte, method string, total int64, limit int) []byte {
	if method == "" {
		method = "a request"
	}
	msg := map[string]any{
		"jsonrpc": "2.0",
		"id":      json.RawMessage(id),
		"error": map[string]any{
			"code":    -32603,
			"message": fmt.Sprintf("switchboard: the response to %s was %d bytes, over the %d-byte message limit", method, total, limit),
		},
	}
	b, _ := json.Marshal(msg)
	return append(b, '\n')
}

// textPrefix decodes the beginning of the first "text" string in a
// (truncated) JSON message.
func textPrefix(head []byte) string {
	i := bytes.Index(head, []byte(`"text"`))
	for i >= 0 {
		rest := bytes.TrimLeft(head[i+len(`"text"`):], " \t\r\n")
		if len(rest) > 0 && rest[0] == ':' {
			rest = bytes.TrimLeft(rest[1:], " \t\r\n")
			if len(rest) > 0 && rest[0] == '"' {
				return decodeStringPrefix(rest[1:])
			}
		}
		j := bytes.Index(head[i+1:], []byte(`"text"`))
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return ""
}

// decodeStringPrefix decodes JSON string content up to the closing quote or
// the end of b, dropping an escape cut off at the end.
func decodeStringPrefix(b []byte) string {
	var out []byte
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '"':
			return string(out)
		case c != '\\':
			out = append(out, c)
			continue
		}
		if i+1 >= len(b) {
			break
		}
		i++
		switch b[i] {
		case 'n':
			out = append(out, '\n')
		case 't':
			out = append(out, '\t')
		case 'r':
			out = append(out, '\r')
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'u':
			if i+4 >= len(b) {
				i = len(b)
				continue
			}
			if v, err := strconv.ParseUint(string(b[i+1:i+5]), 16, 32); err == nil {
				out = utf8.AppendRune(out, rune(v))
			}
			i += 4
		default: // \" \\ \/
			out = append(out, b[i])
		}
	}
	// Cut off mid-string: drop a partial UTF-8 sequence at the end.
	for len(out) > 0 && !utf8.Valid(out[max(0, len(out)-4):]) {
		out = out[:len(out)-1]
	}
	return string(out)
}

// topScanner follows a JSON object byte by byte without keeping it, noting
// its top-level "id" value and whether it has "result", "error" or
// "method" keys.
type topScanner struct {
	depth     int
	inStr     bool
	esc       bool
	inKey     bool
	expectKey bool
	key       []byte
	capturing bool
	id        []byte

	hasResult, hasError, hasMethod bool
}

func (s *topScanner) feed(b []byte) {
	for _, c := range b {
		if s.capturing && !(s.depth == 1 && !s.inStr && (c == ',' || c == '}')) {
			if len(s.id) < 256 {
				s.id = append(s.id, c)
			}
		}
		if s.inStr {
			switch {
			case s.esc:
				s.esc = false
			case c == '\\':
				s.esc = true
			case c == '"':
				s.inStr = false
				s.inKey = false
				continue
			}
			if s.inKey && len(s.key) < 32 {
				s.key = append(s.key, c)
			}
			continue
		}
		switch c {
		case '"':
			s.inStr = true
			if s.depth == 1 && s.expectKey {
				s.inKey, s.expectKey = true, false
				s.key = s.key[:0]
			}
		case '{', '[':
			s.depth++
			if s.depth == 1 && c == '{' {
				s.expectKey = true
			}
		case '}', ']':
			if s.depth == 1 {
				s.capturing = false
			}
			s.depth--
		case ':':
			if s.depth == 1 {
				switch string(s.key) {
				case "id":
					s.capturing, s.id = true, s.id[:0]
				case "result":
					s.hasResult = true
				case "error":
					s.hasError = true
				case "method":
					s.hasMethod = true
				}
			}
		case ',':
			if s.depth == 1 {
				s.capturing = false
				s.expectKey = true
			}
		}
	}
}

// callTracker remembers the method of recent requests sent to the server,
// by id, so that an oversized response can be handled by what it answers.
// It keeps the newest maxTracked requests; answered ones age out.
type callTracker struct {
	mu      sync.Mutex
	pending map[string]string
	order   []string // ids, oldest first
}

const maxTracked = 4096

func newCallTracker() *callTracker { return &callTracker{pending: map[string]string{}} }

// note records the requests in one outgoing write (one or more
// newline-delimited messages).
func (t *callTracker) note(p []byte) {
	for _, line := range bytes.Split(p, []byte{'\n'}) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 || m.Method == "" {
			continue
		}
		id := string(bytes.TrimSpace(m.ID))
		t.mu.Lock()
		if _, ok := t.pending[id]; !ok {
			t.order = append(t.order, id)
		}
		t.pending[id] = m.Method
		for len(t.order) > maxTracked {
			delete(t.pending, t.order[0])
			t.order = t.order[1:]
		}
		t.mu.Unlock()
	}
}

// take returns and forgets the method of the request with this id.
func (t *callTracker) take(id string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.pending[id]
	delete(t.pending, id)
	return m
}

// trackingWriter notes every outgoing request.
type trackingWriter struct {
	w     io.WriteCloser
	calls *callTracker
}

func (w *trackingWriter) Write(p []byte) (int, error) {
	w.calls.note(p)
	return w.w.Write(p)
}

func (w *trackingWriter) Close() error { return w.w.Close() }
