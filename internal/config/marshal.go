package config

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config/schema"
)

// MarshalResolved renders a resolved configuration as native YAML, for
// `switchboard config show`: every value resolved (variables expanded, env
// files merged, defaults applied), durations as strings such as "30s", and
// Docker servers in their docker: form. A literal $ is written $$, so the
// output is itself a valid configuration that resolves to the same
// servers. Call it on c.Redacted() to hide secrets.
//
// The configuration is put back into the file's types (package schema)
// and written in their order, so a key added there is written too.
func MarshalResolved(c *Config) ([]byte, error) {
	if c == nil {
		return nil, fmt.Errorf("marshaling configuration: nil config")
	}
	w := &yamlWriter{}
	w.fields(false, 0, reflect.ValueOf(fileOf(c)))
	return w.bytes(), nil
}

// fileOf puts a resolved configuration back into the file's types, each
// key from the resolved field of its name (writeFields); what differs by
// more than its type is written by the shapes below.
func fileOf(c *Config) schema.File {
	var f schema.File
	writeFields(&f, *c)
	writeFields(&f, c.Hooks) // hooks: and hook_settings:
	if len(c.AllowedCommands) > 0 {
		f.Security = &schema.Security{}
		writeFields(f.Security, *c)
	}
	if f.Servers == nil {
		f.Servers = []schema.Server{} // servers: []
	}
	return f
}

// shapes write the resolved values whose form differs from their key's,
// one function for each pair of types: writeFields calls the one whose
// argument is the resolved value's type and whose result is the key's.
var shapes map[[2]reflect.Type]reflect.Value

func init() {
	shapes = map[[2]reflect.Type]reflect.Value{}
	for _, f := range []any{serverOf, gatewayOf, oauthOf, notebookOf, bindingOf, conditionsOf, mappingOf,
		func(d time.Duration) schema.QueueWait {
			return schema.QueueWait{CallTimeout: d == QueueWaitCallTimeout, Duration: d}
		},
	} {
		v := reflect.ValueOf(f)
		shapes[[2]reflect.Type{v.Type().In(0), v.Type().Out(0)}] = v
	}
}

// serverOf is an entry of servers:. Its transport is stdio when unset,
// identity_meta is written only when off, max_sessions only for sessions
// of their own, and a Docker server in its docker: form.
func serverOf(s Server) (out schema.Server) {
	writeFields(&out, s)
	t := cmp.Or(s.Transport, TransportStdio)
	out.Transport = ptr(string(t))
	if s.NoIdentityMeta {
		out.IdentityMeta = ptr(false)
	}
	if !s.Session.Owned() {
		out.MaxSessions = nil
	}
	if s.Docker != nil {
		out.Command, out.Args = nil, nil // the docker run launch made of it
	} else if t == TransportStdio {
		out.Command = ptr(esc(s.Command)) // even empty (a client's file may say "")
	}
	if len(s.LaunchAllow) > 0 {
		out.Launch = &schema.Launch{Allow: s.LaunchAllow}
	}
	// A key of another transport is not written (the file would be refused).
	v := reflect.ValueOf(&out).Elem()
	for _, sf := range serverFields {
		if !sf.transports.has(t) {
			v.FieldByIndex(sf.index).SetZero()
		}
	}
	return out
}

// gatewayOf is the gateway: block: fast_path written only when off, the
// OS user left out (it is the default wherever the file is used), and a
// token's default label (tokens[N]) too. Token secrets are never
// written: the schema has no key for them, only token_env.
func gatewayOf(g Gateway) (out schema.Gateway) {
	writeFields(&out, g)
	if g.DisableFastPath {
		out.FastPath = ptr(false)
	}
	if g.DefaultUser == OSUser() {
		out.DefaultUser = nil
	}
	for i, t := range g.Tokens {
		if t.Name == fmt.Sprintf("tokens[%d]", i) {
			out.Tokens[i].Name = nil
		}
	}
	return out
}

// oauthOf is gateway.oauth, whose cache: and keys: blocks are flat in the
// resolved form. Client secrets are never written: only their variables.
func oauthOf(o OAuth) (out schema.OAuth) {
	writeFields(&out, o)
	out.Cache = &schema.OAuthCache{Size: ptr(o.CacheSize), TTL: ptr(schema.Duration(o.CacheTTL)), NegativeTTL: ptr(schema.Duration(o.NegativeTTL))}
	out.Keys = &schema.OAuthKeys{Refresh: ptr(schema.Duration(o.KeysRefresh)), MinInterval: ptr(schema.Duration(o.KeysMinInterval))}
	return out
}

