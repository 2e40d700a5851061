package redact

import "strings"

// findAssignments finds values assigned to credential-like names in free
// text: password=..., token: ..., "api_key": "...", \"secret\":\"...\" (JSON
// inside a JSON string), Authorization: Bearer ..., Cookie: .... Names are
// judged by isCredentialKey. Unquoted values end at a blank or punctuation
// that ends values in URLs, code and logs; quoted ones at their quote.
// Header lines (Authorization, Cookie) run to the end of the line.
//
// To keep code and prose intact, a value is left alone when it is clearly
// not a literal: a comparison (token == x), a reference ($TOKEN, ${x},
// {{ .x }}, <your-token>, %s), a type (password: str), a keyword (null,
// true, None), a dotted name (Token: cfg.Token), a call (getpass()), a
// generic type (Optional[str]), or a bare word shorter than 3 bytes.
func findAssignments(s string, sp *spans) {
	for _, sep := range []byte{'=', ':'} {
		for i := 0; ; {
			j := strings.IndexByte(s[i:], sep)
			if j < 0 {
				break
			}
			// Separators inside a redacted value need no look: the
			// value goes whole. Skipping them keeps the scan linear.
			i = max(i+j+1, assignmentAt(s, i+j, sp))
		}
	}
}

// assignmentAt handles the '=' or ':' at s[pos]. It returns the end of the
// value it redacted, or 0.
func assignmentAt(s string, pos int, sp *spans) int {
	sep := s[pos]
	if pos+1 < len(s) {
		switch next := s[pos+1]; {
		case next == '=', sep == '=' && next == '>', sep == ':' && next == ':':
			return 0 // ==, =>, :=, ::
		}
	}
	key, start := keyBefore(s, pos)
	if start < 0 || !isCredentialKey(key) {
		return 0
	}
	if sep == ':' && strings.HasSuffix(s[:start], "//") {
		return 0 // scheme://user:password@host is findURLPasswords's
	}
	v := skipBlanks(s, pos+1)
	if v >= len(s) {
		return 0
	}
	switch c := s[v]; {
	case c == '\\' && v+1 < len(s) && s[v+1] == '"':
		// \"key\":\"value\" in JSON inside a JSON string.
		start := v + 2
		end := start
		for end < len(s) && s[end] != '\n' && !(s[end] == '\\' && end+1 < len(s) && s[end+1] == '"') {
			end++
		}
		return quotedValue(s, start, end, sp)
	case c == '"' || c == '\'':
		start := v + 1
		end := start
		for end < len(s) && s[end] != c && s[end] != '\n' {
			if s[end] == '\\' {
				end++
			}
			end++
		}
		end = min(end, len(s))
		// The closing quote must end the value: in "...Token=","x" the
		// quote after = closes the string the = is in.
		if end+1 < len(s) && s[end] == c && !isValueEnd(s[end+1]) {
			return 0
		}
		return quotedValue(s, start, end, sp)
	default:
		if sep == ':' && v == pos+1 && strings.IndexByte(key, '.') >= 0 && isDigits(s[v:valueEnd(s, v)]) {
			return 0 // auth/secrets.go:148, tokens.example.com:443 — a file:line or host:port
		}
		return unquotedValue(s, v, sep == ':' && isHeaderName(key), sp)
	}
}

// isDigits reports whether s is a non-empty run of ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// keyBefore returns the name assigned to by the '=' or ':' at s[pos] and
// where it starts, or -1: a word of letters, digits, _, - and ., or a quoted
// string ("key", 'key', \"key\").
func keyBefore(s string, pos int) (string, int) {
	k := pos
	for k > 0 && (s[k-1] == ' ' || s[k-1] == '\t') {
		k--
	}
	if k == 0 {
		return "", -1
	}
	if q := s[k-1]; q == '"' || q == '\'' {
		end := k - 1
		escaped := q == '"' && end > 0 && s[end-1] == '\\'
		if escaped {
			end--
		}
		lim := max(0, end-maxKeyLen-1)
		o := strings.LastIndexByte(s[lim:end], q)
		if o < 0 {
			return "", -1
		}
		o += lim
		if escaped && (o == 0 || s[o-1] != '\\') {
			return "", -1
		}
		key := s[o+1 : end]
		if strings.IndexByte(key, '\n') >= 0 {
			return "", -1
		}
		return key, o + 1
	}
	end := k
	for k > 0 && end-k <= maxKeyLen && isKeyByte(s[k-1]) {
		k--
	}
	if k == end || end-k > maxKeyLen {
		return "", -1
	}
	return s[k:end], k
}

func isKeyByte(c byte) bool { return isWordByte(c) || c == '-' || c == '.' }

