// Package notebook runs the tool calls written in a Markdown document
// (seed 001): a fenced block whose info string names a configured server
// (or is `mcp` with a `server:` key) holds a YAML body with `tool:` and the
// parameters; `switchboard doc run` sends each block through the execution
// engine and writes its result right after the block, between markers, so
// that running a document twice changes nothing when the tools answer the
// same.
//
// The document is parsed with goldmark, so fences inside lists, block
// quotes and longer fences are found the way a Markdown renderer sees them.
// Section bindings (from the configuration's notebook.bindings and the
// document's front matter) decide which server a block without one uses.
// The package sits between the CLI and the execution engine: it calls
// toolcall, and reads config; nothing below imports it.
package notebook

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/token"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// InfoMCP is the info string of a block that names its server with a
// `server:` key (or leaves it to the bindings).
const InfoMCP = "mcp"

// Markers around a block's result. The opening marker carries the hash of
// the request the result answers and its status.
const (
	markerOpen  = "<!-- switchboard:result"
	markerClose = "<!-- /switchboard:result -->"
)

// maxDepth bounds the nesting of a block's YAML (flow brackets, or
// block indentation in steps of two columns), for the same reason.
const maxDepth = 64

// maxBody bounds a block's YAML body: goccy/go-yaml's parser slows down
// on deeply nested input, and no tool call needs more.
const maxBody = 256 << 10

// Document is a parsed Markdown document.
type Document struct {
	// Path names the document in messages.
	Path string
	// Source is the document as read.
	Source []byte
	// Bindings are the section bindings of the front matter.
	Bindings []config.Binding
	// FrontMatterErr holds the front matter's problems (a
	// *config.ValidationError with the document's line numbers), or nil.
	FrontMatterErr error
	// Headings are every heading, in document order.
	Headings []Heading
	// Blocks are the tool-call blocks, in document order.
	Blocks []*Block

	lines []int // byte offset at which each line starts
}

// Heading is one heading of the document.
type Heading struct {
	Level int
	Text  string
	Line  int
	// SourceLine is Line counted without the results written above the
	// heading: the line range bindings match.
	SourceLine int
	// Parent is the index of the enclosing heading (the nearest earlier
	// heading of a lower level), or -1.
	Parent int
}

// String renders the heading as written in Markdown, e.g. "## Weather".
func (h Heading) String() string { return strings.Repeat("#", h.Level) + " " + h.Text }

// Block is one tool-call block.
type Block struct {
	// Line is the line of the opening fence, EndLine that of the closing
	// fence.
	Line, EndLine int
	// SourceLine is Line counted without the results written above the
	// block, so that a line range binding keeps matching the same blocks
	// however long their results grow.
	SourceLine int
	// Info is the fence's info string.
	Info string
	// ID is the block's id, written ^id in the info string, or "".
	ID string
	// Explicit is the server the block names: its info string, or the
	// server: key of an mcp block; "" when it names none.
	Explicit string
	Tool     string
	// Args are the parameters (the YAML body without tool:, and without
	// server: in an mcp block).
	Args map[string]any
	// Err is why the block cannot run (bad YAML, no tool:, an unclosed
	// fence, a bad or duplicate id, an unknown server or none), as a
	// *fault.Error; nil otherwise.
	Err error
	// errLine is the line within the block (1 is the line after the
	// opening fence) that Err is about, when it is about one (invalid
	// YAML); 0 otherwise.
	errLine int
	// Section is the index of the innermost heading the block is under,
	// or -1.
	Section int
	// Server is the server the block runs on and Why says how it was
	// chosen ("explicit", "binding ...", "default"); set by Resolve.
	Server, Why string
	// Result is the result already written after the block, or nil.
	Result *Region

	body string
	// dupOf is the line of the earlier block with the same id, for a
	// duplicate id; 0 otherwise.
	dupOf int
	// noWrite is set when writing a result after the block would land in
	// the wrong place: the fence is not closed, or a result's closing
	// marker is missing. The error is reported, not written.
	noWrite bool
	start   int    // offset of the opening fence line
	end     int    // offset just after the closing fence line
	prefix  string // container prefix (quote markers, list indentation) for lines written after the block
}

