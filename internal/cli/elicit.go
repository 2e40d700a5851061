package cli

//lint:file-ignore SA1019 elicitation is deprecated only from protocol 2026-07-28; servers use it today.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/switchboard-mcp/switchboard/internal/answer"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// The actions of an elicitation result.
const (
	actionAccept  = "accept"
	actionDecline = "decline"
	actionCancel  = "cancel"
)

// errRefused ends a form when the person types :decline or :cancel.
type errRefused struct{ action string }

func (e errRefused) Error() string { return "the person chose " + e.action }

// formField is one field of a requested schema (elicitation schemas are
// flat: one level of primitive properties, and arrays of enum choices).
type formField struct {
	name     string
	required bool
	raw      json.RawMessage
	Type     string   `json:"type"`
	Title    string   `json:"title"`
	Desc     string   `json:"description"`
	Default  any      `json:"default"`
	Enum     []any    `json:"enum"`
	Names    []string `json:"enumNames"`
	OneOf    []choice `json:"oneOf"`
	AnyOf    []choice `json:"anyOf"`
	Format   string   `json:"format"`
	Pattern  string   `json:"pattern"`
	Min      *float64 `json:"minimum"`
	Max      *float64 `json:"maximum"`
	MinLen   *int     `json:"minLength"`
	MaxLen   *int     `json:"maxLength"`
	MinItems *int     `json:"minItems"`
	MaxItems *int     `json:"maxItems"`
	Items    *struct {
		Enum  []any    `json:"enum"`
		AnyOf []choice `json:"anyOf"`
		OneOf []choice `json:"oneOf"`
	} `json:"items"`
	check *jsonschema.Schema
}

// choice is one titled value of an enum (oneOf/anyOf of const and title).
type choice struct {
	Const any    `json:"const"`
	Title string `json:"title"`
}

// choices returns the field's enum choices, titled when the schema says.
func (f *formField) choices() []choice {
	var out []choice
	add := func(enum []any, names []string, titled []choice) {
		for i, v := range enum {
			c := choice{Const: v}
			if i < len(names) {
				c.Title = names[i]
			}
			out = append(out, c)
		}
		out = append(out, titled...)
	}
	if f.Type == "array" && f.Items != nil {
		add(f.Items.Enum, nil, append(f.Items.AnyOf, f.Items.OneOf...))
		return out
	}
	add(f.Enum, f.Names, append(f.OneOf, f.AnyOf...))
	return out
}

var elicitPrinter = message.NewPrinter(language.English)

// parseForm reads a requested schema into its fields, in the order its
// properties are written: an answerer gets the schema as the server wrote
// it (answer.Calls.Requests).
func parseForm(schema any) ([]*formField, error) {
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("encoding the requested schema: %w", err)
	}
	var top struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("the requested schema is not a JSON object: %w", err)
	}
	names, err := objectKeys(top.Properties)
	if err != nil {
		return nil, fmt.Errorf("the requested schema's properties: %w", err)
	}
	var props map[string]json.RawMessage
	if len(top.Properties) > 0 {
		if err := json.Unmarshal(top.Properties, &props); err != nil {
			return nil, fmt.Errorf("the requested schema's properties: %w", err)
		}
	}
	fields := make([]*formField, 0, len(names))
	for _, name := range names {
		f := &formField{name: name, raw: props[name]}
		if err := json.Unmarshal(f.raw, f); err != nil {
			return nil, fmt.Errorf("property %q of the requested schema: %w", name, err)
		}
		for _, r := range top.Required {
			f.required = f.required || r == name
		}
		if f.check, err = compileField(name, f.raw); err != nil {
			return nil, err
		}
		fields = append(fields, f)
	}
	return fields, nil
}

// objectKeys returns the keys of a JSON object in their order.
func objectKeys(raw json.RawMessage) ([]string, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// compileField compiles one property's schema, formats asserted, to check
// an answer against.
func compileField(name string, raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("property %q of the requested schema: %w", name, err)
	}
	comp := jsonschema.NewCompiler()
	comp.DefaultDraft(jsonschema.Draft2020)
	comp.AssertFormat()
	loc := "switchboard:///elicit/" + strconv.Quote(name)
	if err := comp.AddResource(loc, doc); err != nil {
		return nil, fmt.Errorf("property %q of the requested schema: %w", name, err)
	}
	sch, err := comp.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("property %q of the requested schema does not compile: %w", name, err)
	}
	return sch, nil
}

