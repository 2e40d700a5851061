package config

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// fieldKind is the type of a server field.
type fieldKind int

const (
	fkString fieldKind = iota
	fkStrings
	fkStringMap
	fkBool
	fkInt
	fkDuration
	fkDocker
)

// transportSet is a set of transports, for the fields each one uses.
type transportSet uint8

const (
	tStdio transportSet = 1 << iota
	tSSE
	tHTTP
	tWebSocket
	tNetwork = tSSE | tHTTP | tWebSocket
	tAll     = tStdio | tNetwork
)

func (s transportSet) has(t Transport) bool {
	switch t {
	case TransportStdio:
		return s&tStdio != 0
	case TransportSSE:
		return s&tSSE != 0
	case TransportHTTP:
		return s&tHTTP != 0
	case TransportWebSocket:
		return s&tWebSocket != 0
	}
	return true
}

// fieldSpec describes one field of a server entry, by its native name.
type fieldSpec struct {
	name       string
	kind       fieldKind
	transports transportSet
	suggest    Transport // transport to suggest when the field is used with another one
}

// serverFields are the native server fields, in documentation order.
var serverFields = []fieldSpec{
	{"name", fkString, tAll, ""},
	{"description", fkString, tAll, ""},
	{"transport", fkString, tAll, ""},
	{"command", fkString, tStdio, TransportStdio},
	{"args", fkStrings, tStdio, TransportStdio},
	{"env", fkStringMap, tStdio, TransportStdio},
	{"env_file", fkString, tStdio, TransportStdio},
	{"inherit_env", fkBool, tStdio, TransportStdio},
	{"cwd", fkString, tStdio, TransportStdio},
	{"encoding", fkString, tStdio, TransportStdio},
	{"docker", fkDocker, tStdio, TransportStdio},
	{"url", fkString, tNetwork, TransportHTTP},
	{"headers", fkStringMap, tNetwork, TransportHTTP},
	{"timeout", fkDuration, tAll, ""},
	{"sse_read_timeout", fkDuration, tSSE | tHTTP, TransportSSE},
	{"terminate_on_close", fkBool, tHTTP, TransportHTTP},
	{"request_timeout", fkDuration, tAll, ""},
	{"max_retries", fkInt, tAll, ""},
	{"max_concurrent", fkInt, tAll, ""},
	{"redact_results", fkBool, tAll, ""},
	{"roots", fkStrings, tAll, ""},
	{"enabled", fkBool, tAll, ""},
	{"load_tools", fkBool, tAll, ""},
	{"load_prompts", fkBool, tAll, ""},
	{"load_resources", fkBool, tAll, ""},
	{"secrets", fkStrings, tAll, ""},
}

// Format-specific pseudo fields (canonical names start with "-").
const (
	fieldDisabled = "-disabled" // mcpServers "disabled": true
	fieldServer   = "-server"   // tools "server": used as the description
	fieldConfig   = "-config"   // tools "config": accepted, no effect
	fieldType     = "-type"     // tools "type": mcp
)

// formatSpec maps one format's server keys onto the native fields.
type formatSpec struct {
	format       Format
	keys         map[string]string // key as written -> native (or pseudo) field
	ignored      []string          // keys accepted with a "no effect" warning
	transportKey string            // the key that names the transport
	infer        bool              // infer the transport from command/url when not given
	foreign      bool              // not the native format
}

func (f *formatSpec) knownKeys() []string {
	var out []string
	// deterministic order: native field order, then the rest sorted
	for _, sf := range serverFields {
		for k, v := range f.keys {
			if v == sf.name {
				out = append(out, k)
			}
		}
	}
	for _, k := range sortedKeys(f.keys) {
		if strings.HasPrefix(f.keys[k], "-") {
			out = append(out, k)
		}
	}
	return append(out, f.ignored...)
}