// Region is a result written after a block, between markers.
type Region struct {
	Line   int
	Hash   string
	Status string
	start  int
	end    int
}

// Hash identifies the request a block makes: its resolved server, tool and
// arguments. A result whose marker records another hash is stale.
func (b *Block) Hash() string {
	h := sha256.New()
	if b.Err != nil {
		h.Write([]byte("error\x00" + b.body))
	} else {
		args, _ := json.Marshal(b.Args) // map keys are sorted
		fmt.Fprintf(h, "%s\x00%s\x00%s", b.Server, b.Tool, args)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// State is a block's last status as recorded in the document: the
// status in its result marker, "missing" without one, "stale" when the
// result answers another request.
func (b *Block) State() string {
	switch {
	case b.Result == nil:
		return StatusMissing
	case b.Result.Hash != b.Hash():
		return StatusStale
	}
	return b.Result.Status
}

// Parse parses a document. servers are the configured servers' names: a
// fence whose info string starts with one of them (or with mcp) is a
// tool-call block; so is a fence whose body is a tool call (tool: NAME)
// under an info string shaped like a server's name that is not a
// language, which names an unknown server (an error, set by Resolve);
// others are left alone. Problems with a block are
// recorded on it (Block.Err); problems with the front matter in
// FrontMatterErr.
func Parse(path string, src []byte, servers []string) *Document {
	d := &Document{Path: path, Source: src, lines: lineStarts(src)}
	md := src
	if fm, body, ok := frontMatter(src); ok {
		// goldmark must not see the front matter (it would read it as a
		// thematic break and a heading), but offsets must stay the same.
		md = bytes.Clone(src)
		for i := 0; i < body; i++ {
			if md[i] != '\n' {
				md[i] = ' '
			}
		}
		d.Bindings, d.FrontMatterErr = config.ParseFrontMatter(path, fm, 2, servers)
		pointToThisDoc(d.FrontMatterErr)
	}
	root := goldmark.DefaultParser().Parse(text.NewReader(md))
	var stack []int // enclosing headings
	var skipUntil int
	resultLines := 0 // lines of the results seen so far
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			start := headingStart(n)
			if start >= 0 && start < skipUntil {
				return ast.WalkSkipChildren, nil
			}
			h := Heading{Level: n.Level, Text: headingText(n, md), Line: d.line(max(start, 0)), Parent: -1}
			h.SourceLine = h.Line - resultLines
			for len(stack) > 0 && d.Headings[stack[len(stack)-1]].Level >= h.Level {
				stack = stack[:len(stack)-1]
			}
			if len(stack) > 0 {
				h.Parent = stack[len(stack)-1]
			}
			d.Headings = append(d.Headings, h)
			stack = append(stack, len(d.Headings)-1)
			return ast.WalkSkipChildren, nil
		case *ast.FencedCodeBlock:
			if n.Info == nil {
				return ast.WalkSkipChildren, nil
			}
			infoStart := n.Info.Segment.Start
			if infoStart < skipUntil {
				return ast.WalkSkipChildren, nil // inside a result
			}
			info := string(n.Info.Segment.Value(md))
			fields := strings.Fields(info)
			if len(fields) == 0 {
				return ast.WalkSkipChildren, nil
			}
			if fields[0] != InfoMCP && !slices.Contains(servers, fields[0]) && !looksLikeCall(fields[0], n, md) {
				return ast.WalkSkipChildren, nil
			}
			b := d.block(n, md, info, fields)
			if len(stack) > 0 {
				b.Section = stack[len(stack)-1]
			}
			b.SourceLine = b.Line - resultLines
			if b.Result != nil {
				skipUntil = b.Result.end
				resultLines += bytes.Count(src[b.Result.start:b.Result.end], []byte{'\n'})
			}
			d.Blocks = append(d.Blocks, b)
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	d.checkIDs()
	return d
}

// checkIDs makes every block that repeats an earlier block's id invalid:
// a binding by id could not tell them apart. The first keeps its id and
// runs.
func (d *Document) checkIDs() {
	first := make(map[string]*Block)
	for _, b := range d.Blocks {
		if b.ID == "" {
			continue
		}
		f, seen := first[b.ID]
		if !seen {
			first[b.ID] = b
			continue
		}
		if b.Err == nil {
			// The message written into the document names no line (lines
			// move as results are written); reports add the first's line.
			b.Err = blockErr(fmt.Sprintf("duplicate block id ^%s: a block above has it too", b.ID), "give each block its own id")
			b.dupOf = f.Line
		}
	}
}

// pointToThisDoc rewrites the front matter problems' pointer to the list
// of fields: they are documented with documents, not the configuration.
func pointToThisDoc(err error) {
	var ve *config.ValidationError
	if !errors.As(err, &ve) {
		return
	}
	for i := range ve.Problems {
		ve.Problems[i].Fix = strings.ReplaceAll(ve.Problems[i].Fix, "docs/configuration.md", "docs/documents.md")
	}
}

// codeLanguages are info strings that name a language or a data format:
// a fence with one of them is never a tool call, even when its body
// looks like one (a YAML example with tool: in it).
var codeLanguages = map[string]bool{}

func init() {
	for _, l := range strings.Fields(`yaml yml json jsonc json5 jsonl ndjson toml ini cfg conf properties env dotenv
		text txt plain plaintext markdown md mdx rst adoc asciidoc console terminal shell sh bash zsh fish
		powershell ps ps1 pwsh bat cmd diff patch log output stdout stderr csv tsv xml html htm css scss svg
		python py python3 ipython pycon go golang js javascript jsx mjs ts typescript tsx node ruby rb rust rs
		java kotlin kt scala groovy gradle c h cpp cxx hpp cc cs csharp fsharp php perl pl lua r swift objc
		dart elixir ex exs erlang erl haskell hs ocaml ml clojure clj lisp scheme elm julia zig nim v sql
		graphql gql proto protobuf dockerfile docker containerfile makefile make cmake nix hcl tf terraform
		mermaid plantuml dot latex tex http rest vim awk sed jq jinja j2 liquid handlebars hbs mustache
		tmpl template gotemplate helm k8s kubernetes compose ansible caddyfile nginx apache systemd crontab
		sample example output-only none nohighlight`) {
		codeLanguages[l] = true
	}
}

// looksLikeCall reports whether a fence whose info string names no
// configured server still holds a tool call: its body is a YAML mapping
// with a tool: name, and its info string is shaped like a server name
// rather than a language. Such a block is an error (an unknown server,
// with a did-you-mean), not text, so that a typo in the server's name
// does not silently skip the call.
func looksLikeCall(word string, n *ast.FencedCodeBlock, md []byte) bool {
	if len(word) > config.MaxServerNameLen || !config.ValidBlockID(word) || codeLanguages[strings.ToLower(word)] {
		return false
	}
	var body strings.Builder
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		body.Write(seg.Value(md))
	}
	s := body.String()
	if !strings.HasPrefix(s, "tool:") && !strings.Contains(s, "\ntool:") {
		return false // the cheap test first: no tool: key at the top level
	}
	b := &Block{body: s}
	b.parseBody(false)
	return b.Err == nil && !strings.ContainsAny(b.Tool, " \t")
}

// frontMatter returns the YAML between a leading "---" line and the next
// "---" (or "...") line, and the offset just after that closing line.
func frontMatter(src []byte) (yamlText []byte, end int, ok bool) {
	rest, found := bytes.CutPrefix(src, []byte("---\n"))
	if !found {
		if rest, found = bytes.CutPrefix(src, []byte("---\r\n")); !found {
			return nil, 0, false
		}
	}
	off := len(src) - len(rest)
	for i := off; i < len(src); {
		j := bytes.IndexByte(src[i:], '\n')
		lineEnd := len(src)
		if j >= 0 {
			lineEnd = i + j + 1
		}
		l := strings.TrimRight(string(src[i:lineEnd]), "\r\n")
		if l == "---" || l == "..." {
			return src[off:i], lineEnd, true
		}
		i = lineEnd
	}
	return nil, 0, false
}

// block reads one tool-call block.
func (d *Document) block(n *ast.FencedCodeBlock, md []byte, info string, fields []string) *Block {
	infoStart := n.Info.Segment.Start
	lineStart := d.lineStartOf(infoStart)
	b := &Block{Line: d.line(infoStart), Info: info, Section: -1, start: lineStart}
	// The container prefix: what stands before the fence on its line,
	// with list markers turned to spaces and quote markers kept.
	fence := lineStart
	for fence < len(md) && md[fence] != '`' && md[fence] != '~' {
		fence++
	}
	b.prefix = containerPrefix(md[lineStart:fence])
	fenceLen := 0
	for fence+fenceLen < len(md) && md[fence+fenceLen] == md[fence] {
		fenceLen++
	}

	var body strings.Builder
	lines := n.Lines()
	last := infoStart // the last line that belongs to the block
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		body.Write(seg.Value(md))
		last = max(seg.Start, last)
	}
	b.body = body.String()
	// The closing fence is on the line after the last content line.
	next := d.nextLine(last)
	closed := false
	if next < len(md) {
		le := d.lineEnd(next)
		if rest, ok := insideContainers(md[next:le], containers(n)); ok && isClosingFence(rest, md[fence], fenceLen) {
			closed = true
			b.EndLine = d.line(next)
			b.end = le
		}
	}

	if fields[0] != InfoMCP {
		b.Explicit = fields[0]
	}
	for _, f := range fields[1:] {
		if id, ok := strings.CutPrefix(f, "^"); ok {
			if !config.ValidBlockID(id) {
				b.Err = blockErr(fmt.Sprintf("invalid block id %q", f), "use ^ followed by letters, digits, _ and -, e.g. ^forecast")
				continue
			}
			if b.ID != "" {
				b.Err = blockErr(fmt.Sprintf("the block has two ids, ^%s and %s", b.ID, f), "keep one")
				continue
			}
			b.ID = id
		}
	}
	if !closed {
		b.EndLine = d.line(max(last, infoStart))
		b.end = d.lineEnd(d.lineStartOf(max(last, infoStart)))
		b.noWrite = true
		b.Err = blockErr("the fence is not closed", fmt.Sprintf("close the block with %s on its own line", strings.Repeat(string(md[fence]), fenceLen)))
		return b
	}
	b.Result = d.region(b)
	if b.Err != nil {
		return b
	}
	b.parseBody(fields[0] == InfoMCP)
	return b
}

