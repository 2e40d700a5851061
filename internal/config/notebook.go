package config

import (
	"fmt"
	"strconv"
	"strings"
)

// This file reads the notebook: block (the Markdown document runner, see
// docs/documents.md) and the section bindings that a document's front
// matter may also hold.

// Limits and defaults of the notebook: block.
const (
	// DefaultNotebookConcurrency is how many blocks of a document run at
	// once unless --concurrency says otherwise.
	DefaultNotebookConcurrency = 1
	// MaxNotebookConcurrency bounds notebook.concurrency and --concurrency.
	MaxNotebookConcurrency = 64
	// DefaultNotebookMaxBlocks is the most tool-call blocks a document may
	// hold.
	DefaultNotebookMaxBlocks = 1000
	// MaxNotebookMaxBlocks bounds notebook.max_blocks.
	MaxNotebookMaxBlocks = 100000
)

// notebookDocs is where a person reads about the block.
const notebookDocs = "docs/documents.md"

// The keys of the block and of a binding, in documentation order.
var (
	notebookKeys = []string{"bindings", "images_dir", "concurrency", "max_blocks"}
	bindingKeys  = []string{"heading", "block", "start_line", "end_line", "server", "inherit_to_children"}
)

// Notebook configures the Markdown document runner (`switchboard doc`).
// The zero value means every default.
type Notebook struct {
	// Bindings decide which server the blocks of a section use; a
	// document's front matter may add its own, which come first.
	Bindings []Binding
	// ImagesDir is where images and other binary results are saved,
	// relative to the document's folder; "" is the document's folder.
	ImagesDir string
	// Concurrency is how many blocks run at once (0 means
	// DefaultNotebookConcurrency); results are still written in document
	// order.
	Concurrency int
	// MaxBlocks is the most tool-call blocks a document may hold (0 means
	// DefaultNotebookMaxBlocks).
	MaxBlocks int
	// Pos is where the block was written.
	Pos Pos
}

// Binding binds a section of a document to a server (seed 001
// SectionBinding). Exactly one of Heading, Block or StartLine/EndLine is
// set.
type Binding struct {
	// Heading is a heading's text, with or without its leading #s
	// ("## Weather" matches only a level-2 heading, "Weather" any level).
	Heading string
	// Block is a block id, written ^id on the block, without the ^.
	Block string
	// StartLine and EndLine are a range of lines, 1-based and inclusive.
	StartLine, EndLine int
	// Server is the server the section's blocks use.
	Server string
	// InheritToChildren applies a heading binding to the headings nested
	// under it as well.
	InheritToChildren bool
	// Pos is where the binding was written (the configuration file or the
	// document's front matter).
	Pos Pos
}

// Kind names the binding's section type: "heading", "block" or "range".
func (b Binding) Kind() string {
	switch {
	case b.Heading != "":
		return "heading"
	case b.Block != "":
		return "block"
	}
	return "range"
}

// String describes the binding's section for messages, e.g.
// `heading "## Weather"` or "lines 10-20".
func (b Binding) String() string {
	switch b.Kind() {
	case "heading":
		return fmt.Sprintf("heading %q", b.Heading)
	case "block":
		return "block ^" + b.Block
	}
	return fmt.Sprintf("lines %d-%d", b.StartLine, b.EndLine)
}

// EffectiveConcurrency returns Concurrency, or its default when unset.
func (n Notebook) EffectiveConcurrency() int {
	if n.Concurrency <= 0 {
		return DefaultNotebookConcurrency
	}
	return n.Concurrency
}

// EffectiveMaxBlocks returns MaxBlocks, or its default when unset.
func (n Notebook) EffectiveMaxBlocks() int {
	if n.MaxBlocks <= 0 {
		return DefaultNotebookMaxBlocks
	}
	return n.MaxBlocks
}

// isDefault reports whether n holds only defaults, so that `config show`
// can leave the block out.
func (n Notebook) isDefault() bool {
	return len(n.Bindings) == 0 && n.ImagesDir == "" &&
		n.EffectiveConcurrency() == DefaultNotebookConcurrency && n.EffectiveMaxBlocks() == DefaultNotebookMaxBlocks
}

