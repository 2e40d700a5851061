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
		fmt.Fprintln(r.out, strings.TrimRight(c.Text, "\n"))
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

// saveBlob writes binary content to a new file in outDir and prints its
// path. Bytes are written exactly as received.
func (r *renderer) saveBlob(what, mimeType string, data []byte) error {
	ext := ".bin"
	if exts, _ := mime.ExtensionsByType(mimeType); len(exts) > 0 {
		ext = exts[len(exts)-1]
		for _, e := range exts {
			if len(e) == 4 { // prefer .png, .wav, .jpg over rarer spellings
				ext = e
				break
			}
		}
	}
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