// parseBody reads the block's YAML body.
func (b *Block) parseBody(mcpBlock bool) {
	const fix = "write the tool and its parameters as YAML, e.g.\ntool: forecast\ncity: London"
	if len(b.body) > maxBody {
		b.Err = blockErr(fmt.Sprintf("the block is larger than %d bytes", maxBody), "pass large inputs another way")
		return
	}
	if tooDeep(b.body) {
		b.Err = blockErr(fmt.Sprintf("the block is nested more than %d levels deep", maxDepth), "flatten the parameters")
		return
	}
	if strings.TrimSpace(b.body) == "" {
		b.Err = blockErr("the block is empty", fix)
		return
	}
	var v any
	if err := yaml.Unmarshal([]byte(b.body), &v); err != nil {
		line, msg := 0, err.Error()
		var ye interface {
			GetToken() *token.Token
			GetMessage() string
		}
		if errors.As(err, &ye) {
			msg = ye.GetMessage()
			if tk := ye.GetToken(); tk != nil && tk.Position != nil {
				line = tk.Position.Line
			}
		}
		if line > 0 {
			msg = fmt.Sprintf("line %d of the block: %s", line, msg)
		}
		b.Err = blockErr("invalid YAML: "+msg, fix)
		b.errLine = line
		return
	}
	m, ok := v.(map[string]any)
	if !ok {
		b.Err = blockErr("the block must be a mapping with tool: and the parameters", fix)
		return
	}
	tool, ok := m["tool"].(string)
	if !ok || strings.TrimSpace(tool) == "" {
		b.Err = blockErr("tool: is missing", "add tool: with the name of the tool to call")
		return
	}
	b.Tool = strings.TrimSpace(tool)
	delete(m, "tool")
	if mcpBlock {
		if s, present := m["server"]; present {
			name, ok := s.(string)
			if !ok || name == "" {
				b.Err = blockErr("server: must be a server's name", "write server: NAME, or leave it out to use the section's binding")
				return
			}
			b.Explicit = name
			delete(m, "server")
		}
	}
	b.Args = m
}

