package schema

//go:generate go test -run TestSchemaFile -update .

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/invopop/jsonschema"
	orderedmap "github.com/pb33f/ordered-map/v2"
)

// Schema is a JSON Schema, as the Go types' JSONSchemaExtend methods
// build it.
type Schema = jsonschema.Schema

// ID is the published address of the schema: the checked-in file on the
// main branch. Editors fetch it from the yaml-language-server comment
// that `switchboard config import` writes.
const ID = "https://raw.githubusercontent.com/switchboard-mcp/switchboard/main/docs/switchboard.schema.json"

// FilePath is the path of the checked-in schema, from the repository root.
const FilePath = "docs/switchboard.schema.json"

// pkgPath is this package's import path, for reading its doc comments.
const pkgPath = "github.com/switchboard-mcp/switchboard/internal/config/schema"

// JSONSchemaExtend allows the x- keys, which hold YAML anchors.
func (File) JSONSchemaExtend(s *Schema) {
	s.PatternProperties = map[string]*Schema{"^x-": {}}
}

// JSONSchemaExtend names a server for messages about a list of them, and
// refuses a secret that is empty.
func (Server) JSONSchemaExtend(s *Schema) {
	setExtra(s, "x-noun", "server")
	itemPattern(s, "secrets", `\S`, "is empty", "remove it")
}

// JSONSchemaExtend refuses a scope that is not one word.
func (ServerOAuth) JSONSchemaExtend(s *Schema) {
	itemPattern(s, "scopes", `^[^ \t"\\]+$`, "scope {value} is not one word", "write each scope as its own list item, without spaces or quotes")
}

// itemPattern holds each item of the list under key to a pattern, with
// the message ({value} is the item, quoted) and fix of an item that is
// not of its form.
func itemPattern(s *Schema, key, pattern, msg, fix string) {
	items := s.Properties.Value(key).Items
	items.Pattern = pattern
	setExtra(items, "x-message", msg)
	setExtra(items, "x-fix", fix)
}

// JSONSchemaExtend rules out a session limit of 0 (write -1 for
// unlimited).
func (Limits) JSONSchemaExtend(s *Schema) {
	p := s.Properties.Value("session_limit")
	p.Not = &Schema{Const: 0}
}

// reflector returns the reflector the schema is made with; source, when
// set, is this package's folder, whose doc comments become the
// descriptions.
func reflector(source string) (*jsonschema.Reflector, error) {
	r := &jsonschema.Reflector{
		RequiredFromJSONSchemaTags: true,
		ExpandedStruct:             true,
	}
	if source != "" {
		if err := r.AddGoComments(pkgPath, source); err != nil {
			return nil, fmt.Errorf("reading the doc comments in %s: %w", source, err)
		}
	}
	return r, nil
}

// Generate returns the JSON Schema of switchboard.yaml as it is checked
// in: generated from the Go types, with their doc comments (read from
// source, this package's folder) as descriptions.
func Generate(source string) ([]byte, error) {
	r, err := reflector(source)
	if err != nil {
		return nil, err
	}
	s := reflectFile(r)
	transportRules(s)
	patternMessages(s)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("encoding the schema: %w", err)
	}
	return b.Bytes(), nil
}

// reflectFile generates the schema of File.
func reflectFile(r *jsonschema.Reflector) *Schema {
	s := r.ReflectFromType(reflect.TypeOf(File{}))
	s.ID = ID
	s.Title = "switchboard.yaml"
	s.Description = "The configuration of Switchboard (docs/configuration.md)."
	return s
}

// transportRules adds to a server's published schema which keys each
// transport takes, from the transports tags of [Server]: for each
// transport, an if/then that forbids the keys it does not use (command on
// an http server, url on a stdio one), with no transport key meaning
// stdio. Editors read the rule from here; Switchboard's own check is the
// resolver's, which reads the same tags and words the refusal with the
// transport to use instead (and only warns in a client's file, which the
// client reads leniently too), so the runtime schema leaves it out.
func transportRules(s *Schema) {
	srv := s.Definitions["Server"]
	tr := srv.Properties.Value("transport")
	st := reflect.TypeOf(Server{})
	for _, e := range tr.Enum {
		t := e.(string)
		banned := orderedmap.New[string, *Schema]()
		for i := range st.NumField() {
			f := st.Field(i)
			tag := f.Tag.Get("transports")
			if tag == "" || slices.Contains(strings.Split(tag, ","), t) {
				continue
			}
			banned.Set(strings.Split(f.Tag.Get("json"), ",")[0], jsonschema.FalseSchema)
		}
		then := &Schema{Properties: banned}
		if t == tr.Default {
			// stdio: the command that starts the server, or a docker image.
			then.AnyOf = []*Schema{{Required: []string{"command"}}, {Required: []string{"docker"}}}
		} else {
			then.Required = []string{"url"}
		}
		cond := &Schema{Properties: props("transport", &Schema{Const: t})}
		if t != tr.Default {
			cond.Required = []string{"transport"}
		}
		srv.AllOf = append(srv.AllOf, &Schema{If: cond, Then: then})
	}
}

