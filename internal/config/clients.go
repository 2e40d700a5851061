package config

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The MCP clients' own configuration files, read as the user has them.
// Each client format maps its server keys onto the native fields; keys a
// client gives a meaning Switchboard cannot honour are warnings that say
// so, and keys it does not know are warnings too (the client ignores
// them). docs/configuration.md has the table of what each honours.

// clientFormat is how one client's file is read.
type clientFormat struct {
	// name lists the clients that write the format, for messages.
	name string
	// decode reads the servers (and anything else the format has) from
	// the file's root mapping.
	decode func(root *node, rc *rawConfig, dc decodeContext, ps *problems)
}

// formatUnknown is the format of a file that is in none of the supported
// formats.
const formatUnknown Format = ""

// clientFormats are the formats other than the native one.
var clientFormats = map[Format]clientFormat{
	FormatClaude: {"Claude Desktop, Claude Code (.mcp.json), Cursor, Windsurf", func(root *node, rc *rawConfig, _ decodeContext, ps *problems) {
		ignoreOthers(root, ps, "mcpServers")
		decodeNamedMap(root.get("mcpServers"), "mcpServers", claudeSpec, rc, ps)
	}},
	FormatClaudeCode: {"Claude Code (~/.claude.json)", decodeClaudeUser},
	FormatCline:      {"Cline", decodeMCPServers(clineSpec, "mcpServers")},
	FormatGemini:     {"Gemini CLI", decodeGemini},
	FormatVSCode:     {"VS Code", decodeVSCode},
	FormatZed:        {"Zed", decodeMCPServers(zedSpec, "context_servers")},
	FormatContinue:   {"Continue", decodeContinue},
	FormatCodex:      {"Codex", decodeMCPServers(codexSpec, "mcp_servers")},
	FormatToolsV1: {"seed 004's agent tools: list", func(root *node, rc *rawConfig, _ decodeContext, ps *problems) {
		ignoreOthers(root, ps, "tools")
		decodeTools(root.get("tools"), rc, ps)
	}},
}

// decodeMCPServers reads the servers under key of a file whose other
// top-level keys are the client's other settings, ignored silently.
func decodeMCPServers(spec *formatSpec, key string) func(*node, *rawConfig, decodeContext, *problems) {
	return func(root *node, rc *rawConfig, _ decodeContext, ps *problems) {
		rc.syntax = spec.syntax
		decodeNamedMap(root.get(key), key, spec, rc, ps)
	}
}

