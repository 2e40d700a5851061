package redact

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// findPatterns adds the spans of every recognised credential in s.
func findPatterns(s string, sp *spans) {
	findTokens(s, sp)
	findURLPasswords(s, sp)
	findAssignments(s, sp)
}

// byteClass has bit 0 set for ASCII letters and digits, bit 1 for the
// bytes that can start a recognised token at the start of a word, and bit 2
// for those that can start one anywhere (a PEM block's dashes).
var byteClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		if isAlnum(byte(c)) {
			t[c] = 1
		}
	}
	for _, c := range []byte("AgxehBb") {
		t[c] |= 2
	}
	t['-'] |= 4
	return t
}()

// findTokens finds the credentials that are tokens of a known shape, in one
// pass: every token starts a word with one of a few bytes, and only there
// are the shapes checked. The loop branches only at such word starts, so
// content that is mostly base64 costs no more than prose.
func findTokens(s string, sp *spans) {
	var prevAlnum uint8
	for i := 0; i < len(s); i++ {
		c := s[i]
		cl := byteClass[c]
		start := cl>>1&^prevAlnum | cl>>2
		prevAlnum = cl & 1
		if start == 0 {
			continue
		}
		var end int
		switch c {
		case 'A':
			end = awsKeyIDAt(s, i, sp)
		case 'g':
			end = gitHubTokenAt(s, i, sp)
		case 'x':
			end = slackTokenAt(s, i, sp)
		case 'h':
			end = slackWebhookAt(s, i, sp)
		case 'e':
			end = jwtAt(s, i, sp)
		case '-':
			end = privateKeyAt(s, i, sp)
		case 'B', 'b':
			end = authSchemeAt(s, i, sp)
		}
		if end > i+1 {
			// Carry on after the token: what is inside it goes with it,
			// and rescanning it would make the pass quadratic.
			i = end - 1
			prevAlnum = byteClass[s[i]] & 1
		}
	}
}