var (
	nativeSpec = func() *formatSpec {
		keys := map[string]string{}
		for _, f := range serverFields {
			keys[f.name] = f.name
		}
		return &formatSpec{format: FormatNative, keys: keys, transportKey: "transport"}
	}()
	claudeSpec = &formatSpec{
		format: FormatClaude,
		keys: map[string]string{
			"command": "command", "args": "args", "env": "env", "envFile": "env_file",
			"url": "url", "type": "transport", "headers": "headers", "disabled": fieldDisabled,
		},
		ignored:      []string{"autoApprove", "alwaysAllow"},
		transportKey: "type", infer: true, foreign: true,
	}
	vscodeSpec = &formatSpec{
		format: FormatVSCode,
		keys: map[string]string{
			"type": "transport", "command": "command", "args": "args", "env": "env",
			"envFile": "env_file", "url": "url", "headers": "headers",
		},
		ignored:      []string{"dev"},
		transportKey: "type", infer: true, foreign: true,
	}
	toolsSpec = &formatSpec{
		format: FormatToolsV1,
		keys: map[string]string{
			"name": "name", "description": "description", "type": fieldType, "server": fieldServer,
			"transport": "transport", "command": "command", "args": "args", "env": "env",
			"envFile": "env_file", "encoding": "encoding", "url": "url", "headers": "headers",
			"timeout": "timeout", "sse_read_timeout": "sse_read_timeout",
			"terminate_on_close": "terminate_on_close", "config": fieldConfig,
			"load_tools": "load_tools", "load_prompts": "load_prompts", "request_timeout": "request_timeout",
		},
		transportKey: "transport", foreign: true,
	}
)

// rawField is one server field as written.
type rawField struct {
	key    string // as written in the file, e.g. envFile
	keyPos Pos
	val    *node
}

// rawServer is one server entry as written, before resolution.
type rawServer struct {
	spec   *formatSpec
	index  int
	prefix string // path of the server collection, e.g. servers, mcpServers
	byMap  bool   // named by a mapping key rather than a name field
	name   string
	nameOK bool // the name is valid, so paths use it
	pos    Pos
	fields map[string]*rawField // by native (or pseudo) field name

	// typos holds the fields that an unknown key was probably meant to be,
	// so that the field is not also reported as missing.
	typos map[string]bool

	// Set during resolution, for Import.
	transport Transport
}

// path returns the dotted path of a field of the server.
func (s *rawServer) path(key string) string {
	var base string
	switch {
	case s.nameOK:
		base = s.prefix + "." + s.name
	case s.byMap:
		base = s.prefix + "[" + strconv.Quote(s.name) + "]"
	default:
		base = fmt.Sprintf("%s[%d]", s.prefix, s.index)
	}
	return join(base, key)
}

// field returns the field with the given native name, or nil when absent.
func (s *rawServer) field(name string) *rawField {
	return s.fields[name]
}

// rawConfig is a configuration file as written.
type rawConfig struct {
	format   Format
	defaults *node
	limits   *node
	history  *node
	security *node
	gateway  *pair // the gateway: key, for the block's position
	// hooks, hookSettings, notebook, llm and agent are the pairs of those
	// top-level keys (nil when absent); their decoders live in hooks.go,
	// notebook.go and agent.go.
	hooks        *pair
	hookSettings *pair
	notebook     *pair
	llm          *pair
	agent        *pair
	servers      []*rawServer
}

// detectFormat works out which format a file's root mapping is in.
func detectFormat(root *node) Format {
	if root == nil || root.kind != kindMap {
		return FormatNative
	}
	for _, k := range nativeOnlyKeys {
		if root.get(k) != nil {
			return FormatNative
		}
	}
	if root.get("mcpServers") != nil {
		return FormatClaude
	}
	if p := root.get("servers"); p != nil && p.value.kind == kindMap {
		return FormatVSCode
	}
	if p := root.get("mcp"); p != nil && p.value.get("servers") != nil && p.value.get("servers").value.kind == kindMap {
		return FormatVSCode // VS Code settings.json
	}
	if p := root.get("tools"); p != nil && p.value.kind == kindSeq {
		return FormatToolsV1
	}
	return FormatNative
}

