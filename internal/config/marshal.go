package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MarshalResolved renders a resolved configuration as native YAML, for
// `switchboard config show`: every value resolved (variables expanded, env
// files merged, defaults applied), durations as strings such as "30s", and
// Docker servers in their docker: form. A literal $ is written $$, so the
// output is itself a valid configuration that resolves to the same
// servers. Call it on c.Redacted() to hide secrets.
func MarshalResolved(c *Config) ([]byte, error) {
	if c == nil {
		return nil, fmt.Errorf("marshaling configuration: nil config")
	}
	w := &yamlWriter{escape: true}
	w.defaults(c.Defaults)
	w.limits(c.Limits)
	w.line(0, "history:")
	w.kv(1, "store", w.str(c.History.Store))
	w.kv(1, "record_values", strconv.FormatBool(c.History.RecordValues))
	w.kv(1, "keep", strconv.Itoa(c.History.Keep))
	if len(c.AllowedCommands) > 0 {
		w.line(0, "security:")
		w.kv(1, "allowed_commands", w.list(c.AllowedCommands))
	}
	if !c.Gateway.isDefault() {
		w.gateway(c.Gateway)
	}
	w.hooks(c.Hooks)       // hooks.go
	w.notebook(c.Notebook) // notebook.go
	w.llm(c.LLM)           // agent.go
	w.agent(c.Agent)       // agent.go
	if len(c.Servers) == 0 {
		w.line(0, "servers: []")
		return w.bytes(), nil
	}
	w.line(0, "servers:")
	for _, s := range c.Servers {
		w.server(s)
	}
	return w.bytes(), nil
}

// limits writes the limits: block.
func (w *yamlWriter) limits(l Limits) {
	w.line(0, "limits:")
	w.kv(1, "max_concurrent", strconv.Itoa(l.MaxConcurrent))
	w.kv(1, "queue_wait", FormatQueueWait(l.QueueWait))
	w.kv(1, "max_queue", strconv.Itoa(l.MaxQueue))
	w.kv(1, "session_limit", strconv.Itoa(l.SessionLimit))
	w.kv(1, "max_output", formatSize(l.MaxOutputBytes))
}

func (w *yamlWriter) server(s Server) {
	w.line(1, "- name: "+quoteYAML(s.Name))
	const in = 2
	if s.Description != "" {
		w.kv(in, "description", w.str(s.Description))
	}
	w.kv(in, "transport", quoteYAML(string(s.Transport)))
	if s.Transport == TransportStdio || s.Transport == "" {
		if s.Docker != nil {
			w.line(in, "docker:")
			w.kv(in+1, "image", w.str(s.Docker.Image))
			if s.Docker.ContainerName != "" {
				w.kv(in+1, "container_name", w.str(s.Docker.ContainerName))
			}
			if len(s.Docker.Command) > 0 {
				w.kv(in+1, "command", w.list(s.Docker.Command))
			}
			if len(s.Docker.Ports) > 0 {
				w.line(in+1, "ports:")
				for _, k := range sortedKeys(s.Docker.Ports) {
					w.kv(in+2, quoteYAML(k), strconv.Itoa(s.Docker.Ports[k]))
				}
			}
		} else {
			w.kv(in, "command", w.str(s.Command))
			if len(s.Args) > 0 {
				w.kv(in, "args", w.list(s.Args))
			}
		}
		w.strMap(in, "env", s.Env)
		w.kv(in, "inherit_env", strconv.FormatBool(s.InheritEnv))
		if len(s.LaunchAllow) > 0 {
			w.kv(in, "launch", "{allow: "+w.list(s.LaunchAllow)+"}")
		}
		if s.Cwd != "" {
			w.kv(in, "cwd", w.str(s.Cwd))
		}
		if s.Encoding != "" {
			w.kv(in, "encoding", w.str(s.Encoding))
		}
	} else {
		w.kv(in, "url", w.str(s.URL))
		w.headers(in, s.Headers)
		if s.Transport == TransportSSE || s.Transport == TransportHTTP {
			w.kv(in, "sse_read_timeout", formatDuration(s.SSEReadTimeout))
		}
		if s.Transport == TransportHTTP {
			w.kv(in, "terminate_on_close", strconv.FormatBool(s.TerminateOnClose))
		}
	}
	w.kv(in, "timeout", formatDuration(s.ConnectTimeout))
	w.kv(in, "request_timeout", formatDuration(s.RequestTimeout))
	w.kv(in, "max_retries", strconv.Itoa(s.MaxRetries))
	w.kv(in, "max_concurrent", strconv.Itoa(s.MaxConcurrent))
	w.kv(in, "redact_results", strconv.FormatBool(s.RedactResults))
	if len(s.Roots) > 0 {
		w.kv(in, "roots", "["+strings.Join(quoteAll(s.Roots), ", ")+"]")
	}
	w.kv(in, "enabled", strconv.FormatBool(s.Enabled))
	w.kv(in, "load_tools", strconv.FormatBool(s.LoadTools))
	w.kv(in, "load_prompts", strconv.FormatBool(s.LoadPrompts))
	w.kv(in, "load_resources", strconv.FormatBool(s.LoadResources))
	if len(s.Secrets) > 0 {
		w.kv(in, "secrets", "["+strings.Join(quoteAll(s.Secrets), ", ")+"]")
	}
}

