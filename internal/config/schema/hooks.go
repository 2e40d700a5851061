package schema

import (
	"reflect"
	"slices"
	"strings"
)

// Hook runs actions when an event happens.
type Hook struct {
	// A unique name: letters, digits, _, - and dots.
	Name string `json:"name" jsonschema:"required,pattern=^[A-Za-z0-9][A-Za-z0-9_.-]{0\\,99}$" jsonschema_extras:"x-name=hook name,x-fix=use up to 100 letters\\, digits\\, _\\, - and dots,x-required-fix=add name: with a short name\\, e.g. name: notify-on-commit"`
	// An event name or a glob over event names (tool.*, git.post-*).
	On string `json:"on" jsonschema:"required" jsonschema_extras:"x-required-fix=name the event\\, e.g. on: tool.after\\, or a glob such as git.*"`
	// Conditions on context fields, all of which must hold: a value (equals) or {equals|glob|regex: value}.
	If map[string]Condition `json:"if,omitempty" jsonschema_extras:"x-type=a mapping of context fields to conditions"`
	// Lower runs first; ties in file order.
	Priority *int `json:"priority,omitempty" jsonschema:"default=0"`
	// false keeps the hook configured but never run.
	Enabled *bool `json:"enabled,omitempty" jsonschema:"default=true"`
	// What a failed action does: continue, or block the event (default: block for tool.before, continue otherwise).
	OnFailure *string `json:"on_failure,omitempty" jsonschema:"enum=continue,enum=block"`
	// The actions, run in order; the first failure or denial ends the hook.
	Actions []HookAction `json:"actions" jsonschema:"required,minItems=1" jsonschema_extras:"x-type=a list of actions,x-message=a hook needs at least one action,x-required-fix=add at least one action\\, e.g. actions: [{type: command\\, command: [./check.sh]}],x-fix=add an action\\, or remove the hook"`
}

// Condition is one condition of a hook's if: a plain value (equals) or a
// mapping with exactly one of equals, glob or regex.
type Condition struct {
	// Equals is the value written as a scalar, or under equals.
	Equals *Text `json:"equals,omitempty"`
	// A glob the field's text must match.
	Glob *string `json:"glob,omitempty"`
	// A Go (RE2) regular expression the field's text must match, unanchored.
	Regex *string `json:"regex,omitempty"`
}

// JSONSchemaExtend lets a condition be a plain value, or a mapping with
// exactly one key.
func (Condition) JSONSchemaExtend(s *Schema) {
	one := uint64(1)
	obj := *s
	obj.MinProperties, obj.MaxProperties = &one, &one
	obj.Extras = map[string]any{"x-fix": `e.g. branch: {glob: "feature/*"}`, "x-message": "a condition has exactly one of equals, glob or regex"}
	*s = Schema{AnyOf: []*Schema{{Ref: "#/$defs/Text"}, &obj}}
}

// UnmarshalJSON reads a plain value as equals.
func (c *Condition) UnmarshalJSON(b []byte) error {
	if t := strings.TrimSpace(string(b)); !strings.HasPrefix(t, "{") {
		var v Text
		if err := v.UnmarshalJSON(b); err != nil {
			return err
		}
		*c = Condition{Equals: &v}
		return nil
	}
	type plain Condition
	return unmarshalStrict(b, (*plain)(c))
}