// region finds the result written after a block: its opening marker on
// the next non-blank line, up to the closing marker.
func (d *Document) region(b *Block) *Region {
	src := d.Source
	off := b.end
	for off < len(src) {
		le := d.lineEnd(off)
		l := stripContainer(src[off:le])
		if len(bytes.TrimSpace(l)) == 0 {
			off = le
			continue
		}
		if !bytes.HasPrefix(l, []byte(markerOpen)) {
			return nil
		}
		r := &Region{Line: d.line(off), start: off}
		r.Hash, r.Status = markerAttrs(string(bytes.TrimSpace(l)))
		for p := le; p < len(src); {
			pe := d.lineEnd(p)
			if string(bytes.TrimSpace(stripContainer(src[p:pe]))) == markerClose {
				r.end = pe
				return r
			}
			p = pe
		}
		b.noWrite = true
		b.Err = blockErr("the result's opening marker has no closing marker", "remove the result (from "+markerOpen+" down), or add "+markerClose+" after it")
		return nil
	}
	return nil
}

// tooDeep reports whether YAML text nests more than maxDepth levels, by
// brackets or by indentation. It over-counts brackets inside strings,
// which no reasonable tool call has 64 of.
func tooDeep(s string) bool {
	depth, indent, lineStart := 0, 0, true
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\n':
			indent, lineStart = 0, true
			continue
		case lineStart && (c == ' ' || c == '-'):
			if indent++; indent > 2*maxDepth {
				return true
			}
			continue
		case c == '[' || c == '{':
			if depth++; depth > maxDepth {
				return true
			}
		case c == ']' || c == '}':
			depth--
		}
		lineStart = false
	}
	return false
}

