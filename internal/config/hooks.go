package config

import (
	"fmt"
	"net/url"
	path_ "path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config/schema"
)

// This file reads and checks the hooks: list and the hook_settings: block
// (issue 5, seed 000's MCP action configuration). The hooks engine
// (internal/hooks) runs what is decoded here; everything that can be
// checked without a connected server is checked here, with file:line
// positions. Mappings are checked against a tool's input schema by the
// engine, once the schema is discovered, citing the positions kept here.

// Hook settings bounds (DefaultHookSettings has the defaults). docs/hooks.md
// documents each one.
const (
	MaxHookMaxConcurrent = 64
	MaxHookQueueSize     = 100000
	MaxHookRetries       = 5
	MaxHookRetryDelay    = time.Minute
	MaxHookMaxDepth      = 50
	MinHookTimeout       = time.Second     // seed 000 MCP_MIN_TIMEOUT
	MaxHookTimeout       = 5 * time.Minute // seed 000 MCP_MAX_TIMEOUT
	MaxHookNameLen       = 100
)

// Hook action types.
const (
	HookActionMCP     = "mcp"
	HookActionCommand = "command"
	HookActionHTTP    = "http"
	HookActionGit     = "git"
	HookActionGitHub  = "github"
	HookActionAgent   = "agent"
	HookActionEvent   = "event"
)

// HookActionTypes lists the action types, in documentation order.
var HookActionTypes = []string{HookActionMCP, HookActionCommand, HookActionHTTP, HookActionGit, HookActionGitHub, HookActionAgent, HookActionEvent}

// Parameter mapping sources (seed 000 ParameterSource).
const (
	MappingContext  = "context"
	MappingLiteral  = "literal"
	MappingTemplate = "template"
)

// Hook failure modes (on_failure).
const (
	OnFailureContinue = "continue"
	OnFailureBlock    = "block"
)

// Condition operators (the keys of an if: entry written as a mapping).
const (
	CondEquals = "equals"
	CondGlob   = "glob"
	CondRegex  = "regex"
)

// Hooks are the event hooks (the hooks: list) and the settings of the pool
// that runs them (the hook_settings: block).
type Hooks struct {
	// List holds the hooks in file order (ties in priority keep it).
	List     []Hook       `key:"hooks"`
	Settings HookSettings `key:"hook_settings"`
	// Pos is where the hooks: key is; zero when absent.
	Pos Pos
}

// HookSettings bound the hooks engine. A zero field means its default
// (Retries and RetryDelay excepted: zero means none).
type HookSettings struct {
	MaxConcurrent int           // hook runs at once; default 5, 1–64
	QueueSize     int           // hook runs waiting for a worker; default 100
	Retries       int           // retries of a transient failure; default 1, 0–5
	RetryDelay    time.Duration // wait before a retry; default 2s, 0–1m
	MaxDepth      int           // longest chain of events; default 10, 1–50
	Timeout       time.Duration // default action timeout; default 30s, 1s–5m
	Pos           Pos
}

// DefaultHookSettings returns the built-in hook settings: the schema's
// defaults (max_concurrent and timeout are seed 000's
// MCP_MAX_CONCURRENT_ACTIONS and MCP_DEFAULT_TIMEOUT).
func DefaultHookSettings() HookSettings { return defaultBlock[HookSettings](&schema.HookSettings{}) }

// isDefault reports whether s holds only the defaults (or is the zero
// value, as in a configuration built by hand), so that config show
// leaves hook_settings: out.
func (s HookSettings) isDefault() bool {
	return sameBlock(s, DefaultHookSettings()) || sameBlock(s, HookSettings{})
}

// Hook is one configured hook.
type Hook struct {
	Name string
	// On is an event name or a glob over event names (path.Match syntax,
	// e.g. "tool.*" or "git.post-*").
	On string
	// If holds conditions on context fields; all must hold.
	If       []HookCondition
	Priority int // lower runs first; ties in file order
	Enabled  bool
	// OnFailure is continue or block; "" means the event's default (block
	// for tool.before, continue otherwise).
	OnFailure string
	Actions   []HookAction
	Pos       Pos
}

