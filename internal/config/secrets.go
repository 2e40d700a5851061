package config

import (
	"net/url"
	"slices"
	"strings"
	"unicode"
)

// Redaction is what Redacted puts in place of a secret value.
const Redaction = "[REDACTED]"

// secretWords are substrings of a normalized key (upper case, words joined
// by _) that mark it as a credential.
var secretWords = []string{
	"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "API_KEY", "APIKEY",
	"AUTH", "CREDENTIAL", "COOKIE", "PRIVATE", "ACCESS_KEY", "ACCESSKEY",
	"SECRET_KEY", "SIGNING_KEY", "CONNECTION_STRING", "SESSION_KEY",
}

// secretSegments are whole words of a normalized key that mark it as a
// credential: GITHUB_PAT, DB_PASS, DB_PWD, OPENAI_KEY, SENTRY_DSN.
var secretSegments = []string{"PAT", "PASS", "PWD", "KEY", "KEYS", "DSN"}

// IsSecretKey reports whether an environment variable or header name looks
// like it holds a credential: it contains TOKEN, SECRET, PASSWORD, PASSWD,
// API_KEY, APIKEY, AUTH, AUTHORIZATION, CREDENTIAL, COOKIE, PRIVATE_KEY or
// ACCESS_KEY (and a few more), in any case, with camelCase, - and . taken
// as word breaks; or it has a word PAT, PASS, PWD, KEY or DSN. Names that
// only look similar — GIT_AUTHOR_NAME, MAX_TOKENS, PWD — are not secret.
// When in doubt it says yes: hiding a value by mistake is the safe error.
func IsSecretKey(key string) bool {
	k := normalizeKey(key)
	if k == "PWD" || k == "OLDPWD" {
		return false
	}
	if strings.Contains(k, "AUTHORIZATION") {
		return true
	}
	// Words that contain a secret word without being one.
	k = strings.ReplaceAll(k, "AUTHOR", "_")
	k = strings.ReplaceAll(k, "TOKENIZER", "_")
	segs := strings.FieldsFunc(k, func(r rune) bool { return r == '_' })
	kept := segs[:0:0]
	for _, s := range segs {
		if s != "TOKENS" { // a count (MAX_TOKENS), not a credential
			kept = append(kept, s)
		}
	}
	joined := "_" + strings.Join(kept, "_") + "_"
	for _, w := range secretWords {
		if strings.Contains(joined, w) {
			return true
		}
	}
	for _, s := range kept {
		if slices.Contains(secretSegments, s) {
			return true
		}
	}
	return false
}

// normalizeKey upper-cases a key and turns camelCase, -, . and spaces into
// _ word breaks: "x-api-key" and "xApiKey" both become X_API_KEY.
func normalizeKey(key string) string {
	var b strings.Builder
	var prev rune
	for i, r := range key {
		switch {
		case r == '-' || r == '.' || r == ' ':
			b.WriteByte('_')
		case i > 0 && unicode.IsUpper(r) && unicode.IsLower(prev):
			b.WriteByte('_')
			b.WriteRune(r)
		default:
			b.WriteRune(unicode.ToUpper(r))
		}
		prev = r
	}
	return b.String()
}