// validate checks one answer against its field's schema and says what is
// wrong in words.
func (f *formField) validate(v any) error {
	if v == nil {
		return nil
	}
	// The validator takes numbers as json.Number or float64.
	err := f.check.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	var msgs []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			msgs = append(msgs, inWords(e.ErrorKind))
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return errors.New(strings.Join(msgs, "; "))
}

// inWords says a failed bound as the field's header words it ("at least
// 8 characters"), where the validator names the keyword ("minLength: got
// 5, want 8"); other problems in the validator's words.
func inWords(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.MinLength:
		return fmt.Sprintf("at least %d characters, got %d", k.Want, k.Got)
	case *kind.MaxLength:
		return fmt.Sprintf("at most %d characters, got %d", k.Want, k.Got)
	case *kind.MinItems:
		return fmt.Sprintf("choose at least %d, got %d", k.Want, k.Got)
	case *kind.MaxItems:
		return fmt.Sprintf("choose at most %d, got %d", k.Want, k.Got)
	case *kind.Minimum:
		return fmt.Sprintf("at least %s, got %s", ratString(k.Want), ratString(k.Got))
	case *kind.Maximum:
		return fmt.Sprintf("at most %s, got %s", ratString(k.Want), ratString(k.Got))
	case *kind.ExclusiveMinimum:
		return fmt.Sprintf("more than %s, got %s", ratString(k.Want), ratString(k.Got))
	case *kind.ExclusiveMaximum:
		return fmt.Sprintf("less than %s, got %s", ratString(k.Want), ratString(k.Got))
	}
	return k.LocalizedString(elicitPrinter)
}

