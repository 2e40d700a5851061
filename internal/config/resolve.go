package config

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config/schema"
)

// resolver turns a rawConfig into a Config, recording every problem.
type resolver struct {
	// tree is a native file's tree, checked against the schema (nil for
	// other formats): where the values read from the schema's types are.
	tree     *node
	violated map[string]bool // paths at or under which the schema found a problem
	ps       *problems
	x        *expander
	lookup   func(string) (string, bool)
	file     string // the configuration file, for messages
	dir      string // base for relative env_file and cwd
	// dirBase says what dir is, for messages: "the configuration file's
	// folder", "the project's folder, /p", ...
	dirBase  string
	format   Format
	defaults Defaults
	limits   Limits
	// limitsOK is false when limits.max_concurrent was wrong, so that the
	// servers' max_concurrent is not checked against it.
	limitsOK bool
	allowed  []string
	// listen replaces gateway.listen (Options.Listen) unless empty.
	listen string
	// trust is the file's trust, which decides what its commands may be;
	// canAsk says that Load may ask to trust it (Options.ConfirmTrust).
	trust  fileTrust
	canAsk bool
	// refused lists the commands refused only for want of trust, as
	// "python (server a)"; widened, what launch.allow would allow once the
	// file is trusted, as "docker.privileged (server b)".
	refused []string
	widened []string
	// workDir is the working directory: where a server without cwd starts,
	// and so where its relative host paths start.
	workDir string
	// entries are the spans of ps.errs that each server entry's own
	// fields raised (see setAside).
	entries []entrySpan
	// inputs are the file's VS Code inputs, and passwordKeys the env and
	// header keys of the server being resolved whose values refer to a
	// password input (usesPassword): secret, as keys named like
	// credentials are, whatever their name.
	inputs       map[string]Input
	passwordKeys []string
}

// entrySpan is ps.errs[from:to], the problems that the fields of
// cfg.Servers[server] raised.
type entrySpan struct{ server, from, to int }

// defaultDefaults returns the built-in global settings: the schema's,
// and DefaultBackoff.
func defaultDefaults() Defaults {
	d := defaultBlock[Defaults](&schema.Defaults{})
	d.Health = defaultBlock[Health](&schema.Health{})
	d.Health.Backoff = slices.Clone(DefaultBackoff)
	return d
}

// resolve builds the configuration from its raw form.
func (r *resolver) resolve(rc *rawConfig) *Config {
	r.format, r.tree, r.violated = rc.format, rc.root, rc.violated
	f := rc.file
	if f == nil {
		f = &schema.File{}
	}
	r.defaults = defaultDefaults()
	r.readBlock(&r.defaults, f.Defaults, []any{"defaults"})
	r.limits = decodeLimits(f.Limits)
	r.limitsOK = !rc.violated["limits/max_concurrent"]
	history := r.decodeHistory(f.History)
	r.allowed = r.decodeSecurity()
	cfg := &Config{Defaults: r.defaults, Limits: r.limits, History: history, AllowedCommands: r.allowed, Format: rc.format, Source: r.file}
	first := map[string]*rawServer{}
	for _, s := range rc.servers {
		nErrs, nWarns, nRefused := len(r.ps.errs), len(r.ps.warns), len(r.refused)
		srv := r.server(s)
		if rc.format != FormatNative && rc.format != FormatToolsV1 && isOwnGateway(srv, r.listen) {
			// Whatever reading it found (a command beyond the allowlist)
			// does not matter: it is not read.
			r.ps.errs, r.ps.warns, r.refused = r.ps.errs[:nErrs], r.ps.warns[:nWarns], r.refused[:nRefused]
			r.ps.warn(s.pos, s.path("name"), fmt.Sprintf("skipped: %q is Switchboard's own gateway (as switchboard client connect writes it); reading it would make Switchboard connect to itself", s.name), "")
			continue
		}
		if n := len(r.ps.errs); n > nErrs {
			r.entries = append(r.entries, entrySpan{server: len(cfg.Servers), from: nErrs, to: n})
		}
		if s.nameOK {
			if prev, dup := first[s.name]; dup {
				np := s.pos
				if f := s.field("name"); f != nil {
					np = f.val.pos
				}
				r.ps.add(np, s.path("name"), fmt.Sprintf("duplicate server name %q (first defined at %s)", s.name, prev.pos), "give each server a unique name", nil)
			} else {
				first[s.name] = s
			}
		}
		cfg.Servers = append(cfg.Servers, srv)
	}
	names := serverNames(rc.servers)
	cfg.Gateway = r.decodeGateway(f.Gateway, names)
	cfg.Hooks = r.decodeHooks(f, names)
	cfg.Notebook = r.decodeNotebook(f.Notebook, names)
	cfg.LLM = r.decodeLLM(f.LLM)
	cfg.Agent = r.decodeAgent(f.Agent, names)
	cfg.Telemetry = r.decodeTelemetry(f.Telemetry)
	cfg.Audit = r.decodeAudit(f.Audit)
	return cfg
}

// serverNames lists the valid names of a file's servers.
func serverNames(servers []*rawServer) []string {
	var names []string
	for _, s := range servers {
		if s.nameOK {
			names = append(names, s.name)
		}
	}
	return names
}

