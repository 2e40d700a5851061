package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// renderer prints tool results for a person: text to stdout, binary content
// saved to files whose paths are printed.
type renderer struct {
	out    io.Writer
	outDir string
	prefix string // file name prefix, e.g. the tool name
	n      int
}

// content prints one content block. It returns the text written, for
// callers that print errors to stderr instead.
func (r *renderer) content(c mcp.Content) error {
	switch c := c.(type) {
	case *mcp.TextContent:
		fmt.Fprintln(r.out, strings.TrimRight(readableText(c.Text), "\n"))
	case *mcp.ImageContent:
		return r.saveBlob("image", c.MIMEType, c.Data)
	case *mcp.AudioContent:
		return r.saveBlob("audio", c.MIMEType, c.Data)
	case *mcp.ResourceLink:
		name := c.Name
		if c.Title != "" {
			name = c.Title
		}
		fmt.Fprintf(r.out, "[resource link] %s %s\n", name, c.URI)
	case *mcp.EmbeddedResource:
		if c.Resource == nil {
			return nil
		}
		if c.Resource.Blob != nil {
			return r.saveBlob("resource "+c.Resource.URI, c.Resource.MIMEType, c.Resource.Blob)
		}
		fmt.Fprintf(r.out, "[resource] %s\n%s\n", c.Resource.URI, strings.TrimRight(c.Resource.Text, "\n"))
	default:
		b, err := json.Marshal(c)
		if err != nil {
			return err
		}
		fmt.Fprintln(r.out, string(b))
	}
	return nil
}

// readableText is a text result as a person reads it. A JSON object that
// carries Markdown or other multi-line text in its fields — seed 003's
// {"results": "### ...", "metadata": {...}} — prints that text as it is
// (newlines, headings, code blocks), then the other fields as YAML, rather
// than as one line of escaped JSON. Any other text is returned unchanged.
func readableText(text string) string {
	trimmed := strings.TrimSpace(text)
	if !strings.HasPrefix(trimmed, "{") {
		return text
	}
	members, ok := objectMembers(trimmed)
	if !ok {
		return text
	}
	var long []string
	var rest []string
	for _, m := range members {
		var s string
		if json.Unmarshal(m.value, &s) == nil && strings.Contains(s, "\n") {
			long = append(long, strings.TrimRight(s, "\n"))
			continue
		}
		k, _ := json.Marshal(m.key)
		rest = append(rest, string(k)+":"+string(m.value))
	}
	if len(long) == 0 {
		return text
	}
	out := strings.Join(long, "\n\n")
	if len(rest) > 0 {
		y, err := yaml.JSONToYAML([]byte("{" + strings.Join(rest, ",") + "}"))
		if err != nil {
			return text
		}
		out += "\n\n" + strings.TrimRight(string(y), "\n")
	}
	return out
}

// member is one member of a JSON object, in document order.
type member struct {
	key   string
	value json.RawMessage
}

// objectMembers splits a JSON object into its members, in order; ok is
// false when text is not exactly one JSON object.
func objectMembers(text string) ([]member, bool) {
	dec := json.NewDecoder(strings.NewReader(text))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, ok := tok.(string)
		if !ok {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		out = append(out, member{key, v})
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, false
	}
	if strings.TrimSpace(text[dec.InputOffset():]) != "" {
		return nil, false // more after the object
	}
	return out, true
}

// usualExt is the extension people expect for types whose first
// spelling in the system's table is a rare one (.asc for text/plain,
// .jfif for JPEG, .markdown for Markdown).
var usualExt = map[string]string{
	"text/plain": ".txt", "text/markdown": ".md", "text/html": ".html", "image/jpeg": ".jpg",
	"audio/mpeg": ".mp3", "audio/ogg": ".ogg", "video/mp4": ".mp4", "application/octet-stream": ".bin",
}

// blobExt is the file extension for content of mimeType: the usual one,
// else the system's (the one named after the subtype when there is one:
// .png, .wav, .json), else .bin.
func blobExt(mimeType string) string {
	base, _, _ := strings.Cut(mimeType, ";")
	base = strings.ToLower(strings.TrimSpace(base))
	if ext, ok := usualExt[base]; ok {
		return ext
	}
	exts, _ := mime.ExtensionsByType(base)
	if len(exts) == 0 {
		return ".bin"
	}
	_, sub, _ := strings.Cut(base, "/")
	for _, e := range exts {
		if e == "."+sub {
			return e
		}
	}
	return exts[0]
}

// saveBlob writes binary content to a new file in outDir and prints its
// path. Bytes are written exactly as received.
func (r *renderer) saveBlob(what, mimeType string, data []byte) error {
	ext := blobExt(mimeType)
	dir := r.outDir
	if dir == "" {
		dir = os.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("saving %s: %w", what, err)
	}
	r.n++
	f, err := os.CreateTemp(dir, fmt.Sprintf("%s-%d-*%s", safeFileName(r.prefix), r.n, ext))
	if err != nil {
		return fmt.Errorf("saving %s: %w", what, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("saving %s: %w", what, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("saving %s: %w", what, err)
	}
	fmt.Fprintf(r.out, "[%s %s, %d bytes] saved to %s\n", strings.Fields(what)[0], mimeType, len(data), f.Name())
	return nil
}

func safeFileName(s string) string {
	if s == "" {
		return "switchboard"
	}
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			return r
		}
		return '_'
	}, s)
}

// progressBar draws MCP progress on a terminal, one line redrawn in place.
// It draws nothing when the output is not a terminal.
type progressBar struct {
	w       io.Writer
	enabled bool
	mu      sync.Mutex
	drawn   bool
	last    time.Time
}

func newProgressBar(w io.Writer) *progressBar {
	return &progressBar{w: w, enabled: isTerminal(w)}
}

// update draws the latest progress (at most every 50 ms).
func (p *progressBar) update(n *mcp.ProgressNotificationParams) {
	if !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Since(p.last) < 50*time.Millisecond && n.Total > 0 && n.Progress < n.Total {
		return
	}
	p.last = time.Now()
	const width = 30
	line := ""
	if n.Total > 0 {
		frac := min(max(n.Progress/n.Total, 0), 1)
		filled := int(frac * width)
		line = fmt.Sprintf("[%s%s] %3.0f%%", strings.Repeat("#", filled), strings.Repeat(" ", width-filled), frac*100)
	} else {
		line = fmt.Sprintf("[%g]", n.Progress)
	}
	if n.Message != "" {
		line += " " + n.Message
	}
	if len(line) > 100 {
		line = line[:100]
	}
	fmt.Fprintf(p.w, "\r\033[K%s", line)
	p.drawn = true
}

// clear removes the bar.
func (p *progressBar) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}

// firstLine returns the first line of s, shortened to n runes.
func firstLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// absPath returns p made absolute for printing.
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
