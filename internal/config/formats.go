package config

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/config/schema"
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
// Its type and bounds are its schema type's, and so are the transports
// that use it (see schema.Server).
type fieldSpec struct {
	name       string
	index      []int // where the field is in schema.Server
	transports transportSet
	suggest    Transport // transport to suggest when the field is used with another one
}

// serverFields are the native server fields, in documentation order: the
// keys of schema.Server.
var serverFields = func() []fieldSpec {
	bits := map[string]transportSet{"stdio": tStdio, "sse": tSSE, "http": tHTTP, "websocket": tWebSocket}
	var out []fieldSpec
	for _, f := range reflect.VisibleFields(reflect.TypeFor[schema.Server]()) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		sf := fieldSpec{name: name, index: f.Index, transports: tAll}
		if tag := f.Tag.Get("transports"); tag != "" {
			sf.transports = 0
			for i, t := range strings.Split(tag, ",") {
				if bits[t] == 0 {
					panic("schema.Server." + f.Name + ": unknown transport " + t)
				}
				if i == 0 {
					sf.suggest = Transport(t)
				}
				sf.transports |= bits[t]
			}
		}
		out = append(out, sf)
	}
	return out
}()

// Format-specific pseudo fields (canonical names start with "-").
const (
	fieldDisabled         = "-disabled"           // mcpServers "disabled": true
	fieldServer           = "-server"             // tools "server": used as the description
	fieldConfig           = "-config"             // tools "config": accepted, no effect
	fieldType             = "-type"               // tools "type": mcp
	fieldLegacyTransport  = "-legacy_transport"   // Cline "transportType", read when "type" is absent
	fieldRequestTimeoutS  = "-request_timeout_s"  // a request timeout in seconds (Cline, Zed, Codex)
	fieldRequestTimeoutMS = "-request_timeout_ms" // a request timeout in milliseconds (Gemini CLI)
	fieldConnectTimeoutS  = "-connect_timeout_s"  // a start-up timeout in seconds (Codex)
	fieldConnectTimeoutMS = "-connect_timeout_ms" // a start-up timeout in milliseconds (Codex, Continue)
	fieldEnvVars          = "-env_vars"           // Codex: variables passed through from the environment
	fieldBearerEnv        = "-bearer_env"         // Codex: the variable holding a bearer token
	fieldEnvHeaders       = "-env_headers"        // Codex: header name -> the variable holding its value
)

// formatSpec maps one format's server keys onto the native fields.
type formatSpec struct {
	format Format
	keys   map[string]string // key as written -> native (or pseudo) field
	// ignored are keys with a meaning Switchboard cannot honour: each is
	// accepted with a warning that says why (the value here).
	ignored map[string]string
	// quiet are keys accepted silently: they mean nothing to a server's
	// connection (the client's own bookkeeping).
	quiet        []string
	transportKey string // the key that names the transport; "" if none
	infer        bool   // infer the transport from command/url when not given
	// urlTransport is the transport of a server with a url and no
	// transport key; "" infers it from the URL (see urlTransport).
	urlTransport Transport
	foreign      bool      // not the native format
	syntax       varSyntax // variable syntax beyond the common one
	// adjust rewrites a server entry before its keys are read (nested
	// shapes, renamed keys), or returns false to skip the server, having
	// said why. Nil means the entry is read as written.
	adjust func(s *rawServer, entry *node, ps *problems) (*node, bool)
}

func (f *formatSpec) knownKeys() []string {
	var out []string
	// deterministic order: native field order, then the rest sorted
	for _, sf := range serverFields {
		for _, k := range sortedKeys(f.keys) {
			if f.keys[k] == sf.name {
				out = append(out, k)
			}
		}
	}
	for _, k := range sortedKeys(f.keys) {
		if strings.HasPrefix(f.keys[k], "-") {
			out = append(out, k)
		}
	}
	return append(out, sortedKeys(f.ignored)...)
}

