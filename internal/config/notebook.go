package config

import (
	"fmt"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/config/schema"
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

// decodeNotebook reads the notebook: block. servers are the valid
// server names, which bindings refer to. Keys left out stay zero, which
// means their default.
func (r *resolver) decodeNotebook(f *schema.Notebook, servers []string) Notebook {
	var nb Notebook
	r.readBlock(&nb, f, []any{"notebook"})
	if f != nil {
		nb.Bindings = decodeBindings(r.ps, r.tree, r.violated, f.Bindings, []any{"notebook", "bindings"}, servers)
	}
	return nb
}

// decodeBindings checks seed 001's rules on the bindings at path in tree
// (violated holds the paths the schema found wrong):
// exactly one of heading, block or start_line/end_line; an existing
// server; start_line < end_line. Only valid bindings are returned.
func decodeBindings(ps *problems, tree *node, violated map[string]bool, bindings []schema.Binding, path []any, servers []string) []Binding {
	r := &resolver{ps: ps, tree: tree, violated: violated}
	var out []Binding
	for i, f := range bindings {
		at := func(key ...any) []any { return append(append(path[:len(path):len(path)], i), key...) }
		it := r.at(at()...)
		if it == nil {
			continue // taken out as wrong
		}
		base := r.name(at()...)
		before := len(ps.errs)
		var b Binding // start_line, end_line and inherit_to_children by name
		r.readBlock(&b, &f, at(), "heading", "block")
		set := 0
		if f.Heading != nil {
			set++
			v := strings.TrimSpace(*f.Heading)
			if strings.TrimSpace(strings.TrimLeft(v, "#")) == "" {
				ps.add(r.at(at("heading")...).pos, base+".heading", "is empty", `write the heading's text, e.g. heading: "## Weather"`, nil)
			}
			b.Heading = v
		}
		if f.Block != nil {
			set++
			v := strings.TrimPrefix(strings.TrimSpace(*f.Block), "^")
			if !ValidBlockID(v) {
				ps.add(r.at(at("block")...).pos, base+".block", fmt.Sprintf("invalid block id %q", v), "use letters, digits, _ and -, as written after ^ on the block, e.g. block: forecast", nil)
			}
			b.Block = v
		}
		if f.StartLine != nil || f.EndLine != nil {
			set++
			switch {
			case f.StartLine == nil:
				ps.add(it.pos, base+".start_line", "end_line needs start_line", "add start_line: with the first line of the range", nil)
			case f.EndLine == nil:
				ps.add(it.pos, base+".end_line", "start_line needs end_line", "add end_line: with the last line of the range", nil)
			case *f.StartLine >= *f.EndLine:
				ps.add(r.at(at("end_line")...).pos, base+".end_line", fmt.Sprintf("end_line %d is not after start_line %d", *f.EndLine, *f.StartLine), "the range must end after it starts (start_line < end_line)", nil)
			}
		}
		wrong := false // a section key taken out as wrong does not count
		for _, k := range []string{"heading", "block", "start_line", "end_line"} {
			wrong = wrong || r.violatedUnder(at(k)...)
		}
		if set != 1 && !wrong {
			what := "a binding needs a heading, a block or a line range"
			if set > 1 {
				what = "a binding takes exactly one of heading, block or start_line/end_line"
			}
			ps.add(it.pos, base, what, `e.g. heading: "## Weather", or block: forecast, or start_line: 10 with end_line: 20 (see `+notebookDocs+`)`, nil)
		}
		if n := r.at(at("server")...); n != nil {
			if !contains(servers, f.Server) {
				fix := "use the name of a server under servers: (" + strings.Join(servers, ", ") + ")"
				if len(servers) == 0 {
					fix = "define the server under servers: first"
				}
				if sug := suggest(f.Server, servers); sug != "" {
					fix = fmt.Sprintf("did you mean %q?", sug)
				}
				ps.add(n.pos, base+".server", fmt.Sprintf("unknown server %q", f.Server), fix, nil)
			}
			b.Server = f.Server
		}
		if len(ps.errs) == before && b.Server != "" {
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
			sb := &node{kind: kindMap, pos: root.pos, pairs: []pair{*p}}
			violations, err := schema.ValidateFrontMatter(instance(p.value, nil))
			if err != nil {
				ps.add(p.keyPos, "switchboard", "checking the front matter: "+err.Error(), "", err)
			}
			for _, v := range violations {
				addViolation(sb, schema.Violation{Path: append([]string{"switchboard"}, v.Path...), AtKey: v.AtKey, Missing: v.Missing, Message: v.Message, Fix: v.Fix, Unknown: v.Unknown, Suggestion: v.Suggestion}, ps)
			}
			violated := map[string]bool{}
			for _, v := range violations {
				v.Path = append([]string{"switchboard"}, v.Path...)
				for i := 1; i <= len(v.Path); i++ {
					violated[strings.Join(v.Path[:i], "/")] = true
				}
				prune(sb, v)
			}
			var fm schema.FrontMatter
			if p := sb.get("switchboard"); p != nil {
				if err := decodeInto(p.value, &fm); err != nil {
					ps.add(p.keyPos, "switchboard", "reading the front matter: "+err.Error(), "", err)
				}
			}
			out = decodeBindings(ps, sb, violated, fm.Bindings, []any{"switchboard", "bindings"}, servers)
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