// ratString writes a bound as a person would: 8, 2.5.
func ratString(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// elicitForm answers a form-mode request by the --elicit policy: on the
// terminal, a prompt per field; else declined, or answered with the
// defaults.
func (c *cliAnswerer) elicitForm(ctx context.Context, server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	fields, err := parseForm(p.RequestedSchema)
	if err != nil {
		return nil, fmt.Errorf("server %s asked a question switchboard cannot show: %w", server, err)
	}
	switch {
	case c.flags.elicit == elicitDecline:
		c.note("%s asked: %q; declined (--elicit decline)", server, p.Message)
		return &mcp.ElicitResult{Action: actionDecline}, nil
	case c.flags.elicit == elicitDefaults:
		content, missing, err := answer.Defaults(p.RequestedSchema)
		if err != nil {
			return nil, fmt.Errorf("server %s asked a question switchboard cannot show: %w", server, err)
		}
		if missing != "" {
			c.note("%s asked: %q; declined: required field %q has no default to accept (--elicit accept-defaults); run on a terminal to answer it", server, p.Message, missing)
			return &mcp.ElicitResult{Action: actionDecline}, nil
		}
		c.note("%s asked: %q; accepted with the defaults (--elicit accept-defaults)", server, p.Message)
		return &mcp.ElicitResult{Action: actionAccept, Content: content}, nil
	case c.q == nil:
		c.note("%s asked: %q; declined: no terminal to ask on; run the command on a terminal to answer, or pass --elicit accept-defaults to accept the defaults", server, p.Message)
		return &mcp.ElicitResult{Action: actionDecline}, nil
	}
	content, err := c.askForm(ctx, server, p.Message, fields)
	var ref errRefused
	if errors.As(err, &ref) {
		return &mcp.ElicitResult{Action: ref.action}, nil
	}
	if err != nil {
		return nil, err
	}
	return &mcp.ElicitResult{Action: actionAccept, Content: content}, nil
}

// askForm asks for each field on the terminal, then whether to send the
// answers.
func (c *cliAnswerer) askForm(ctx context.Context, server, msg string, fields []*formField) (map[string]any, error) {
	out := c.q.out
	fmt.Fprintf(out, "\n%s asks: %s\n", server, msg)
	fmt.Fprintln(out, "  (Enter keeps the [default]; type :decline or :cancel at any prompt to refuse)")
	content := map[string]any{}
	for _, f := range fields {
		v, set, err := c.askField(ctx, f)
		if err != nil {
			return nil, err
		}
		if set {
			content[f.name] = v
		}
	}
	if len(fields) > 0 {
		b, _ := json.Marshal(content)
		fmt.Fprintf(out, "  answer: %s\n", b)
	}
	for {
		fmt.Fprintf(out, "Send this answer to %s? [A]ccept / [d]ecline / [c]ancel: ", server)
		ans, err := c.q.lineCtx(ctx)
		if err != nil {
			return nil, err
		}
		switch strings.ToLower(strings.TrimSpace(strings.TrimPrefix(ans, ":"))) {
		case "", "a", "accept", "y", "yes":
			return content, nil
		case "d", "decline", "n", "no":
			return nil, errRefused{actionDecline}
		case "c", "cancel":
			return nil, errRefused{actionCancel}
		}
		fmt.Fprintln(out, "  Please answer a, d or c.")
	}
}

// askField asks for one field until the answer is valid. set is false
// for an optional field left empty.
func (c *cliAnswerer) askField(ctx context.Context, f *formField) (v any, set bool, err error) {
	out := c.q.out
	label := f.name
	if f.Title != "" && f.Title != f.name {
		label = fmt.Sprintf("%s (%s)", f.Title, f.name)
	}
	fmt.Fprintf(out, "\n  %s", label)
	var notes []string
	if f.required {
		notes = append(notes, "required")
	}
	if f.Type != "" {
		notes = append(notes, f.Type)
	}
	if f.Format != "" {
		notes = append(notes, f.Format)
	}
	if f.Pattern != "" {
		notes = append(notes, "pattern "+f.Pattern)
	}
	if f.Min != nil {
		notes = append(notes, "min "+strconv.FormatFloat(*f.Min, 'g', -1, 64))
	}
	if f.Max != nil {
		notes = append(notes, "max "+strconv.FormatFloat(*f.Max, 'g', -1, 64))
	}
	if f.MinLen != nil {
		notes = append(notes, fmt.Sprintf("at least %d characters", *f.MinLen))
	}
	if f.MaxLen != nil {
		notes = append(notes, fmt.Sprintf("at most %d characters", *f.MaxLen))
	}
	switch {
	case f.MinItems != nil && f.MaxItems != nil:
		notes = append(notes, fmt.Sprintf("choose %d to %d", *f.MinItems, *f.MaxItems))
	case f.MinItems != nil:
		notes = append(notes, fmt.Sprintf("choose at least %d", *f.MinItems))
	case f.MaxItems != nil:
		notes = append(notes, fmt.Sprintf("choose at most %d", *f.MaxItems))
	}
	fmt.Fprintf(out, " — %s\n", strings.Join(notes, ", "))
	if f.Desc != "" {
		fmt.Fprintf(out, "    %s\n", f.Desc)
	}
	choices := f.choices()
	for i, ch := range choices {
		if ch.Title != "" && ch.Title != fmt.Sprint(ch.Const) {
			fmt.Fprintf(out, "    %d) %s (%v)\n", i+1, ch.Title, ch.Const)
		} else {
			fmt.Fprintf(out, "    %d) %v\n", i+1, ch.Const)
		}
	}
	prompt := "  > "
	switch {
	case f.Type == "boolean":
		switch f.Default {
		case true:
			prompt = "  [Y/n] > "
		case false:
			prompt = "  [y/N] > "
		default:
			prompt = "  [y/n] > "
		}
	case f.Type == "array" && len(choices) > 0:
		prompt = "  choices, comma-separated (numbers or values)"
		if f.Default != nil {
			prompt += fmt.Sprintf(" [%s]", shortValue(f.Default))
		}
		prompt += " > "
	case f.Default != nil:
		prompt = fmt.Sprintf("  [%s] > ", shortValue(f.Default))
	}
	for {
		fmt.Fprint(out, prompt)
		ans, err := c.q.lineCtx(ctx)
		if err != nil {
			return nil, false, err
		}
		ans = strings.TrimSpace(ans)
		switch strings.ToLower(ans) {
		case ":decline":
			return nil, false, errRefused{actionDecline}
		case ":cancel":
			return nil, false, errRefused{actionCancel}
		}
		if ans == "" {
			if f.Default != nil {
				return f.Default, true, nil
			}
			if !f.required {
				return nil, false, nil
			}
			fmt.Fprintln(out, "  A value is needed (:decline or :cancel to refuse).")
			continue
		}
		v, err := f.parse(ans, choices)
		if err == nil {
			err = f.validate(v)
		}
		if err != nil {
			fmt.Fprintf(out, "  %s; try again.\n", err)
			continue
		}
		return plainNumber(v), true, nil
	}
}

// parse turns a typed answer into the field's type.
func (f *formField) parse(ans string, choices []choice) (any, error) {
	pick := func(s string) (any, error) {
		if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(choices) {
			return choices[n-1].Const, nil
		}
		for _, ch := range choices {
			if fmt.Sprint(ch.Const) == s || (ch.Title != "" && strings.EqualFold(ch.Title, s)) {
				return ch.Const, nil
			}
		}
		return nil, fmt.Errorf("%q is not one of the choices", s)
	}
	switch f.Type {
	case "boolean":
		switch strings.ToLower(ans) {
		case "y", "yes", "true":
			return true, nil
		case "n", "no", "false":
			return false, nil
		}
		return nil, errors.New("answer y or n")
	case "integer":
		n, err := strconv.ParseInt(ans, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a whole number", ans)
		}
		return json.Number(strconv.FormatInt(n, 10)), nil
	case "number":
		x, err := strconv.ParseFloat(ans, 64)
		if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, fmt.Errorf("%q is not a number", ans)
		}
		return json.Number(ans), nil
	case "array":
		var vals []any
		for _, part := range strings.Split(ans, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			if len(choices) == 0 {
				vals = append(vals, part)
				continue
			}
			v, err := pick(part)
			if err != nil {
				return nil, err
			}
			vals = append(vals, v)
		}
		return vals, nil
	}
	if len(choices) > 0 {
		return pick(ans)
	}
	return ans, nil
}