// patternMessages gives each pattern of the published schema the words an
// editor shows for a value that does not match it (patternErrorMessage,
// which the YAML language server shows instead of "String does not match
// the pattern of" and the regular expression): for a duration and a size,
// the forms they take; else the item's x-message (an item's own words) or
// the key's x-name, and its x-fix, as Switchboard's
// own message words them. The runtime schema needs none: its messages
// come from the same annotations.
func patternMessages(s *Schema) {
	eachSchema(s, func(x *Schema) {
		var msg string
		switch {
		case x.Pattern == "":
			return
		case x.Pattern == durationPattern:
			msg = "not a duration: write one such as 30s, 1m30s or 500ms, or a number of seconds"
		case x.Pattern == sizePattern:
			msg = "not a size: write one such as 1MiB, 512KiB or 4MB, or a number of bytes"
		case extra(x, "x-message") != "" && extra(x, "x-fix") != "":
			// An item's own message: "scope {value} is not one word" names
			// its subject; "is empty" follows the key's name.
			m := extra(x, "x-message")
			if strings.Contains(m, "{value}") {
				m = strings.ReplaceAll(m, " {value}", "")
			} else {
				m = cmp.Or(extra(x, "x-name"), "value") + " " + m
			}
			msg = m + ": " + extra(x, "x-fix")
		case extra(x, "x-fix") != "":
			msg = "invalid " + cmp.Or(extra(x, "x-name"), "value") + ": " + extra(x, "x-fix")
		default:
			return
		}
		setExtra(x, "patternErrorMessage", msg)
	})
}

// eachSchema calls f with s and every schema inside it.
func eachSchema(s *Schema, f func(*Schema)) {
	if s == nil {
		return
	}
	f(s)
	for _, d := range s.Definitions {
		eachSchema(d, f)
	}
	if s.Properties != nil {
		for p := s.Properties.Oldest(); p != nil; p = p.Next() {
			eachSchema(p.Value, f)
		}
	}
	for _, p := range s.PatternProperties {
		eachSchema(p, f)
	}
	for _, list := range [][]*Schema{s.AllOf, s.AnyOf, s.OneOf, s.PrefixItems} {
		for _, x := range list {
			eachSchema(x, f)
		}
	}
	for _, x := range []*Schema{s.Not, s.If, s.Then, s.Else, s.Items, s.Contains, s.AdditionalProperties, s.PropertyNames} {
		eachSchema(x, f)
	}
}

// runtime is the schema the validator uses: the same types, without the
// descriptions (which only editors show).
var runtime = sync.OnceValue(func() *Schema {
	r, _ := reflector("") // no source: cannot fail
	return reflectFile(r)
})

// props builds a properties map of one key.
func props(key string, s *Schema) *orderedmap.OrderedMap[string, *Schema] {
	m := orderedmap.New[string, *Schema]()
	m.Set(key, s)
	return m
}

// setExtra sets a keyword the Schema type has no field for.
func setExtra(s *Schema, key string, v any) {
	if s.Extras == nil {
		s.Extras = map[string]any{}
	}
	s.Extras[key] = v
}

// unmarshalStrict decodes JSON into v, refusing unknown keys.
func unmarshalStrict(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	d.UseNumber()
	return d.Decode(v)
}

// JSONSchemaExtend names each of gateway.oauth.algorithms for messages
// about one of them.
func (OAuth) JSONSchemaExtend(s *Schema) {
	if p := s.Properties.Value("algorithms"); p != nil && p.Items != nil {
		setExtra(p.Items, "x-name", "algorithm")
	}
}
