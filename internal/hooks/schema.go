package hooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// checkSchema checks an mcp action's mappings against the tool's input
// schema as the catalog has it now: every mapped parameter must exist and
// every required parameter must be mapped. The result is cached per tool
// definition, so a re-discovered tool is checked again. A tool the catalog
// does not know (yet) is not an error here: the call itself says so.
func (e *Engine) checkSchema(a *action) error {
	if a.cfg.Type != config.HookActionMCP || e.cat == nil {
		return nil
	}
	if e.cat.Fetched(a.cfg.Server, catalog.KindTools).IsZero() {
		return nil // not discovered (yet): nothing to check against
	}
	t, err := e.cat.Tool(a.cfg.Server, a.cfg.Tool)
	if err != nil {
		if fault.KindOf(err) == fault.NotFound && strings.Contains(err.Error(), "has no tool") {
			return fmt.Errorf("%s: %w", a.cfg.Pos, err)
		}
		return nil
	}
	if c := a.schema.Load(); c != nil && c.def == t.Def {
		return c.err()
	}
	c := &schemaCheck{def: t.Def, problems: mappingProblems(a.cfg, t.Def), types: nonStringParams(t.Def)}
	a.schema.Store(c)
	return c.err()
}

// nonStringParams returns the JSON types of each top-level parameter of
// def that does not accept a string.
func nonStringParams(def *mcp.Tool) map[string][]string {
	if def == nil {
		return nil
	}
	props, _ := catalog.SchemaProps(def.InputSchema)
	out := map[string][]string{}
	for name, p := range props {
		if types := catalog.PropTypes(p); len(types) > 0 && !slices.Contains(types, "string") {
			out[name] = types
		}
	}
	return out
}

// typed gives a text value an mcp action maps to param the parameter's
// type, when the parameter takes no string and the text reads as one of
// its types: "3" for an integer, "true" for a boolean, a JSON list for an
// array. Event fields given as key=value (hooks fire, git) are text, and a
// single placeholder keeps its field's type. Anything else is returned as
// it is, for the engine's validation to judge and explain.
func (e *Engine) typed(a *action, param string, v any) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	_ = e.checkSchema(a) // (re)reads the tool's schema; its problems surface when the action runs
	c := a.schema.Load()
	if c == nil {
		return v
	}
	for _, t := range c.types[param] {
		if out, err := catalog.CoerceText(s, t); err == nil {
			return out
		}
	}
	return v
}

func (c *schemaCheck) err() error {
	if len(c.problems) == 0 {
		return nil
	}
	return errors.New(strings.Join(c.problems, "; "))
}

// inputSchema is the part of a JSON schema the check reads.
type inputSchema struct {
	Properties map[string]json.RawMessage `json:"properties"`
	Required   []string                   `json:"required"`
}

// mappingProblems lists, with file:line positions, the mappings to
// parameters the tool does not have and the required parameters left
// unmapped.
func mappingProblems(a config.HookAction, def *mcp.Tool) []string {
	if def == nil || def.InputSchema == nil {
		return nil
	}
	raw, err := json.Marshal(def.InputSchema)
	if err != nil {
		return nil
	}
	var s inputSchema
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	var out []string
	var names []string
	for k := range s.Properties {
		names = append(names, k)
	}
	slices.Sort(names)
	mapped := map[string]bool{}
	for _, m := range a.Params {
		mapped[m.Param] = true
		if s.Properties != nil {
			if _, ok := s.Properties[m.Param]; !ok {
				out = append(out, fmt.Sprintf("%s: tool %s/%s has no parameter %q (it has: %s)", m.Pos, a.Server, a.Tool, m.Param, strings.Join(names, ", ")))
			}
		}
	}
	for _, r := range s.Required {
		if !mapped[r] {
			out = append(out, fmt.Sprintf("%s: required parameter %q of %s/%s is not mapped", a.Pos, r, a.Server, a.Tool))
		}
	}
	return out
}
