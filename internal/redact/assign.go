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
// generic type (Optional[str]), or a bare word shorter than 3 bytes. A
// file:line citation or host:port (isPathLike, isLineRef) and a sentence
// after "key: " (isProse) are not assignments at all.
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
		if sep == ':' && v == pos+1 && isPathLike(s, key, start) && isLineRef(s[v:valueEnd(s, v)]) {
			return 0 // auth/secrets.go:148, tokens.example.com:443 — a file:line or host:port
		}
		if sep == ':' && v > pos+1 && (start == 0 || !isQuote(s[start-1])) && isProse(s, v) {
			return 0 // "- password: handled in secrets.go" — prose, not a value
		}
		return unquotedValue(s, v, sep == ':' && isHeaderName(key), sp)
	}
}

// maxLineDigits bounds each number of a file:line citation or host:port.
// A longer run of digits after a file name is more likely a numeric secret
// than a line: no source file has ten million lines.
const maxLineDigits = 7

// isPathLike reports whether key, which starts at s[start], names a file or
// a host rather than a setting: it follows a '/' (auth/token.go,
// a/b/Makefile) or ends in a short extension (.go, .yaml, .com) that is not
// itself a credential word (db.password and cfg.token are settings).
func isPathLike(s, key string, start int) bool {
	if start > 0 && s[start-1] == '/' {
		return true
	}
	dot := strings.LastIndexByte(key, '.')
	if dot <= 0 {
		return false
	}
	ext := key[dot+1:]
	if ext == "" || len(ext) > 5 || !isLetter(ext[0]) || isCredentialKey(ext) {
		return false
	}
	for i := 1; i < len(ext); i++ {
		if !isAlnum(ext[i]) {
			return false
		}
	}
	return true
}

// isLineRef reports whether v, what follows "file:", is a line reference:
// a line, line:column or a line-line range (10, 10:5, 10-12), which may end
// in the '.' of a sentence or the ':' of a compiler message (10:5: ...).
func isLineRef(v string) bool {
	if v != "" && (v[len(v)-1] == '.' || v[len(v)-1] == ':') {
		v = v[:len(v)-1]
	}
	if v == "" {
		return false
	}
	n := 0 // digits in the current number
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case isDigit(c) && n < maxLineDigits:
			n++
		case (c == ':' || c == '-') && n > 0:
			n = 0
		default:
			return false
		}
	}
	return n > 0
}

// isQuote reports whether c is a quote, as before a quoted key.
func isQuote(c byte) bool { return c == '"' || c == '\'' }

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// proseWords are words that, as the first word after "key: ", start a
// sentence about the credential rather than give it: articles, pronouns,
// auxiliaries and the participles of documentation and commit messages
// ("password: handled in secrets.go", "token: now read from the
// environment"). Words shorter than 3 bytes are never redacted anyway.
var proseWords = map[string]bool{
	"the": true, "your": true, "our": true, "their": true, "its": true, "his": true, "her": true,
	"this": true, "that": true, "these": true, "those": true, "same": true, "one": true, "each": true, "every": true,
	"are": true, "was": true, "were": true, "will": true, "must": true, "should": true, "can": true,
	"may": true, "might": true, "would": true, "could": true, "has": true, "have": true, "had": true,
	"now": true, "never": true, "not": true, "only": true, "also": true, "still": true, "always": true,
	"see": true, "use": true, "uses": true, "used": true, "via": true, "from": true, "through": true,
	"comes": true, "goes": true, "lives": true, "read": true, "set": true, "kept": true, "given": true,
	"handled": true, "stored": true, "moved": true, "removed": true, "rotated": true, "hashed": true,
	"encrypted": true, "masked": true, "hidden": true, "loaded": true, "passed": true, "sent": true,
	"taken": true, "checked": true, "validated": true, "verified": true, "managed": true,
	"generated": true, "created": true, "added": true, "changed": true, "updated": true,
	"fixed": true, "deleted": true, "provided": true, "configured": true, "supplied": true,
}

// isProse reports whether the unquoted value at s[v] begins a sentence:
// it is one of proseWords (in lower case, or capitalised), and another word
// of letters follows it on the line that is not itself a key (not followed
// by ':' or '='). Anything else after "key: " is taken as the value: a
// word with a digit, a symbol or inner capitals, a word not in proseWords
// ("password: swordfish for the demo"), a prose word alone on its line
// ("password: handled") or before another assignment ("password: the
// host: x"). The rule costs nothing for real secrets, which are never
// common English words followed by more words.
func isProse(s string, v int) bool {
	end := runWhile(s, v, isLetter)
	word := s[v:end]
	if len(word) < 3 || len(word) > 10 || end == len(s) || s[end] != ' ' {
		return false
	}
	lower := strings.ToLower(word[:1]) + word[1:]
	if !proseWords[lower] {
		return false
	}
	next := skipBlanks(s, end)
	nextEnd := runWhile(s, next, isLetter)
	if nextEnd == next {
		return false
	}
	after := skipBlanks(s, nextEnd)
	return after == len(s) || (s[after] != ':' && s[after] != '=')
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
