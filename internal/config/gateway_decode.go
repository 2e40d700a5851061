package config

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	path_ "path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/switchboard-mcp/switchboard/internal/config/schema"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// This file reads and checks the gateway: block, and holds the rules that
// `serve` applies to it at run time (exposure, views, token matching).

// Identity placeholders. In a network server's header values they are kept
// as written at load time, and filled per request by the upstream transport
// with the calling user's identity and the gateway session's id. Anywhere
// else they are a configuration problem.
const (
	IdentityUser    = "${identity.user}"
	IdentitySession = "${identity.session}"
)

// MaxShutdownTimeout bounds gateway.shutdown_timeout.
const MaxShutdownTimeout = 10 * time.Minute

// gatewayDocs is where a person reads about the block.
const gatewayDocs = "docs/configuration.md#gateway"

var (
	// toolNamePattern is the form of a name a view renames a tool to.
	toolNamePattern = lazyRegexp(`^[A-Za-z0-9_.-]{1,128}$`)
	// sha256Pattern is the form of token_sha256.
	sha256Pattern = lazyRegexp(`^[0-9a-f]{64}$`)
)

// CheckExposure reports, as a fault.Config error, a gateway that would
// listen on an address other hosts can reach without requiring tokens.
// Loopback addresses (127.0.0.0/8, ::1, localhost) need none; an empty
// host (":7777") and 0.0.0.0 are not loopback. `serve --listen` applies it
// after overriding Listen; loading a configuration applies it too.
func (g *Gateway) CheckExposure() error {
	if g.AuthRequired() || isLoopbackListen(g.Listen) {
		return nil
	}
	msg, fix := exposureProblem(g.Listen)
	return fault.New(fault.Config, "%s", msg).WithSuggestions(fix)
}

// exposureProblem words the exposure rule for a message and its fix.
func exposureProblem(listen string) (string, string) {
	return fmt.Sprintf("listening on %s requires tokens or OAuth: anyone who can reach it could call every tool", listen),
		"add gateway.tokens or gateway.oauth (see " + gatewayDocs + " and docs/auth-gateway.md), or listen on 127.0.0.1"
}

