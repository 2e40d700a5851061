package notebook

import (
	"fmt"
	"os"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/suggest"
)

// How a block's server was chosen (Block.Why starts with one of these).
const (
	WhyExplicit = "explicit"
	WhyBinding  = "binding"
	WhyDefault  = "default"
)

// ServerNames returns the names of the configured servers, in order.
func ServerNames(cfg *config.Config) []string {
	out := make([]string, 0, len(cfg.Servers))
	for _, s := range cfg.Servers {
		out = append(out, s.Name)
	}
	return out
}

// bindings returns the bindings that apply to the document: the front
// matter's first, then the configuration's.
func (d *Document) bindings(cfg *config.Config) []config.Binding {
	out := make([]config.Binding, 0, len(d.Bindings)+len(cfg.Notebook.Bindings))
	out = append(out, d.Bindings...)
	return append(out, cfg.Notebook.Bindings...)
}

// Resolve chooses each block's server (seed 001's rules): the server the
// block names; else a binding of its block id; else the innermost line
// range holding it; else a binding of its section's heading, or of an
// enclosing heading bound with inherit_to_children (the nearest wins);
// else the first enabled server.
func (d *Document) Resolve(cfg *config.Config) {
	bs := d.bindings(cfg)
	def, defOK := defaultServer(cfg)
	for _, b := range d.Blocks {
		switch {
		case b.Explicit != "":
			b.Server, b.Why = b.Explicit, WhyExplicit
			if _, ok := cfg.Server(b.Explicit); !ok && b.Err == nil {
				b.Err = unknownServer(cfg, b.Explicit)
			}
			continue
		}
		if bd, ok := blockBinding(bs, b.ID); ok {
			b.Server, b.Why = bd.Server, bindingWhy(bd)
			continue
		}
		if bd, ok := rangeBinding(bs, b.SourceLine); ok {
			b.Server, b.Why = bd.Server, bindingWhy(bd)
			continue
		}
		if bd, ok := d.headingBinding(bs, b.Section); ok {
			b.Server, b.Why = bd.Server, bindingWhy(bd)
			continue
		}
		if !defOK {
			if b.Err == nil {
				b.Err = blockErr("no server for the block: it names none, no binding covers it and no server is enabled",
					"name a server in the info string, or enable one in the configuration")
			}
			continue
		}
		b.Server, b.Why = def, WhyDefault
	}
}

// bindingWhy describes a binding for `doc list`.
func bindingWhy(b config.Binding) string {
	return fmt.Sprintf("%s %s (%s)", WhyBinding, b.String(), b.Pos)
}

// defaultServer is the first enabled server.
func defaultServer(cfg *config.Config) (string, bool) {
	for _, s := range cfg.Servers {
		if s.Enabled {
			return s.Name, true
		}
	}
	return "", false
}

func blockBinding(bs []config.Binding, id string) (config.Binding, bool) {
	if id == "" {
		return config.Binding{}, false
	}
	for _, b := range bs {
		if b.Block == id {
			return b, true
		}
	}
	return config.Binding{}, false
}

// rangeBinding returns the narrowest range binding holding line.
func rangeBinding(bs []config.Binding, line int) (config.Binding, bool) {
	var best config.Binding
	found := false
	for _, b := range bs {
		if b.Kind() != "range" || line < b.StartLine || line > b.EndLine {
			continue
		}
		if !found || b.EndLine-b.StartLine < best.EndLine-best.StartLine {
			best, found = b, true
		}
	}
	return best, found
}

// headingBinding walks from the section out: the section's own binding
// wins; an enclosing section's applies only with inherit_to_children.
func (d *Document) headingBinding(bs []config.Binding, section int) (config.Binding, bool) {
	for i, depth := section, 0; i >= 0; i, depth = d.Headings[i].Parent, depth+1 {
		for _, b := range bs {
			if b.Heading == "" || !headingMatches(b.Heading, d.Headings[i]) {
				continue
			}
			if depth == 0 || b.InheritToChildren {
				return b, true
			}
		}
	}
	return config.Binding{}, false
}

// headingMatches reports whether a heading as written in a binding or on
// the command line ("## Weather", or "Weather" for any level) names h.
func headingMatches(want string, h Heading) bool {
	want = strings.TrimSpace(want)
	level := 0
	for level < len(want) && want[level] == '#' {
		level++
	}
	if level > 0 && level != h.Level {
		return false
	}
	return strings.TrimSpace(want[level:]) == h.Text
}

// unknownServer is the error of a block naming a server that is not
// configured.
func unknownServer(cfg *config.Config, name string) error {
	names := ServerNames(cfg)
	fix := "use one of: " + strings.Join(names, ", ")
	if s := suggest.Closest(name, names, 1); len(s) > 0 {
		fix = fmt.Sprintf("did you mean %q?", s[0])
	}
	return blockErr(fmt.Sprintf("unknown server %q", name), fix)
}

// SectionServer returns the server a section of the document at path is
// bound to, and why ("binding ...", or "default" for the first enabled
// server), for `switchboard agent --doc FILE.md --section "## Weather"`.
// section is a heading's text, with or without its leading #s. A section
// the document does not have is a fault.NotFound error listing the
// headings.
func SectionServer(cfg *config.Config, path, section string) (server, why string, err error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return "", "", readError(path, err)
	}
	d := Parse(path, src, ServerNames(cfg))
	if d.FrontMatterErr != nil {
		return "", "", d.FrontMatterErr
	}
	idx := -1
	for i, h := range d.Headings {
		if headingMatches(section, h) {
			idx = i
			break
		}
	}
	if idx < 0 {
		names := make([]string, len(d.Headings))
		for i, h := range d.Headings {
			names[i] = h.String()
		}
		fe := fault.New(fault.NotFound, "%s has no section %q", path, section).WithDetail("headings", names)
		want := strings.TrimSpace(strings.TrimLeft(section, "#"))
		texts := make([]string, len(d.Headings))
		for i, h := range d.Headings {
			texts[i] = h.Text
		}
		if s := suggest.Closest(want, texts, 1); len(s) > 0 {
			fe = fe.WithSuggestions(fmt.Sprintf("did you mean %q?", s[0]))
		}
		if len(names) == 0 {
			fe = fe.WithSuggestions("the document has no headings")
		} else {
			fe = fe.WithSuggestions("its sections: " + strings.Join(names, "; "))
		}
		return "", "", fe
	}
	bs := d.bindings(cfg)
	if b, ok := rangeBinding(bs, d.Headings[idx].SourceLine); ok {
		return b.Server, bindingWhy(b), nil
	}
	if b, ok := d.headingBinding(bs, idx); ok {
		return b.Server, bindingWhy(b), nil
	}
	if s, ok := defaultServer(cfg); ok {
		return s, WhyDefault, nil
	}
	return "", "", fault.New(fault.Config, "no server is enabled").WithSuggestions("enable a server in the configuration")
}