// decodeSecurity reads security.allowed_commands and returns the
// effective command allowlist.
func (r *resolver) decodeSecurity() []string {
	allowed := slices.Clone(DefaultAllowedCommands)
	for _, it := range r.itemsAt("security", "allowed_commands") {
		v, ok := r.expandNode(it.n, it.field)
		if !ok {
			continue
		}
		switch {
		case strings.TrimSpace(v) == "":
			r.ps.add(it.n.pos, it.field, "is empty", "remove it", nil)
		case strings.ContainsAny(v, " \t\n"):
			r.ps.add(it.n.pos, it.field, fmt.Sprintf("%q must be a command name or path, not a command line", v), "list only the program; arguments go under each server's args", nil)
		case isPath(v) && !filepath.IsAbs(v):
			r.ps.add(it.n.pos, it.field, fmt.Sprintf("%q is a relative path", v), "use a bare command name (found on PATH) or an absolute path", nil)
		default:
			if isPath(v) {
				v = filepath.Clean(v)
			}
			if !contains(allowed, v) {
				allowed = append(allowed, v)
			}
		}
	}
	return allowed
}

// isPath reports whether a command is a path rather than a bare name.
func isPath(cmd string) bool { return strings.ContainsAny(cmd, `/\`) }

// expandNode reads a string node and expands its variables. It reports
// false when the value is unusable (wrong type, a variable problem, a NUL
// byte), having recorded why.
func (r *resolver) expandNode(n *node, field string) (string, bool) {
	return r.expandNodeWith(n, field, r.x.expand)
}

// expandHeaderNode is expandNode for a header value, which keeps the
// identity placeholders (${identity.user}, ${identity.session}).
func (r *resolver) expandHeaderNode(n *node, field string) (string, bool) {
	return r.expandNodeWith(n, field, r.x.expandHeader)
}

func (r *resolver) expandNodeWith(n *node, field string, expand func(s, field string) (string, []varProblem)) (string, bool) {
	s, ok := r.ps.str(n, field)
	if !ok {
		return "", false
	}
	v, vps := expand(s, field)
	for _, vp := range vps {
		r.ps.add(n.pos, field, vp.msg, vp.fix, vp.err)
	}
	if len(vps) > 0 {
		return v, false
	}
	if strings.ContainsRune(v, 0) {
		r.ps.add(n.pos, field, "contains a NUL character", "remove it", nil)
		return v, false
	}
	return v, true
}

// server resolves one server entry.
func (r *resolver) server(s *rawServer) Server {
	srv := Server{
		Name:             s.name,
		Pos:              s.pos,
		ConnectTimeout:   r.defaults.ConnectTimeout,
		RequestTimeout:   r.defaults.RequestTimeout,
		MaxRetries:       r.defaults.MaxRetries,
		TerminateOnClose: true,
		Enabled:          true,
		LoadTools:        true,
		LoadPrompts:      true,
		LoadResources:    true,
	}
	if s.spec.format == FormatToolsV1 {
		srv.RequestTimeout = toolsRequestTimeout // seed 004: request_timeout defaults to 60
	}
	r.passwordKeys = nil
	if s.violated == nil {
		r.checkServerFields(s) // a native file's were checked with the whole file
	}
	t, tok := r.transport(s)
	srv.Transport, s.transport = t, t
	if tok {
		r.checkFieldsForTransport(s, t)
	}
	// The entry's numbers, booleans and durations, by name (a key of
	// another transport has been refused, or in a client's file is one
	// its transport does not use).
	readFields(&srv, s.typed)

	if f := s.field("description"); f != nil && f.val.kind != kindNull {
		srv.Description, _ = r.expandNode(f.val, s.path(f.key))
	} else if f := s.field(fieldServer); f != nil && f.val.kind != kindNull {
		srv.Description, _ = r.expandNode(f.val, s.path(f.key))
	}
	if f := s.field(fieldConfig); f != nil {
		r.ps.warn(f.keyPos, s.path(f.key), "ignored: server-specific config has no effect in Switchboard", "pass settings to the server through args or env")
	}

	switch {
	case !tok:
		// The transport is unknown, so its fields cannot be checked.
	case t == TransportStdio:
		r.stdio(s, &srv)
	default:
		r.network(s, &srv)
	}

	v := s.typed
	setDur(&srv.ConnectTimeout, v.Timeout)
	r.clientTimeouts(s, &srv)
	if f := s.field("max_concurrent"); f != nil && r.limitsOK && srv.MaxConcurrent > r.limits.MaxConcurrent {
		r.ps.add(f.val.pos, s.path(f.key), fmt.Sprintf("%d can never be reached: limits.max_concurrent is %d", srv.MaxConcurrent, r.limits.MaxConcurrent),
			fmt.Sprintf("lower it to %d or less (0 means only the global limit), or raise limits.max_concurrent", r.limits.MaxConcurrent), nil)
	}
	r.serverSession(s, &srv)
	if v.IdentityMeta != nil {
		srv.NoIdentityMeta = !*v.IdentityMeta
	}
	if f := s.field(fieldDisabled); f != nil {
		if v, ok := r.ps.boolean(f.val, s.path(f.key)); ok {
			srv.Enabled = !v
		}
	}
	if s.disabledBy != "" && srv.Enabled {
		srv.Enabled = false
		r.ps.warn(s.pos, s.path(""), "disabled: "+s.disabledBy, "")
	}

	if f := s.field("roots"); f != nil {
		for i, it := range present(f.val) {
			field := fmt.Sprintf("%s[%d]", s.path(f.key), i)
			if v, ok := r.expandNode(it, field); ok {
				if u := r.root(v, it.pos, field, s.name); u != "" {
					srv.Roots = append(srv.Roots, u)
				}
			}
		}
	}

	secrets := append(slices.Clone(s.typed.Secrets), r.passwordKeys...) // none empty: the schema's rule
	for k := range srv.Env {
		if IsSecretKey(k) {
			secrets = append(secrets, k)
		}
	}
	for k := range srv.Headers {
		if IsSecretKey(k) {
			secrets = append(secrets, k)
		}
	}
	slices.Sort(secrets)
	srv.Secrets = slices.Compact(secrets)
	return srv
}

// toolsRequestTimeout is seed 004's default request_timeout.
const toolsRequestTimeout = 60 * time.Second

// transport works out the server's transport, reporting false when it is
// invalid.
func (r *resolver) transport(s *rawServer) (Transport, bool) {
	if s.wasWrong("transport") {
		return TransportStdio, false
	}
	f := s.field("transport")
	if f == nil || f.val.kind == kindNull {
		f = s.field(fieldLegacyTransport)
	}
	if f != nil && f.val.kind != kindNull {
		v, ok := r.ps.str(f.val, s.path(f.key))
		if !ok {
			return TransportStdio, false
		}
		if t, ok := parseTransport(v, s.spec.foreign); ok {
			return t, true
		}
		names := make([]string, len(Transports))
		for i, t := range Transports {
			names[i] = string(t)
		}
		fix := "use one of " + strings.Join(names, ", ")
		if sug := suggest(v, names); sug != "" {
			fix = fmt.Sprintf("did you mean %q?", sug)
		}
		r.ps.add(f.val.pos, s.path(f.key), fmt.Sprintf("unknown transport %q", v), fix, nil)
		return TransportStdio, false
	}
	if s.transportHint != "" {
		return s.transportHint, true
	}
	if !s.spec.infer && s.field("docker") == nil && s.field("command") == nil {
		if f := s.field("url"); f != nil && f.val.isScalar() {
			// A url without a transport: say that, rather than that
			// the stdio transport (the default) lacks a command.
			u, _ := r.x.expand(f.val.text, "")
			key := cmp.Or(s.spec.transportKey, "transport")
			r.ps.add(f.keyPos, s.path(key), fmt.Sprintf("url is set but %s is not, and a server without %s is started as a command (stdio)", key, key),
				fmt.Sprintf("add %s: %s (the transports that take a url are http, sse and websocket)", key, urlTransport(u)), nil)
			return TransportStdio, false
		}
	}
	if s.field("docker") != nil || !s.spec.infer {
		return TransportStdio, true
	}
	if s.field("command") == nil {
		if f := s.field("url"); f != nil && f.val.isScalar() {
			if s.spec.urlTransport != "" {
				return s.spec.urlTransport, true
			}
			u, _ := r.x.expand(f.val.text, "")
			return urlTransport(u), true
		}
	}
	return TransportStdio, true
}

// parseTransport reads a transport name; foreign formats also accept the
// other spellings they use.
func parseTransport(v string, lenient bool) (Transport, bool) {
	for _, t := range Transports {
		if v == string(t) {
			return t, true
		}
	}
	if lenient {
		switch strings.ToLower(v) {
		case "stdio":
			return TransportStdio, true
		case "sse":
			return TransportSSE, true
		case "http", "streamable-http", "streamablehttp", "streamable_http":
			return TransportHTTP, true
		case "ws", "websocket":
			return TransportWebSocket, true
		}
	}
	return "", false
}

// urlTransport picks the transport for a URL: ws/wss is websocket, a path
// ending in /sse is sse, anything else streamable http.
func urlTransport(raw string) Transport {
	u, err := url.Parse(raw)
	if err != nil {
		return TransportHTTP
	}
	switch strings.ToLower(u.Scheme) {
	case "ws", "wss":
		return TransportWebSocket
	}
	if strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/sse") {
		return TransportSSE
	}
	return TransportHTTP
}

// checkFieldsForTransport reports fields that the transport does not use,
// and command/args next to docker.
func (r *resolver) checkFieldsForTransport(s *rawServer, t Transport) {
	for _, sf := range serverFields {
		f := s.field(sf.name)
		if f == nil {
			continue
		}
		if !sf.transports.has(t) {
			fix := "remove it"
			if sf.suggest != "" && s.spec.transportKey != "" {
				fix = fmt.Sprintf("remove it, or set %s: %s", s.spec.transportKey, sf.suggest)
			}
			if s.spec.foreign && s.spec.format != FormatToolsV1 {
				// The client ignores it too.
				r.ps.warn(f.keyPos, s.path(f.key), fmt.Sprintf("ignored: %s is not used by the %s transport", f.key, t), fix)
				delete(s.fields, sf.name)
				continue
			}
			r.ps.add(f.keyPos, s.path(f.key), fmt.Sprintf("%s is not used by the %s transport", f.key, t), fix, nil)
			continue
		}
		if (sf.name == "command" || sf.name == "args") && s.field("docker") != nil {
			r.ps.add(f.keyPos, s.path(f.key), fmt.Sprintf("%s cannot be combined with docker", f.key), fmt.Sprintf("remove %s (docker runs the image; put its command under docker.command), or remove docker", f.key), nil)
		}
	}
}

// stdio resolves the fields of a stdio server.
func (r *resolver) stdio(s *rawServer, srv *Server) {
	srv.Encoding = "utf-8"
	cmdOK, argsOK := true, true
	var argNodes []*node
	docker := s.field("docker")
	if docker == nil && s.wasWrong("docker") {
		cmdOK = false
	} else if docker == nil {
		if f := s.field("command"); (f == nil || f.val.kind == kindNull) && (s.typos["command"] != "" && !s.spec.foreign || s.wasWrong("command")) {
			cmdOK = false // reported as a misspelt key
		} else if f == nil || f.val.kind == kindNull {
			field := s.path("command")
			fix := "add the command that starts the server, e.g. command: npx"
			if typo := s.typos["command"]; typo != "" {
				fix = fmt.Sprintf("did you mean command instead of %q?", typo)
			}
			r.ps.add(s.pos, field, "command is required by the stdio transport", fix, &MissingFieldError{Field: field, Transport: TransportStdio})
			cmdOK = false
		} else {
			srv.Command, cmdOK = r.expandNode(f.val, s.path(f.key))
		}
		if f := s.field("args"); f != nil {
			argsOK = !s.wasWrong("args")
			argNodes = f.val.items
			for i, it := range present(f.val) {
				v, ok := r.expandNode(it, fmt.Sprintf("%s[%d]", s.path(f.key), i))
				argsOK = argsOK && ok
				srv.Args = append(srv.Args, v)
			}
		}
	}

	env := map[string]string{}
	envPos := map[string]Pos{} // where each variable was set, for the launch policy's messages
	if f := s.field("env_file"); f != nil {
		r.envFile(s, f, env, envPos)
	}
	if f := s.field("env"); f != nil {
		for _, p := range f.val.pairs {
			field := s.path(f.key) + "." + p.key
			if p.key == "" || strings.ContainsAny(p.key, "=\x00") {
				r.ps.add(p.keyPos, field, fmt.Sprintf("invalid environment variable name %q", p.key), "use letters, digits and _", nil)
				continue
			}
			if usesPassword(p.value.text, r.x.syntax, r.inputs) {
				r.passwordKeys = append(r.passwordKeys, p.key)
			}
			if v, ok := r.expandNode(p.value, field); ok {
				env[p.key] = v
				envPos[p.key] = p.keyPos
			}
		}
	}
	if f := s.field(fieldEnvVars); f != nil {
		// Codex: pass these through from the environment when set.
		items, _ := r.ps.strList(f.val, s.path(f.key))
		for _, it := range items {
			if !it.isScalar() {
				continue
			}
			if v, ok := r.lookup(it.text); ok {
				if _, set := env[it.text]; !set {
					env[it.text] = v
					envPos[it.text] = it.pos
				}
			}
		}
	}
	if len(env) > 0 {
		srv.Env = env
	}
	if f := s.field("cwd"); f != nil && f.val.kind != kindNull {
		if v, ok := r.expandNode(f.val, s.path(f.key)); ok {
			srv.Cwd = r.directory(v, f.val.pos, s.path(f.key), s.name)
		}
	}
	if f := s.field("encoding"); f != nil && f.val.kind != kindNull {
		if v, ok := r.expandNode(f.val, s.path(f.key)); ok {
			switch strings.ToLower(v) {
			case "utf-8", "utf8":
			default:
				r.ps.add(f.val.pos, s.path(f.key), fmt.Sprintf("encoding %q is not supported", v), "use utf-8, or remove encoding", nil)
			}
		}
	}

	if docker != nil {
		cmdOK = r.docker(s, docker, srv)
	}
	allow := r.launchAllow(s)
	if cmdOK && argsOK && srv.Command != "" {
		r.checkCommand(s, srv, docker, argNodes, envPos, allow)
	}
}

// checkCommand applies the launch policy, placing problems on the
// argument or variable concerned. The native format is held to its
// allowlist (security.allowed_commands); a client's file to the default
// allowlist unless the user trusts it (see Trust), when any program it
// names may run. Either way the launch rules apply to npx, uvx and docker,
// widened only by what the server's launch.allow names in a file whose
// widening counts (fileTrust.widen).
func (r *resolver) checkCommand(s *rawServer, srv *Server, docker *rawField, argNodes []*node, envPos map[string]Pos, allow []allowItem) {
	policy := LaunchPolicy{Allowed: r.allowed, Trusted: r.trust.applies && r.trust.state == Trusted, Dir: r.dir, WorkDir: r.workDir}
	listed := map[string]bool{}
	for _, a := range allow {
		listed[strings.ToLower(a.name)] = true
		if r.trust.widen {
			policy.Allow = append(policy.Allow, a.name)
		}
	}
	if r.trust.widen && len(allow) > 0 {
		srv.LaunchAllow = policy.Allow
		r.unusedAllow(s, *srv, policy, allow)
	}
	cmdField := s.field("command")
	pos, field := s.pos, s.path("command")
	if docker != nil {
		pos, field = docker.keyPos, s.path(docker.key)
	} else if cmdField != nil {
		pos, field = cmdField.val.pos, s.path(cmdField.key)
	}
	for _, err := range policy.CheckServer(*srv) {
		var na *CommandNotAllowedError
		var ua *UnsafeArgumentError
		var ue *UnsafeEnvError
		switch {
		case errors.As(err, &na):
			if r.trust.applies && !policy.Trusted && trustWouldAllow(srv.Command) {
				na.File, na.Trust = r.trust.abs, r.trust.state
				r.refused = append(r.refused, fmt.Sprintf("%s (server %s)", srv.Command, s.name))
			}
			msg, fix := r.allowlistMessage(srv.Command, na)
			r.ps.add(pos, field, msg, fix, err)
		case errors.As(err, &ua):
			p, f := pos, field
			switch args := s.field("args"); {
			case docker != nil || args == nil:
			case ua.Index >= 0 && ua.Index < len(argNodes):
				p, f = argNodes[ua.Index].pos, fmt.Sprintf("%s[%d]", s.path(args.key), ua.Index)
			case ua.Index < 0:
				p, f = args.keyPos, s.path(args.key)
			}
			r.ps.add(p, f, ua.Error(), r.policyFix(s, ua.Fix, ua.Rule, listed[strings.ToLower(ua.Rule)]), err)
		case errors.As(err, &ue):
			p, f := pos, field
			if ue.Name == "" {
				if fld := s.field("inherit_env"); fld != nil {
					p, f = fld.val.pos, s.path(fld.key)
				}
			} else if ep, ok := envPos[ue.Name]; ok {
				p = ep
				if fld := s.field("env"); fld != nil {
					f = s.path(fld.key) + "." + ue.Name
				}
				if fld := s.field("env_file"); fld != nil && ep.File != r.file {
					f = s.path(fld.key)
				}
			}
			r.ps.add(p, f, ue.Error(), r.policyFix(s, ue.Fix, ue.Rule, listed[strings.ToLower(ue.Rule)]), err)
		default:
			r.ps.add(pos, field, err.Error(), "", err)
		}
	}
}

// allowItem is one name under a server's launch.allow.
type allowItem struct {
	name string
	pos  Pos
}

// launchAllow reads a server's launch: {allow: [...]}. Names must be ones
// the launch policy knows (AllowNames). In a file whose widening does not
// count, each is remembered for the question that offers to trust it.
func (r *resolver) launchAllow(s *rawServer) []allowItem {
	f := s.field("launch")
	if f == nil || f.val.kind == kindNull {
		return nil
	}
	base := s.path(f.key)
	p := f.val.get("allow")
	if p == nil {
		return nil
	}
	var out []allowItem
	for i, it := range present(p.value) {
		field := fmt.Sprintf("%s.allow[%d]", base, i)
		if !validAllowName(it.text) {
			fix := "name a refused construct as its refusal names it: docker.privileged, npx.call, env.LD_PRELOAD, ..."
			if sug := suggest(it.text, AllowNames()); sug != "" {
				fix = fmt.Sprintf("did you mean %q?", sug)
			}
			r.ps.add(it.pos, field, fmt.Sprintf("%q is not something the launch policy refuses", it.text), fix, nil)
			continue
		}
		out = append(out, allowItem{name: it.text, pos: it.pos})
		if !r.trust.widen {
			r.widened = append(r.widened, fmt.Sprintf("%s (server %s)", it.text, s.name))
		}
	}
	return out
}

// unusedAllow warns about launch.allow names the server does not need.
func (r *resolver) unusedAllow(s *rawServer, srv Server, policy LaunchPolicy, allow []allowItem) {
	policy.Allow = nil
	needed := map[string]bool{}
	for _, err := range policy.CheckServer(srv) {
		var ua *UnsafeArgumentError
		var ue *UnsafeEnvError
		switch {
		case errors.As(err, &ua):
			needed[strings.ToLower(ua.Rule)] = true
		case errors.As(err, &ue):
			needed[strings.ToLower(ue.Rule)] = true
		}
	}
	f := s.field("launch")
	for i, a := range allow {
		if !needed[strings.ToLower(a.name)] {
			r.ps.warn(a.pos, fmt.Sprintf("%s.allow[%d]", s.path(f.key), i), fmt.Sprintf("%s is not needed: the server uses nothing it allows", a.name), "remove it")
		}
	}
}

// policyFix is how to do without a refused construct, and how to allow it
// if the user means it: launch.allow in a file whose widening counts.
func (r *resolver) policyFix(s *rawServer, fix, rule string, listed bool) string {
	trust := r.trustCommand(r.trust.abs)
	if listed {
		return "the server allows it under launch.allow, which counts only in a file you trust; if you wrote or reviewed it, run: " + trust
	}
	if fix != "" {
		fix += "; or, "
	}
	fix += "if you mean it, add " + r.launchSnippet(rule) + " to the server"
	if !r.trust.widen {
		fix += " and trust the file: " + trust
	}
	return fix
}

// launchSnippet is launch.allow naming rule, in the file's own syntax.
func (r *resolver) launchSnippet(rule string) string {
	switch r.format {
	case FormatNative, FormatToolsV1, FormatContinue:
		return "launch: {allow: [" + rule + "]}"
	case FormatCodex:
		return `launch = { allow = ["` + rule + `"] }`
	}
	return `"launch": {"allow": ["` + rule + `"]}`
}

// trustCommand is the command that trusts the file at path, as the
// person reading the message can run it: where Load could not ask (no
// terminal: a script, the daemon, the console) config trust could not ask
// either, and refuses without --yes, so the command has it.
func (r *resolver) trustCommand(path string) string {
	if r.canAsk {
		return TrustCommand(path)
	}
	return TrustCommand(path) + " --yes"
}

// trustWouldAllow reports whether trusting the file would allow command:
// a bare name or an absolute path, never a relative path or a command
// line.
func trustWouldAllow(command string) bool {
	return LaunchPolicy{Trusted: true}.Check(command, nil) == nil
}

// allowlistMessage says why a command is not allowed and how to allow it,
// in the words of the file's format and its trust.
func (r *resolver) allowlistMessage(cmd string, na *CommandNotAllowedError) (string, string) {
	switch {
	case isPath(cmd) && !filepath.IsAbs(cmd):
		if r.trust.applies {
			return fmt.Sprintf("command %q is a relative path", cmd),
				"use a bare command name (found on PATH) or an absolute path; relative paths are never allowed"
		}
		return fmt.Sprintf("command %q is a relative path", cmd),
			"use a bare command name (found on PATH) or an absolute path (and allow that under security.allowed_commands); relative paths are never allowed"
	case strings.ContainsAny(cmd, " \t\n") && !isPath(cmd):
		first := strings.Fields(cmd)
		name := cmd
		if len(first) > 0 {
			name = first[0]
		}
		return fmt.Sprintf("command %q contains spaces", cmd),
			fmt.Sprintf("set command: %s and put the rest under args", name)
	}
	if na.File == "" {
		// The native format: its own allowlist.
		if isPath(cmd) {
			return fmt.Sprintf("command %q is not in the allowlist", cmd), "add it under security.allowed_commands"
		}
		return fmt.Sprintf("command %q is not in the allowlist (%s)", cmd, strings.Join(r.allowed, ", ")), "add it under security.allowed_commands"
	}
	only := strings.Join(r.allowed, ", ")
	trust := "run: " + r.trustCommand(na.File)
	var why string
	switch {
	case r.trust.err != nil:
		why = fmt.Sprintf("the trust records cannot be read (%v), so the file is not trusted", r.trust.err)
	case na.Trust == Changed && r.trust.rec != nil:
		why = fmt.Sprintf("the file changed since you trusted it (%s)", r.trust.rec.TrustedAt.Local().Format("2006-01-02 15:04"))
		trust = "review the change, then run: " + r.trustCommand(na.File)
	case r.trust.client != "" && r.canAsk:
		why = fmt.Sprintf("this file (your %s configuration) is not trusted", r.trust.client)
		trust = "to trust it, run: " + r.trustCommand(na.File)
	case r.trust.client != "":
		why = fmt.Sprintf("this file (your %s configuration) is not trusted yet", r.trust.client)
		trust = "run a command on a terminal to be asked, or, once you have reviewed the file, run: " + r.trustCommand(na.File)
	default:
		why = "this file is not trusted"
		trust = "if you wrote or reviewed it, run: " + r.trustCommand(na.File)
	}
	return fmt.Sprintf("command %q is not allowed: %s, and an untrusted file may run only %s", cmd, why, only), trust
}

// clientTimeouts reads the timeouts that clients write in seconds or
// milliseconds. A value outside Switchboard's range is brought into it,
// with a warning, since the client accepted it.
func (r *resolver) clientTimeouts(s *rawServer, srv *Server) {
	for _, t := range []struct {
		field   string
		unit    time.Duration
		dst     *time.Duration
		lo, hi  time.Duration
		meaning string
	}{
		{fieldRequestTimeoutS, time.Second, &srv.RequestTimeout, MinRequestTimeout, MaxRequestTimeout, "request timeout"},
		{fieldRequestTimeoutMS, time.Millisecond, &srv.RequestTimeout, MinRequestTimeout, MaxRequestTimeout, "request timeout"},
		{fieldConnectTimeoutS, time.Second, &srv.ConnectTimeout, time.Millisecond, 0, "start-up timeout"},
		{fieldConnectTimeoutMS, time.Millisecond, &srv.ConnectTimeout, time.Millisecond, 0, "start-up timeout"},
	} {
		f := s.field(t.field)
		if f == nil || f.val.kind == kindNull {
			continue
		}
		if f.val.kind != kindInt && f.val.kind != kindFloat {
			r.ps.add(f.val.pos, s.path(f.key), fmt.Sprintf("must be a number, not %s", f.val.kind.describe()), "", nil)
			continue
		}
		n, err := strconv.ParseFloat(strings.ReplaceAll(f.val.text, "_", ""), 64)
		if err != nil || n <= 0 || n > float64(math.MaxInt64)/float64(t.unit) {
			r.ps.add(f.val.pos, s.path(f.key), fmt.Sprintf("%s is not a usable %s", f.val.text, t.meaning), "use a positive number", nil)
			continue
		}
		d := time.Duration(n * float64(t.unit))
		switch {
		case d < t.lo:
			r.ps.warn(f.val.pos, s.path(f.key), fmt.Sprintf("a %s of %s is below Switchboard's least, %s, which is used", t.meaning, formatDuration(d), formatDuration(t.lo)), "")
			d = t.lo
		case t.hi > 0 && d > t.hi:
			r.ps.warn(f.val.pos, s.path(f.key), fmt.Sprintf("a %s of %s is above Switchboard's most, %s, which is used", t.meaning, formatDuration(d), formatDuration(t.hi)), "")
			d = t.hi
		}
		*t.dst = d
	}
}

// codexHeaders adds the headers Codex takes from the environment: a
// bearer token (bearer_token_env_var, required) and env_http_headers
// (header name to variable; a header whose variable is unset is left out).
func (r *resolver) codexHeaders(s *rawServer, srv *Server) {
	add := func(k, v string) {
		if srv.Headers == nil {
			srv.Headers = map[string]string{}
		}
		srv.Headers[k] = v
	}
	if f := s.field(fieldEnvHeaders); f != nil {
		pairs, _ := r.ps.strMap(f.val, s.path(f.key))
		for _, p := range pairs {
			if !headerName().MatchString(p.key) {
				r.ps.add(p.keyPos, s.path(f.key)+"."+p.key, fmt.Sprintf("invalid header name %q", p.key), "use letters, digits and -", nil)
				continue
			}
			if v, ok := r.lookup(p.value.text); ok && p.value.isScalar() {
				add(p.key, v)
			}
		}
	}
	if f := s.field(fieldBearerEnv); f != nil {
		name, ok := r.ps.str(f.val, s.path(f.key))
		if !ok {
			return
		}
		v, set := r.lookup(name)
		if !set {
			field := s.path(f.key)
			r.ps.add(f.val.pos, field, fmt.Sprintf("variable %s is not set", name), "set it in the environment", &UnresolvedVariableError{Variable: name, Field: field})
			return
		}
		add("Authorization", "Bearer "+v)
	}
}

// envFile reads a dotenv file into env.
func (r *resolver) envFile(s *rawServer, f *rawField, env map[string]string, envPos map[string]Pos) {
	field := s.path(f.key)
	if f.val.kind == kindNull {
		return
	}
	p, ok := r.expandNode(f.val, field)
	if !ok {
		return
	}
	if p == "" {
		r.ps.add(f.val.pos, field, "is empty", "give the path of a KEY=VALUE file, or remove it", nil)
		return
	}
	fix := r.missingFix(p)
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.dir, p)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			r.ps.add(f.val.pos, field, fmt.Sprintf("env file %s does not exist", p), fix,
				&MissingPathError{Server: s.name, Field: field, What: "env file", Path: p, Err: err})
		} else {
			r.ps.add(f.val.pos, field, fmt.Sprintf("cannot read env file %s: %v", p, errors.Unwrap(err)), "", err)
		}
		return
	}
	lines, probs := parseDotenv(string(data), r.lookup, field)
	for _, dp := range probs {
		r.ps.add(Pos{File: p, Line: dp.line, Col: 1}, field, dp.msg, dp.fix, dp.err)
	}
	for _, l := range lines {
		if strings.ContainsRune(l.value, 0) {
			r.ps.add(Pos{File: p, Line: l.line, Col: 1}, field, fmt.Sprintf("the value of %s contains a NUL character", l.key), "remove it", nil)
			continue
		}
		env[l.key] = l.value
		envPos[l.key] = Pos{File: p, Line: l.line, Col: 1}
	}
}

// directory resolves a cwd or root and checks that it is an existing
// directory; server names the server whose it is.
func (r *resolver) directory(p string, pos Pos, field, server string) string {
	if p == "" {
		return ""
	}
	fix := r.missingFix(p)
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.dir, p)
	}
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		r.ps.add(pos, field, fmt.Sprintf("directory %s does not exist", p), fix,
			&MissingPathError{Server: server, Field: field, What: "directory", Path: p, Err: err})
	case err != nil:
		r.ps.add(pos, field, fmt.Sprintf("cannot use directory %s: %v", p, errors.Unwrap(err)), "", err)
	case !fi.IsDir():
		r.ps.add(pos, field, fmt.Sprintf("%s is not a directory", p), "give the folder the server should run in", nil)
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return p
}

// missingFix is the fix of a path that does not exist, p as written (a
// "~/" already expanded): where relative paths start is said only when p
// is one.
func (r *resolver) missingFix(p string) string {
	if filepath.IsAbs(p) {
		return "create it, or fix the path"
	}
	return "create it, or fix the path (relative paths start at " + r.dirBase + ")"
}

// root resolves one entry of server's roots: a directory, as a path
// (relative to the configuration file's folder) or a file:// URI, which
// must exist. It returns the root's file:// URI, or "" after reporting a
// problem.
func (r *resolver) root(v string, pos Pos, field, server string) string {
	p := v
	if strings.Contains(v, "://") {
		u, err := url.Parse(v)
		if err != nil || u.Scheme != "file" || (u.Host != "" && u.Host != "localhost") || u.Path == "" {
			r.ps.add(pos, field, fmt.Sprintf("%q is not a directory: a root is a path or a file:// URI", v),
				"write a folder, e.g. ~/src/shop, ./docs or file:///home/me/src/shop", nil)
			return ""
		}
		p = u.Path
	}
	if strings.TrimSpace(p) == "" {
		r.ps.add(pos, field, "is empty", "remove it, or give a folder", nil)
		return ""
	}
	if strings.HasPrefix(p, "~/") {
		if home := r.x.userHome(); home != "" {
			p = filepath.Join(home, p[2:])
		}
	}
	n := len(r.ps.errs)
	p = r.directory(p, pos, field, server)
	if len(r.ps.errs) > n {
		return ""
	}
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String()
}

// headerName is the form of an HTTP header name (RFC 9110 token).
var headerName = lazyRegexp("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// headers reads a mapping of HTTP header names to values (a server's
// headers, telemetry.headers): names checked, values expanded and free of
// line breaks. field names the mapping in messages.
func (r *resolver) headers(n *node, field string) map[string]string {
	h := map[string]string{}
	for _, p := range n.pairs {
		field := field + "." + p.key
		if !headerName().MatchString(p.key) {
			r.ps.add(p.keyPos, field, fmt.Sprintf("invalid header name %q", p.key), "use letters, digits and -", nil)
			continue
		}
		if usesPassword(p.value.text, r.x.syntax, r.inputs) {
			r.passwordKeys = append(r.passwordKeys, p.key)
		}
		v, ok := r.expandHeaderNode(p.value, field)
		if !ok {
			continue
		}
		if strings.ContainsAny(v, "\r\n") {
			r.ps.add(p.value.pos, field, "header value contains a line break", "remove it", nil)
			continue
		}
		h[p.key] = v
	}
	return h
}

// network resolves the fields of an sse, http or websocket server.
func (r *resolver) network(s *rawServer, srv *Server) {
	t := srv.Transport
	f := s.field("url")
	if (f == nil || f.val.kind == kindNull) && (s.typos["url"] != "" && !s.spec.foreign || s.wasWrong("url")) {
		// reported as a misspelt key
	} else if f == nil || f.val.kind == kindNull {
		field := s.path("url")
		example := "https://example.com/mcp"
		if t == TransportWebSocket {
			example = "wss://example.com/mcp"
		}
		fix := "add url: " + example
		if typo := s.typos["url"]; typo != "" {
			fix = fmt.Sprintf("did you mean url instead of %q?", typo)
		}
		r.ps.add(s.pos, field, fmt.Sprintf("url is required by the %s transport", t), fix, &MissingFieldError{Field: field, Transport: t})
	} else if v, ok := r.expandNode(f.val, s.path(f.key)); ok {
		srv.URL = v
		if msg, fix := checkURL(v, t, s.spec.transportKey); msg != "" {
			r.ps.add(f.val.pos, s.path(f.key), msg, fix, nil)
		}
	}
	if f := s.field("headers"); f != nil {
		if h := r.headers(f.val, s.path(f.key)); len(h) > 0 {
			srv.Headers = h
			if u, err := url.Parse(srv.URL); err == nil && (u.Scheme == "http" || u.Scheme == "ws") && !isLoopback(u.Hostname()) {
				r.ps.warn(f.keyPos, s.path(f.key), "headers are sent unencrypted over "+u.Scheme+"://", "use "+u.Scheme+"s://")
			}
		}
	}
	r.codexHeaders(s, srv)
	r.serverOAuth(s, srv)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkURL says what is wrong with a server URL for a transport, or "".
// It never repeats the URL, which may hold a credential.
func checkURL(raw string, t Transport, transportKey string) (string, string) {
	u, err := url.Parse(raw)
	if err != nil || raw == "" {
		return "url is not a valid URL", "write it as scheme://host/path"
	}
	scheme := strings.ToLower(u.Scheme)
	switch t {
	case TransportWebSocket:
		if scheme != "ws" && scheme != "wss" {
			fix := "use a wss:// (or ws://) URL"
			if scheme == "http" || scheme == "https" {
				fix += fmt.Sprintf(", or set %s: http", transportKey)
			}
			return "url must start with ws:// or wss:// for the websocket transport", fix
		}
	default:
		if scheme != "http" && scheme != "https" {
			fix := "use an https:// (or http://) URL"
			if scheme == "ws" || scheme == "wss" {
				fix += fmt.Sprintf(", or set %s: websocket", transportKey)
			}
			return fmt.Sprintf("url must start with http:// or https:// for the %s transport", t), fix
		}
	}
	if u.Host == "" {
		return "url has no host", "write it as scheme://host/path"
	}
	return "", ""
}

// checkServerFields checks the fields of a client's server entry, as
// mapped onto the native ones, against the schema of a native server, and
// takes out the wrong ones. The entry's own format decides its names and
// transports, so those are left to the resolver.
func (r *resolver) checkServerFields(s *rawServer) {
	doc := map[string]any{}
	for name, f := range s.fields {
		if strings.HasPrefix(name, "-") || name == "name" || name == "transport" || f.val.kind == kindNull {
			continue
		}
		doc[name] = instance(f.val, nil)
	}
	bad := map[string]bool{}
	s.violated = func(key string) bool { return bad[key] }
	s.typed = &schema.Server{}
	violations, err := schema.ValidateServer(doc)
	if err != nil {
		r.ps.add(s.pos, s.path(""), "checking the server against its schema: "+err.Error(), "", err)
		return
	}
	defer func() {
		for name := range bad {
			delete(doc, name)
		}
		if err := decodeValue(doc, s.typed); err != nil {
			r.ps.add(s.pos, s.path(""), "reading the server: "+err.Error(), "", err)
		}
	}()
	for _, v := range violations {
		if v.Missing || len(v.Path) == 0 {
			continue
		}
		f := s.fields[v.Path[0]]
		if f == nil {
			continue
		}
		holder := &node{kind: kindMap, pos: f.keyPos, pairs: []pair{{key: f.key, keyPos: f.keyPos, value: f.val}}}
		v.Path[0] = f.key
		field := s.path(fieldPath(holder, v.Path))
		pos := f.keyPos
		if v.AtKey {
			if _, h, _ := locate(holder, v.Path); h != nil {
				pos = h.keyPos
			}
		} else if n, _, _ := locate(holder, v.Path); n != nil {
			pos = n.pos
		}
		var err error
		if v.Unknown != "" {
			err = &UnknownFieldError{Field: field, Suggestion: v.Suggestion}
		}
		r.ps.add(pos, field, v.Message, v.Fix, err)
		for name, g := range s.fields {
			if g == f {
				delete(s.fields, name)
				bad[name] = true
			}
		}
	}
}