// HookAction is one action of a hook; type decides which keys apply.
type HookAction struct {
	// mcp, command, http, git, github, agent or event.
	Type string `json:"type" jsonschema:"required,enum=mcp,enum=command,enum=http,enum=git,enum=github,enum=agent,enum=event" jsonschema_extras:"x-name=action type,x-required-fix=use one of mcp\\, command\\, http\\, git\\, github\\, agent\\, event"`
	// How long the action may take (default: hook_settings.timeout).
	Timeout *Duration `json:"timeout,omitempty" action:"mcp,command,http,git,github,agent" jsonschema_extras:"minDuration=1s,maxDuration=5m,x-fix=use 1s to 5m (the default is 30s)"`
	// mcp: a configured server.
	Server *string `json:"server,omitempty" action:"mcp" required:"mcp" jsonschema_extras:"x-required-fix=name one of the configured servers"`
	// mcp: the tool to call.
	Tool *string `json:"tool,omitempty" action:"mcp" required:"mcp" jsonschema_extras:"x-required-fix=name the tool to call"`
	// mcp: the tool's parameters, each from the context, a literal or a template.
	Params []ParamMapping `json:"params,omitempty" action:"mcp" jsonschema_extras:"x-type=a list of mappings"`
	// command: the program and its arguments (templates), run without a shell.
	Command []string `json:"command,omitempty" action:"command" required:"command" jsonschema:"minItems=1" jsonschema_extras:"x-message=command is empty,x-required-fix=give the program and its arguments as a list\\, e.g. command: [./check.sh\\, \"{tool}\"],x-fix=give the program and its arguments as a list (it runs without a shell)\\, e.g. command: [./check.sh\\, \"{tool}\"]"`
	// command: environment variables for the program, besides PATH, HOME, LANG, TMPDIR and Switchboard's own; values may use ${VAR}.
	Env map[string]Text `json:"env,omitempty" action:"command" jsonschema_extras:"x-type=a mapping of names to strings"`
	// command: pass Switchboard's whole environment to the program (its tokens included).
	InheritEnv *bool `json:"inherit_env,omitempty" action:"command" jsonschema:"default=false"`
	// http: the URL the event is POSTed to.
	URL *string `json:"url,omitempty" action:"http" required:"http" jsonschema_extras:"x-required-fix=give the URL to POST the event to"`
	// http: headers sent with the request.
	Headers map[string]string `json:"headers,omitempty" action:"http" expand:"headers"`
	// git: branch, commit or tag.
	Git *string `json:"git,omitempty" action:"git" required:"git" jsonschema:"enum=branch,enum=commit,enum=tag" jsonschema_extras:"x-name=git operation,x-required-fix=use branch\\, commit or tag"`
	// git: the branch or tag name (a template).
	Name *string `json:"name,omitempty" action:"git"`
	// git: the commit or tag message (a template).
	Message *string `json:"message,omitempty" action:"git"`
	// github: issue or comment.
	GitHub *string `json:"github,omitempty" action:"github" required:"github" jsonschema:"enum=issue,enum=comment" jsonschema_extras:"x-name=github operation,x-required-fix=use issue or comment"`
	// github: owner/name (a template; default {repo}).
	Repo *string `json:"repo,omitempty" action:"github"`
	// github: the issue title (a template).
	Title *string `json:"title,omitempty" action:"github"`
	// github: the issue or comment text (a template).
	Body *string `json:"body,omitempty" action:"github"`
	// github: labels of the issue.
	Labels []string `json:"labels,omitempty" action:"github"`
	// github: the issue or pull request number to comment on (a template).
	Number *string `json:"number,omitempty" action:"github"`
	// github: the API URL (default https://api.github.com).
	BaseURL *string `json:"base_url,omitempty" action:"github"`
	// github: the variable holding the token (default GITHUB_TOKEN).
	TokenEnv *string `json:"token_env,omitempty" action:"github" jsonschema:"pattern=^[A-Za-z_][A-Za-z0-9_]*$" jsonschema_extras:"x-name=variable name,x-fix=name an environment variable\\, e.g. GITHUB_TOKEN"`
	// agent: the prompt (a template).
	Prompt *string `json:"prompt,omitempty" action:"agent" required:"agent" jsonschema_extras:"x-required-fix=give the prompt (a template)"`
	// agent: the servers whose tools it may use.
	Servers []string `json:"servers,omitempty" action:"agent"`
	// agent: globs on the tools it may use.
	Tools []string `json:"tools,omitempty" action:"agent"`
	// event: the event to fire.
	Event *string `json:"event,omitempty" action:"event" required:"event" jsonschema_extras:"x-required-fix=name the event to fire\\, e.g. event: review.requested"`
	// event: the event's fields, each from the context, a literal or a template.
	Fields []EventField `json:"fields,omitempty" action:"event" jsonschema_extras:"x-type=a list of mappings"`
}

