package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"

	sjs "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	namesuggest "github.com/switchboard-mcp/switchboard/internal/suggest"
)

// Violation is one thing wrong with a document, as the schema finds it,
// worded for a person.
type Violation struct {
	// Path is where: the keys and list indexes from the document's root.
	Path []string
	// AtKey says the problem is the key itself (an unknown key), so a
	// message should point at the key rather than its value.
	AtKey bool
	// Missing says a required key is absent: Path names it, and a message
	// should point at the mapping that lacks it.
	Missing bool
	// Message says what is wrong; Fix, how to fix it (may be empty).
	Message, Fix string
	// Unknown is the key, for an unknown key, and Suggestion the known key
	// closest to it ("" if none is close).
	Unknown, Suggestion string
}

// The fixes of the value types.
const (
	durationFix = "use a duration such as 30s or 1m30s, or a number of seconds"
	sizeFix     = "use a number of bytes, or a size such as 512KiB or 1MiB (units " + SizeUnits + ")"
	unknownFix  = "remove it; docs/configuration.md lists the fields"
)

// validator is a compiled schema with the typed form it was compiled from.
type validator struct {
	sch  *sjs.Schema
	root *Schema
}

// validators are compiled once per Go type.
var validators sync.Map // reflect.Type -> func() (*validator, error)

// validatorFor returns the validator of a Go type's schema.
func validatorFor(t reflect.Type) (*validator, error) {
	f, _ := validators.LoadOrStore(t, sync.OnceValues(func() (*validator, error) {
		var root *Schema
		if t == reflect.TypeOf(File{}) {
			root = runtime()
		} else {
			r, _ := reflector("")
			root = r.ReflectFromType(t)
		}
		b, err := json.Marshal(root)
		if err != nil {
			return nil, fmt.Errorf("encoding the schema of %s: %w", t, err)
		}
		doc, err := sjs.UnmarshalJSON(strings.NewReader(string(b)))
		if err != nil {
			return nil, fmt.Errorf("decoding the schema of %s: %w", t, err)
		}
		vocab, err := unitVocab()
		if err != nil {
			return nil, fmt.Errorf("compiling the schema vocabulary: %w", err)
		}
		c := sjs.NewCompiler()
		c.AssertVocabs()
		c.RegisterVocabulary(vocab)
		const url = "switchboard.schema.json"
		if err := c.AddResource(url, doc); err != nil {
			return nil, fmt.Errorf("loading the schema of %s: %w", t, err)
		}
		sch, err := c.Compile(url)
		if err != nil {
			return nil, fmt.Errorf("compiling the schema of %s: %w", t, err)
		}
		return &validator{sch: sch, root: root}, nil
	}))
	return f.(func() (*validator, error))()
}

// Validate checks a switchboard.yaml document — decoded as JSON decodes it,
// with numbers as json.Number — against the schema of [File], and
// returns what is wrong, in document order as far as the schema walks it.
func Validate(doc any) ([]Violation, error) {
	return validate(reflect.TypeOf(File{}), doc)
}

// ValidateFrontMatter checks the switchboard: key of a document's front
// matter against the schema of [FrontMatter].
func ValidateFrontMatter(doc any) ([]Violation, error) {
	return validate(reflect.TypeOf(FrontMatter{}), doc)
}

func validate(t reflect.Type, doc any) ([]Violation, error) {
	v, err := validatorFor(t)
	if err != nil {
		return nil, err
	}
	err = v.sch.Validate(doc)
	if err == nil {
		return nil, nil
	}
	var ve *sjs.ValidationError
	if !errors.As(err, &ve) {
		return nil, fmt.Errorf("validating: %w", err)
	}
	var out []Violation
	seen := map[string]bool{}
	v.collect(doc, ve, nil, func(vl Violation) {
		k := strings.Join(vl.Path, "\x00") + "\x00" + vl.Message
		if !seen[k] {
			seen[k] = true
			out = append(out, vl)
		}
	})
	return out, nil
}