// markerAttrs reads hash= and status= from an opening marker.
func markerAttrs(l string) (hash, status string) {
	l = strings.TrimSuffix(strings.TrimPrefix(l, markerOpen), "-->")
	for _, f := range strings.Fields(l) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "hash":
			hash = v
		case "status":
			status = v
		}
	}
	return hash, status
}

// container is one level of a block's nesting: a block quote, or a list
// item whose content is indented by indent columns.
type container struct {
	quote  bool
	indent int
}

// containers returns the block quotes and list items n is nested in,
// outermost first.
func containers(n ast.Node) []container {
	var out []container
	for p := n.Parent(); p != nil; p = p.Parent() {
		switch p := p.(type) {
		case *ast.Blockquote:
			out = append(out, container{quote: true})
		case *ast.ListItem:
			out = append(out, container{indent: p.Offset})
		}
	}
	slices.Reverse(out)
	return out
}

// insideContainers strips a line's quote markers and list indentation
// for the given containers, and reports false when the line is not
// inside them.
func insideContainers(line []byte, cs []container) ([]byte, bool) {
	for _, c := range cs {
		if c.quote {
			i := 0
			for i < 3 && i < len(line) && line[i] == ' ' {
				i++
			}
			if i >= len(line) || line[i] != '>' {
				return nil, false
			}
			line = line[i+1:]
			if len(line) > 0 && (line[0] == ' ' || line[0] == '\t') {
				line = line[1:]
			}
			continue
		}
		i := 0
		for i < c.indent && i < len(line) && line[i] == ' ' {
			i++
		}
		switch {
		case i == c.indent:
		case i < len(line) && line[i] == '\t':
			i++ // a tab reaches the next tab stop, taken as enough
		default:
			return nil, false
		}
		line = line[i:]
	}
	return line, true
}