// decodeNotebook reads the notebook: block. servers are the file's server
// entries, which bindings refer to by name. Keys left out stay zero,
// which means their default.
func (r *resolver) decodeNotebook(p *pair, servers []*rawServer) Notebook {
	var nb Notebook
	n, pos := r.block(p, "notebook")
	nb.Pos = pos
	if n == nil {
		return nb
	}
	r.ps.known(n, "notebook", notebookKeys)
	var names []string
	for _, s := range servers {
		if s.nameOK {
			names = append(names, s.name)
		}
	}
	if p := n.get("bindings"); p != nil {
		nb.Bindings = decodeBindings(r.ps, p.value, "notebook.bindings", names)
	}
	if p := n.get("images_dir"); p != nil && p.value.kind != kindNull {
		if v, ok := r.expandNode(p.value, "notebook.images_dir"); ok {
			nb.ImagesDir = v
		}
	}
	if p := n.get("concurrency"); p != nil {
		const field = "notebook.concurrency"
		if v, ok := r.ps.integer(p.value, field); ok {
			if v < 1 || v > MaxNotebookConcurrency {
				r.ps.add(p.value.pos, field, fmt.Sprintf("%d is out of range", v), fmt.Sprintf("use 1 to %d (the default is %d)", MaxNotebookConcurrency, DefaultNotebookConcurrency), nil)
			} else {
				nb.Concurrency = v
			}
		}
	}
	if p := n.get("max_blocks"); p != nil {
		const field = "notebook.max_blocks"
		if v, ok := r.ps.integer(p.value, field); ok {
			if v < 1 || v > MaxNotebookMaxBlocks {
				r.ps.add(p.value.pos, field, fmt.Sprintf("%d is out of range", v), fmt.Sprintf("use 1 to %d (the default is %d)", MaxNotebookMaxBlocks, DefaultNotebookMaxBlocks), nil)
			} else {
				nb.MaxBlocks = v
			}
		}
	}
	return nb
}

// decodeBindings reads a list of section bindings and checks seed 001's
// rules: exactly one of heading, block or start_line/end_line; an existing
// server; start_line < end_line. Only valid bindings are returned.
func decodeBindings(ps *problems, n *node, field string, servers []string) []Binding {
	if n.kind == kindNull || !ps.expectKind(n, field, "a list of bindings", kindSeq) {
		return nil
	}
	var out []Binding
	for i, it := range n.items {
		base := fmt.Sprintf("%s[%d]", field, i)
		if !ps.expectKind(it, base, "a mapping", kindMap) {
			continue
		}
		before := len(ps.errs)
		ps.known(it, base, bindingKeys)
		b := Binding{Pos: it.pos}
		set := 0
		if p := it.get("heading"); p != nil {
			set++
			if v, ok := ps.str(p.value, base+".heading"); ok {
				if h := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(v), "#")); h == "" {
					ps.add(p.value.pos, base+".heading", "is empty", `write the heading's text, e.g. heading: "## Weather"`, nil)
				} else {
					b.Heading = strings.TrimSpace(v)
				}
			}
		}
		if p := it.get("block"); p != nil {
			set++
			if v, ok := ps.str(p.value, base+".block"); ok {
				v = strings.TrimPrefix(strings.TrimSpace(v), "^")
				if !ValidBlockID(v) {
					ps.add(p.value.pos, base+".block", fmt.Sprintf("invalid block id %q", v), "use letters, digits, _ and -, as written after ^ on the block, e.g. block: forecast", nil)
				} else {
					b.Block = v
				}
			}
		}
		startP, endP := it.get("start_line"), it.get("end_line")
		if startP != nil || endP != nil {
			set++
			switch {
			case startP == nil:
				ps.add(it.pos, base+".start_line", "end_line needs start_line", "add start_line: with the first line of the range", nil)
			case endP == nil:
				ps.add(it.pos, base+".end_line", "start_line needs end_line", "add end_line: with the last line of the range", nil)
			default:
				s, okS := ps.integer(startP.value, base+".start_line")
				e, okE := ps.integer(endP.value, base+".end_line")
				switch {
				case okS && s < 1:
					ps.add(startP.value.pos, base+".start_line", fmt.Sprintf("line %d is out of range", s), "lines are numbered from 1", nil)
				case okS && okE && s >= e:
					ps.add(endP.value.pos, base+".end_line", fmt.Sprintf("end_line %d is not after start_line %d", e, s), "the range must end after it starts (start_line < end_line)", nil)
				case okS && okE:
					b.StartLine, b.EndLine = s, e
				}
			}
		}
		if set != 1 {
			what := "a binding needs a heading, a block or a line range"
			if set > 1 {
				what = "a binding takes exactly one of heading, block or start_line/end_line"
			}
			ps.add(it.pos, base, what, `e.g. heading: "## Weather", or block: forecast, or start_line: 10 with end_line: 20 (see `+notebookDocs+`)`, nil)
		}
		if p := it.get("server"); p == nil || p.value.kind == kindNull {
			ps.add(it.pos, base+".server", "server is required", "add server: with the name of a server under servers:", nil)
		} else if v, ok := ps.str(p.value, base+".server"); ok {
			if !contains(servers, v) {
				fix := "use the name of a server under servers: (" + strings.Join(servers, ", ") + ")"
				if len(servers) == 0 {
					fix = "define the server under servers: first"
				}
				if sug := suggest(v, servers); sug != "" {
					fix = fmt.Sprintf("did you mean %q?", sug)
				}
				ps.add(p.value.pos, base+".server", fmt.Sprintf("unknown server %q", v), fix, nil)
			} else {
				b.Server = v
			}
		}
		if p := it.get("inherit_to_children"); p != nil {
			if v, ok := ps.boolean(p.value, base+".inherit_to_children"); ok {
				b.InheritToChildren = v
			}
		}
		if len(ps.errs) == before {
			out = append(out, b)
		}
	}
	return out
}