var (
	nativeSpec = func() *formatSpec {
		keys := map[string]string{}
		for _, f := range serverFields {
			keys[f.name] = f.name
		}
		return &formatSpec{format: FormatNative, keys: keys, transportKey: "transport"}
	}()
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
	label  string // the name as written, for paths when it is not valid
	name   string
	nameOK bool // the name is valid, so paths use it
	pos    Pos
	fields map[string]*rawField // by native (or pseudo) field name

	// typos holds the fields that an unknown key was probably meant to be
	// (by native field name, to the key as written).
	typos map[string]string

	// transportHint is the transport the format implies when no transport
	// key says otherwise (Gemini CLI's httpUrl and url).
	transportHint Transport
	// disabledBy, when set, says why the server is disabled although its
	// entry does not say so (Gemini CLI's mcp.excluded).
	disabledBy string

	// Set during resolution, for Import.
	transport Transport

	// violated reports whether the schema found a key of the entry wrong
	// (and took it out); typed is what remains of the entry, decoded into
	// its schema type, where the resolver reads the values the schema
	// checked (types, enums, bounds).
	violated func(key string) bool
	typed    *schema.Server
}

// wasWrong reports whether a key of the entry was found wrong, and taken
// out, by the schema: what depends on it is not checked.
func (s *rawServer) wasWrong(key string) bool {
	return s.violated != nil && s.violated(key)
}