// hookOperations are the keys an operation of a git or github action
// requires, with how to fix their absence.
var hookOperations = []struct {
	key, op string
	needs   []string
	fixes   []string
}{
	{"git", "branch", []string{"name"}, []string{`give the branch name (a template, e.g. "{feature}-fix")`}},
	{"git", "commit", []string{"message"}, []string{"give the commit message (a template)"}},
	{"git", "tag", []string{"name"}, []string{"give the tag name (a template)"}},
	{"github", "issue", []string{"title"}, []string{"give the issue title (a template)"}},
	{"github", "comment", []string{"number", "body"}, []string{`give the issue or pull request number (a template, e.g. "{number}")`, "give the comment text (a template)"}},
}

// JSONSchemaExtend adds, for each action type, the keys it takes (its
// action tags) and requires (its required tags), and what each git and
// github operation requires.
func (HookAction) JSONSchemaExtend(s *Schema) {
	t := reflect.TypeOf(HookAction{})
	for _, typ := range s.Properties.Value("type").Enum {
		name := typ.(string)
		keys := []any{"type"}
		var required []string
		for i := range t.NumField() {
			f := t.Field(i)
			key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if slices.Contains(strings.Split(f.Tag.Get("action"), ","), name) {
				keys = append(keys, key)
			}
			if slices.Contains(strings.Split(f.Tag.Get("required"), ","), name) {
				required = append(required, key)
			}
		}
		msg := "is required for a " + name + " action"
		// A key of another action type is said to be one, not unknown
		// ({key} is the key).
		names := &Schema{Enum: keys}
		setExtra(names, "x-message", "{key} is not a key of "+article(name)+" "+name+" action")
		setExtra(names, "x-fix", "remove it; "+article(name)+" "+name+" action takes "+keyList(keys))
		then := &Schema{PropertyNames: names, Required: required}
		setExtra(then, "x-required-message", msg)
		for _, o := range hookOperations {
			if o.key == name {
				needs := &Schema{Required: o.needs}
				setExtra(needs, "x-required-message", msg)
				for i, k := range o.needs {
					setExtra(needs, "x-required-fix-"+k, o.fixes[i])
				}
				then.AllOf = append(then.AllOf, &Schema{
					If:   &Schema{Properties: props(o.key, &Schema{Const: o.op}), Required: []string{o.key}},
					Then: needs,
				})
			}
		}
		s.AllOf = append(s.AllOf, &Schema{
			If:   &Schema{Properties: props("type", &Schema{Const: name}), Required: []string{"type"}},
			Then: then,
		})
	}
}

// ParamMapping sets one tool parameter.
type ParamMapping struct {
	// The tool parameter it sets.
	Param string `json:"param" expand:"none" jsonschema:"required" jsonschema_extras:"x-required-fix=name the tool parameter it sets"`
	Mapping
}

// EventField sets one field of a fired event.
type EventField struct {
	// The event field it sets.
	Field string `json:"field" expand:"none" jsonschema:"required" jsonschema_extras:"x-required-fix=name the event field it sets"`
	Mapping
}

// Mapping is where a parameter's or field's value comes from.
type Mapping struct {
	// context (a field path), literal (any value) or template (default).
	Source *string `json:"source,omitempty" jsonschema:"enum=context,enum=literal,enum=template,default=template"`
	// The context field, the literal value or the template.
	Value any `json:"value" jsonschema:"required" jsonschema_extras:"x-required-fix=give the context field\\, literal value or template"`
}

// article is "a" or "an" for an action type's name, as it is read
// aloud: an mcp, an http, an agent, an event; a command, a git, a github.
func article(name string) string {
	switch name {
	case "mcp", "http", "agent", "event":
		return "an"
	}
	return "a"
}

// keyList lists keys for a message: "type, server, tool and params".
func keyList(keys []any) string {
	var b strings.Builder
	for i, k := range keys {
		switch {
		case i == 0:
		case i == len(keys)-1:
			b.WriteString(" and ")
		default:
			b.WriteString(", ")
		}
		b.WriteString(k.(string))
	}
	return b.String()
}