// HookCondition is one condition on a context field.
type HookCondition struct {
	Field string // dotted path into the event's context
	Op    string // equals, glob or regex
	Value string
	Pos   Pos
}

// HookAction is one action of a hook. Which fields apply depends on Type.
// String fields marked "template" may hold {field} placeholders.
type HookAction struct {
	Type string
	// Timeout bounds the action; 0 means hook_settings.timeout.
	Timeout time.Duration

	// mcp: the tool to call and its parameter mappings.
	Server string
	Tool   string
	Params []ParamMapping

	// command: the program and its arguments (templates), run without a
	// shell; Env, its variables besides the base ones (values expanded
	// from ${VAR} at load); InheritEnv, when true, passes the whole
	// environment (nil: not written, false).
	Command    []string
	Env        map[string]string
	InheritEnv *bool

	// http: where to POST the event, with headers.
	URL     string
	Headers map[string]string

	// git: branch, commit or tag; Name (branch or tag, template) and
	// Message (commit or tag message, template).
	Git     string
	Name    string
	Message string

	// github: issue or comment, in Repo (owner/name, template; default
	// "{repo}"), with Title, Body (templates), Labels and, for a comment,
	// Number (template). BaseURL defaults to https://api.github.com;
	// TokenEnv names the variable holding the token (GITHUB_TOKEN).
	GitHub   string
	Repo     string
	Title    string
	Body     string
	Labels   []string
	Number   string
	BaseURL  string
	TokenEnv string

	// agent: the prompt (template) and the servers and tools it may use.
	Prompt  string
	Servers []string
	Tools   []string

	// event: the event to fire and its fields (templates).
	Event  string
	Fields []ParamMapping

	Pos Pos
}

// ParamMapping maps a hook context value to a tool parameter (seed 000
// ParameterMapping), or names an event field.
type ParamMapping struct {
	// Param is the tool parameter it sets (params: param), or the event
	// field (fields: field).
	Param  string `key:"field"`
	Source string // context, literal or template
	// Value is the context field (context) or the template (template).
	Value string
	// Literal is the literal value (literal), as written: a string,
	// number, boolean, list or mapping.
	Literal any
	Pos     Pos
}

// Label is the action as a person reads it: "mcp github/create_issue",
// "command ./check.sh", "git commit".
func (a HookAction) Label() string {
	switch a.Type {
	case HookActionMCP:
		return "mcp " + a.Server + "/" + a.Tool
	case HookActionCommand:
		if len(a.Command) > 0 {
			return "command " + a.Command[0]
		}
	case HookActionHTTP:
		if u, err := url.Parse(a.URL); err == nil {
			return "http " + u.Host
		}
	case HookActionGit:
		return "git " + a.Git
	case HookActionGitHub:
		return "github " + a.GitHub
	case HookActionEvent:
		return "event " + a.Event
	}
	return a.Type
}