// detectFormat works out which format a file's root mapping is in, from
// its keys and, where two clients share a shape, the file's name.
func detectFormat(root *node, file string) Format {
	if root == nil || root.kind != kindMap || len(root.pairs) == 0 {
		return FormatNative
	}
	for _, k := range nativeOnlyKeys {
		if root.get(k) != nil {
			return FormatNative
		}
	}
	base := strings.ToLower(filepath.Base(file))
	parent := strings.ToLower(filepath.Base(filepath.Dir(file)))
	if p := root.get("mcp_servers"); p != nil && p.value.kind == kindMap {
		return FormatCodex
	}
	if p := root.get("context_servers"); p != nil && p.value.kind == kindMap {
		return FormatZed
	}
	if p := root.get("mcpServers"); p != nil {
		switch {
		case p.value.kind == kindSeq:
			return FormatContinue
		case root.get("projects") != nil || base == ".claude.json":
			return FormatClaudeCode
		case base == "settings.json" && parent == ".gemini", anyServerHas(p.value, "httpUrl", "includeTools", "excludeTools", "trust"):
			return FormatGemini
		case base == "cline_mcp_settings.json", anyServerHas(p.value, "transportType"), anyServerTyped(p.value, "streamableHttp"), anyServerHasAll(p.value, "autoApprove", "timeout"):
			return FormatCline
		}
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
	if root.get("servers") != nil {
		return FormatNative
	}
	for _, p := range root.pairs {
		if suggest(p.key, nativeKeys) != "" || strings.HasPrefix(p.key, "x-") {
			return FormatNative // a misspelt native key: say which
		}
	}
	return formatUnknown
}

// anyServerHas reports whether an entry of a server mapping has one of
// keys.
func anyServerHas(servers *node, keys ...string) bool {
	for _, e := range servers.pairs {
		for _, k := range keys {
			if e.value.get(k) != nil {
				return true
			}
		}
	}
	return false
}

// anyServerTyped reports whether an entry of a server mapping has type t.
func anyServerTyped(servers *node, t string) bool {
	for _, e := range servers.pairs {
		if p := e.value.get("type"); p != nil && p.value.isScalar() && p.value.text == t {
			return true
		}
	}
	return false
}

// SupportedFormats describes, one line each, the file formats Switchboard
// reads.
var SupportedFormats = []string{
	"switchboard.yaml (native: servers:, defaults:, ...)",
	`"mcpServers" JSON: Claude Desktop, Claude Code (.mcp.json, ~/.claude.json), Cursor, Windsurf, Cline, Gemini CLI`,
	`VS Code .vscode/mcp.json ("servers") and settings.json ("mcp": {"servers"})`,
	`Zed settings.json ("context_servers")`,
	"Continue YAML (mcpServers: list, in config.yaml or .continue/mcpServers/*.yaml)",
	"Codex config.toml ([mcp_servers.NAME])",
	"seed 004's agent YAML (tools: list)",
}

// unsupportedFormat reports a file that is in none of the formats.
func unsupportedFormat(root *node, file string, ps *problems) {
	keys := make([]string, 0, len(root.pairs))
	for _, p := range root.pairs {
		keys = append(keys, p.key)
		if len(keys) == 5 {
			break
		}
	}
	ps.add(root.pos, "", fmt.Sprintf("%s is in no format Switchboard reads (its top-level keys are %s); it reads: %s",
		filepath.Base(file), strings.Join(goQuoted(keys), ", "), strings.Join(SupportedFormats, "; ")),
		"give the file of your MCP client, or write a switchboard.yaml (docs/configuration.md)", nil)
}

// The client formats' server keys.
var (
	// Claude Desktop, Cursor, Claude Code and Windsurf share one shape.
	claudeSpec = &formatSpec{
		format: FormatClaude,
		keys: map[string]string{
			"command": "command", "args": "args", "env": "env", "envFile": "env_file", "cwd": "cwd",
			"url": "url", "serverUrl": "url", "type": "transport", "headers": "headers", "disabled": fieldDisabled,
		},
		ignored: map[string]string{
			"autoApprove":   noApprovals,
			"alwaysAllow":   noApprovals,
			"disabledTools": noToolFilter,
			"auth":          "not honoured: Switchboard does not sign in with a client's OAuth settings; the server must accept its headers",
			"oauth":         "not honoured: Switchboard does not sign in with a client's OAuth settings; the server must accept its headers",
			"headersHelper": "not honoured: Switchboard does not run a program to make headers; write them under headers",
		},
		transportKey: "type", infer: true, foreign: true,
	}
	clineSpec = &formatSpec{
		format: FormatCline,
		keys: map[string]string{
			"command": "command", "args": "args", "env": "env", "cwd": "cwd", "url": "url", "headers": "headers",
			"type": "transport", "transportType": fieldLegacyTransport, "disabled": fieldDisabled,
			"timeout": fieldRequestTimeoutS,
		},
		ignored:      map[string]string{"autoApprove": noApprovals},
		transportKey: "type", infer: true, urlTransport: TransportSSE, foreign: true,
	}
	geminiSpec = &formatSpec{
		format: FormatGemini,
		keys: map[string]string{
			"command": "command", "args": "args", "env": "env", "cwd": "cwd", "url": "url", "httpUrl": "url",
			"headers": "headers", "type": "transport", "description": "description", "timeout": fieldRequestTimeoutMS,
		},
		ignored: map[string]string{
			"trust":            "no effect: Switchboard does not ask for confirmation before tool calls; the client that calls through it does",
			"includeTools":     noToolFilter,
			"excludeTools":     noToolFilter,
			"oauth":            "not honoured: Switchboard does not sign in with a client's OAuth settings; the server must accept its headers",
			"authProviderType": "not honoured: Switchboard does not sign in with a client's OAuth settings; the server must accept its headers",
		},
		quiet:        []string{"extensionName"},
		transportKey: "type", infer: true, foreign: true, syntax: varSyntax{bareDollar: true},
		adjust: adjustGemini,
	}
	vscodeSpec = &formatSpec{
		format: FormatVSCode,
		keys: map[string]string{
			"type": "transport", "command": "command", "args": "args", "env": "env",
			"envFile": "env_file", "cwd": "cwd", "url": "url", "headers": "headers",
		},
		ignored: map[string]string{
			"dev":            "not honoured: Switchboard does not watch the server's files or attach a debugger",
			"sandbox":        "not honoured: Switchboard does not sandbox servers; the server runs with your permissions",
			"sandboxEnabled": "not honoured: Switchboard does not sandbox servers; the server runs with your permissions",
		},
		quiet:        []string{"gallery", "version"},
		transportKey: "type", infer: true, foreign: true,
	}
	zedSpec = &formatSpec{
		format: FormatZed,
		keys: map[string]string{
			"command": "command", "args": "args", "env": "env", "url": "url", "headers": "headers",
			"enabled": "enabled", "timeout": fieldRequestTimeoutS,
		},
		ignored: map[string]string{
			"remote":   "not honoured: the server runs on this machine",
			"settings": "no effect: settings are for a server that a Zed extension provides",
		},
		quiet: []string{"source"},
		infer: true, foreign: true, adjust: adjustZed,
	}
	continueSpec = &formatSpec{
		format: FormatContinue,
		keys: map[string]string{
			"name": "name", "type": "transport", "command": "command", "args": "args", "env": "env", "cwd": "cwd",
			"url": "url", "headers": "headers", "connectionTimeout": fieldConnectTimeoutMS,
		},
		quiet:        []string{"serverName", "faviconUrl", "sourceFile"},
		transportKey: "type", infer: true, foreign: true, syntax: varSyntax{templates: true},
		adjust: adjustContinue,
	}
	codexSpec = &formatSpec{
		format: FormatCodex,
		keys: map[string]string{
			"command": "command", "args": "args", "env": "env", "env_vars": fieldEnvVars, "cwd": "cwd",
			"url": "url", "bearer_token_env_var": fieldBearerEnv, "http_headers": "headers", "env_http_headers": fieldEnvHeaders,
			"startup_timeout_sec": fieldConnectTimeoutS, "startup_timeout_ms": fieldConnectTimeoutMS,
			"tool_timeout_sec": fieldRequestTimeoutS, "enabled": "enabled",
		},
		ignored: map[string]string{
			"enabled_tools":               noToolFilter,
			"disabled_tools":              noToolFilter,
			"required":                    "not honoured: Switchboard keeps running when the server fails to start, and says why",
			"oauth_resource":              "not honoured: Switchboard does not sign in with a client's OAuth settings; the server must accept its headers",
			"scopes":                      "not honoured: Switchboard does not sign in with a client's OAuth settings; the server must accept its headers",
			"default_tools_approval_mode": noApprovals,
			"tools":                       noApprovals,
		},
		infer: true, urlTransport: TransportHTTP, foreign: true,
	}
)

// Every format reads launch (launch.allow), Switchboard's own key: a
// client ignores it, and Switchboard honours it only in a file the user
// trusts.
func init() {
	for _, spec := range []*formatSpec{claudeSpec, clineSpec, geminiSpec, vscodeSpec, zedSpec, continueSpec, codexSpec, toolsSpec} {
		spec.keys["launch"] = "launch"
	}
}

// Warnings shared by several formats.
const (
	noApprovals  = "no effect: Switchboard does not ask before tool calls, so there is nothing to approve; the client that calls through it asks"
	noToolFilter = "not honoured: Switchboard offers every tool of the server; to limit them, import the file (switchboard config import) and add a gateway view with include/exclude"
)

// decodeVSCode reads .vscode/mcp.json ("servers", "inputs") or the "mcp"
// block of a settings.json.
func decodeVSCode(root *node, rc *rawConfig, dc decodeContext, ps *problems) {
	if p := root.get("servers"); p != nil && p.value.kind == kindMap {
		ignoreOthers(root, ps, "servers", "inputs")
		decodeNamedMap(p, "servers", vscodeSpec, rc, ps)
		rc.inputs = decodeInputs(nodeOf(root.get("inputs")), "inputs", dc.file, ps)
		return
	}
	// settings.json: everything else is other settings.
	mcp := root.get("mcp").value
	decodeNamedMap(mcp.get("servers"), "mcp.servers", vscodeSpec, rc, ps)
	rc.inputs = decodeInputs(nodeOf(mcp.get("inputs")), "mcp.inputs", dc.file, ps)
}

// nodeOf is the value of p, or nil.
func nodeOf(p *pair) *node {
	if p == nil {
		return nil
	}
	return p.value
}

// decodeGemini reads a Gemini CLI settings.json: its mcpServers, and the
// mcp block's allowed and excluded server lists.
func decodeGemini(root *node, rc *rawConfig, _ decodeContext, ps *problems) {
	rc.syntax = geminiSpec.syntax
	decodeNamedMap(root.get("mcpServers"), "mcpServers", geminiSpec, rc, ps)
	mcp := nodeOf(root.get("mcp"))
	if mcp == nil || mcp.kind != kindMap {
		return
	}
	names := func(key string) ([]string, bool) {
		p := mcp.get(key)
		if p == nil {
			return nil, false
		}
		items, _ := ps.strList(p.value, "mcp."+key)
		return texts(items), true
	}
	allowed, hasAllowed := names("allowed")
	excluded, _ := names("excluded")
	for _, s := range rc.servers {
		switch {
		case contains(excluded, s.label):
			s.disabledBy = "mcp.excluded lists it"
		case hasAllowed && !contains(allowed, s.label):
			s.disabledBy = "mcp.allowed does not list it"
		}
	}
	if p := mcp.get("serverCommand"); p != nil {
		ps.warn(p.keyPos, "mcp.serverCommand", "not honoured: Switchboard starts only the servers under mcpServers", "")
	}
}

// adjustGemini reads httpUrl (streamable HTTP) and url (SSE), which say
// the transport by their name.
func adjustGemini(s *rawServer, entry *node, ps *problems) (*node, bool) {
	hp, up := entry.get("httpUrl"), entry.get("url")
	switch {
	case hp != nil && up != nil:
		ps.warn(up.keyPos, s.path("url"), "ignored: httpUrl is used, as Gemini CLI does", "remove one of them")
		s.transportHint = TransportHTTP
		return withoutKeys(entry, "url"), true
	case hp != nil:
		s.transportHint = TransportHTTP
	case up != nil:
		s.transportHint = TransportSSE
	}
	return entry, true
}

// adjustZed reads the shapes of Zed's context_servers: the flat one
// (command, args, env), the older one whose command is a mapping
// {path, args, env}, a remote server (url, headers), and a server that a
// Zed extension provides, which Switchboard cannot start.
func adjustZed(s *rawServer, entry *node, ps *problems) (*node, bool) {
	source := ""
	if p := entry.get("source"); p != nil && p.value.isScalar() {
		source = p.value.text
	}
	cmd := entry.get("command")
	if source == "extension" || (cmd == nil && entry.get("url") == nil) {
		ps.warn(s.pos, s.path(""), "ignored: the server is provided by a Zed extension, which Switchboard cannot run",
			"add the server's own command (command, args, env) or url to use it here")
		return nil, false
	}
	if cmd == nil || cmd.value.kind != kindMap {
		return entry, true
	}
	// {"command": {"path": ..., "args": [...], "env": {...}}}
	out := &node{kind: kindMap, pos: entry.pos}
	for _, p := range entry.pairs {
		if p.key != "command" {
			out.pairs = append(out.pairs, p)
		}
	}
	for _, p := range cmd.value.pairs {
		switch p.key {
		case "path":
			out.pairs = append(out.pairs, pair{key: "command", keyPos: p.keyPos, value: p.value})
		case "args", "env":
			if entry.get(p.key) == nil {
				out.pairs = append(out.pairs, p)
			}
		default:
			out.pairs = append(out.pairs, pair{key: "command." + p.key, keyPos: p.keyPos, value: p.value})
		}
	}
	return out, true
}

// decodeContinue reads a Continue file: config.yaml, or a block in
// .continue/mcpServers/, whose mcpServers is a list of named servers.
func decodeContinue(root *node, rc *rawConfig, _ decodeContext, ps *problems) {
	rc.syntax = continueSpec.syntax
	p := root.get("mcpServers")
	if p.value.kind != kindSeq {
		return
	}
	seen := map[string]bool{}
	for i, item := range p.value.items {
		s := &rawServer{spec: continueSpec, index: i, prefix: "mcpServers", pos: item.pos}
		if item.kind != kindMap {
			ps.add(item.pos, s.path(""), fmt.Sprintf("each server must be a mapping, not %s", item.kind.describe()), "", nil)
			continue
		}
		if u := item.get("uses"); u != nil {
			ps.warn(u.keyPos, s.path("uses"), fmt.Sprintf("ignored: %s is a block on the Continue hub, which Switchboard cannot fetch", scalarOr(u.value)),
				"copy the block's server (name, command, args or url) into the file")
			continue
		}
		np := item.get("name")
		if np == nil || !np.value.isScalar() || np.value.text == "" {
			ps.add(item.pos, s.path("name"), "name is required", "add name: with the server's name", nil)
			continue
		}
		s.label, s.name = np.value.text, np.value.text
		s.nameOK = clientName(s, np.value.pos, ps)
		if seen[s.name] {
			ps.add(np.value.pos, s.path("name"), fmt.Sprintf("duplicate server name %q", s.name), "give each server a unique name", nil)
			continue
		}
		seen[s.name] = true
		if entry, ok := adjustEntry(s, item, ps); ok {
			collectFields(s, entry, ps)
			rc.servers = append(rc.servers, s)
		}
	}
}

// adjustContinue reads requestOptions: its headers are the server's
// headers; its other options are not honoured.
func adjustContinue(s *rawServer, entry *node, ps *problems) (*node, bool) {
	ro := entry.get("requestOptions")
	if ro == nil {
		return entry, true
	}
	out := withoutKeys(entry, "requestOptions")
	if ro.value.kind != kindMap {
		ps.warn(ro.value.pos, s.path("requestOptions"), fmt.Sprintf("ignored: requestOptions must be a mapping, not %s", ro.value.kind.describe()), "")
		return out, true
	}
	for _, p := range ro.value.pairs {
		if p.key == "headers" {
			out.pairs = append(out.pairs, pair{key: "headers", keyPos: p.keyPos, value: p.value})
			continue
		}
		ps.warn(p.keyPos, s.path("requestOptions."+p.key), "not honoured: Switchboard applies no request options but headers", "")
	}
	return out, true
}

// withoutKeys returns a copy of a mapping without the given keys.
func withoutKeys(n *node, keys ...string) *node {
	out := &node{kind: kindMap, pos: n.pos}
	for _, p := range n.pairs {
		if !slices.Contains(keys, p.key) {
			out.pairs = append(out.pairs, p)
		}
	}
	return out
}

// decodeClaudeUser reads Claude Code's ~/.claude.json: the user's servers
// (top-level mcpServers) and those of the project Switchboard runs in
// (projects["/path"].mcpServers, the nearest enclosing project), which
// replace user servers of the same name, as in Claude Code. Other
// projects' servers apply only in those folders and are left out.
func decodeClaudeUser(root *node, rc *rawConfig, dc decodeContext, ps *problems) {
	decodeNamedMap(root.get("mcpServers"), "mcpServers", claudeSpec, rc, ps)
	projects := nodeOf(root.get("projects"))
	if projects == nil || projects.kind != kindMap {
		return
	}
	var match *pair
	var others []string
	for i := range projects.pairs {
		p := &projects.pairs[i]
		if within(dc.workDir, p.key) && (match == nil || len(p.key) > len(match.key)) {
			match = p
		}
	}
	for i := range projects.pairs {
		p := &projects.pairs[i]
		if p != match && p.value.get("mcpServers") != nil && len(p.value.get("mcpServers").value.pairs) > 0 {
			others = append(others, p.key)
		}
	}
	if len(others) > 0 {
		ps.warn(projects.pos, "projects", fmt.Sprintf("the servers of %d other project(s) are left out: they apply only in those folders (%s)", len(others), strings.Join(others, ", ")),
			"run Switchboard in the project's folder to use its servers")
	}
	if match == nil {
		return
	}
	var own rawConfig
	decodeNamedMap(match.value.get("mcpServers"), "projects["+fmt.Sprintf("%q", match.key)+"].mcpServers", claudeSpec, &own, ps)
	for _, s := range own.servers {
		if i := slices.IndexFunc(rc.servers, func(u *rawServer) bool { return u.name == s.name }); i >= 0 {
			ps.warn(s.pos, s.path(""), fmt.Sprintf("replaces the user-level server %q for this project, as in Claude Code", s.name), "")
			rc.servers = slices.Delete(rc.servers, i, i+1)
		}
		rc.servers = append(rc.servers, s)
	}
}

// within reports whether dir is root or inside it.
func within(dir, root string) bool {
	if dir == "" || root == "" {
		return false
	}
	rel, err := filepath.Rel(filepath.Clean(root), filepath.Clean(dir))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// anyServerHasAll reports whether an entry of a server mapping has all of
// keys.
func anyServerHasAll(servers *node, keys ...string) bool {
	for _, e := range servers.pairs {
		all := true
		for _, k := range keys {
			all = all && e.value.get(k) != nil
		}
		if all {
			return true
		}
	}
	return false
}

// goQuoted quotes each string as Go would.
func goQuoted(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}