// isLoopbackListen reports whether a listen address's host is a loopback
// address or the name localhost.
func isLoopbackListen(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		host = listen
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// View returns the view of that name. For DefaultViewName with no such
// view configured it returns the implicit one: every server, names
// prefixed.
func (g *Gateway) View(name string) (View, bool) {
	for _, v := range g.Views {
		if v.Name == name {
			return v, true
		}
	}
	if name == DefaultViewName {
		return View{Name: DefaultViewName, Prefix: PrefixAlways}, true
	}
	return View{}, false
}

// Matches reports whether presented is this token, in constant time.
func (t Token) Matches(presented string) bool {
	want, ok := t.digest()
	if !ok {
		return false
	}
	got := sha256.Sum256([]byte(presented))
	return subtle.ConstantTimeCompare(got[:], want) == 1
}

// digest returns the SHA-256 of the token, from SHA256 or else Secret; it
// reports false for a token with neither (such as a redacted one).
func (t Token) digest() ([]byte, bool) {
	if t.SHA256 != "" {
		d, err := hex.DecodeString(t.SHA256)
		return d, err == nil && len(d) == sha256.Size
	}
	if t.Secret == "" {
		return nil, false
	}
	d := sha256.Sum256([]byte(t.Secret))
	return d[:], true
}

// Allows reports whether the token may use the named view.
func (t Token) Allows(view string) bool {
	return t.AllowsEveryView() || slices.Contains(t.Views, view)
}

// AllowsEveryView reports whether the token may use every view: it names
// none, or "*".
func (t Token) AllowsEveryView() bool {
	return len(t.Views) == 0 || slices.Contains(t.Views, "*")
}

// String describes the token without its secret, so that printing one
// never leaks it.
func (t Token) String() string {
	return fmt.Sprintf("token %s (user %s)", t.Name, t.User)
}

// LogValue logs the token's name and user, never its secret.
func (t Token) LogValue() slog.Value {
	return slog.GroupValue(slog.String("name", t.Name), slog.String("user", t.User))
}

// MarshalJSON encodes the token without its secret, so that a
// configuration written as JSON (config show --json, a JSON log) never
// holds it.
func (t Token) MarshalJSON() ([]byte, error) {
	type plain Token
	return json.Marshal(struct {
		plain
		Secret string `json:",omitempty"` // shadows plain.Secret
	}{plain: plain(t)})
}

// redact removes the token and client secrets of gateway settings (of a
// deep copy); token_env names and hashes are kept.
func (g *Gateway) redact() {
	for i := range g.Tokens {
		g.Tokens[i].Secret = ""
	}
	if g.OAuth != nil && g.OAuth.Introspection != nil {
		g.OAuth.Introspection.ClientSecret = ""
	}
	if g.OAuth != nil && g.OAuth.Console != nil {
		g.OAuth.Console.ClientSecret = ""
	}
}

// isDefault reports whether g holds only the defaults (wherever it was
// written), so that `config show` can leave the block out.
func (g Gateway) isDefault() bool {
	return sameBlock(g, DefaultGateway())
}

// decodeGateway reads the gateway: block. servers are the valid server
// names, which views refer to.
func (r *resolver) decodeGateway(f *schema.Gateway, servers []string) Gateway {
	g := DefaultGateway()
	r.readBlock(&g, f, []any{"gateway"}, "listen", "allowed_origins", "allowed_hosts", "default_user")
	listenPos, listenOK := r.keyAt("gateway"), true
	if r.listen != "" {
		// serve --listen: the flag replaces the key, checked alike.
		listenPos = Pos{File: "--listen"}
		if msg, fix := listenProblem(r.listen); msg != "" {
			r.ps.add(listenPos, "gateway.listen", msg, fix, nil)
			listenOK = false
		} else {
			g.Listen = r.listen
		}
	}
	if f == nil {
		return g
	}
	if n := r.at("gateway", "listen"); n != nil && r.listen == "" {
		listenPos, listenOK = n.pos, false
		if v, ok := r.textAt("gateway", "listen"); ok {
			if msg, fix := listenProblem(v); msg != "" {
				r.ps.add(n.pos, "gateway.listen", msg, fix, nil)
			} else {
				g.Listen, listenOK = v, true
			}
		}
	}
	if f.FastPath != nil {
		g.DisableFastPath = !*f.FastPath
	}
	g.AllowedOrigins = r.gatewayList(originProblem, "gateway", "allowed_origins")
	g.AllowedHosts = r.gatewayList(hostProblem, "gateway", "allowed_hosts")
	if v, ok := r.textAt("gateway", "default_user"); ok {
		pos := r.at("gateway", "default_user").pos
		switch {
		case strings.TrimSpace(v) == "":
			r.ps.add(pos, "gateway.default_user", "is empty", "give the identity trusted local callers act as, e.g. default_user: alice, or remove the key for the OS user", nil)
		case strings.IndexFunc(v, unicode.IsControl) >= 0:
			r.ps.add(pos, "gateway.default_user", fmt.Sprintf("%q holds a control character", v), "use a plain user id: it is sent to servers in _meta and in ${identity.user} headers", nil)
		default:
			g.DefaultUser = v
		}
	}
	g.Views = r.views(f.Views, servers)
	tokens, tokensOK := r.tokens(f.Tokens, g.Views)
	g.Tokens = tokens
	g.OAuth = r.oauth(f.OAuth, g.Views)
	oauthOK := f.OAuth == nil || g.OAuth != nil
	if listenOK && tokensOK && oauthOK && !g.AuthRequired() && !isLoopbackListen(g.Listen) {
		msg, fix := exposureProblem(g.Listen)
		r.ps.add(listenPos, "gateway.listen", msg, fix, nil)
	}
	return g
}

// ListenProblem says what is wrong with a listen address (gateway.listen,
// serve --listen) and how to fix it, or "", "" when it is a valid
// host:port. Whether the address needs tokens is checked separately.
func ListenProblem(v string) (msg, fix string) { return listenProblem(v) }

// listenProblem is ListenProblem.
func listenProblem(v string) (string, string) {
	const fix = "write it as host:port, e.g. 127.0.0.1:7777 (or [::1]:7777)"
	host, port, err := net.SplitHostPort(v)
	if err != nil {
		return fmt.Sprintf("invalid listen address %q", v), fix
	}
	if strings.ContainsAny(host, "/ ") {
		return fmt.Sprintf("invalid host %q in listen address", host), fix
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Sprintf("invalid port %q in listen address", port), "use a port number from 0 (any free port) to 65535"
	}
	return "", ""
}

// originProblem checks an allowed origin and returns it normalized (lower
// case, as browsers send it), or what is wrong with it.
func originProblem(v string) (string, string, string) {
	if v == "*" {
		return v, "", ""
	}
	const fix = `write it as scheme://host[:port], e.g. https://app.example.com, or "*" for any origin`
	u, err := url.Parse(v)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return "", fmt.Sprintf("invalid origin %q", v), fix
	}
	if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
		return "", fmt.Sprintf("origin %q must use http or https", v), fix
	}
	if u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery || strings.HasSuffix(v, "#") {
		return "", fmt.Sprintf("origin %q must not have a path, query or credentials", v), fmt.Sprintf("write %s://%s", strings.ToLower(u.Scheme), strings.ToLower(u.Host))
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", fmt.Sprintf("invalid port in origin %q", v), fix
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return "", fmt.Sprintf("invalid port in origin %q", v), fix
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), "", ""
}