var (
	// hookNamePattern is the form of a hook name.
	hookNamePattern = lazyRegexp(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
	// eventNamePattern is the form of an event name: dotted words.
	eventNamePattern = lazyRegexp(`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$`)
	// repoPattern is owner/name.
	repoPattern = lazyRegexp(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)
)

// ValidEventName reports whether name is the form of an event name: dotted
// words of letters, digits, _ and -.
func ValidEventName(name string) bool { return eventNamePattern().MatchString(name) }

// StandardHookFields are the context fields of every event (seed 000's
// template context, plus the event's name and id).
var StandardHookFields = []string{"event", "event_id", "timestamp", "user", "branch", "feature", "repo"}

// hookEventFields are the fields of the built-in events, by event name.
var hookEventFields = map[string][]string{
	"tool.before":        {"server", "tool", "arguments", "source", "identity", "session", "request_id"},
	"tool.after":         {"server", "tool", "arguments", "source", "identity", "session", "request_id", "result", "is_error", "status", "duration_ms"},
	"tool.failed":        {"server", "tool", "arguments", "source", "identity", "session", "request_id", "error", "error_kind", "status", "duration_ms"},
	"server.available":   {"server"},
	"server.unavailable": {"server", "error"},
	"server.disabled":    {"server", "error"},
	"catalog.changed":    {"server", "kind"},
}

// closedNamespaces are the event namespaces whose every event is built in,
// so that a template naming a field none of them has is an error.
var closedNamespaces = []string{"tool", "server", "catalog"}

// builtinEventProblem reports an event pattern in a namespace whose every
// event is built in (tool.*, server.*, catalog.*) that matches none of
// them: such a hook could never run, which is most likely a typo.
func builtinEventProblem(pattern string) (msg, fix string) {
	ns, _, _ := strings.Cut(pattern, ".")
	if !slices.Contains(closedNamespaces, ns) {
		return "", ""
	}
	var names []string
	for ev := range hookEventFields {
		if ok, _ := path_.Match(pattern, ev); ok {
			return "", ""
		}
		names = append(names, ev)
	}
	slices.Sort(names)
	fix = "the " + ns + ".* events are " + strings.Join(filterPrefix(names, ns+"."), ", ")
	if sug := suggest(pattern, names); sug != "" {
		fix = fmt.Sprintf("did you mean %q?", sug)
	}
	return fmt.Sprintf("no event matches %q, so the hook would never run", pattern), fix
}

// filterPrefix keeps the names that start with prefix.
func filterPrefix(names []string, prefix string) []string {
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out
}

// HookEventFields returns the context fields an event matching pattern
// can have (the standard ones plus the events' own) and whether that list
// is closed: false for events whose fields the firer chooses (git.*,
// workflow events), where any field may appear.
func HookEventFields(pattern string) ([]string, bool) {
	ns, _, _ := strings.Cut(pattern, ".")
	if !slices.Contains(closedNamespaces, ns) {
		return nil, false
	}
	fields := slices.Clone(StandardHookFields)
	for ev, fs := range hookEventFields {
		if ok, _ := path_.Match(pattern, ev); !ok {
			continue
		}
		for _, f := range fs {
			if !slices.Contains(fields, f) {
				fields = append(fields, f)
			}
		}
	}
	return fields, true
}

// HookTemplate is a parsed template: literal text and {field} or
// {field|default} placeholders. {{ and }} stand for literal braces.
type HookTemplate struct {
	Parts []HookTemplatePart
}

// HookTemplatePart is literal text (Field == "") or a placeholder.
type HookTemplatePart struct {
	Literal    string
	Field      string // dotted path
	Default    string
	HasDefault bool
}

// Single reports whether the template is exactly one placeholder, whose
// value then keeps its JSON type.
func (t HookTemplate) Single() bool { return len(t.Parts) == 1 && t.Parts[0].Field != "" }

// Fields lists the placeholders' fields, in order.
func (t HookTemplate) Fields() []string {
	var out []string
	for _, p := range t.Parts {
		if p.Field != "" {
			out = append(out, p.Field)
		}
	}
	return out
}

// isFieldChar reports whether c may appear in a placeholder's field path.
func isFieldChar(c byte) bool {
	return c == '_' || c == '.' || c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// ParseHookTemplate parses a template. A field is a dotted path of
// letters, digits, _ and -; a default runs to the closing brace and holds
// no braces.
func ParseHookTemplate(s string) (HookTemplate, error) {
	var (
		t   HookTemplate
		lit strings.Builder
	)
	flush := func() {
		if lit.Len() > 0 {
			t.Parts = append(t.Parts, HookTemplatePart{Literal: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '{' && i+1 < len(s) && s[i+1] == '{':
			lit.WriteByte('{')
			i++
		case c == '}' && i+1 < len(s) && s[i+1] == '}':
			lit.WriteByte('}')
			i++
		case c == '}':
			return HookTemplate{}, fmt.Errorf("unmatched } at offset %d (write }} for a literal brace)", i)
		case c == '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return HookTemplate{}, fmt.Errorf("unclosed { at offset %d (write {{ for a literal brace)", i)
			}
			body := s[i+1 : i+end]
			field, def, hasDef := strings.Cut(body, "|")
			if field == "" || strings.HasPrefix(field, ".") || strings.HasSuffix(field, ".") || strings.Contains(field, "..") {
				return HookTemplate{}, fmt.Errorf("invalid placeholder {%s} at offset %d: want {field} or {field|default}", body, i)
			}
			for j := 0; j < len(field); j++ {
				if !isFieldChar(field[j]) {
					return HookTemplate{}, fmt.Errorf("invalid placeholder {%s} at offset %d: a field is letters, digits, _, - and dots", body, i)
				}
			}
			if strings.ContainsRune(def, '{') {
				return HookTemplate{}, fmt.Errorf("invalid placeholder {%s} at offset %d: a default cannot hold a brace", body, i)
			}
			flush()
			t.Parts = append(t.Parts, HookTemplatePart{Field: field, Default: def, HasDefault: hasDef})
			i += end
		default:
			lit.WriteByte(c)
		}
	}
	flush()
	return t, nil
}

// decodeHooks reads the hooks: list and the hook_settings: block.
// servers are the valid server names, which actions refer to.
func (r *resolver) decodeHooks(f *schema.File, servers []string) Hooks {
	h := Hooks{Settings: DefaultHookSettings(), Pos: r.keyAt("hooks")}
	r.readBlock(&h.Settings, f.HookSettings, []any{"hook_settings"})
	first := map[string]Pos{}
	for i, hf := range f.Hooks {
		if hk, ok := r.hook(hf, []any{"hooks", i}, servers, first); ok {
			h.List = append(h.List, hk)
		}
	}
	return h
}

// hookCheck holds what checking one hook's templates needs: the fields
// its event can have (closed == false: any).
type hookCheck struct {
	fields []string
	closed bool
	event  string
}

// hook reads the hook at path. It reports false when the entry is too
// broken to keep.
func (r *resolver) hook(f schema.Hook, path []any, servers []string, first map[string]Pos) (Hook, bool) {
	at := func(key ...any) []any { return append(path[:len(path):len(path)], key...) }
	n := r.at(path...)
	if n == nil || f.Name == "" || f.On == "" || len(f.Actions) == 0 {
		return Hook{}, false // taken out as wrong, or missing what the schema requires
	}
	base := r.name(path...)
	h := Hook{Enabled: true}
	r.readBlock(&h, &f, path) // priority, enabled, on_failure and Pos
	ok := true
	if v, good := r.textAt(at("name")...); good {
		pos := r.at(at("name")...).pos
		// Its form is the schema's (schema.Hook): a name it refuses was
		// reported and taken out.
		switch prev, dup := first[v]; {
		case dup:
			r.ps.add(pos, base+".name", fmt.Sprintf("duplicate hook name %q (first defined at %s)", v, prev), "give each hook a unique name", nil)
			ok = false
		default:
			first[v] = pos
			h.Name = v
		}
	} else {
		ok = false
	}
	if v, good := r.textAt(at("on")...); good {
		pos := r.at(at("on")...).pos
		if msg := eventPatternProblem(v); msg != "" {
			r.ps.add(pos, base+".on", msg, "write a dotted event name such as tool.before or git.post-commit; * and ? match within names", nil)
			ok = false
		} else if msg, fix := builtinEventProblem(v); msg != "" {
			r.ps.add(pos, base+".on", msg, fix, nil)
			ok = false
		} else {
			h.On = v
		}
	} else {
		ok = false
	}
	fields, closed := HookEventFields(h.On)
	chk := hookCheck{fields: fields, closed: closed && h.On != "", event: h.On}
	h.If = r.conditions(at("if"), base+".if", chk)
	for i, af := range f.Actions {
		if a, good := r.hookAction(af, at("actions", i), base+fmt.Sprintf(".actions[%d]", i), servers, chk); good {
			h.Actions = append(h.Actions, a)
		}
	}
	return h, ok
}

// eventPatternProblem says what is wrong with an on: value, or "".
func eventPatternProblem(v string) string {
	if _, err := path_.Match(v, ""); err != nil {
		return fmt.Sprintf("invalid event pattern %q: %v", v, err)
	}
	plain := strings.NewReplacer("*", "x", "?", "x", "[", "", "]", "", "^", "", "!", "").Replace(v)
	if !ValidEventName(plain) {
		return fmt.Sprintf("invalid event pattern %q", v)
	}
	return ""
}

// conditions reads if:, a mapping of field to a value (equals) or to a
// mapping with one of equals, glob or regex.
func (r *resolver) conditions(path []any, field string, chk hookCheck) []HookCondition {
	var out []HookCondition
	for _, p := range r.pairsAt(path...) {
		f := field + "." + p.key
		c := HookCondition{Field: p.key, Op: CondEquals, Pos: p.keyPos}
		r.checkField(p.keyPos, f, p.key, chk)
		v := p.value
		if v.kind == kindMap {
			if len(v.pairs) != 1 {
				continue // reported against the schema
			}
			op := v.pairs[0]
			c.Op, v = op.key, op.value
			f += "." + op.key
		}
		s, good := r.expandNode(v, f)
		if !good {
			continue
		}
		c.Value = s
		switch c.Op {
		case CondGlob:
			if _, err := path_.Match(s, ""); err != nil {
				r.ps.add(v.pos, f, fmt.Sprintf("invalid glob %q: %v", s, err), "use * and ? wildcards and [] classes", nil)
				continue
			}
		case CondRegex:
			if _, err := regexp.Compile(s); err != nil {
				r.ps.add(v.pos, f, fmt.Sprintf("invalid regular expression %q: %v", s, err), "use Go (RE2) syntax", nil)
				continue
			}
		}
		out = append(out, c)
	}
	return out
}

// checkField records a problem when field names a context field that no
// event the hook runs on has.
func (r *resolver) checkField(pos Pos, where, field string, chk hookCheck) {
	if !chk.closed {
		return
	}
	root, _, _ := strings.Cut(field, ".")
	if slices.Contains(chk.fields, root) {
		return
	}
	fix := "events " + chk.event + " have: " + strings.Join(chk.fields, ", ")
	if s := suggest(root, chk.fields); s != "" {
		fix = fmt.Sprintf("did you mean %q?", s)
	}
	r.ps.add(pos, where, fmt.Sprintf("unknown context field %q for %s", root, chk.event), fix, nil)
}

// template reads and parses a template string, checking its fields.
func (r *resolver) template(n *node, field string, chk hookCheck) (string, bool) {
	s, ok := r.expandNode(n, field)
	if !ok {
		return "", false
	}
	t, err := ParseHookTemplate(s)
	if err != nil {
		r.ps.add(n.pos, field, "invalid template: "+err.Error(), "placeholders are {field} or {field|default}", nil)
		return "", false
	}
	for _, p := range t.Parts {
		if p.Field != "" && !p.HasDefault {
			r.checkField(n.pos, field, p.Field, chk)
		}
	}
	return s, true
}

// hookAction reads the action at path, whose field name is base.
func (r *resolver) hookAction(f schema.HookAction, path []any, base string, servers []string, chk hookCheck) (HookAction, bool) {
	at := func(key string) []any { return append(path[:len(path):len(path)], key) }
	n := r.at(path...)
	if n == nil || f.Type == "" {
		return HookAction{}, false // taken out as wrong, or of no known type
	}
	a := HookAction{Type: f.Type}
	before := len(r.ps.errs)
	str := func(key string) (string, *node) {
		v, _ := r.textAt(at(key)...)
		return v, r.at(at(key)...)
	}
	tmpl := func(key string) string {
		if tn := r.at(at(key)...); tn != nil {
			v, _ := r.template(tn, base+"."+key, chk)
			return v
		}
		return ""
	}
	// tool, git, github, labels, token_env, tools and timeout by name; the
	// rest are templates, or name servers, URLs and events.
	r.readBlock(&a, &f, path, "server", "command", "url", "name", "message", "repo", "title", "body", "number", "base_url", "prompt", "servers", "event")
	switch a.Type {
	case HookActionMCP:
		var sn *node
		a.Server, sn = str("server")
		if sn != nil && a.Server != "" && !slices.Contains(servers, a.Server) {
			fix := "name one of the configured servers"
			if s := suggest(a.Server, servers); s != "" {
				fix = fmt.Sprintf("did you mean %q?", s)
			}
			r.ps.add(sn.pos, base+".server", fmt.Sprintf("unknown server %q", a.Server), fix, nil)
		}
		a.Params = r.mappings(f.Params, at("params"), base+".params", "param", chk, true)
	case HookActionCommand:
		for _, it := range r.itemsAt(at("command")...) {
			if v, ok := r.template(it.n, base+it.field[len(r.name(path...)):], chk); ok {
				a.Command = append(a.Command, v)
			}
		}
		if a.InheritEnv != nil && !*a.InheritEnv {
			a.InheritEnv = nil // the default, as if not written
		}
		for _, p := range r.pairsAt(at("env")...) {
			field := base + ".env." + p.key
			if p.key == "" || strings.ContainsAny(p.key, "=\x00") {
				r.ps.add(p.keyPos, field, fmt.Sprintf("invalid environment variable name %q", p.key), "use letters, digits and _", nil)
				continue
			}
			if v, ok := r.expandNode(p.value, field); ok {
				if a.Env == nil {
					a.Env = map[string]string{}
				}
				a.Env[p.key] = v
			}
		}
	case HookActionHTTP:
		var un *node
		a.URL, un = str("url")
		if un != nil && a.URL != "" {
			if u, err := url.Parse(a.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				r.ps.add(un.pos, base+".url", fmt.Sprintf("invalid URL %q", a.URL), "use an http:// or https:// URL", nil)
			}
		}
		for _, hp := range r.pairsAt(at("headers")...) {
			if v, ok := r.expandHeaderNode(hp.value, base+".headers."+hp.key); ok {
				if a.Headers == nil {
					a.Headers = map[string]string{}
				}
				a.Headers[hp.key] = v
			}
		}
	case HookActionGit:
		a.Name, a.Message = tmpl("name"), tmpl("message")
	case HookActionGitHub:
		a.Repo, a.Title, a.Body, a.Number = tmpl("repo"), tmpl("title"), tmpl("body"), tmpl("number")
		if a.Repo == "" {
			a.Repo = "{repo}"
		} else if !strings.Contains(a.Repo, "{") && !repoPattern().MatchString(a.Repo) {
			r.ps.add(r.at(at("repo")...).pos, base+".repo", fmt.Sprintf("invalid repository %q", a.Repo), "write owner/name", nil)
		}
		var bn *node
		a.BaseURL, bn = str("base_url")
		if bn != nil && a.BaseURL != "" {
			if u, err := url.Parse(a.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				r.ps.add(bn.pos, base+".base_url", fmt.Sprintf("invalid URL %q", a.BaseURL), "use https://api.github.com or your GitHub Enterprise API URL", nil)
			}
		}
		if a.BaseURL == "" {
			a.BaseURL = "https://api.github.com"
		}
		if a.TokenEnv == "" {
			a.TokenEnv = "GITHUB_TOKEN"
		}
	case HookActionAgent:
		a.Prompt = tmpl("prompt")
		for _, it := range r.itemsAt(at("servers")...) {
			if !slices.Contains(servers, it.n.text) {
				r.ps.add(it.n.pos, base+it.field[len(r.name(path...)):], fmt.Sprintf("unknown server %q", it.n.text), "name one of the configured servers", nil)
				continue
			}
			a.Servers = append(a.Servers, it.n.text)
		}
	case HookActionEvent:
		var en *node
		a.Event, en = str("event")
		if en != nil && a.Event != "" && !ValidEventName(a.Event) {
			r.ps.add(en.pos, base+".event", fmt.Sprintf("invalid event name %q", a.Event), "write dotted words, e.g. review.requested", nil)
		}
		fields := make([]schema.ParamMapping, len(f.Fields))
		for i, ef := range f.Fields {
			fields[i] = schema.ParamMapping{Param: ef.Field, Mapping: ef.Mapping}
		}
		a.Fields = r.mappings(fields, at("fields"), base+".fields", "field", chk, false)
	}
	return a, len(r.ps.errs) == before
}

// mappings reads the parameter mappings ({param, source, value}) or event
// fields ({field, source, value}) at path, named field. source defaults to
// template.
func (r *resolver) mappings(ms []schema.ParamMapping, path []any, field, nameKey string, chk hookCheck, unique bool) []ParamMapping {
	var out []ParamMapping
	seen := map[string]Pos{}
	for i, f := range ms {
		at := func(key string) []any { return append(path[:len(path):len(path)], i, key) }
		it := r.at(append(path[:len(path):len(path)], i)...)
		if it == nil || f.Param == "" || it.get("value") == nil {
			continue // taken out as wrong, or missing what the schema requires
		}
		base := fmt.Sprintf("%s[%d]", field, i)
		m := ParamMapping{Param: f.Param, Source: MappingTemplate, Pos: it.pos}
		if prev, dup := seen[f.Param]; dup && unique {
			r.ps.add(r.at(at(nameKey)...).pos, base+"."+nameKey, fmt.Sprintf("%q is mapped twice (first at %s)", f.Param, prev), "map each parameter once", nil)
			continue
		}
		seen[f.Param] = r.at(at(nameKey)...).pos
		set(&m.Source, f.Source)
		vn := it.get("value").value
		switch m.Source {
		case MappingLiteral:
			v, ok := r.literal(vn, base+".value")
			if !ok {
				continue
			}
			m.Literal = v
		case MappingContext:
			s, ok := r.expandNode(vn, base+".value")
			if !ok {
				continue
			}
			t, err := ParseHookTemplate("{" + s + "}")
			if err != nil || !t.Single() || t.Parts[0].HasDefault {
				r.ps.add(vn.pos, base+".value", fmt.Sprintf("invalid context field %q", s), "name a field such as branch or arguments.title", nil)
				continue
			}
			r.checkField(vn.pos, base+".value", s, chk)
			m.Value = s
		default:
			s, ok := r.template(vn, base+".value", chk)
			if !ok {
				continue
			}
			m.Value = s
		}
		out = append(out, m)
	}
	return out
}

// literal converts a node to a plain value: string, float64 or int64,
// bool, nil, []any or map[string]any. Strings are expanded.
func (r *resolver) literal(n *node, field string) (any, bool) {
	switch n.kind {
	case kindNull:
		return nil, true
	case kindString:
		return r.expandNode(n, field)
	case kindBool:
		return n.text == "true", true
	case kindInt:
		if v, err := strconv.ParseInt(n.text, 0, 64); err == nil {
			return v, true
		}
		fallthrough
	case kindFloat:
		v, err := strconv.ParseFloat(n.text, 64)
		if err != nil {
			r.ps.add(n.pos, field, fmt.Sprintf("invalid number %s", n.text), "", nil)
			return nil, false
		}
		return v, true
	case kindSeq:
		out := make([]any, 0, len(n.items))
		for i, it := range n.items {
			v, ok := r.literal(it, fmt.Sprintf("%s[%d]", field, i))
			if !ok {
				return nil, false
			}
			out = append(out, v)
		}
		return out, true
	case kindMap:
		out := make(map[string]any, len(n.pairs))
		for _, p := range n.pairs {
			v, ok := r.literal(p.value, field+"."+p.key)
			if !ok {
				return nil, false
			}
			out[p.key] = v
		}
		return out, true
	}
	return nil, false
}
