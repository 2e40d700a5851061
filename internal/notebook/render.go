package notebook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
)

// files saves binary results (images, audio, blobs) next to the document
// and returns the links to them.
type files struct {
	docDir string // the document's folder
	dir    string // where files go
	stem   string // the document's name without its extension
	dryRun bool
}

// save writes data to a file named after the document, the block's hash
// and the item's position, unless the same bytes are already there, and
// returns its path relative to the document.
func (f *files) save(hash string, n int, mimeType string, data []byte) (string, error) {
	name := fmt.Sprintf("%s.%s.%d%s", f.stem, hash, n, extension(mimeType))
	p := filepath.Join(f.dir, name)
	rel, err := filepath.Rel(f.docDir, p)
	if err != nil {
		rel = p
	}
	rel = filepath.ToSlash(rel)
	if f.dryRun {
		return rel, nil
	}
	if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, data) {
		return rel, nil
	}
	if err := os.MkdirAll(f.dir, 0o755); err != nil {
		return "", fmt.Errorf("creating %s: %w", f.dir, err)
	}
	if err := writeAtomic(p, data, 0o644); err != nil {
		return "", err
	}
	return rel, nil
}

// extension returns the file extension for a MIME type.
func extension(mimeType string) string {
	mt, _, _ := strings.Cut(mimeType, ";")
	switch strings.ToLower(strings.TrimSpace(mt)) {
	case "image/png":
		return ".png"
	case "image/jpeg", "image/jpg":
		return ".jpg"
	case "image/gif":
		return ".gif"
	case "image/webp":
		return ".webp"
	case "image/svg+xml":
		return ".svg"
	case "audio/wav", "audio/x-wav":
		return ".wav"
	case "audio/mpeg":
		return ".mp3"
	case "audio/ogg":
		return ".ogg"
	case "application/pdf":
		return ".pdf"
	}
	return ".bin"
}

// outcome is what running a block produced.
type outcome struct {
	res *toolcall.Result
	err error
}

// status is the status recorded in the result marker.
func (o outcome) status() string {
	switch {
	case o.err != nil:
		switch fault.KindOf(o.err) {
		case fault.Timeout:
			return string(toolcall.StatusTimeout)
		case fault.Cancelled:
			return string(toolcall.StatusCancelled)
		}
		return string(toolcall.StatusError)
	case o.res.IsError:
		return string(toolcall.StatusError)
	case o.res.OutputError != nil:
		return string(toolcall.StatusOutputInvalid)
	}
	return string(toolcall.StatusSuccess)
}

// failed reports whether the block failed.
func (o outcome) failed() bool { return o.err != nil || o.res.IsError }

// renderRegion renders a block's result between markers, each line with
// the block's container prefix.
func renderRegion(b *Block, o outcome, fs *files) (string, error) {
	var body strings.Builder
	if err := renderBody(&body, b, o, fs); err != nil {
		return "", err
	}
	var out strings.Builder
	writeLine(&out, b.prefix, fmt.Sprintf("%s hash=%s status=%s -->", markerOpen, b.Hash(), o.status()))
	for _, l := range strings.SplitAfter(strings.TrimRight(body.String(), "\n"), "\n") {
		writeLine(&out, b.prefix, strings.TrimSuffix(l, "\n"))
	}
	writeLine(&out, b.prefix, markerClose)
	return out.String(), nil
}

// writeLine writes one line with the container prefix (trimmed on a blank
// line, so that no trailing spaces are written).
func writeLine(w *strings.Builder, prefix, line string) {
	if line == "" {
		w.WriteString(strings.TrimRight(prefix, " \t"))
	} else {
		w.WriteString(prefix)
		w.WriteString(line)
	}
	w.WriteByte('\n')
}