// hostProblem checks an allowed Host header value and returns it
// normalized (lower case), or what is wrong with it.
func hostProblem(v string) (string, string, string) {
	const fix = "write a host name or host:port, e.g. mcp.example.com or mcp.example.com:443, with no scheme or path"
	if strings.Contains(v, "://") {
		return "", fmt.Sprintf("host %q must not have a scheme", v), fix
	}
	if v == "" || strings.ContainsAny(v, "/?#@ \t") {
		return "", fmt.Sprintf("invalid host %q", v), fix
	}
	host := v
	if h, port, err := net.SplitHostPort(v); err == nil {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return "", fmt.Sprintf("invalid port in host %q", v), fix
		}
		host = h
	} else if strings.Contains(v, ":") && !(strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]")) {
		return "", fmt.Sprintf("invalid host %q", v), fix + " (IPv6 addresses in brackets: [::1])"
	}
	if strings.Trim(host, "[]") == "" {
		return "", fmt.Sprintf("invalid host %q", v), fix
	}
	return strings.ToLower(v), "", ""
}

// gatewayList reads the list of strings at path, checking and
// normalizing each item with check. Only the valid items are returned.
func (r *resolver) gatewayList(check func(string) (string, string, string), path ...any) []string {
	var out []string
	for _, it := range r.itemsAt(path...) {
		v, ok := r.expandNode(it.n, it.field)
		if !ok {
			continue
		}
		norm, msg, fix := check(v)
		if msg != "" {
			r.ps.add(it.n.pos, it.field, msg, fix, nil)
			continue
		}
		if !slices.Contains(out, norm) {
			out = append(out, norm)
		}
	}
	return out
}

// views reads gateway.views. servers are the valid server names.
func (r *resolver) views(views []schema.View, servers []string) []View {
	var out []View
	first := map[string]Pos{}
	for i, f := range views {
		at := func(key ...any) []any { return append([]any{"gateway", "views", i}, key...) }
		it := r.at(at()...)
		if it == nil {
			continue // taken out as wrong
		}
		v := View{Prefix: PrefixAlways, Pos: it.pos}
		if n := r.at(at("name")...); n != nil {
			if prev, dup := first[f.Name]; dup {
				r.ps.add(n.pos, r.name(at("name")...), fmt.Sprintf("duplicate view name %q (first defined at %s)", f.Name, prev), "give each view a unique name", nil)
			} else {
				first[f.Name] = n.pos
				v.Name = f.Name
			}
		}
		v.Servers = r.serverList(servers, at("servers")...)
		if f.Prefix != nil && Prefix(*f.Prefix) == PrefixNever {
			if len(f.Servers) != 1 {
				r.ps.add(r.at(at("prefix")...).pos, r.name(at("prefix")...), "prefix: never needs exactly one entry in servers", "list the one server the view shows (servers: [name]), or use prefix: always", nil)
			} else {
				v.Prefix = PrefixNever
			}
		}
		var exposed []string // the servers whose server__tool names the globs match
		if v.Prefix == PrefixAlways {
			exposed = servers
			if len(v.Servers) > 0 {
				exposed = v.Servers
			}
		}
		v.Include = r.viewGlobs(exposed, at("include")...)
		v.Exclude = r.viewGlobs(exposed, at("exclude")...)
		v.Rename = r.rename(exposed, at("rename")...)
		v.Descriptions = r.descriptions(exposed, at("descriptions")...)
		out = append(out, v)
	}
	return out
}

