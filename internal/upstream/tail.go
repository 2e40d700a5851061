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