// plainNumber turns a json.Number (which the validator checks exactly)
// into the int64 or float64 a result is sent with.
func plainNumber(v any) any {
	n, ok := v.(json.Number)
	if !ok {
		return v
	}
	if i, err := n.Int64(); err == nil {
		return i
	}
	f, _ := n.Float64()
	return f
}

// shortValue shows a default value.
func shortValue(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// elicitURL answers a URL-mode request: the person opens the URL (the
// browser is started for them if they say so) and says when they are
// done.
func (c *cliAnswerer) elicitURL(ctx context.Context, server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	switch {
	case c.flags.elicit != elicitAsk:
		c.note("%s asked you to open %s (%q); declined (--elicit %s: a URL cannot be answered unattended)", server, p.URL, p.Message, c.flags.elicit)
		return &mcp.ElicitResult{Action: actionDecline}, nil
	case c.q == nil:
		c.note("%s asked you to open %s (%q); declined: no terminal to ask on; run the command on a terminal to answer", server, p.URL, p.Message)
		return &mcp.ElicitResult{Action: actionDecline}, nil
	}
	out := c.q.out
	fmt.Fprintf(out, "\n%s asks: %s\n  host: %s\n  Open this URL in a browser:\n\n    %s\n\n", server, p.Message, upstream.URLHost(p.URL), p.URL)
	if c.openURL != nil && hasDisplay(c.getenv) {
		// Never without consent: the person checks the host first.
		fmt.Fprintf(out, "Open %s in your browser? [y/N] ", upstream.URLHost(p.URL))
		ans, err := c.q.lineCtx(ctx)
		if err != nil {
			return nil, err
		}
		switch strings.ToLower(strings.TrimSpace(ans)) {
		case "y", "yes":
			if _, err := c.openURL(ctx, p.URL); err != nil {
				fmt.Fprintf(out, "  (the browser could not be opened: %s; open the URL yourself)\n", oneLine(err))
			}
		}
	}
	for {
		fmt.Fprint(out, "Press Enter when you are done there, or type d to decline, c to cancel: ")
		ans, err := c.q.lineCtx(ctx)
		if err != nil {
			return nil, err
		}
		switch strings.ToLower(strings.TrimSpace(strings.TrimPrefix(ans, ":"))) {
		case "", "a", "accept", "done", "y", "yes":
			return &mcp.ElicitResult{Action: actionAccept}, nil
		case "d", "decline", "n", "no":
			return &mcp.ElicitResult{Action: actionDecline}, nil
		case "c", "cancel":
			return &mcp.ElicitResult{Action: actionCancel}, nil
		}
		fmt.Fprintln(out, "  Please press Enter, or type d or c.")
	}
}