// renderBody renders what goes between the markers.
func renderBody(w *strings.Builder, b *Block, o outcome, fs *files) error {
	if o.err != nil {
		return renderError(w, fault.As(o.err))
	}
	r := o.res
	if r.IsError {
		fe := &fault.Error{Kind: "tool", Message: toolText(r.CallToolResult)}
		return renderError(w, fe)
	}
	var content strings.Builder
	if r.Partial {
		fmt.Fprintf(&content, "_Partial result (budget exceeded)%s._\n\n", colon(r.Missing))
	}
	if r.Truncated {
		fmt.Fprintf(&content, "_Truncated: the result was %d bytes._\n\n", r.Bytes)
	}
	inline := r.Display == toolcall.DisplayInline && len(r.Content) == 1 && r.StructuredContent == nil
	if inline {
		if t, ok := r.Content[0].(*mcp.TextContent); ok && !strings.Contains(strings.TrimSpace(t.Text), "\n") {
			switch textType(r.ContentType, t.Text) {
			case toolcall.ContentMarkdown:
				content.WriteString(escapeMarkers(strings.TrimSpace(t.Text)))
			default:
				content.WriteString(codeSpan(strings.TrimSpace(t.Text)))
			}
			content.WriteByte('\n')
			w.WriteString(content.String())
			return nil
		}
	}
	n := 0
	for _, c := range r.Content {
		if err := renderContent(&content, b, r.ContentType, c, fs, &n); err != nil {
			return err
		}
	}
	if len(r.Content) == 0 && r.StructuredContent != nil {
		js, err := json.MarshalIndent(r.StructuredContent, "", "  ")
		if err != nil {
			return fmt.Errorf("encoding structured content: %w", err)
		}
		fence(&content, "json", string(js))
	}
	if r.Display == toolcall.DisplayCollapsed {
		fmt.Fprintf(w, "<details>\n<summary>Result of %s (%d bytes)</summary>\n\n", b.Tool, r.Bytes)
		w.WriteString(content.String())
		w.WriteString("\n</details>\n")
		return nil
	}
	w.WriteString(content.String())
	return nil
}

// renderContent renders one content block.
func renderContent(w *strings.Builder, b *Block, ct toolcall.ContentType, c mcp.Content, fs *files, n *int) error {
	sep := func() {
		if w.Len() > 0 && !strings.HasSuffix(w.String(), "\n\n") {
			w.WriteString("\n")
		}
	}
	sep()
	switch c := c.(type) {
	case *mcp.TextContent:
		renderText(w, textType(ct, c.Text), c.Text)
	case *mcp.ImageContent:
		*n++
		rel, err := fs.save(b.Hash(), *n, c.MIMEType, c.Data)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "![image %d](%s)\n", *n, linkDest(rel))
	case *mcp.AudioContent:
		*n++
		rel, err := fs.save(b.Hash(), *n, c.MIMEType, c.Data)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "[audio %d](%s)\n", *n, linkDest(rel))
	case *mcp.EmbeddedResource:
		rc := c.Resource
		if rc == nil {
			return nil
		}
		if rc.Blob != nil {
			*n++
			rel, err := fs.save(b.Hash(), *n, rc.MIMEType, rc.Blob)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "[%s](%s)\n", linkText(rc.URI), linkDest(rel))
			return nil
		}
		switch {
		case strings.HasPrefix(rc.MIMEType, "text/markdown"):
			renderText(w, toolcall.ContentMarkdown, rc.Text)
		case strings.Contains(rc.MIMEType, "json"):
			renderText(w, toolcall.ContentJSON, rc.Text)
		default:
			renderText(w, toolcall.ContentText, rc.Text)
		}
	case *mcp.ResourceLink:
		name := c.Name
		if c.Title != "" {
			name = c.Title
		}
		fmt.Fprintf(w, "[%s](%s)\n", linkText(name), linkDest(c.URI))
	}
	return nil
}

// textType is the content type a text content block is rendered as: the
// result's, except that text the engine took for Markdown (it has a
// fence line) whose fences do not pair up is plain text that happens to
// hold backticks, shown verbatim in a text fence rather than as broken
// Markdown.
func textType(ct toolcall.ContentType, s string) toolcall.ContentType {
	if ct == toolcall.ContentMarkdown {
		if _, _, open := openFence(strings.TrimRight(s, "\n")); open {
			return toolcall.ContentText
		}
	}
	return ct
}

// renderText renders text by the result's content type: markdown as it
// is, JSON as an indented json fence, anything else as a text fence.
func renderText(w *strings.Builder, ct toolcall.ContentType, s string) {
	switch ct {
	case toolcall.ContentMarkdown:
		w.WriteString(balanceFences(escapeMarkers(strings.TrimRight(s, "\n"))))
		w.WriteByte('\n')
	case toolcall.ContentJSON:
		var buf bytes.Buffer
		if json.Indent(&buf, []byte(strings.TrimSpace(s)), "", "  ") == nil {
			fence(w, "json", buf.String())
			return
		}
		fence(w, "text", s)
	default:
		fence(w, "text", s)
	}
}

