package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

var printer = message.NewPrinter(language.English)

// msgMissing is the message of a detail about a required field that is
// missing.
const msgMissing = "required, but missing"

// ValidateArgs checks arguments against the tool's compiled input schema.
// args must hold JSON values as decoded with json.Decoder.UseNumber (numbers
// as json.Number). A tool whose schema did not compile is not validated.
// The error is a *fault.Error of kind Validation with one FieldDetail per
// problem.
func (t Tool) ValidateArgs(args map[string]any) error {
	if t.Schema == nil {
		return nil
	}
	var inst any = args
	if args == nil {
		inst = map[string]any{}
	}
	err := t.Schema.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return fault.Wrap(fault.Validation, err, "arguments for %s/%s are invalid", t.Server, t.Def.Name)
	}
	fe := fault.New(fault.Validation, "arguments for %s/%s are invalid", t.Server, t.Def.Name).
		WithDetail("server", t.Server).WithDetail("tool", t.Def.Name)
	fe.Fields = fieldDetails(ve, args, "(arguments)")
	return fe
}

// fieldDetails flattens a validation error tree into per-field details,
// sorted by field; doc is the instance validated, named root in a detail
// about the whole of it.
func fieldDetails(ve *jsonschema.ValidationError, doc any, root string) []fault.FieldDetail {
	var out []fault.FieldDetail
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		switch e.ErrorKind.(type) {
		case *kind.AnyOf, *kind.OneOf:
			if len(e.Causes) > 0 {
				// Any one alternative would do: one detail that names
				// them, not each alternative's problems as if all were
				// needed.
				out = append(out, alternatives(e, doc, root))
				return
			}
		}
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		field := strings.Join(e.InstanceLocation, ".")
		if req, ok := e.ErrorKind.(*kind.Required); ok {
			// One detail per missing field, named by its own path.
			for _, m := range req.Missing {
				name := m
				if field != "" {
					name = field + "." + m
				}
				out = append(out, fault.FieldDetail{Field: name, Message: msgMissing,
					Suggestion: "provide " + name})
			}
			return
		}
		msg := e.ErrorKind.LocalizedString(printer)
		d := fault.FieldDetail{Field: field, Message: msg}
		if field == "" {
			d.Field = root
		}
		if v, ok := lookupPath(doc, e.InstanceLocation); ok && len(e.InstanceLocation) > 0 {
			d.ReceivedValue = shortJSON(v)
		}
		d.Suggestion = suggestionFor(msg)
		out = append(out, d)
	}
	walk(ve)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Field < out[j].Field })
	// Two branches of a schema (an allOf and an if's then or else) may
	// find the same problem: say it once.
	kept := out[:0]
	for i, d := range out {
		if i > 0 && d == out[i-1] {
			continue
		}
		kept = append(kept, d)
	}
	return kept
}

// alternatives is the one detail of an anyOf or oneOf none of whose
// alternatives holds: the fields of which one must be given, when each
// alternative only requires a field, else each alternative's problems.
func alternatives(e *jsonschema.ValidationError, doc any, root string) fault.FieldDetail {
	d := fault.FieldDetail{Field: strings.Join(e.InstanceLocation, ".")}
	if d.Field == "" {
		d.Field = root
	} else if v, ok := lookupPath(doc, e.InstanceLocation); ok {
		d.ReceivedValue = shortJSON(v)
	}
	var missing, alts []string
	onlyMissing := true
	for _, c := range e.Causes {
		details := fieldDetails(c, doc, root)
		var parts []string
		for _, f := range details {
			if f.Field == d.Field {
				parts = append(parts, f.Message) // this detail's own field
			} else {
				parts = append(parts, f.Field+": "+f.Message)
			}
		}
		alts = append(alts, strings.Join(parts, " and "))
		if len(details) == 1 && details[0].Message == msgMissing {
			missing = append(missing, details[0].Field)
		} else {
			onlyMissing = false
		}
	}
	if onlyMissing {
		d.Message = "needs one of " + orList(missing) + ", but has none of them"
		d.Suggestion = "provide " + orList(missing)
		return d
	}
	d.Message = "matches none of the allowed alternatives: " + strings.Join(alts, "; or ")
	return d
}

// orList joins names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func lookupPath(v any, path []string) (any, bool) {
	for _, p := range path {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[p]; !ok {
				return nil, false
			}
		case []any:
			var i int
			if _, err := fmt.Sscan(p, &i); err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

func shortJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

func suggestionFor(msg string) string {
	switch {
	case strings.HasPrefix(msg, "got "):
		return "send a value of the expected type (" + msg + ")"
	case strings.Contains(msg, "additional propert"):
		return "remove the unknown " + msg[strings.Index(msg, "additional propert"):]
	}
	return ""
}
