package config

import (
	"bytes"
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

// fileOf puts a resolved configuration back into the file's types; blocks
// that hold only their defaults are left out.
func fileOf(c *Config) schema.File {
	f := schema.File{
		Defaults: defaultsOf(c.Defaults),
		Limits:   limitsOf(c.Limits),
		History: &schema.History{
			Store: historyStoreOf(c.History.Store), RecordValues: ptr(c.History.RecordValues), Keep: ptr(c.History.Keep),
		},
		Servers: make([]schema.Server, 0, len(c.Servers)),
	}
	if len(c.AllowedCommands) > 0 {
		f.Security = &schema.Security{AllowedCommands: escAll(c.AllowedCommands)}
	}
	if !c.Gateway.isDefault() {
		f.Gateway = gatewayOf(c.Gateway)
	}
	f.HookSettings, f.Hooks = hooksOf(c.Hooks)
	if !c.Notebook.isDefault() {
		f.Notebook = notebookOf(c.Notebook)
	}
	if !c.LLM.isDefault() {
		f.LLM = llmOf(c.LLM)
	}
	if !c.Agent.isDefault() {
		f.Agent = agentOf(c.Agent)
	}
	if !c.Audit.isDefault() {
		f.Audit = auditOf(c.Audit)
	}
	if !c.Telemetry.isDefault() {
		f.Telemetry = telemetryOf(c.Telemetry)
	}
	for _, s := range c.Servers {
		f.Servers = append(f.Servers, serverOf(s))
	}
	return f
}

// defaultsOf is the defaults: block of resolved defaults.
func defaultsOf(d Defaults) *schema.Defaults {
	out := &schema.Defaults{Health: &schema.Health{Backoff: make([]schema.BackoffStep, len(d.Health.Backoff))}}
	writeFields(out, d)
	writeFields(out.Health, d.Health)
	for i, b := range d.Health.Backoff {
		out.Health.Backoff[i] = schema.BackoffStep(b)
	}
	return out
}

// limitsOf is the limits: block of resolved limits.
func limitsOf(l Limits) *schema.Limits {
	out := &schema.Limits{
		QueueWait: &schema.QueueWait{CallTimeout: l.QueueWait == QueueWaitCallTimeout, Duration: l.QueueWait},
		MaxOutput: ptr(schema.Size(l.MaxOutputBytes)), Rate: rateOf(l.Rate),
	}
	writeFields(out, l)
	return out
}

// rateOf is limits.rate as written; nil when no bucket applies.
func rateOf(r Rate) *schema.Rate {
	bucket := func(b Bucket) *schema.Bucket {
		if b.PerSecond <= 0 {
			return nil
		}
		return &schema.Bucket{CallsPerSecond: ptr(b.PerSecond), Burst: ptr(b.Burst)}
	}
	if r.PerUser.PerSecond <= 0 && r.PerUserServer.PerSecond <= 0 {
		return nil
	}
	return &schema.Rate{PerUser: bucket(r.PerUser), PerUserServer: bucket(r.PerUserServer)}
}

// serverOf is a resolved server as an entry of servers:.
func serverOf(s Server) schema.Server {
	var out schema.Server
	writeFields(&out, s)
	t := s.Transport
	if t == "" {
		t = TransportStdio
	}
	out.Name, out.Transport, out.Secrets = s.Name, ptr(string(t)), s.Secrets
	out.Timeout, out.MaxSessions = dur(s.ConnectTimeout), maxSessionsOf(s)
	if s.NoIdentityMeta {
		out.IdentityMeta = ptr(false)
	}
	if t == TransportStdio {
		if d := s.Docker; d != nil {
			out.Command, out.Args = nil, nil
			out.Docker = &schema.Docker{Image: esc(d.Image), ContainerName: opt(esc(d.ContainerName)), Command: textsOf(d.Command), Ports: d.Ports}
		} else {
			out.Command = ptr(esc(s.Command))
		}
		out.Env = textMap(s.Env, esc)
		if len(s.LaunchAllow) > 0 {
			out.Launch = &schema.Launch{Allow: escAll(s.LaunchAllow)}
		}
	} else {
		out.URL, out.Headers = ptr(esc(s.URL)), textMap(s.Headers, escHeader)
		out.OAuth = serverOAuthOf(s.OAuth)
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

// gatewayOf is the gateway: block. Token secrets are never written: a
// token read from a variable is written as token_env: NAME.
func gatewayOf(g Gateway) *schema.Gateway {
	out := &schema.Gateway{Listen: ptr(esc(g.Listen))}
	writeFields(out, g)
	if g.DisableFastPath {
		out.FastPath = ptr(false)
	}
	if g.DefaultUser == OSUser() {
		out.DefaultUser = nil // the OS user is the default wherever the file is used
	}
	for _, v := range g.Views {
		out.Views = append(out.Views, schema.View{
			Name: v.Name, Servers: v.Servers, Include: escAll(v.Include), Exclude: escAll(v.Exclude),
			Prefix: ptr(string(v.Prefix)), Rename: escMap(v.Rename), Descriptions: escMap(v.Descriptions),
		})
	}
	for i, t := range g.Tokens {
		tk := schema.Token{User: esc(t.User), Views: t.Views}
		if t.Name != fmt.Sprintf("tokens[%d]", i) {
			tk.Name = ptr(esc(t.Name)) // else the default label
		}
		switch {
		case t.TokenEnv != "":
			tk.TokenEnv = ptr(t.TokenEnv)
		case t.SHA256 != "":
			tk.TokenSHA256 = ptr(t.SHA256)
		}
		out.Tokens = append(out.Tokens, tk)
	}
	out.OAuth = oauthOf(g.OAuth)
	return out
}

// hooksOf is the hook_settings: block (nil when it holds the defaults)
// and the hooks: list.
func hooksOf(h Hooks) (*schema.HookSettings, []schema.Hook) {
	var settings *schema.HookSettings
	s := h.Settings
	s.Pos = Pos{}
	if s != DefaultHookSettings() && s != (HookSettings{}) {
		settings = &schema.HookSettings{}
		writeFields(settings, s)
	}
	var out []schema.Hook
	for _, hk := range h.List {
		sh := schema.Hook{Name: esc(hk.Name), On: esc(hk.On), OnFailure: opt(hk.OnFailure)}
		if hk.Priority != 0 {
			sh.Priority = ptr(hk.Priority)
		}
		if !hk.Enabled {
			sh.Enabled = ptr(false)
		}
		for _, c := range hk.If {
			if sh.If == nil {
				sh.If = map[string]schema.Condition{}
			}
			v := esc(c.Value)
			cond := schema.Condition{}
			switch c.Op {
			case CondGlob:
				cond.Glob = &v
			case CondRegex:
				cond.Regex = &v
			default:
				t := schema.Text(v)
				cond.Equals = &t
			}
			sh.If[c.Field] = cond
		}
		for _, a := range hk.Actions {
			sh.Actions = append(sh.Actions, actionOf(a))
		}
		out = append(out, sh)
	}
	return settings, out
}

// actionOf is one hook action: its plain keys by name (a resolved action
// has only those of its type), its mappings by hand.
func actionOf(a HookAction) schema.HookAction {
	var out schema.HookAction
	writeFields(&out, a)
	if a.Timeout == 0 {
		out.Timeout = nil // hook_settings.timeout
	}
	out.Headers, out.Params = escMap(a.Headers), mappingsOf(a.Params)
	for _, m := range mappingsOf(a.Fields) {
		out.Fields = append(out.Fields, schema.EventField{Field: m.Param, Mapping: m.Mapping})
	}
	return out
}

// mappingsOf is a list of parameter mappings, their sources written out.
func mappingsOf(ms []ParamMapping) []schema.ParamMapping {
	var out []schema.ParamMapping
	for _, m := range ms {
		v := any(esc(m.Value))
		if m.Source == MappingLiteral {
			v = escLiteral(m.Literal)
		}
		out = append(out, schema.ParamMapping{Param: m.Param, Mapping: schema.Mapping{Source: ptr(m.Source), Value: v}})
	}
	return out
}

// notebookOf is the notebook: block, its limits written out.
func notebookOf(n Notebook) *schema.Notebook {
	out := &schema.Notebook{ImagesDir: opt(esc(n.ImagesDir)), Concurrency: ptr(n.EffectiveConcurrency()), MaxBlocks: ptr(n.EffectiveMaxBlocks())}
	for _, b := range n.Bindings {
		sb := schema.Binding{Server: b.Server}
		switch b.Kind() {
		case "heading":
			sb.Heading = ptr(esc(b.Heading))
		case "block":
			sb.Block = ptr(b.Block)
		default:
			sb.StartLine, sb.EndLine = ptr(b.StartLine), ptr(b.EndLine)
		}
		if b.InheritToChildren {
			sb.InheritToChildren = ptr(true)
		}
		out.Bindings = append(out.Bindings, sb)
	}
	return out
}

// llmOf is the llm: block. The API key is never written: only the name
// of its variable.
func llmOf(l LLM) *schema.LLM {
	out := &schema.LLM{}
	writeFields(out, l)
	return out
}

// agentOf is the agent: block.
func agentOf(a Agent) *schema.Agent {
	out := &schema.Agent{}
	writeFields(out, a)
	return out
}

func ptr[T any](v T) *T { return &v }

// historyStoreOf is history.store as written: left out when unset (the
// default, switchboard.db in the state directory), never store: "".
func historyStoreOf(store string) *string {
	if store == "" {
		return nil
	}
	return ptr(esc(store))
}

// maxSessionsOf is a server's max_sessions as written: only for a server
// whose sessions are per client or per user, and only when set.
func maxSessionsOf(s Server) *int {
	if !s.Session.Owned() || s.MaxSessions <= 0 {
		return nil
	}
	return ptr(s.MaxSessions)
}

// opt is a pointer to s, or nil for "" (a key left out).
func opt(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func dur(d time.Duration) *schema.Duration { return ptr(schema.Duration(d)) }

// esc writes a resolved value so that reading it expands nothing: $ is $$.
func esc(s string) string { return strings.ReplaceAll(s, "$", "$$") }

// escHeader is esc for a header value, whose identity placeholders
// (filled per request) stay as written.
func escHeader(v string) string {
	var b strings.Builder
	for v != "" {
		i := strings.Index(v, "${identity.")
		if i < 0 {
			b.WriteString(esc(v))
			break
		}
		b.WriteString(esc(v[:i]))
		v = v[i:]
		switch {
		case strings.HasPrefix(v, IdentityUser):
			b.WriteString(IdentityUser)
			v = v[len(IdentityUser):]
		case strings.HasPrefix(v, IdentitySession):
			b.WriteString(IdentitySession)
			v = v[len(IdentitySession):]
		default:
			b.WriteString("$$")
			v = v[1:]
		}
	}
	return b.String()
}

func escAll(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = esc(s)
	}
	return out
}

func escMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = esc(v)
	}
	return out
}

func textsOf(ss []string) []schema.Text {
	if ss == nil {
		return nil
	}
	out := make([]schema.Text, len(ss))
	for i, s := range ss {
		out[i] = schema.Text(esc(s))
	}
	return out
}

func textMap(m map[string]string, escape func(string) string) map[string]schema.Text {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]schema.Text, len(m))
	for k, v := range m {
		out[k] = schema.Text(escape(v))
	}
	return out
}

// escLiteral escapes the strings of a literal value.
func escLiteral(v any) any {
	switch x := v.(type) {
	case string:
		return esc(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = escLiteral(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = escLiteral(e)
		}
		return out
	}
	return v
}

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