// runWhile returns the end of the run of bytes from s[i] that satisfy ok.
func runWhile(s string, i int, ok func(byte) bool) int {
	for i < len(s) && ok(s[i]) {
		i++
	}
	return i
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isUpperDigit(c byte) bool { return 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' }

func isWordByte(c byte) bool { return isAlnum(c) || c == '_' }

func isAlnumDash(c byte) bool { return isAlnum(c) || c == '-' }

func isBase64URL(c byte) bool { return isAlnum(c) || c == '-' || c == '_' }

// awsKeyPrefixes start AWS access key ids (user, temporary, group, role...).
var awsKeyPrefixes = []string{"AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA"}

// awsKeyIDAt finds an AWS access key id at s[i]: a prefix and 16 upper-case
// letters or digits, as a whole word.
func awsKeyIDAt(s string, i int, sp *spans) int {
	end := i + 20
	if end > len(s) || end < len(s) && isAlnum(s[end]) {
		return 0
	}
	for k := i; k < end; k++ {
		if !isUpperDigit(s[k]) {
			return 0
		}
	}
	for _, p := range awsKeyPrefixes {
		if s[i:i+4] == p {
			sp.add(i, end)
			return end
		}
	}
	return 0
}

// gitHubTokenAt finds a GitHub token at s[i]: ghp_, gho_, ghu_, ghs_ or
// ghr_ and at least 36 letters or digits, or a fine-grained github_pat_ token.
func gitHubTokenAt(s string, i int, sp *spans) int {
	const pat = "github_pat_"
	switch {
	case i+4 <= len(s) && s[i+1] == 'h' && s[i+3] == '_' && strings.IndexByte("pousr", s[i+2]) >= 0:
		if end := runWhile(s, i+4, isAlnum); end-i-4 >= 36 {
			sp.add(i, end)
			return end
		}
	case strings.HasPrefix(s[i:], pat):
		if end := runWhile(s, i+len(pat), isWordByte); end-i-len(pat) >= 22 {
			sp.add(i, end)
			return end
		}
	}
	return 0
}

// slackTokenAt finds a Slack token at s[i]: xoxb-, xoxp-, xoxa-, xoxo-,
// xoxs-, xoxr- or xapp- and at least 10 letters, digits or dashes.
func slackTokenAt(s string, i int, sp *spans) int {
	body := i + 5
	if body > len(s) || !(strings.HasPrefix(s[i:], "xapp-") ||
		s[i:i+3] == "xox" && strings.IndexByte("abposr", s[i+3]) >= 0 && s[i+4] == '-') {
		return 0
	}
	if end := runWhile(s, body, isAlnumDash); end-body >= 10 {
		sp.add(i, end)
		return end
	}
	return 0
}

// slackWebhookAt finds the secret path of a Slack webhook URL at s[i].
func slackWebhookAt(s string, i int, sp *spans) int {
	const host = "hooks.slack.com/"
	if !strings.HasPrefix(s[i:], host) {
		return 0
	}
	for _, p := range []string{"services/", "workflows/", "triggers/"} {
		if start := i + len(host) + len(p); strings.HasPrefix(s[i+len(host):], p) {
			end := runWhile(s, start, func(c byte) bool { return isBase64URL(c) || c == '/' })
			if end-start >= 8 {
				sp.add(start, end)
				return end
			}
			return 0
		}
	}
	return 0
}

// jwtAt finds a JSON Web Token at s[i]: base64url segments joined by dots,
// three for a signed token (the signature may be empty) and five for an
// encrypted one, the first being a JSON object ({" encodes as eyJ). The
// header is decoded, so words that happen to start with eyJ are left alone.
func jwtAt(s string, i int, sp *spans) int {
	if !strings.HasPrefix(s[i:], "eyJ") || i > 0 && (isBase64URL(s[i-1]) || s[i-1] == '.') {
		return 0 // not a token, inside a word, or the payload of a token
	}
	h := runWhile(s, i, isBase64URL)
	if h-i < 10 || h >= len(s) || s[h] != '.' || !isJWTHeader(s[i:h]) {
		return 0
	}
	end, dots := h, 0
	for dots < 4 && end < len(s) && s[end] == '.' {
		next := runWhile(s, end+1, isBase64URL)
		// An empty segment counts only between two others, or as
		// the missing signature of an unsigned token.
		if next == end+1 && !(next < len(s) && s[next] == '.') && dots != 1 {
			break
		}
		end, dots = next, dots+1
	}
	if dots >= 2 {
		sp.add(i, end)
		return end
	}
	return 0
}

// isJWTHeader reports whether seg is base64url for a JSON object.
func isJWTHeader(seg string) bool {
	b, err := base64.RawURLEncoding.DecodeString(seg)
	return err == nil && len(b) > 0 && b[0] == '{' && json.Valid(b)
}

// privateKeyAt finds a PEM private key block at s[i], from the BEGIN line
// through the matching END line. A block cut short (no END) is redacted as
// far as its body goes. Blocks may span lines, or sit in a JSON string with
// \n escapes.
func privateKeyAt(s string, i int, sp *spans) int {
	const begin = "-----BEGIN "
	if !strings.HasPrefix(s[i:], begin) {
		return 0
	}
	ls := i + len(begin)
	le := strings.Index(s[ls:min(len(s), ls+64)], "-----")
	if le < 0 {
		return 0
	}
	label := s[ls : ls+le]
	if !isPrivateKeyLabel(label) {
		return 0
	}
	body := ls + le + len("-----")
	end := body
	base64Bytes := 0
	for end < len(s) {
		c := s[end]
		if c == '-' && strings.HasPrefix(s[end:], "-----") {
			break
		}
		if !(isAlnum(c) || strings.IndexByte("+/=:,- \t\r\n\\", c) >= 0) {
			break
		}
		if isAlnum(c) {
			base64Bytes++
		}
		end++
	}
	if endLine := "-----END " + label + "-----"; strings.HasPrefix(s[end:], endLine) {
		sp.add(i, end+len(endLine))
		return end + len(endLine)
	}
	if base64Bytes >= 16 {
		sp.add(i, end)
		return end
	}
	return 0
}

// isPrivateKeyLabel reports whether label (RSA PRIVATE KEY, PRIVATE KEY,
// OPENSSH PRIVATE KEY, PGP PRIVATE KEY BLOCK...) names a private key.
func isPrivateKeyLabel(label string) bool {
	for i := 0; i < len(label); i++ {
		if !isUpperDigit(label[i]) && label[i] != ' ' {
			return false
		}
	}
	return strings.HasSuffix(label, "PRIVATE KEY") || strings.HasSuffix(label, "PRIVATE KEY BLOCK")
}

// authSchemeAt finds the credential after the word Bearer or Basic (in any
// case) at s[i], keeping the word. A Bearer token must be at least 8
// characters with a digit, or 20 without, so that prose ("Bearer tokens
// expire") is left alone; a Basic credential must decode to user:password.
func authSchemeAt(s string, i int, sp *spans) int {
	tokenByte, ok := bearerByte, bearerOK
	t := i
	switch {
	case hasPrefixFold(s[i:], "bearer"):
		t += len("bearer")
	case hasPrefixFold(s[i:], "basic"):
		t += len("basic")
		tokenByte, ok = basicByte, basicOK
	default:
		return 0
	}
	if t >= len(s) || s[t] != ' ' && s[t] != '\t' {
		return 0
	}
	t = skipBlanks(s, t)
	end := runWhile(s, t, tokenByte)
	end = runWhile(s, end, func(c byte) bool { return c == '=' })
	if end > t && ok(s[t:end]) {
		sp.add(t, end)
		return end
	}
	return 0
}

func bearerByte(c byte) bool { return isAlnum(c) || strings.IndexByte("-._~+/", c) >= 0 }

func basicByte(c byte) bool { return isAlnum(c) || c == '+' || c == '/' }

// bearerOK reports whether tok looks like a token rather than a word.
func bearerOK(tok string) bool {
	if len(tok) >= 20 {
		return true
	}
	return len(tok) >= 8 && strings.IndexFunc(tok, func(r rune) bool { return '0' <= r && r <= '9' }) >= 0
}

// basicOK reports whether tok is base64 for printable user:password.
func basicOK(tok string) bool {
	raw := strings.TrimRight(tok, "=")
	b, err := base64.RawStdEncoding.DecodeString(raw)
	if err != nil || len(b) < 3 || !utf8.Valid(b) || strings.IndexByte(string(b), ':') < 0 {
		return false
	}
	for _, c := range b {
		if c < ' ' || c == 0x7f {
			return false
		}
	}
	return true
}

// schemeSep follows the scheme of a URL with an authority.
var schemeSep = newLiteral("://")

// findURLPasswords finds the password in the user information of a URL:
// scheme://user:password@host keeps everything but the password.
func findURLPasswords(s string, sp *spans) {
	schemeSep.each(s, func(i int) {
		if i == 0 || !isAlnum(s[i-1]) {
			return // no scheme
		}
		a := i + 3
		e := a
		for e < len(s) && strings.IndexByte("/?#\"'<>` \t\r\n", s[e]) < 0 {
			e++
		}
		auth := s[a:e]
		at := strings.LastIndexByte(auth, '@')
		if at < 0 || at == len(auth)-1 {
			return
		}
		colon := strings.IndexByte(auth[:at], ':')
		if colon < 0 || colon == at-1 {
			return
		}
		sp.add(a+colon+1, a+at)
	})
}
