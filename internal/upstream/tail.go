package upstream

import (
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// tailBuffer is an io.Writer that keeps only the last max bytes written.
// A stdio child's stderr goes here so that a failure can show what the server
// said without letting a chatty server grow memory without bound.
type tailBuffer struct {
	mu      sync.Mutex
	max     int
	buf     []byte
	dropped int64
}

func newTailBuffer(max int) *tailBuffer {
	if max <= 0 {
		max = 64 << 10
	}
	return &tailBuffer{max: max}
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) >= t.max {
		t.dropped += int64(len(t.buf) + len(p) - t.max)
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return n, nil
	}
	if over := len(t.buf) + len(p) - t.max; over > 0 {
		t.dropped += int64(over)
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// String returns the retained text, starting at a line boundary when bytes
// were dropped, and never splitting a UTF-8 sequence.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if t.dropped > 0 {
		if i := strings.IndexByte(string(b), '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
		for len(b) > 0 && !utf8.RuneStart(b[0]) {
			b = b[1:]
		}
	}
	return strings.TrimRight(string(b), "\n")
}

// lastLines returns at most n trailing lines of s.
func lastLines(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// errorLine matches a line of a server's stderr that says what went wrong.
var errorLine = regexp.MustCompile(`(?i)\b(\w*error|fatal|panic|\w*exception|traceback|cannot|can't|could not|couldn't|failed|failure|not found|no such|denied|refused|invalid|missing|unable)\b`)

// stderrSummary is the part of a server's stderr to put in an error
// message: the last line that says what went wrong (a stack trace's
// "Error: Cannot find module ..." rather than its closing "}"), else the
// last three lines.
func stderrSummary(s string) string {
	tail := lastLines(s, 20)
	lines := strings.Split(tail, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if len(l) > 3 && errorLine.MatchString(l) && !strings.HasPrefix(l, "at ") {
			return l
		}
	}
	return lastLines(tail, 3)
}