// path returns the dotted path of a field of the server.
func (s *rawServer) path(key string) string {
	var base string
	switch {
	case s.nameOK && s.label == "":
		base = s.prefix + "." + s.name
	case s.byMap || s.label != "":
		label := s.label
		if label == "" {
			label = s.name
		}
		if msg, _ := nameProblem(label); msg == "" {
			base = s.prefix + "." + label
		} else {
			base = s.prefix + "[" + strconv.Quote(label) + "]"
		}
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
	format  Format
	servers []*rawServer
	// inputs are the VS Code inputs the file declares (nil for other
	// formats).
	inputs map[string]Input
	// syntax is the variable syntax of the format.
	syntax varSyntax
	// root is a native file's tree, checked against the schema, and file
	// what it holds (nil for other formats); see native.go.
	root *node
	file *schema.File
	// violated holds the paths (keys joined by /) at or under which the
	// schema found a problem.
	violated map[string]bool
}

// decodeContext is what decoding needs besides the file's tree.
type decodeContext struct {
	file    string // the file name, as given
	workDir string // the working directory, absolute
}

// decodeRaw reads the structure of a file in any supported format.
func decodeRaw(root *node, dc decodeContext, ps *problems) *rawConfig {
	rc := &rawConfig{format: detectFormat(root, dc.file)}
	if root == nil || root.kind == kindNull {
		return rc
	}
	if root.kind != kindMap {
		ps.add(root.pos, "", fmt.Sprintf("the configuration must be a mapping, not %s", root.kind.describe()), "start it with servers:", nil)
		return rc
	}
	if rc.format == formatUnknown {
		unsupportedFormat(root, dc.file, ps)
		rc.format = FormatNative
		return rc
	}
	if rc.format == FormatNative {
		decodeNative(root, rc, ps)
		return rc
	}
	if base := strings.ToLower(filepath.Base(dc.file)); (base == FileName || base == "switchboard.yml") && rc.format != FormatToolsV1 {
		// A native name with a client's shape: most often a native file
		// whose servers are written as a mapping, as clients write them.
		// Said with the file's problems too (see Parse), which it explains.
		msg := fmt.Sprintf("%s is read as %s's format, not as a native switchboard.yaml: its keys are that client's",
			filepath.Base(dc.file), clientFormats[rc.format].name)
		ps.warns = append(ps.warns, Problem{Pos: root.pos, Message: msg,
			Fix: "if you meant a native file, list servers as a sequence (servers: then - name: NAME per server); see docs/configuration.md",
			Err: nativeNameNote(msg)})
	}
	clientFormats[rc.format].decode(root, rc, dc, ps)
	return rc
}

// nativeNameNote is the warning that a file with switchboard.yaml's name
// was read in a client's format.
type nativeNameNote string

func (n nativeNameNote) Error() string { return string(n) }

// ignoreOthers warns about top-level keys of a foreign file that
// Switchboard does not read.
func ignoreOthers(root *node, ps *problems, used ...string) {
	for _, p := range root.pairs {
		if !contains(used, p.key) {
			ps.warn(p.keyPos, p.key, "ignored: Switchboard reads only "+used[0]+" from this file", "")
		}
	}
}

// nativeOnlyKeys are the top-level keys that only the native format has:
// every key of [schema.File] but servers (which VS Code's files have too),
// read from its json tags so that a new block needs no second list.
var nativeOnlyKeys = func() []string {
	var keys []string
	t := reflect.TypeOf(schema.File{})
	for i := range t.NumField() {
		key, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if key != "" && key != "-" && key != "servers" {
			keys = append(keys, key)
		}
	}
	return keys
}()

// nativeKeys are the top-level keys of the native format.
var nativeKeys = append(slices.Clone(nativeOnlyKeys), "servers")

// decodeNamedMap reads a mapping of server name to entry (mcpServers, VS
// Code servers, Zed context_servers, Codex mcp_servers).
func decodeNamedMap(p *pair, prefix string, spec *formatSpec, rc *rawConfig, ps *problems) {
	if p == nil || p.value.kind == kindNull {
		return
	}
	if p.value.kind != kindMap {
		ps.add(p.value.pos, prefix, fmt.Sprintf("must be a mapping of server names to servers, not %s", p.value.kind.describe()), "", nil)
		return
	}
	for i, e := range p.value.pairs {
		s := &rawServer{spec: spec, index: i, prefix: prefix, byMap: true, label: e.key, name: e.key, pos: e.keyPos}
		if e.value.kind != kindMap {
			ps.add(e.value.pos, s.path(""), fmt.Sprintf("each server must be a mapping, not %s", e.value.kind.describe()), "", nil)
			continue
		}
		s.nameOK = clientName(s, e.keyPos, ps)
		if entry, ok := adjustEntry(s, e.value, ps); ok {
			collectFields(s, entry, ps)
			rc.servers = append(rc.servers, s)
		}
	}
}

// clientName checks the name of a server in a client's file. A name that
// Switchboard cannot use as it is (spaces, dots) is replaced by a usable
// one, with a warning: the client accepted it, so the file must load.
func clientName(s *rawServer, pos Pos, ps *problems) bool {
	msg, _ := nameProblem(s.name)
	if msg == "" {
		return true
	}
	if !s.spec.foreign {
		return checkName(s.name, pos, s.path(""), ps)
	}
	clean := sanitizeName(s.name)
	ps.warn(pos, s.path(""), fmt.Sprintf("%s, so the server is named %q here", msg, clean), "")
	s.name = clean
	return true
}

// adjustEntry applies the format's adjust hook, if it has one.
func adjustEntry(s *rawServer, entry *node, ps *problems) (*node, bool) {
	if s.spec.adjust == nil {
		return entry, true
	}
	return s.spec.adjust(s, entry, ps)
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

// collectFields maps an entry's keys onto native fields. In the native
// format (and seed 004's) an unknown key is a problem; in a client's file
// it is a warning, since the client ignores it too. Keys with a meaning
// Switchboard cannot honour are warnings that say why.
func collectFields(s *rawServer, entry *node, ps *problems) {
	s.fields = map[string]*rawField{}
	strict := !s.spec.foreign || s.spec.format == FormatToolsV1
	for _, p := range entry.pairs {
		name, ok := s.spec.keys[p.key]
		switch {
		case ok:
			s.fields[name] = &rawField{key: p.key, keyPos: p.keyPos, val: p.value}
		case s.spec.ignored[p.key] != "":
			ps.warn(p.keyPos, s.path(p.key), s.spec.ignored[p.key], "")
		case contains(s.spec.quiet, p.key):
		case strict:
			ps.unknown(p, s.path(p.key), s.spec.knownKeys())
			if sug := suggest(p.key, s.spec.knownKeys()); sug != "" {
				s.typo(s.spec.keys[sug], p.key)
			}
		default:
			sug := suggest(p.key, s.spec.knownKeys())
			fix := ""
			if sug != "" {
				fix = fmt.Sprintf("did you mean %q?", sug)
				s.typo(s.spec.keys[sug], p.key)
			}
			ps.warn(p.keyPos, s.path(p.key), fmt.Sprintf("ignored: unknown key %q", p.key), fix)
		}
	}
}

// typo records that key was probably meant to be the native field name.
func (s *rawServer) typo(name, key string) {
	if s.typos == nil {
		s.typos = map[string]string{}
	}
	s.typos[name] = key
}

// namePattern is the form of a server name.
var namePattern = lazyRegexp(`^[A-Za-z0-9_-]+$`)

// nameProblem returns what is wrong with a server name, and a fix, or "".
func nameProblem(name string) (string, string) {
	switch {
	case name == "":
		return "name is empty", "give the server a name, e.g. github"
	case len(name) > MaxServerNameLen:
		return fmt.Sprintf("name is longer than %d characters", MaxServerNameLen), "shorten it"
	case !namePattern().MatchString(name):
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
		if r < 128 && namePattern().MatchString(string(r)) {
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
