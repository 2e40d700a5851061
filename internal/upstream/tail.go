package upstream

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// tailBuffer keeps the end of a stdio child's stderr, so that a failure
// can show what the server said without letting a chatty server grow
// memory without bound: its last max bytes, in a ring (so that keeping a
// write costs the write's size, not the buffer's), as whole lines. A line
// longer than maxLine keeps its beginning (where a message says what went
// wrong) followed by a mark saying how much was cut, so that one endless
// line cannot push every other line out.
//
// The child's stderr is read into it by a stderrPipe on Linux (os/exec's
// copy elsewhere); the stdout lines that are not MCP messages come in
// through Write as well.
type tailBuffer struct {
	mu      sync.Mutex
	max     int
	maxLine int
	buf     []byte // up to max bytes; once full, a ring whose oldest byte is at head
	head    int
	dropped int64 // bytes pushed out of the ring
	lineLen int   // bytes of the current, unfinished line kept
	cutting bool  // the current line is past maxLine: its bytes are counted in cut, not kept
	cut     int64
}

// maxLineBytes bounds one line kept (and a quarter of the tail).
const maxLineBytes = 16 << 10

func newTailBuffer(max int) *tailBuffer {
	if max <= 0 {
		max = 64 << 10
	}
	return &tailBuffer{max: max, maxLine: min(maxLineBytes, max/4)}
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.absorb(p)
	return len(p), nil
}

// absorb keeps p, the next bytes written, cutting a line past maxLine.
// Called with t.mu held.
func (t *tailBuffer) absorb(p []byte) {
	for len(p) > 0 {
		if t.cutting {
			i := bytes.IndexByte(p, '\n')
			if i < 0 {
				t.cut += int64(len(p))
				return
			}
			t.cut += int64(i)
			t.put(fmt.Appendf(nil, lineCutMark, t.cut))
			t.cutting, t.cut, t.lineLen = false, 0, 0
			p = p[i:]
		}
		n := t.whole(p)
		t.put(p[:n])
		if p = p[n:]; len(p) > 0 {
			t.cutting = true
		}
	}
}

// lineCutMark ends a line cut at maxLine bytes.
const lineCutMark = " [truncated by switchboard: %d bytes of this line omitted]"

// whole returns how much of p can be kept as it is: all of it, or up to
// where the current line passes maxLine (not splitting a UTF-8 sequence).
// It scans p a window of up to maxLine bytes at a time, not line by line.
func (t *tailBuffer) whole(p []byte) int {
	pos, room := 0, t.maxLine-t.lineLen
	for {
		if len(p)-pos <= room {
			if j := bytes.LastIndexByte(p[pos:], '\n'); j >= 0 {
				t.lineLen = len(p) - (pos + j + 1)
			} else {
				t.lineLen += len(p) - pos
			}
			return len(p)
		}
		j := bytes.LastIndexByte(p[pos:pos+room+1], '\n')
		if j < 0 {
			n := pos + room
			for n > pos && !utf8.RuneStart(p[n]) {
				n--
			}
			return n
		}
		pos += j + 1
		room = t.maxLine
		t.lineLen = 0
	}
}