// decodeRaw reads the structure of a file in any supported format.
func decodeRaw(root *node, ps *problems) *rawConfig {
	rc := &rawConfig{format: detectFormat(root)}
	if root == nil || root.kind == kindNull {
		return rc
	}
	if root.kind != kindMap {
		ps.add(root.pos, "", fmt.Sprintf("the configuration must be a mapping, not %s", root.kind.describe()), "start it with servers:", nil)
		return rc
	}
	switch rc.format {
	case FormatNative:
		decodeNative(root, rc, ps)
	case FormatClaude:
		ignoreOthers(root, ps, "mcpServers")
		decodeNamedMap(root.get("mcpServers"), "mcpServers", claudeSpec, rc, ps)
	case FormatVSCode:
		if p := root.get("servers"); p != nil && p.value.kind == kindMap {
			ignoreOthers(root, ps, "servers", "inputs")
			decodeNamedMap(p, "servers", vscodeSpec, rc, ps)
		} else {
			// settings.json: everything else is other settings.
			decodeNamedMap(root.get("mcp").value.get("servers"), "mcp.servers", vscodeSpec, rc, ps)
		}
	case FormatToolsV1:
		ignoreOthers(root, ps, "tools")
		decodeTools(root.get("tools"), rc, ps)
	}
	return rc
}

// ignoreOthers warns about top-level keys of a foreign file that
// Switchboard does not read.
func ignoreOthers(root *node, ps *problems, used ...string) {
	for _, p := range root.pairs {
		if !contains(used, p.key) {
			ps.warn(p.keyPos, p.key, "ignored: Switchboard reads only "+strings.Join(used[:1], "")+" from this file", "")
		}
	}
}

// nativeOnlyKeys are the top-level keys that only the native format has.
var nativeOnlyKeys = []string{"defaults", "limits", "history", "security", "gateway", "hooks", "hook_settings", "notebook", "llm", "agent"}

// nativeKeys are the top-level keys of the native format.
var nativeKeys = append(slices.Clone(nativeOnlyKeys), "servers")

func decodeNative(root *node, rc *rawConfig, ps *problems) {
	for _, p := range root.pairs {
		// x- keys are extensions (as in Compose files): a place for anchors.
		if !contains(nativeKeys, p.key) && !strings.HasPrefix(p.key, "x-") {
			ps.unknown(p, p.key, nativeKeys)
		}
	}
	if p := root.get("defaults"); p != nil {
		rc.defaults = p.value
	}
	if p := root.get("limits"); p != nil {
		rc.limits = p.value
	}
	if p := root.get("history"); p != nil {
		rc.history = p.value
	}
	if p := root.get("security"); p != nil {
		rc.security = p.value
	}
	rc.gateway = root.get("gateway")
	rc.hooks = root.get("hooks")
	rc.hookSettings = root.get("hook_settings")
	rc.notebook = root.get("notebook")
	rc.llm = root.get("llm")
	rc.agent = root.get("agent")
	p := root.get("servers")
	if p == nil || p.value.kind == kindNull {
		return
	}
	if p.value.kind != kindSeq {
		ps.add(p.value.pos, "servers", fmt.Sprintf("must be a list of servers, not %s", p.value.kind.describe()), `start each server with "- name: ..."`, nil)
		return
	}
	for i, item := range p.value.items {
		s := &rawServer{spec: nativeSpec, index: i, prefix: "servers", pos: item.pos}
		if item.kind != kindMap {
			ps.add(item.pos, s.path(""), fmt.Sprintf("each server must be a mapping, not %s", item.kind.describe()), "", nil)
			continue
		}
		if np := item.get("name"); np == nil || np.value.kind == kindNull {
			ps.add(item.pos, s.path("name"), "name is required", "add name: with a unique name, e.g. name: github", nil)
		} else if v, ok := ps.str(np.value, s.path("name")); ok {
			s.name = v
			s.nameOK = checkName(v, np.value.pos, s.path("name"), ps)
		}
		collectFields(s, item, ps)
		rc.servers = append(rc.servers, s)
	}
}

// decodeNamedMap reads a mapping of server name to entry (mcpServers, VS
// Code servers).
func decodeNamedMap(p *pair, prefix string, spec *formatSpec, rc *rawConfig, ps *problems) {
	if p == nil || p.value.kind == kindNull {
		return
	}
	if p.value.kind != kindMap {
		ps.add(p.value.pos, prefix, fmt.Sprintf("must be a mapping of server names to servers, not %s", p.value.kind.describe()), "", nil)
		return
	}
	for i, e := range p.value.pairs {
		s := &rawServer{spec: spec, index: i, prefix: prefix, byMap: true, name: e.key, pos: e.keyPos}
		s.nameOK = checkName(e.key, e.keyPos, s.path(""), ps)
		if e.value.kind != kindMap {
			ps.add(e.value.pos, s.path(""), fmt.Sprintf("each server must be a mapping, not %s", e.value.kind.describe()), "", nil)
			continue
		}
		collectFields(s, e.value, ps)
		rc.servers = append(rc.servers, s)
	}
}