// globs reads the list of path.Match patterns at path.
func (r *resolver) globs(path ...any) []string {
	return r.checkedGlobs(nil, path...)
}

// checkedGlobs is globs with a further check of each pattern, when check
// is not nil: the problem it returns, if any, and how to fix it.
func (r *resolver) checkedGlobs(check func(string) (msg, fix string), path ...any) []string {
	var out []string
	for _, it := range r.itemsAt(path...) {
		v, ok := r.expandNode(it.n, it.field)
		if !ok {
			continue
		}
		if v == "" {
			r.ps.add(it.n.pos, it.field, "is empty", `remove it, or write a pattern such as "github__*"`, nil)
			continue
		}
		if _, err := path_.Match(v, ""); err != nil {
			r.ps.add(it.n.pos, it.field, fmt.Sprintf("invalid pattern %q", v), `use * for any run of characters, ? for one and [a-z] for a class, e.g. "github__*"`, err)
			continue
		}
		if check != nil {
			if msg, fix := check(v); msg != "" {
				r.ps.add(it.n.pos, it.field, msg, fix, nil)
				continue
			}
		}
		out = append(out, v)
	}
	return out
}

// viewGlobs reads a view's include or exclude globs. Under prefix: always
// (servers is not empty) each must be able to match a name server__tool of
// one of servers: "read_*" there matches nothing, and an exclude that
// matches nothing leaves in the tools it was written to keep out.
func (r *resolver) viewGlobs(servers []string, path ...any) []string {
	if len(servers) == 0 {
		return r.globs(path...)
	}
	return r.checkedGlobs(func(g string) (string, string) {
		if matchesExposed(g, servers) {
			return "", ""
		}
		want := "*__" + g
		if len(servers) == 1 {
			want = servers[0] + "__" + g
		}
		return fmt.Sprintf("%q matches no tool of this view: with prefix: always its tools are named server__tool", g),
			fmt.Sprintf("write %q, or use prefix: never in a view of one server", want)
	}, path...)
}

// exposedName checks that the key of a view's rename or descriptions entry
// can be a tool's name in the view: under prefix: always (exposed, the
// view's servers, is not empty) a server__tool name. Another is reported.
func (r *resolver) exposedName(exposed []string, p pair, field string) bool {
	if len(exposed) == 0 || matchesExposed(p.key, exposed) {
		return true
	}
	want := "SERVER__" + p.key
	if len(exposed) == 1 {
		want = exposed[0] + "__" + p.key
	}
	r.ps.add(p.keyPos, field, fmt.Sprintf("%q is no tool of this view: with prefix: always its tools are named server__tool", p.key),
		fmt.Sprintf("write %s, or use prefix: never in a view of one server", want), nil)
	return false
}