// put appends p to the ring, pushing out its oldest bytes.
func (t *tailBuffer) put(p []byte) {
	if len(p) >= t.max {
		t.dropped += int64(len(t.buf) + len(p) - t.max)
		if cap(t.buf) < t.max {
			t.buf = make([]byte, t.max)
		}
		t.buf = t.buf[:t.max]
		copy(t.buf, p[len(p)-t.max:])
		t.head = 0
		return
	}
	if room := t.max - len(t.buf); room > 0 {
		k := min(room, len(p))
		t.buf = append(t.buf, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 {
		k := copy(t.buf[t.head:], p)
		t.dropped += int64(k)
		t.head = (t.head + k) % t.max
		p = p[k:]
	}
}

// String returns the retained text, starting at a line boundary when bytes
// were dropped, and never splitting a UTF-8 sequence; a line being cut
// ends with the mark of how much was cut so far.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := make([]byte, 0, len(t.buf)+len(lineCutMark)+20)
	b = append(append(b, t.buf[t.head:]...), t.buf[:t.head]...)
	if t.dropped > 0 {
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
		for len(b) > 0 && !utf8.RuneStart(b[0]) {
			b = b[1:]
		}
	}
	if t.cutting {
		b = fmt.Appendf(b, lineCutMark, t.cut)
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
var errorLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(\w*error|fatal|panic|\w*exception|traceback|cannot|can't|could not|couldn't|failed|failure|not found|no such|denied|refused|invalid|missing|unable|(?-i:E[A-Z0-9]{3,}))\b`)
})

// boilerplate matches stderr lines that never say what went wrong, however
// they are worded: pointers to a log file, npm's closing advice, a
// runtime's version banner, bare prefixes with nothing after them.
var boilerplate = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(` +
		`a complete log of this run can be found in|` + // npm
		`^(npm (error|err!)\s*)?(\d{3})?\s*$|` + // "npm error", "npm ERR! 404": a prefix alone
		`^npm (error|err!) (404\s+)?(note that you can also install|tarball, folder, http url|verbose|timing|\s*/\S+-debug-\d+\.log$)|` +
		`^node\.js v\d|` + // node's banner after a crash
		`for help, see:|run with --verbose|` +
		`see the log file|debug log|log file:` +
		`)`)
})

// npmCode is the line npm starts an error with ("npm error code E404");
// the line after it is npm's summary of the error.
var npmCode = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^npm (error|ERR!) code \S+$`) })

// stderrSummary is the line of a server's stderr to put in an error
// message: the one that says what went wrong, picked by these rules, in
// order, over the retained stderr with boilerplate lines (log pointers,
// npm's closing advice, version banners, stack frames) left out:
//
//  1. the exception of the last Python traceback (its first unindented
//     line: "ModuleNotFoundError: No module named 'mcp'");
//  2. npm's summary, the line after its "npm error code EXXX" line
//     ("npm error 404 Not Found - GET https://registry.npmjs.org/...");
//  3. the last line that says error, fatal, panic, an exception, not
//     found, denied, refused, an error code (E404, ENOENT) and the like;
//  4. otherwise the last three lines.
func stderrSummary(s string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if t := strings.TrimSpace(l); t == "" || boilerplate().MatchString(t) || isStackFrame(t) {
			continue
		}
		lines = append(lines, strings.TrimRight(l, " \t\r"))
	}
	if len(lines) == 0 {
		return ""
	}
	// 1. A Python traceback: its exception is the first line after it that
	// is not indented (frames and source lines are).
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "Traceback (most recent call last)") {
			for _, l := range lines[i+1:] {
				if l[0] != ' ' && l[0] != '\t' {
					return strings.TrimSpace(l)
				}
			}
			break
		}
	}
	// 2. npm's summary follows its error code.
	for i := len(lines) - 2; i >= 0; i-- {
		if npmCode().MatchString(strings.TrimSpace(lines[i])) {
			return strings.TrimSpace(lines[i+1])
		}
	}
	// 3. The last line that names a failure.
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); len(l) > 3 && errorLine().MatchString(l) {
			return l
		}
	}
	return strings.Join(lines[max(0, len(lines)-3):], "\n")
}

// isStackFrame reports whether l is a frame of a stack trace (JavaScript's
// "at f (file:1:2)", Python's `File "x.py", line 3`, Go's "main.go:12 +0x1d").
func isStackFrame(l string) bool {
	return strings.HasPrefix(l, "at ") || strings.HasPrefix(l, "File \"") || goFrame().MatchString(l)
}

var goFrame = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^/\S+\.go:\d+( \+0x[0-9a-f]+)?$`) })