func skipBlanks(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// isValueEnd reports whether c may follow a quoted value.
func isValueEnd(c byte) bool {
	return strings.IndexByte(" \t\r\n,;&)]}>\\", c) >= 0
}

// isValueStop reports whether c ends an unquoted value.
func isValueStop(c byte) bool {
	return strings.IndexByte(" \t\r\n\"'`,;&<>)]}\\", c) >= 0
}

// isHeaderName reports whether key is an HTTP header whose value, to the end
// of the line, is a credential.
func isHeaderName(key string) bool {
	for _, h := range []string{"authorization", "proxy-authorization", "cookie", "set-cookie"} {
		if strings.EqualFold(key, h) {
			return true
		}
	}
	return false
}

// quotedValue adds s[start:end], the inside of a quoted value, and returns
// end, or 0 if the value is empty or a placeholder.
func quotedValue(s string, start, end int, sp *spans) int {
	v := s[start:end]
	if v == "" || v == Marker || strings.IndexByte("$<{%", v[0]) >= 0 {
		return 0
	}
	sp.add(start, end)
	return end
}

// unquotedValue adds the unquoted value at s[v], or the rest of the line for
// a header, and returns its end, or 0 if it is not a literal. A leading
// scheme word (Bearer, Basic, token...) is kept.
func unquotedValue(s string, v int, header bool, sp *spans) int {
	if strings.HasPrefix(s[v:], Marker) || strings.IndexByte("{[(<$%=", s[v]) >= 0 {
		return 0
	}
	// A call or generic type, getpass() or Optional[str], is ruled out
	// before the value is read whole.
	name := runWhile(s, v, func(c byte) bool { return isWordByte(c) || c == '.' })
	if name < len(s) && name > v && strings.IndexByte("([<", s[name]) >= 0 && isDottedName(s[v:name]) {
		return 0
	}
	end := valueEnd(s, v)
	word := s[v:end]
	if isSchemeWord(word) && end < len(s) && (s[end] == ' ' || s[end] == '\t') {
		v = skipBlanks(s, end)
		if v >= len(s) || strings.HasPrefix(s[v:], Marker) {
			return 0
		}
		end = valueEnd(s, v)
		if header {
			end = lineEnd(s, v)
		}
		sp.add(v, end)
		return end
	}
	if header {
		end = lineEnd(s, v)
		sp.add(v, end)
		return end
	}
	if len(word) < 3 || isNotSecret(word) {
		return 0
	}
	sp.add(v, end)
	return end
}

// valueEnd returns the end of the unquoted value at s[v]. A Marker inside
// it (a secret already removed) does not end it, so the rest goes too.
func valueEnd(s string, v int) int {
	for v < len(s) {
		if s[v] == '[' && strings.HasPrefix(s[v:], Marker) {
			v += len(Marker)
			continue
		}
		if isValueStop(s[v]) {
			break
		}
		v++
	}
	return v
}

// lineEnd returns the end of the header value at s[i]: the end of the line,
// or a quote or backslash (an escaped \r\n) that ends it inside a string.
func lineEnd(s string, i int) int {
	return runWhile(s, i, func(c byte) bool { return strings.IndexByte("\r\n\"'\\", c) < 0 })
}

// isSchemeWord reports whether w is an HTTP authentication scheme, which
// precedes the credential in an Authorization value.
func isSchemeWord(w string) bool {
	for _, s := range []string{"bearer", "basic", "token", "digest", "negotiate", "ntlm", "bot"} {
		if strings.EqualFold(w, s) {
			return true
		}
	}
	return false
}

// notSecretWords are unquoted values that are keywords or type names, as in
// password=None or token: string.
var notSecretWords = map[string]bool{
	"null": true, "nil": true, "none": true, "true": true, "false": true, "undefined": true,
	"str": true, "string": true, "bytes": true, "int": true, "number": true,
	"bool": true, "boolean": true, "any": true, "object": true,
	"required": true, "optional": true,
}

// isNotSecret reports whether an unquoted value is a keyword, a type or a
// dotted name (cfg.Token, os.environ), not a literal.
func isNotSecret(w string) bool {
	if len(w) <= 9 && notSecretWords[strings.ToLower(w)] {
		return true
	}
	return strings.IndexByte(w, '.') > 0 && isDottedName(w)
}

// isDottedName reports whether w is identifiers joined by dots: a.b, x.Y_z.
func isDottedName(w string) bool {
	for _, part := range strings.Split(w, ".") {
		if part == "" || isDigit(part[0]) {
			return false
		}
		for i := 0; i < len(part); i++ {
			if !isWordByte(part[i]) {
				return false
			}
		}
	}
	return true
}