// ValidBlockID reports whether s can be a block id (written ^s): 1 to 64
// letters, digits, _ and -.
func ValidBlockID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// ParseFrontMatter reads the switchboard: key of a Markdown document's
// front matter (the YAML between the leading --- lines) and returns its
// section bindings. data is the YAML text, firstLine the document line it
// starts on, so that problems carry the document's line numbers; servers
// are the configured servers' names. Other keys of the front matter
// belong to the document and are ignored. Problems are returned as a
// *ValidationError.
func ParseFrontMatter(file string, data []byte, firstLine int, servers []string) ([]Binding, error) {
	ps := &problems{}
	root := parseTree(file, data, ps)
	var out []Binding
	if len(ps.errs) == 0 && root != nil {
		if root.kind != kindMap {
			ps.add(root.pos, "", fmt.Sprintf("front matter must be a mapping, not %s", root.kind.describe()), "", nil)
		} else if p := root.get("switchboard"); p != nil && p.value.kind != kindNull {
			if ps.expectKind(p.value, "switchboard", "a mapping", kindMap) {
				ps.known(p.value, "switchboard", []string{"bindings"})
				if b := p.value.get("bindings"); b != nil {
					out = decodeBindings(ps, b.value, "switchboard.bindings", servers)
				}
			}
		}
	}
	if len(ps.errs) == 0 {
		for i := range out {
			out[i].Pos = shiftPos(out[i].Pos, file, firstLine)
		}
		return out, nil
	}
	probs := make([]Problem, len(ps.errs))
	for i, p := range ps.errs {
		p.Pos = shiftPos(p.Pos, file, firstLine)
		probs[i] = p
	}
	return nil, &ValidationError{Problems: sortProblems(probs, file)}
}

// shiftPos moves a position in the front matter's text to the document.
func shiftPos(p Pos, file string, firstLine int) Pos {
	p.File = file
	if p.Line > 0 {
		p.Line += firstLine - 1
	}
	return p
}

// notebook writes the notebook: block for `config show`; nothing when it
// holds only defaults.
func (w *yamlWriter) notebook(n Notebook) {
	if n.isDefault() {
		return
	}
	w.line(0, "notebook:")
	if n.ImagesDir != "" {
		w.kv(1, "images_dir", w.str(n.ImagesDir))
	}
	w.kv(1, "concurrency", strconv.Itoa(n.EffectiveConcurrency()))
	w.kv(1, "max_blocks", strconv.Itoa(n.EffectiveMaxBlocks()))
	if len(n.Bindings) == 0 {
		return
	}
	w.line(1, "bindings:")
	for _, b := range n.Bindings {
		switch b.Kind() {
		case "heading":
			w.line(2, "- heading: "+w.str(b.Heading))
		case "block":
			w.line(2, "- block: "+w.str(b.Block))
		default:
			w.line(2, "- start_line: "+strconv.Itoa(b.StartLine))
			w.kv(3, "end_line", strconv.Itoa(b.EndLine))
		}
		w.kv(3, "server", w.str(b.Server))
		if b.InheritToChildren {
			w.kv(3, "inherit_to_children", "true")
		}
	}
}