// gateway writes the gateway: block. Token secrets are never written:
// a token read from a variable is written as token_env: NAME.
func (w *yamlWriter) gateway(g Gateway) {
	w.line(0, "gateway:")
	w.kv(1, "listen", w.str(g.Listen))
	w.kv(1, "stateless", strconv.FormatBool(g.Stateless))
	if g.DisableFastPath {
		w.kv(1, "fast_path", "false")
	}
	if len(g.AllowedOrigins) > 0 {
		w.kv(1, "allowed_origins", w.list(g.AllowedOrigins))
	}
	if len(g.AllowedHosts) > 0 {
		w.kv(1, "allowed_hosts", w.list(g.AllowedHosts))
	}
	w.kv(1, "shutdown_timeout", formatDuration(g.ShutdownTimeout))
	w.kv(1, "session_timeout", formatDuration(g.SessionTimeout))
	w.kv(1, "max_request_bytes", formatSize(g.MaxRequestBytes))
	if g.DefaultUser != OSUser() {
		w.kv(1, "default_user", w.str(g.DefaultUser)) // the OS user is the default wherever the file is used
	}
	if g.Instructions != "" {
		w.kv(1, "instructions", w.str(g.Instructions))
	}
	if len(g.Views) > 0 {
		w.line(1, "views:")
		for _, v := range g.Views {
			w.line(2, "- name: "+quoteYAML(v.Name))
			if len(v.Servers) > 0 {
				w.kv(3, "servers", "["+strings.Join(quoteAll(v.Servers), ", ")+"]")
			}
			if len(v.Include) > 0 {
				w.kv(3, "include", w.list(v.Include))
			}
			if len(v.Exclude) > 0 {
				w.kv(3, "exclude", w.list(v.Exclude))
			}
			w.kv(3, "prefix", quoteYAML(string(v.Prefix)))
			w.strMap(3, "rename", v.Rename)
			w.strMap(3, "descriptions", v.Descriptions)
		}
	}
	if len(g.Tokens) > 0 {
		w.line(1, "tokens:")
		for i, t := range g.Tokens {
			if t.Name == fmt.Sprintf("tokens[%d]", i) {
				w.line(2, "- user: "+w.str(t.User)) // the default label
			} else {
				w.line(2, "- name: "+w.str(t.Name))
				w.kv(3, "user", w.str(t.User))
			}
			switch {
			case t.TokenEnv != "":
				w.kv(3, "token_env", quoteYAML(t.TokenEnv))
			case t.SHA256 != "":
				w.kv(3, "token_sha256", quoteYAML(t.SHA256))
			}
			if len(t.Views) > 0 {
				w.kv(3, "views", "["+strings.Join(quoteAll(t.Views), ", ")+"]")
			}
		}
	}
}