// notebookOf is the notebook: block with its limits written out.
func notebookOf(n Notebook) (out schema.Notebook) {
	writeFields(&out, n)
	out.Concurrency, out.MaxBlocks = ptr(n.EffectiveConcurrency()), ptr(n.EffectiveMaxBlocks())
	return out
}

// bindingOf is one notebook binding: only its section's keys.
func bindingOf(b Binding) (out schema.Binding) {
	writeFields(&out, b)
	if b.Kind() != "range" {
		out.EndLine = nil // start_line 0 is left out by its minimum
	}
	if !b.InheritToChildren {
		out.InheritToChildren = nil
	}
	return out
}

// conditionsOf is a hook's if: mapping.
func conditionsOf(cs []HookCondition) map[string]schema.Condition {
	out := map[string]schema.Condition{}
	for _, c := range cs {
		v := esc(c.Value)
		switch c.Op {
		case CondGlob:
			out[c.Field] = schema.Condition{Glob: &v}
		case CondRegex:
			out[c.Field] = schema.Condition{Regex: &v}
		default:
			out[c.Field] = schema.Condition{Equals: ptr(schema.Text(v))}
		}
	}
	return out
}

// mappingOf is where a parameter's or event field's value comes from: a
// literal as written (its strings escaped), else the context field or
// template.
func mappingOf(m ParamMapping) schema.Mapping {
	v := reflect.ValueOf(esc(m.Value))
	if m.Source == MappingLiteral {
		v, _ = fileValue(reflect.TypeFor[any](), reflect.ValueOf(&m.Literal).Elem(), "")
	}
	return schema.Mapping{Source: ptr(m.Source), Value: v.Interface()}
}

// writeFields sets each field of dst (a pointer to a struct of package
// schema) from the field of src (a resolved struct) of its name, or
// whose key tag names its key; an embedded struct, whose keys are its
// parent's, from src itself. A key is left out (leftOut) when its value
// is unset; else its value is converted by fileValue.
func writeFields(dst, src any) {
	d, s := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src)
	for i := range d.NumField() {
		sf := d.Type().Field(i)
		v := resolvedField(s, sf)
		if sf.Anonymous {
			v = s
		}
		if !v.IsValid() || leftOut(sf, v) {
			continue
		}
		if x, ok := fileValue(sf.Type, v, sf.Tag.Get("expand")); ok {
			d.Field(i).Set(x)
		}
	}
}

// leftOut reports whether the resolved value v of key sf is not written:
// an empty string where the key is optional, a nil pointer or list, an
// empty mapping, a block that is empty or holds only its defaults, and
// a zero that the key's minimum refuses (there it means unset).
func leftOut(sf reflect.StructField, v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String:
		return v.Len() == 0 && sf.Type.Kind() == reflect.Pointer
	case reflect.Pointer, reflect.Slice:
		return v.IsNil()
	case reflect.Map:
		return v.Len() == 0
	case reflect.Struct:
		d, ok := v.Interface().(interface{ isDefault() bool })
		return v.IsZero() || ok && d.isDefault()
	}
	if !v.IsZero() {
		return false
	}
	for _, rule := range strings.Split(sf.Tag.Get("jsonschema")+","+sf.Tag.Get("jsonschema_extras"), ",") {
		name, bound, _ := strings.Cut(rule, "=")
		switch n, _ := strconv.ParseFloat(bound, 64); name {
		case "minimum":
			return n > 0
		case "minDuration", "minSize":
			return !strings.HasPrefix(bound, "0")
		case "exclusiveMinDuration":
			return true
		}
	}
	return false
}