// decodeTools reads seed 004's tools: list; only type: mcp entries are
// servers.
func decodeTools(p *pair, rc *rawConfig, ps *problems) {
	for i, item := range p.value.items {
		s := &rawServer{spec: toolsSpec, index: i, prefix: "tools", pos: item.pos}
		if item.kind != kindMap {
			ps.add(item.pos, s.path(""), fmt.Sprintf("each tool must be a mapping, not %s", item.kind.describe()), "", nil)
			continue
		}
		if np := item.get("name"); np != nil && np.value.isScalar() {
			s.name = np.value.text
			if msg, _ := nameProblem(s.name); msg == "" {
				s.nameOK = true
			}
		}
		tp := item.get("type")
		switch {
		case tp == nil:
			ps.warn(item.pos, s.path(""), "ignored: the tool has no type", "add type: mcp if it is an MCP server")
			continue
		case !tp.value.isScalar() || tp.value.text != "mcp":
			ps.warn(tp.value.pos, s.path("type"), fmt.Sprintf("ignored: only type: mcp tools are MCP servers (this one is %s)", scalarOr(tp.value)), "")
			continue
		}
		s.nameOK = false
		if np := item.get("name"); np == nil || np.value.kind == kindNull {
			ps.add(item.pos, s.path("name"), "name is required", "add name: with a unique name, e.g. name: github", nil)
		} else if v, ok := ps.str(np.value, s.path("name")); ok {
			s.name = v
			s.nameOK = checkName(v, np.value.pos, s.path("name"), ps)
		}
		collectFields(s, item, ps)
		rc.servers = append(rc.servers, s)
	}
}

func scalarOr(n *node) string {
	if n.isScalar() {
		return strconv.Quote(n.text)
	}
	return n.kind.describe()
}

// collectFields maps an entry's keys onto native fields, recording unknown
// keys as problems and ignored ones as warnings.
func collectFields(s *rawServer, entry *node, ps *problems) {
	s.fields = map[string]*rawField{}
	for _, p := range entry.pairs {
		name, ok := s.spec.keys[p.key]
		switch {
		case ok:
			s.fields[name] = &rawField{key: p.key, keyPos: p.keyPos, val: p.value}
		case contains(s.spec.ignored, p.key):
			ps.warn(p.keyPos, s.path(p.key), "ignored: it has no effect in Switchboard", "")
		default:
			ps.unknown(p, s.path(p.key), s.spec.knownKeys())
			if sug := suggest(p.key, s.spec.knownKeys()); sug != "" {
				if s.typos == nil {
					s.typos = map[string]bool{}
				}
				s.typos[s.spec.keys[sug]] = true
			}
		}
	}
}

// namePattern is the form of a server name.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// nameProblem returns what is wrong with a server name, and a fix, or "".
func nameProblem(name string) (string, string) {
	switch {
	case name == "":
		return "name is empty", "give the server a name, e.g. github"
	case len(name) > MaxServerNameLen:
		return fmt.Sprintf("name is longer than %d characters", MaxServerNameLen), "shorten it"
	case !namePattern.MatchString(name):
		return fmt.Sprintf("name %q may only contain letters, digits, _ and -", name), fmt.Sprintf("rename it, e.g. %q", sanitizeName(name))
	}
	return "", ""
}

// checkName records a problem for an invalid name and reports validity.
func checkName(name string, pos Pos, field string, ps *problems) bool {
	msg, fix := nameProblem(name)
	if msg == "" {
		return true
	}
	ps.add(pos, field, msg, fix, nil)
	return false
}

// sanitizeName turns anything into a valid server name.
func sanitizeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 128 && namePattern.MatchString(string(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > MaxServerNameLen {
		out = out[:MaxServerNameLen]
	}
	if out == "" {
		out = "server"
	}
	return out
}