// isClosingFence reports whether line (inside the block's containers)
// closes a fence of char × n: up to three spaces, at least n fence
// characters, nothing else.
func isClosingFence(line []byte, char byte, n int) bool {
	i := 0
	for i < 3 && i < len(line) && line[i] == ' ' {
		i++
	}
	j := i
	for j < len(line) && line[j] == char {
		j++
	}
	return j-i >= n && len(bytes.TrimSpace(line[j:])) == 0
}

// containerPrefix turns the text before a fence into the prefix of the
// lines that continue its container: quote markers and whitespace stay,
// list markers become spaces.
func containerPrefix(b []byte) string {
	out := []byte(string(b))
	for i, c := range out {
		if c != '>' && c != ' ' && c != '\t' {
			out[i] = ' '
		}
	}
	return string(out)
}

// stripContainer removes the quote markers and indentation at the start
// of a line.
func stripContainer(line []byte) []byte {
	return bytes.TrimLeft(line, " \t>")
}

// headingStart is the offset of a heading's text, or -1 for an empty one.
func headingStart(n *ast.Heading) int {
	if n.Lines().Len() == 0 {
		return -1
	}
	return n.Lines().At(0).Start
}

// headingText is a heading's text as written, its lines joined by spaces.
func headingText(n *ast.Heading, src []byte) string {
	var parts []string
	for i := 0; i < n.Lines().Len(); i++ {
		seg := n.Lines().At(i)
		parts = append(parts, strings.TrimSpace(string(seg.Value(src))))
	}
	return strings.Join(parts, " ")
}

// blockErr is the error of a block that cannot run. It names no line of
// the document, since the lines move as results are written above the
// block; where a line matters it is the block's own.
func blockErr(msg, fix string) error {
	return fault.New(fault.Validation, "%s", msg).WithSuggestions(fix)
}

// lineStarts returns the offset at which each line starts.
func lineStarts(src []byte) []int {
	out := make([]int, 1, bytes.Count(src, []byte{'\n'})+1)
	for i, c := range src {
		if c == '\n' {
			out = append(out, i+1)
		}
	}
	return out
}

// line is the 1-based line of an offset.
func (d *Document) line(off int) int {
	return sort.Search(len(d.lines), func(i int) bool { return d.lines[i] > off })
}

// lineStartOf is the offset at which the line holding off starts.
func (d *Document) lineStartOf(off int) int { return d.lines[d.line(off)-1] }

// lineEnd is the offset just after the line starting at off (after its
// newline, or the end of the document).
func (d *Document) lineEnd(off int) int {
	if i := bytes.IndexByte(d.Source[off:], '\n'); i >= 0 {
		return off + i + 1
	}
	return len(d.Source)
}

// nextLine is the offset of the line after the one holding off.
func (d *Document) nextLine(off int) int {
	l := d.line(off)
	if l >= len(d.lines) {
		return len(d.Source)
	}
	return d.lines[l]
}