// matchesExposed reports whether glob can match a name server__tool of one
// of servers: whether its literal start (up to the first * ? [ or \) and
// the name's server__ agree.
func matchesExposed(glob string, servers []string) bool {
	lit := glob
	if i := strings.IndexAny(glob, `*?[\`); i >= 0 {
		lit = glob[:i]
	}
	for _, s := range servers {
		p := s + "__"
		if strings.HasPrefix(p, lit) || strings.HasPrefix(lit, p) {
			return true
		}
	}
	return false
}

// pairsAt returns the present entries of the mapping at path.
func (r *resolver) pairsAt(path ...any) []pair {
	n := r.at(path...)
	if n == nil || n.kind != kindMap {
		return nil
	}
	return n.pairs
}

// rename reads a view's rename: mapping of exposed tool name to new name.
func (r *resolver) rename(exposed []string, path ...any) map[string]string {
	out := map[string]string{}
	targets := map[string]string{}
	field := r.name(path...)
	for _, p := range r.pairsAt(path...) {
		f := join(field, p.key)
		if p.key == "" {
			r.ps.add(p.keyPos, field, "a tool name is empty", "write the tool's exposed name, e.g. github__create_issue: new_issue", nil)
			continue
		}
		if !r.exposedName(exposed, p, f) {
			continue
		}
		v, ok := r.expandNode(p.value, f)
		if !ok {
			continue
		}
		if !toolNamePattern().MatchString(v) {
			r.ps.add(p.value.pos, f, fmt.Sprintf("invalid tool name %q", v), "use 1 to 128 letters, digits, _, . and -", nil)
			continue
		}
		if prev, dup := targets[v]; dup {
			r.ps.add(p.value.pos, f, fmt.Sprintf("%s and %s are both renamed to %q", prev, p.key, v), "give each tool a different name", nil)
			continue
		}
		targets[v] = p.key
		out[p.key] = v
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// descriptions reads a view's descriptions: mapping.
func (r *resolver) descriptions(exposed []string, path ...any) map[string]string {
	out := map[string]string{}
	field := r.name(path...)
	for _, p := range r.pairsAt(path...) {
		if p.key == "" {
			r.ps.add(p.keyPos, field, "a tool name is empty", "write the tool's exposed name, e.g. github__create_issue: Open an issue", nil)
			continue
		}
		if !r.exposedName(exposed, p, join(field, p.key)) {
			continue
		}
		if v, ok := r.expandNode(p.value, join(field, p.key)); ok {
			out[p.key] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// tokens reads gateway.tokens. It reports false when any entry was wrong,
// so that the exposure rule is not also reported for a missing token.
// Messages never include a token's secret.
func (r *resolver) tokens(tokens []schema.Token, views []View) ([]Token, bool) {
	viewNames := []string{DefaultViewName, "*"}
	for _, v := range views {
		if v.Name != "" && !slices.Contains(viewNames, v.Name) {
			viewNames = append(viewNames, v.Name)
		}
	}
	var out []Token
	allOK := r.tree == nil || !r.violatedUnder("gateway", "tokens")
	names := map[string]Pos{}
	digests := map[string]string{} // hex SHA-256 -> label of the first token
	for i := range tokens {
		at := func(key ...any) []any { return append([]any{"gateway", "tokens", i}, key...) }
		it := r.at(at()...)
		if it == nil {
			continue // taken out as wrong
		}
		base := r.name(at()...)
		before := len(r.ps.errs)
		t := Token{Name: fmt.Sprintf("tokens[%d]", i), Pos: it.pos}
		if v, ok := r.textAt(at("name")...); ok {
			pos := r.at(at("name")...).pos
			switch prev, dup := names[v]; {
			case strings.TrimSpace(v) == "":
				r.ps.add(pos, base+".name", "is empty", "give the token a label, or remove name", nil)
			case dup:
				r.ps.add(pos, base+".name", fmt.Sprintf("duplicate token name %q (first defined at %s)", v, prev), "give each token a unique name", nil)
			default:
				names[v] = pos
				t.Name = v
			}
		}
		if v, ok := r.textAt(at("user")...); ok {
			if strings.TrimSpace(v) == "" {
				r.ps.add(r.at(at("user")...).pos, base+".user", "is empty", "give the identity calls made with this token carry, e.g. user: alice", nil)
			} else {
				t.User = v
			}
		}
		envN, hashN := r.at(at("token_env")...), r.at(at("token_sha256")...)
		var digestPos Pos
		digestField := base
		switch {
		case envN != nil && hashN != nil:
			r.ps.add(r.keyAt(at("token_sha256")...), base+".token_sha256", "token_env and token_sha256 cannot both be set", "keep one: token_env names a variable holding the token, token_sha256 is its hash", nil)
		case envN == nil && hashN == nil:
			if !r.violatedUnder(at("token_env")...) && !r.violatedUnder(at("token_sha256")...) {
				r.ps.add(it.pos, base+".token_env", "a token needs token_env or token_sha256", "add token_env: VARIABLE (a variable holding the token), or token_sha256: its SHA-256 in hex (printf %s TOKEN | sha256sum)", nil)
			}
		case envN != nil:
			t.TokenEnv, t.Secret = r.tokenEnv(envN, base+".token_env")
			digestPos, digestField = envN.pos, base+".token_env"
		default:
			t.SHA256 = r.tokenHash(hashN, base+".token_sha256")
			digestPos, digestField = hashN.pos, base+".token_sha256"
		}
		for _, v := range r.itemsAt(at("views")...) {
			if !slices.Contains(viewNames, v.n.text) {
				fix := "use the name of a view under gateway.views, \"default\" or \"*\""
				if sug := suggest(v.n.text, viewNames); sug != "" {
					fix = fmt.Sprintf("did you mean %q?", sug)
				}
				r.ps.add(v.n.pos, v.field, fmt.Sprintf("unknown view %q", v.n.text), fix, nil)
				continue
			}
			if !slices.Contains(t.Views, v.n.text) {
				t.Views = append(t.Views, v.n.text)
			}
		}
		if d, ok := t.digest(); ok {
			h := hex.EncodeToString(d)
			if prev, dup := digests[h]; dup {
				r.ps.add(digestPos, digestField, fmt.Sprintf("%s has the same token as %s", t.Name, prev), "give each token its own value, so that calls can be told apart", nil)
			} else {
				digests[h] = t.Name
			}
		}
		if len(r.ps.errs) > before || t.User == "" {
			allOK = false
			continue
		}
		out = append(out, t)
	}
	return out, allOK
}

// tokenEnv reads token_env and looks the variable up; it returns the
// variable's name and the secret.
func (r *resolver) tokenEnv(n *node, field string) (string, string) {
	name := n.text // its form is the schema's
	v, set := r.lookup(name)
	switch {
	case !set:
		r.ps.add(n.pos, field, fmt.Sprintf("variable %s is not set", name), fmt.Sprintf("set %s to the token in the environment switchboard runs in (e.g. export %s=$(openssl rand -hex 32)), or use token_sha256", name, name), &UnresolvedVariableError{Variable: name, Field: field})
	case strings.TrimSpace(v) == "":
		r.ps.add(n.pos, field, fmt.Sprintf("variable %s is empty", name), fmt.Sprintf("set %s to the token (e.g. export %s=$(openssl rand -hex 32)), or use token_sha256", name, name), nil)
	default:
		return name, v
	}
	return name, ""
}

// tokenHash reads token_sha256.
func (r *resolver) tokenHash(n *node, field string) string {
	v := n.text
	const fix = "give the token's SHA-256 as 64 hex digits (printf %s TOKEN | sha256sum)"
	switch {
	case sha256Pattern().MatchString(v):
		return v
	case sha256Pattern().MatchString(strings.ToLower(v)):
		r.ps.add(n.pos, field, "must be in lower case", "write the hex digits in lower case", nil)
	default:
		r.ps.add(n.pos, field, fmt.Sprintf("must be 64 hex digits (a SHA-256), not %d characters", len(v)), fix, nil)
	}
	return ""
}

// serverList reads the list of server names at path: each must be one of
// known (the configured servers' names), and listed once.
func (r *resolver) serverList(known []string, path ...any) []string {
	var out []string
	for _, it := range r.itemsAt(path...) {
		s := it.n.text
		switch {
		case slices.Contains(out, s):
			r.ps.add(it.n.pos, it.field, fmt.Sprintf("server %q is listed twice", s), "remove one", nil)
		case !slices.Contains(known, s):
			fix := "use the name of a server under servers: (" + strings.Join(known, ", ") + ")"
			if len(known) == 0 {
				fix = "define the server under servers: first"
			}
			if sug := suggest(s, known); sug != "" {
				fix = fmt.Sprintf("did you mean %q?", sug)
			}
			r.ps.add(it.n.pos, it.field, fmt.Sprintf("unknown server %q", s), fix, nil)
		default:
			out = append(out, s)
		}
	}
	return out
}