// headers writes a server's headers: block, keeping the identity
// placeholders as written (every other $ is escaped).
func (w *yamlWriter) headers(indent int, h map[string]string) {
	if len(h) == 0 {
		return
	}
	w.line(indent, "headers:")
	for _, k := range sortedKeys(h) {
		v := h[k]
		if w.escape {
			var b strings.Builder
			for v != "" {
				i := strings.Index(v, "${identity.")
				rest := ""
				if i >= 0 {
					rest = v[i:]
				}
				switch {
				case strings.HasPrefix(rest, IdentityUser):
					b.WriteString(strings.ReplaceAll(v[:i], "$", "$$") + IdentityUser)
					v = rest[len(IdentityUser):]
				case strings.HasPrefix(rest, IdentitySession):
					b.WriteString(strings.ReplaceAll(v[:i], "$", "$$") + IdentitySession)
					v = rest[len(IdentitySession):]
				case i >= 0:
					b.WriteString(strings.ReplaceAll(v[:i+1], "$", "$$"))
					v = v[i+1:]
				default:
					b.WriteString(strings.ReplaceAll(v, "$", "$$"))
					v = ""
				}
			}
			v = b.String()
		}
		w.kv(indent+1, quoteYAML(k), quoteYAML(v))
	}
}

// FormatDuration renders a duration the way the configuration writes it
// (and a person does): 30s, 5m, 1h, 1m30s.
func FormatDuration(d time.Duration) string { return formatDuration(d) }

// formatDuration is FormatDuration.
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// yamlWriter writes block-style YAML a line at a time.
// defaults writes the defaults: block (config show and config import).
func (w *yamlWriter) defaults(d Defaults) {
	w.line(0, "defaults:")
	w.kv(1, "request_timeout", formatDuration(d.RequestTimeout))
	w.kv(1, "connect_timeout", formatDuration(d.ConnectTimeout))
	w.kv(1, "max_retries", strconv.Itoa(d.MaxRetries))
	w.kv(1, "discovery_ttl", formatDuration(d.DiscoveryTTL))
	w.line(1, "health:")
	w.kv(2, "ping_interval", formatDuration(d.Health.PingInterval))
	w.kv(2, "ping_timeout", formatDuration(d.Health.PingTimeout))
	backoff := make([]string, len(d.Health.Backoff))
	for i, b := range d.Health.Backoff {
		backoff[i] = formatDuration(b)
	}
	w.kv(2, "backoff", "["+strings.Join(backoff, ", ")+"]")
	w.kv(2, "max_failures", strconv.Itoa(d.Health.MaxFailures))
}

type yamlWriter struct {
	b      bytes.Buffer
	escape bool // write a literal $ as $$ (values are resolved, not templates)
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

// str renders a string value.
func (w *yamlWriter) str(s string) string {
	if w.escape {
		s = strings.ReplaceAll(s, "$", "$$")
	}
	return quoteYAML(s)
}

// list renders a flow list of strings.
func (w *yamlWriter) list(items []string) string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = w.str(s)
	}
	return "[" + strings.Join(out, ", ") + "]"
}

// strMap writes a block mapping of strings, sorted by key.
func (w *yamlWriter) strMap(indent int, key string, m map[string]string) {
	if len(m) == 0 {
		return
	}
	w.line(indent, key+":")
	for _, k := range sortedKeys(m) {
		w.kv(indent+1, quoteYAML(k), w.str(m[k]))
	}
}

func (w *yamlWriter) bytes() []byte { return slices.Clone(w.b.Bytes()) }

// plainYAML matches strings that YAML reads back unchanged without quotes,
// in block and flow context alike.
var plainYAML = regexp.MustCompile(`^[A-Za-z_/][A-Za-z0-9_./@+-]*$`)

// yamlReserved are plain words YAML would read as something else.
var yamlReserved = map[string]bool{
	"true": true, "false": true, "null": true, "yes": true, "no": true,
	"on": true, "off": true, "y": true, "n": true, "~": true,
}

// quoteYAML renders s as a YAML scalar: plain when that is unambiguous,
// else double-quoted with JSON escapes (a subset of YAML's).
func quoteYAML(s string) string {
	if plainYAML.MatchString(s) && !yamlReserved[strings.ToLower(s)] {
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