// fileValue converts the resolved value v to t, a type of package schema:
// by its shape when there is one, a block field by field, a list or a
// mapping item by item, a string escaped as its key's expand tag says, a
// number, boolean, duration or size as it is. It reports false for a
// value of another kind than t's.
func fileValue(t reflect.Type, v reflect.Value, expand string) (reflect.Value, bool) {
	if f, ok := shapes[[2]reflect.Type{v.Type(), t}]; ok {
		return f.Call([]reflect.Value{v})[0], true
	}
	if v.Kind() == reflect.Interface { // a literal's item
		if v.IsNil() {
			return reflect.Zero(t), true
		}
		v = v.Elem()
	}
	switch {
	case v.Type() == t && v.Kind() == reflect.Pointer: // optional on both sides
		return v, true
	case t.Kind() == reflect.Pointer:
		x, ok := fileValue(t.Elem(), reflect.Indirect(v), expand)
		if ok {
			p := reflect.New(t.Elem())
			p.Elem().Set(x)
			x = p
		}
		return x, ok
	case t.Kind() == reflect.Interface: // a literal: its strings escaped
		if x, ok := fileValue(v.Type(), v, expand); ok {
			return x, true
		}
		return v, true
	case v.Kind() == reflect.Struct && t.Kind() == reflect.Struct:
		out := reflect.New(t)
		writeFields(out.Interface(), v.Interface())
		return out.Elem(), true
	case v.Kind() == reflect.Slice && t.Kind() == reflect.Slice:
		out := reflect.MakeSlice(t, v.Len(), v.Len())
		for i := range v.Len() {
			if x, ok := fileValue(t.Elem(), v.Index(i), expand); ok {
				out.Index(i).Set(x)
			}
		}
		return out, true
	case v.Kind() == reflect.Map && t.Kind() == reflect.Map:
		out := reflect.MakeMapWithSize(t, v.Len())
		for it := v.MapRange(); it.Next(); {
			if x, ok := fileValue(t.Elem(), it.Value(), expand); ok {
				out.SetMapIndex(it.Key().Convert(t.Key()), x)
			}
		}
		return out, true
	case v.Kind() == reflect.String && t.Kind() == reflect.String:
		return reflect.ValueOf(escape(v.String(), expand)).Convert(t), true
	case (v.Type() == durationType) != isFileDuration(t):
		return reflect.Value{}, false
	}
	switch v.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int64, reflect.Float64:
		if v.Kind() == t.Kind() {
			return v.Convert(t), true
		}
	}
	return reflect.Value{}, false
}

func ptr[T any](v T) *T { return &v }

// escape writes a resolved string so that reading it under a key with
// the given expand tag (package schema) gives it back: $ is $$, except
// in a value read as written, and in the identity placeholders a header
// value keeps.
func escape(s, expand string) string {
	switch expand {
	case "none":
		return s
	case "headers":
		s = esc(s)
		for _, p := range []string{IdentityUser, IdentitySession} {
			s = strings.ReplaceAll(s, "$"+p, p)
		}
		return s
	}
	return esc(s)
}

// esc writes a resolved value so that reading it expands nothing: $ is $$.
func esc(s string) string { return strings.ReplaceAll(s, "$", "$$") }

// FormatDuration renders a duration the way the configuration writes it
// (and a person does): 30s, 5m, 1h, 1m30s.
func FormatDuration(d time.Duration) string { return schema.FormatDuration(d) }

// formatDuration is FormatDuration.
func formatDuration(d time.Duration) string { return schema.FormatDuration(d) }

// yamlWriter writes block-style YAML a line at a time.
type yamlWriter struct {
	b bytes.Buffer
}

func (w *yamlWriter) line(indent int, s string) {
	w.b.WriteString(strings.Repeat("  ", indent))
	w.b.WriteString(s)
	w.b.WriteByte('\n')
}

// kv writes "key: value"; value is already YAML.
func (w *yamlWriter) kv(indent int, key, value string) {
	w.line(indent, key+": "+value)
}

func (w *yamlWriter) bytes() []byte { return slices.Clone(w.b.Bytes()) }

// block writes key: and the fields of v (a pointer to a struct of package
// schema) under it.
func (w *yamlWriter) block(indent int, key string, v any) {
	w.line(indent, key+":")
	w.fields(false, indent+1, reflect.ValueOf(v).Elem())
}

// fields writes the keys of a struct of package schema at indent, in
// order: nil pointers, maps and slices are left out (an empty list that is
// not nil is written []). With dash, the first key starts a list item.
func (w *yamlWriter) fields(dash bool, indent int, v reflect.Value) {
	for i := range v.NumField() {
		sf, fv := v.Type().Field(i), v.Field(i)
		if sf.Anonymous {
			w.fields(dash, indent, fv) // an embedded struct's keys are its parent's
			dash = dash && fv.NumField() == 0
			continue
		}
		key, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		required := strings.Contains(sf.Tag.Get("jsonschema"), "required")
		switch fv.Kind() {
		case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
			if fv.IsNil() && !required {
				continue
			}
		}
		w.value(dash, indent, key, fv)
		dash = false
	}
}