// SecretValues returns the values of the server's secret env vars and
// headers (see Secrets), for a redactor to remove wherever they turn up:
// in results, logs, and what the server itself prints.
func (s Server) SecretValues() []string {
	var out []string
	for k, v := range s.Env {
		if isSecretOf(&s, k) {
			out = append(out, v)
		}
	}
	for k, v := range s.Headers {
		if isSecretOf(&s, k) {
			out = append(out, v)
		}
	}
	if s.OAuth != nil && s.OAuth.ClientSecret != "" {
		out = append(out, s.OAuth.ClientSecret)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// SecretValues returns the values of a command action's secret-looking
// env variables, for a redactor to remove wherever they turn up (what
// the command prints, the hook's records).
func (a HookAction) SecretValues() []string {
	var out []string
	for k, v := range a.Env {
		if IsSecretKey(k) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// isSecretOf reports whether key names a secret of srv: listed in its
// Secrets (headers compare without case) or secret-looking.
func isSecretOf(srv *Server, key string) bool {
	for _, s := range srv.Secrets {
		if strings.EqualFold(s, key) {
			return true
		}
	}
	return IsSecretKey(key)
}

// Redacted returns a deep copy of the configuration that is safe to show:
// the values of secret env and header keys (see Server.Secrets) are
// replaced by [REDACTED], as are passwords in URLs and the values of
// secret-looking options in args (--api-key X, --token=X, KEY=X), and the
// password of a history.store DSN (postgres://user:[REDACTED]@host/db).
// Gateway token secrets are removed (their token_env names are kept).
func (c *Config) Redacted() *Config {
	if c == nil {
		return nil
	}
	out := deepCopy(*c)
	out.History.Store = redactDSN(c.History.Store)
	out.Gateway.redact()
	for i := range out.Servers {
		out.Servers[i].redact()
	}
	for i := range out.Hooks.List {
		for j := range out.Hooks.List[i].Actions {
			out.Hooks.List[i].Actions[j].redact()
		}
	}
	for k := range out.Telemetry.Headers {
		out.Telemetry.Headers[k] = Redaction // an exporter's headers are its credentials
	}
	return &out
}

// redact hides the secrets of a hook action (of a deep copy): the values
// of secret-looking headers of an http action, passwords and
// secret-looking query parameters in its URLs, and secret-looking options
// in command arguments, as for servers.
func (a *HookAction) redact() {
	a.URL, a.BaseURL = redactURL(a.URL), redactURL(a.BaseURL)
	a.Command = redactArgs(&Server{}, a.Command)
	for k := range a.Env {
		if IsSecretKey(k) {
			a.Env[k] = Redaction
		}
	}
	for k, v := range a.Headers {
		if IsSecretKey(k) {
			v = Redaction
		}
		a.Headers[k] = redactURL(v)
	}
}

// redactServer returns a deep copy of s with its secrets hidden.
func redactServer(s Server) Server {
	r := deepCopy(s)
	r.redact()
	return r
}

// redact hides the secrets of a server (of a deep copy).
func (s *Server) redact() {
	if s.OAuth != nil && s.OAuth.ClientSecret != "" {
		s.OAuth.ClientSecret = Redaction
	}
	for k, v := range s.Env {
		if isSecretOf(s, k) {
			v = Redaction
		}
		s.Env[k] = redactURL(v)
	}
	for k := range s.Headers {
		if isSecretOf(s, k) {
			s.Headers[k] = Redaction
		}
	}
	s.URL = redactURL(s.URL)
	s.Args = redactArgs(s, s.Args)
	if s.Docker != nil {
		s.Docker.Command = redactArgs(s, s.Docker.Command)
	}
}

// redactArgs hides the values of secret-looking options and assignments:
// --api-key X, --token=X, KEY=X and "Authorization: X".
func redactArgs(s *Server, args []string) []string {
	if args == nil {
		return nil
	}
	out := make([]string, len(args))
	hideNext := false
	for i, a := range args {
		if hideNext && !strings.HasPrefix(a, "-") {
			out[i] = Redaction
			hideNext = false
			continue
		}
		hideNext = false
		name, value, hasValue := strings.Cut(a, "=")
		bare := strings.TrimLeft(name, "-")
		hname, _, hasColon := strings.Cut(a, ":")
		switch {
		case bare != "" && hasValue && isSecretOf(s, bare):
			out[i] = name + "=" + Redaction
		case bare != "" && !hasValue && strings.HasPrefix(a, "-") && isSecretOf(s, bare):
			out[i] = a
			hideNext = true
		case hasColon && hname != "" && !strings.ContainsAny(hname, " /") && isSecretOf(s, hname):
			out[i] = hname + ": " + Redaction
		default:
			out[i] = redactURL(a)
			if out[i] == a && hasValue {
				out[i] = name + "=" + redactURL(value)
			}
		}
	}
	return out
}

// redactDSN hides the password of a database URL as user:[REDACTED], and
// the values of secret-looking query parameters as redactURL does. A file
// path is returned unchanged, and a URL that does not parse is hidden
// after its scheme, since where its password is cannot be told.
func redactDSN(s string) string {
	if !isDSN(s) {
		return s
	}
	scheme, _, _ := strings.Cut(s, "://")
	hidden := scheme + "://" + Redaction
	u, err := url.Parse(s)
	if err != nil {
		return hidden
	}
	if _, has := u.User.Password(); !has {
		return redactURL(s)
	}
	user := u.User.Username()
	u.User = nil
	rest, ok := strings.CutPrefix(redactURL(u.String()), u.Scheme+"://")
	if !ok {
		return hidden
	}
	return u.Scheme + "://" + url.User(user).String() + ":" + Redaction + "@" + rest
}

// redactURL hides the password of a URL with user information, and the
// values of secret-looking query parameters. Anything that is not such a
// URL is returned unchanged.
func redactURL(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return s
	}
	changed := false
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "REDACTED")
		changed = true
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			if IsSecretKey(k) {
				q[k] = []string{"REDACTED"}
				changed = true
			}
		}
		if changed {
			u.RawQuery = q.Encode()
		}
	}
	if !changed {
		return s
	}
	return u.String()
}