// renderError renders a structured error (seed 002's ErrorResponse) as a
// json fence.
func renderError(w *strings.Builder, fe *fault.Error) error {
	js, err := json.MarshalIndent(fe, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the error: %w", err)
	}
	w.WriteString("**Error:** ")
	w.WriteString(escapeMarkers(oneLine(fe.Message)))
	w.WriteString("\n\n")
	fence(w, "json", string(js))
	return nil
}

// fence writes s in a fenced block longer than any backtick run in it, so
// that it shows verbatim. Text holding a line that would read as the
// result's closing marker goes in an HTML <pre> block instead, escaped,
// which shows the same text without ending the result early.
func fence(w *strings.Builder, info, s string) {
	if endsRegion(s) {
		w.WriteString("<pre>")
		w.WriteString(html.EscapeString(strings.TrimRight(s, "\n")))
		w.WriteString("</pre>\n")
		return
	}
	f := strings.Repeat("`", max(3, longestRun(s, '`')+1))
	w.WriteString(f + info + "\n")
	s = strings.TrimRight(s, "\n")
	if s != "" {
		w.WriteString(s)
		w.WriteByte('\n')
	}
	w.WriteString(f + "\n")
}

// endsRegion reports whether a line of s would be read as a result's
// closing marker (Document.region's test).
func endsRegion(s string) bool {
	for _, l := range strings.Split(s, "\n") {
		if string(bytes.TrimSpace(stripContainer([]byte(l)))) == markerClose {
			return true
		}
	}
	return false
}

// codeSpan renders one line as a code span. The text is not escaped: a
// code span shows it literally, and a line that starts with backticks
// cannot be read as a result marker.
func codeSpan(s string) string {
	ticks := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || s == "" {
		s = " " + s + " "
	}
	return ticks + s + ticks
}

func longestRun(s string, c byte) int {
	best, cur := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			cur++
			best = max(best, cur)
		} else {
			cur = 0
		}
	}
	return best
}

// escapeMarkers keeps a result from ending its own region early.
func escapeMarkers(s string) string {
	if !strings.Contains(s, "switchboard:result") {
		return s
	}
	s = strings.ReplaceAll(s, markerClose, "&lt;!-- /switchboard:result --&gt;")
	return strings.ReplaceAll(s, markerOpen, "&lt;!-- switchboard:result")
}

// balanceFences closes a fence that Markdown text leaves open, so that it
// does not swallow the rest of the document.
func balanceFences(s string) string {
	if c, n, open := openFence(s); open {
		return s + "\n" + strings.Repeat(string(c), n)
	}
	return s
}

// openFence returns the fence character and length of a fence that
// Markdown text leaves open, if any.
func openFence(s string) (char byte, length int, open bool) {
	var openC byte
	openLen := 0
	for _, line := range strings.Split(s, "\n") {
		t := strings.TrimLeft(line, " ")
		if len(line)-len(t) > 3 || t == "" || (t[0] != '`' && t[0] != '~') {
			continue
		}
		n := 0
		for n < len(t) && t[n] == t[0] {
			n++
		}
		if n < 3 {
			continue
		}
		switch {
		case openC == 0:
			openC, openLen = t[0], n
		case t[0] == openC && n >= openLen && strings.TrimSpace(t[n:]) == "":
			openC = 0
		}
	}
	return openC, openLen, openC != 0
}

// linkDest renders a link destination, in angle brackets when it has
// spaces or parentheses.
func linkDest(s string) string {
	if strings.ContainsAny(s, " ()<>") {
		return "<" + strings.NewReplacer("<", "%3C", ">", "%3E").Replace(s) + ">"
	}
	return s
}

// linkText escapes brackets in a link's text.
func linkText(s string) string {
	return strings.NewReplacer("[", `\[`, "]", `\]`, "\n", " ").Replace(s)
}

func colon(s string) string {
	if s == "" {
		return ""
	}
	return ": " + oneLine(s)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// toolText is the text of a tool's error result.
func toolText(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	if len(parts) == 0 {
		return "the tool reported an error"
	}
	return strings.Join(parts, "\n")
}