// collect walks an error's causes down to the ones a person acts on.
// parent is the location of the error holding e.
func (v *validator) collect(doc any, e *sjs.ValidationError, parent []string, add func(Violation)) {
	switch e.ErrorKind.(type) {
	case *kind.AnyOf, *kind.OneOf:
		v.anyOf(doc, e, add)
		return
	case *kind.PropertyNames:
		// The validator reports propertyNames at a location it goes on
		// appending to; the object is where the error holding it is.
		e.InstanceLocation = clone(parent)
		v.leaf(doc, e, add)
		return
	}
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			v.collect(doc, c, e.InstanceLocation, add)
		}
		return
	}
	v.leaf(doc, e, add)
}

// leaves returns the errors without causes under e.
func leaves(e *sjs.ValidationError) []*sjs.ValidationError {
	if len(e.Causes) == 0 {
		return []*sjs.ValidationError{e}
	}
	var out []*sjs.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

// anyOf words a value that matches none of the forms it may take: a
// duration, a size, a word or a duration, a value or a mapping.
func (v *validator) anyOf(doc any, e *sjs.ValidationError, add func(Violation)) {
	path := e.InstanceLocation
	val := lookup(doc, path)
	def := v.at(e.SchemaURL)
	prop := v.property(path)
	var other []*sjs.ValidationError
	for _, l := range leaves(e) {
		switch k := l.ErrorKind.(type) {
		case *kind.Type, *kind.FalseSchema:
		case *kind.Const:
			if describe(k.Got) == describe(k.Want) {
				other = append(other, l) // a misspelt word, not a wrong type
			}
		default:
			other = append(other, l)
		}
	}
	word, fix := unitWords(def)
	if f := extra(prop, "x-fix"); f != "" && len(other) > 0 {
		fix = f
	}
	if len(other) == 0 {
		if val == nil && v.inMap(path) {
			fix = fmt.Sprintf(`write %s: "" for an empty value`, last(path))
		}
		add(Violation{Path: path, Message: fmt.Sprintf("must be %s, not %s", word, describe(val)), Fix: fix})
		return
	}
	for _, l := range other {
		switch l.ErrorKind.(type) {
		case *kind.Pattern, *kind.Const:
			what := "value"
			if def != nil && (def.Title == "duration" || def.Title == "size") {
				what = def.Title
			}
			add(Violation{Path: path, Message: fmt.Sprintf("invalid %s %q", what, text(val)), Fix: fix})
			return
		}
	}
	for _, l := range other {
		v.leaf(doc, l, add)
	}
}

// unitWords names what a value of a type with several forms must be, and
// how to write one.
func unitWords(def *Schema) (string, string) {
	if def != nil {
		switch def.Title {
		case "duration", "queue wait":
			return "a duration", durationFix
		case "size":
			return "a size", sizeFix
		case "text":
			return "a string", ""
		}
	}
	return "a value or a mapping", ""
}

// leaf words one error.
func (v *validator) leaf(doc any, e *sjs.ValidationError, add func(Violation)) {
	path := e.InstanceLocation
	val := lookup(doc, path)
	sch := v.at(e.SchemaURL)
	prop := v.property(path)
	ann := func(key string) string {
		if s := extra(prop, key); s != "" {
			return s
		}
		return extra(sch, key)
	}
	fix := ann("x-fix")
	switch k := e.ErrorKind.(type) {
	case *kind.AdditionalProperties:
		known := keys(sch)
		for _, p := range k.Properties {
			vi := unknownKey(path, p, known)
			if to := aliasOf(sch, p); vi.Suggestion == "" && to != "" {
				vi.Fix, vi.Suggestion = fmt.Sprintf("did you mean %q?", to), to
			}
			add(vi)
		}
	case *kind.PropertyNames:
		var known []string
		for _, c := range leaves(e) {
			if en, ok := c.ErrorKind.(*kind.Enum); ok {
				for _, w := range en.Want {
					known = append(known, fmt.Sprint(w))
				}
			}
		}
		vi := unknownKey(path, k.Property, known)
		names := sch
		if names != nil && names.PropertyNames != nil {
			names = names.PropertyNames
		}
		obj := deref(v, v.property(path))
		if m := extra(names, "x-message"); m != "" && obj != nil && obj.Properties != nil && obj.Properties.Value(k.Property) != nil {
			// A key the object's kind does not take (a hook action's
			// type), rather than one nobody knows.
			vi.Message = strings.ReplaceAll(m, "{key}", k.Property)
			if f := extra(names, "x-fix"); f != "" {
				vi.Fix = f
			}
		}
		add(vi)
	case *kind.Required:
		obj := deref(v, v.property(path))
		for _, m := range k.Missing {
			msg := extra(sch, "x-required-message")
			if msg == "" {
				msg = extra(obj, "x-required-message")
			}
			if msg == "" {
				msg = "is required"
			}
			mfix := extra(sch, "x-required-fix-"+m)
			if mfix == "" && obj != nil && obj.Properties != nil {
				mfix = extra(obj.Properties.Value(m), "x-required-fix")
			}
			add(Violation{Path: append(clone(path), m), Missing: true, Message: m + " " + msg, Fix: mfix})
		}
	case *kind.Type:
		msg := fmt.Sprintf("must be %s, not %s", typeWord(v, prop, sch, k.Want), describe(val))
		if noun := extra(deref(v, prop), "x-noun"); noun != "" && isIndex(path) {
			msg = fmt.Sprintf("each %s must be %s, not %s", noun, typeWord(v, nil, sch, k.Want), describe(val))
		}
		if val == nil && v.inMap(path) {
			fix = fmt.Sprintf(`write %s: "" for an empty value`, path[len(path)-1])
		} else if fix == "" && len(k.Want) == 1 && k.Want[0] == "boolean" && val != nil {
			fix = BoolFix(last(path), text(val))
		}
		add(Violation{Path: path, Message: msg, Fix: fix})
	case *kind.Minimum, *kind.Maximum, *kind.ExclusiveMinimum, *kind.ExclusiveMaximum, *kind.Not:
		add(v.outOfRange(path, val, sch, prop))
	case *OutOfRange:
		add(Violation{Path: path, Message: unitRange(k, val), Fix: unitRangeFix(k, prop, ann("x-fix"))})
	case *kind.Enum:
		var want []string
		for _, w := range k.Want {
			want = append(want, fmt.Sprint(w))
		}
		noun := ann("x-name")
		if noun == "" {
			noun = last(path)
		}
		f := "use " + orList(want)
		if s := Suggest(text(val), want); s != "" {
			f = fmt.Sprintf("did you mean %q?", s)
		}
		add(Violation{Path: path, Message: fmt.Sprintf("unknown %s %q", noun, text(val)), Fix: f})
	case *kind.Pattern:
		noun := ann("x-name")
		if noun == "" {
			noun = strings.ReplaceAll(last(path), "_", " ")
		}
		msg := fmt.Sprintf("invalid %s %q", noun, text(val))
		if m := ann("x-message"); m != "" {
			msg = strings.ReplaceAll(m, "{value}", strconv.Quote(text(val)))
		}
		add(Violation{Path: path, Message: msg, Fix: fix})
	case *kind.MinItems, *kind.MinProperties, *kind.MaxProperties:
		msg := ann("x-message")
		if msg == "" {
			msg = "is empty"
		}
		add(Violation{Path: path, Message: msg, Fix: fix})
	default:
		add(Violation{Path: path, Message: e.ErrorKind.LocalizedString(message.NewPrinter(language.English)), Fix: fix})
	}
}

// unknownKey words a key the schema does not know.
func unknownKey(path []string, key string, known []string) Violation {
	sug := Suggest(key, known)
	fix := unknownFix
	if sug != "" {
		fix = fmt.Sprintf("did you mean %q?", sug)
	}
	return Violation{Path: append(clone(path), key), AtKey: true, Message: fmt.Sprintf("unknown field %q", key), Fix: fix, Unknown: key, Suggestion: sug}
}

// outOfRange words a number outside its bounds.
func (v *validator) outOfRange(path []string, val any, sch, prop *Schema) Violation {
	got := text(val)
	fix := extra(prop, "x-fix")
	if fix == "" {
		fix = extra(sch, "x-fix")
	}
	if m := extra(sch, "x-message"); m != "" {
		return Violation{Path: path, Message: m + ", not " + got, Fix: fix}
	}
	if n := extra(sch, "x-name"); n != "" {
		got = n + " " + got
	}
	def := ""
	if sch.Default != nil {
		def = fmt.Sprintf(" (the default is %v)", sch.Default)
	}
	switch {
	case sch.Minimum != "" && sch.Maximum != "":
		if fix == "" {
			fix = fmt.Sprintf("use %s to %s%s", sch.Minimum, sch.Maximum, def)
		}
		return Violation{Path: path, Message: got + " is out of range", Fix: fix}
	case sch.Minimum == "0":
		return Violation{Path: path, Message: "must not be negative, not " + got, Fix: fix}
	case sch.Minimum != "":
		if fix == "" && def != "" {
			fix = fmt.Sprintf("use %s or more%s", sch.Minimum, def)
		}
		return Violation{Path: path, Message: fmt.Sprintf("must be at least %s, not %s", sch.Minimum, got), Fix: fix}
	case sch.Maximum != "":
		return Violation{Path: path, Message: fmt.Sprintf("must be at most %s, not %s", sch.Maximum, got), Fix: fix}
	}
	return Violation{Path: path, Message: got + " is out of range", Fix: fix}
}

// unitRange words a duration or size outside its bounds.
func unitRange(k *OutOfRange, val any) string {
	got := k.format(k.Value)
	if k.Size {
		got = strings.TrimSpace(text(val))
		if strings.TrimLeft(got, "0123456789") == "" {
			got += " bytes"
		}
	}
	switch {
	case k.HasMin && k.HasMax:
		return got + " is out of range"
	case k.Exclusive && k.Min == 0:
		return "must be greater than 0, not " + got
	case k.HasMin && k.Min == 0:
		return "must not be negative, not " + got
	case k.HasMin:
		return fmt.Sprintf("must be at least %s, not %s", k.format(k.Min), got)
	}
	return fmt.Sprintf("must be at most %s, not %s", k.format(k.Max), got)
}

// unitRangeFix is how to bring a duration or size into its bounds.
func unitRangeFix(k *OutOfRange, prop *Schema, fix string) string {
	if fix != "" || !(k.HasMin && k.HasMax) {
		return fix
	}
	unit := "a value"
	if k.Size {
		unit = "a size"
	}
	f := fmt.Sprintf("use %s from %s to %s", unit, k.format(k.Min), k.format(k.Max))
	if d := extra(prop, "default"); d != "" {
		f += " (the default is " + d + ")"
	}
	return f
}

// typeWord names the type a value must have.
func typeWord(v *validator, prop, sch *Schema, want []string) string {
	if w := extra(prop, "x-type"); w != "" {
		return w
	}
	if len(want) == 1 {
		switch want[0] {
		case "object":
			return "a mapping"
		case "array":
			if sch != nil && sch.Items != nil {
				if it := deref(v, sch.Items); it != nil && (it.Type == "string" || it.Title == "text") {
					return "a list of strings"
				}
			}
			return "a list"
		case "string":
			return "a string"
		case "integer":
			return "a whole number"
		case "number":
			return "a number"
		case "boolean":
			return "true or false"
		}
	}
	return strings.Join(want, " or ")
}

// describe names the kind of a value: "a string", "a list", "empty".
func describe(v any) string {
	switch v.(type) {
	case nil:
		return "empty"
	case string:
		return "a string"
	case json.Number, float64, int, int64:
		return "a number"
	case bool:
		return "true/false"
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	return "unknown"
}

// text renders a scalar as written.
func text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

// orList joins words: "a or b", "a, b or c", "one of a, b, c, d".
func orList(w []string) string {
	switch {
	case len(w) == 0:
		return "a valid value"
	case len(w) == 1:
		return w[0]
	case len(w) <= 3:
		return strings.Join(w[:len(w)-1], ", ") + " or " + w[len(w)-1]
	}
	return "one of " + strings.Join(w, ", ")
}

// lookup returns the value at path in doc, or nil.
func lookup(doc any, path []string) any {
	for _, tok := range path {
		switch x := doc.(type) {
		case map[string]any:
			doc = x[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			doc = x[i]
		default:
			return nil
		}
	}
	return doc
}

// at returns the schema a SchemaURL points at, or nil.
func (v *validator) at(url string) *Schema {
	_, frag, _ := strings.Cut(url, "#")
	toks := strings.Split(strings.TrimPrefix(frag, "/"), "/")
	s := v.root
	next := func(i *int) string {
		*i++
		if *i >= len(toks) {
			return ""
		}
		return strings.ReplaceAll(strings.ReplaceAll(toks[*i], "~1", "/"), "~0", "~")
	}
	for i := 0; i < len(toks) && s != nil; i++ {
		switch toks[i] {
		case "":
		case "$defs":
			s = s.Definitions[next(&i)]
		case "properties":
			k := next(&i)
			if s.Properties == nil {
				return nil
			}
			s = s.Properties.Value(k)
		case "patternProperties":
			s = s.PatternProperties[next(&i)]
		case "anyOf", "allOf", "oneOf":
			list := map[string][]*Schema{"anyOf": s.AnyOf, "allOf": s.AllOf, "oneOf": s.OneOf}[toks[i]]
			n, err := strconv.Atoi(next(&i))
			if err != nil || n < 0 || n >= len(list) {
				return nil
			}
			s = list[n]
		case "items":
			s = s.Items
		case "additionalProperties":
			s = s.AdditionalProperties
		case "propertyNames":
			s = s.PropertyNames
		case "not":
			s = s.Not
		case "if":
			s = s.If
		case "then":
			s = s.Then
		case "else":
			s = s.Else
		default:
			return nil
		}
	}
	return s
}

// deref follows $ref to the definition.
func deref(v *validator, s *Schema) *Schema {
	for i := 0; s != nil && s.Ref != "" && i < 10; i++ {
		s = v.root.Definitions[strings.TrimPrefix(s.Ref, "#/$defs/")]
	}
	return s
}

// property returns the schema of the value at path as its parent names
// it (the property, with its own annotations), or nil.
func (v *validator) property(path []string) *Schema {
	s := v.root
	for _, tok := range path {
		s = child(v, s, tok)
		if s == nil {
			return nil
		}
	}
	return s
}

// child returns the schema of one key or index under s.
func child(v *validator, s *Schema, tok string) *Schema {
	s = deref(v, s)
	if s == nil {
		return nil
	}
	if s.Properties != nil {
		if c, ok := s.Properties.Get(tok); ok {
			return c
		}
	}
	for pat, c := range s.PatternProperties {
		if ok, _ := regexp.MatchString(pat, tok); ok {
			return c
		}
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties != FalseSchema() {
		return s.AdditionalProperties
	}
	if _, err := strconv.Atoi(tok); err == nil && s.Items != nil {
		return s.Items
	}
	for _, b := range s.AnyOf {
		if c := child(v, b, tok); c != nil {
			return c
		}
	}
	return nil
}

// FalseSchema is the schema invopop writes as additionalProperties: false.
func FalseSchema() *Schema { return falseSchema }

var falseSchema = func() *Schema {
	var s Schema
	_ = json.Unmarshal([]byte("false"), &s)
	return &s
}()

// inMap reports whether path ends at the value of a mapping of names to
// values (env, headers), as opposed to a key of a block.
func (v *validator) inMap(path []string) bool {
	return len(path) > 0 && v.isValueMap(path[:len(path)-1])
}

// keys lists an object schema's properties in order.
func keys(s *Schema) []string {
	if s == nil || s.Properties == nil {
		return nil
	}
	var out []string
	for p := s.Properties.Oldest(); p != nil; p = p.Next() {
		out = append(out, p.Key)
	}
	return out
}

// aliasOf returns the key of s whose x-aliases annotation (names a person
// may write for it, space-separated) lists key, or a close misspelling of
// it: defaults.connect_timeout is a server's timeout, say.
func aliasOf(s *Schema, key string) string {
	if s == nil || s.Properties == nil {
		return ""
	}
	to := map[string]string{}
	var aliases []string
	for p := s.Properties.Oldest(); p != nil; p = p.Next() {
		for _, a := range strings.Fields(extra(p.Value, "x-aliases")) {
			to[a] = p.Key
			aliases = append(aliases, a)
		}
	}
	return to[Suggest(key, aliases)]
}

// extra returns a string annotation of a schema, or "".
func extra(s *Schema, key string) string {
	if s == nil || s.Extras == nil {
		return ""
	}
	if v, ok := s.Extras[key].(string); ok {
		return v
	}
	return ""
}

func isIndex(path []string) bool {
	if len(path) == 0 {
		return false
	}
	_, err := strconv.Atoi(last(path))
	return err == nil
}

func last(path []string) string {
	if len(path) == 0 {
		return ""
	}
	return path[len(path)-1]
}

func clone(p []string) []string { return append([]string(nil), p...) }

// Suggest returns the known key closest to key, if it is close enough to
// be a likely typo, or "". Case, _ and - are ignored in the comparison.
func Suggest(key string, known []string) string {
	norm := func(s string) string {
		return strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(s))
	}
	nk := norm(key)
	best, bestD := "", math.MaxInt
	for _, k := range known {
		nc := norm(k)
		if len(nk) > 64 || len(nc) > 64 {
			continue // no typo of a name this long is worth the work
		}
		if d := namesuggest.Distance(nk, nc); d < bestD {
			best, bestD = k, d
		}
	}
	limit := 1
	if len(nk) >= 5 {
		limit = 2
	}
	if len(nk) >= 10 {
		limit = 3
	}
	if bestD <= limit {
		return best
	}
	return ""
}

// IsValueMap reports whether the value at path in a switchboard.yaml
// document is a mapping of names to values (env, headers, rename), whose
// entries are values a key without one is missing — as opposed to a
// block, where a key without a value is as good as absent.
func IsValueMap(path []string) bool {
	v, err := validatorFor(reflect.TypeOf(File{}))
	if err != nil {
		return false
	}
	return v.isValueMap(path)
}

// isValueMap is IsValueMap.
func (v *validator) isValueMap(path []string) bool {
	s := deref(v, v.property(path))
	return s != nil && s.Type == "object" && (s.Properties == nil || s.Properties.Len() == 0) &&
		s.AdditionalProperties != nil && !reflect.DeepEqual(s.AdditionalProperties, falseSchema)
}

// ValidateServer checks one server entry against the schema of [Server],
// for the entries of a client's file mapped onto the native keys.
func ValidateServer(doc any) ([]Violation, error) {
	return validate(reflect.TypeOf(Server{}), doc)
}

// CheckKey checks one value against the rules of the key at dotted (such
// as "agent.max_steps"), for a flag that overrides the key: it returns
// what is wrong and how to fix it, worded as for the file, or "" when the
// value is good. Numbers are json.Number, durations strings.
func CheckKey(dotted string, v any) string {
	path := strings.Split(dotted, ".")
	var doc any = v
	for i := len(path) - 1; i >= 0; i-- {
		doc = map[string]any{path[i]: doc}
	}
	vs, err := Validate(doc)
	if err != nil {
		return err.Error()
	}
	for _, vl := range vs {
		if strings.Join(vl.Path, ".") == dotted {
			if vl.Fix != "" {
				return vl.Message + "; " + vl.Fix
			}
			return vl.Message
		}
	}
	return ""
}

// BoolFix says how to write a boolean given as got (a string or a
// number): yes, on, "true", 1 and their opposites are read as the
// boolean they stand for in the fix.
func BoolFix(key, got string) string {
	const why = "true and false are written bare: yes, on and quoted words are strings"
	switch strings.ToLower(strings.TrimSpace(got)) {
	case "yes", "y", "on", "true", "1", "enable", "enabled":
		return fmt.Sprintf("write %s: true (%s)", key, why)
	case "no", "n", "off", "false", "0", "disable", "disabled":
		return fmt.Sprintf("write %s: false (%s)", key, why)
	}
	return fmt.Sprintf("write %s: true or %s: false (%s)", key, key, why)
}