// value writes one key and its value at indent (after "- " with dash).
func (w *yamlWriter) value(dash bool, indent int, key string, v reflect.Value) {
	prefix := strings.Repeat("  ", indent)
	if dash {
		prefix = strings.Repeat("  ", indent-1) + "- "
	}
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	switch {
	case isBlock(v):
		w.b.WriteString(prefix + key + ":\n")
		w.fields(false, indent+1, v)
	case v.Kind() == reflect.Slice && isBlock(reflect.New(v.Type().Elem()).Elem()):
		if v.Len() == 0 {
			w.b.WriteString(prefix + key + ": []\n")
			return
		}
		w.b.WriteString(prefix + key + ":\n")
		for i := range v.Len() {
			w.fields(true, indent+2, v.Index(i))
		}
	case v.Kind() == reflect.Map && v.Len() > 0 && !isScalarMap(v):
		w.b.WriteString(prefix + key + ":\n")
		m := mapStrings(v)
		for _, k := range sortedKeys(m) {
			w.kv(indent+1, quoteYAML(k), scalar(m[k]))
		}
	default:
		w.b.WriteString(prefix + key + ": " + scalar(v) + "\n")
	}
}

// isScalarMap reports whether a map is a value (a literal), written in
// flow style.
func isScalarMap(v reflect.Value) bool { return v.Type().Elem().Kind() == reflect.Interface }

// isBlock reports whether v is a struct written as a block of keys.
func isBlock(v reflect.Value) bool {
	return v.Kind() == reflect.Struct && !isScalarType(v.Type())
}

// isScalarType reports whether a struct type is written as one value.
func isScalarType(t reflect.Type) bool {
	return t == reflect.TypeFor[schema.QueueWait]() || t == reflect.TypeFor[schema.Condition]()
}

// mapStrings returns a map's values by key.
func mapStrings(v reflect.Value) map[string]reflect.Value {
	out := make(map[string]reflect.Value, v.Len())
	for it := v.MapRange(); it.Next(); {
		out[it.Key().String()] = it.Value()
	}
	return out
}

// scalar renders a value written on one line: a scalar, a flow list, a
// condition, a literal.
func scalar(v reflect.Value) string {
	if v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return "null"
		}
		v = v.Elem()
	}
	switch x := v.Interface().(type) {
	case schema.Duration:
		return formatDuration(time.Duration(x))
	case schema.BackoffStep:
		return formatDuration(time.Duration(x))
	case schema.Size:
		return formatSize(int64(x))
	case schema.QueueWait:
		if x.CallTimeout {
			return FormatQueueWait(QueueWaitCallTimeout)
		}
		return FormatQueueWait(x.Duration)
	case schema.Condition:
		switch {
		case x.Glob != nil:
			return "{glob: " + quoteYAML(*x.Glob) + "}"
		case x.Regex != nil:
			return "{regex: " + quoteYAML(*x.Regex) + "}"
		case x.Equals != nil:
			return "{equals: " + quoteYAML(string(*x.Equals)) + "}"
		}
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		return quoteYAML(x)
	case schema.Text:
		return quoteYAML(string(x))
	}
	switch v.Kind() {
	case reflect.Slice:
		parts := make([]string, v.Len())
		for i := range v.Len() {
			parts[i] = scalar(v.Index(i))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case reflect.Map:
		m := mapStrings(v)
		parts := make([]string, 0, len(m))
		for _, k := range sortedKeys(m) {
			parts = append(parts, quoteYAML(k)+": "+scalar(m[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	}
	return quoteYAML(fmt.Sprint(v.Interface()))
}

// plainYAML matches strings that YAML reads back unchanged without quotes,
// in block and flow context alike.
var plainYAML = lazyRegexp(`^[A-Za-z_/][A-Za-z0-9_./@+-]*$`)

// yamlReserved are plain words YAML would read as something else.
var yamlReserved = map[string]bool{
	"true": true, "false": true, "null": true, "yes": true, "no": true,
	"on": true, "off": true, "y": true, "n": true, "~": true,
}

// quoteYAML renders s as a YAML scalar: plain when that is unambiguous,
// else double-quoted with JSON escapes (a subset of YAML's).
func quoteYAML(s string) string {
	if plainYAML().MatchString(s) && !yamlReserved[strings.ToLower(s)] {
		return s
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = quoteYAML(s)
	}
	return out
}
