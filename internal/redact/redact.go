// Package redact keeps secrets out of everything Switchboard records or
// shows. A Redactor replaces the configured secret values (the env and
// header values of servers) and common credential shapes (cloud and chat
// tokens, JWTs, private keys, Bearer and Basic credentials, URL passwords,
// password=... assignments) by Marker, in text (String, Bytes, Writer) and in
// JSON values (Value, JSON), where it also hides the whole value of any
// credential-like key such as "password" or "api_key".
//
// The engine builds one Redactor from the loaded configuration and passes
// everything it records through it: tool call arguments and results go to the
// history, where Shape stores argument structure without values unless
// history.record_values is on, and then only as Value's redacted copy; log
// output goes through Writer; and results of servers with redact_results go
// through JSON before they reach the caller. Redaction is conservative about
// what it touches: ordinary text, hashes, UUIDs and base64 data come out
// byte for byte unchanged.
//
// Two shapes of "key: value" are not assignments, so that code citations
// and prose survive:
//
//   - A file:line citation or host:port: a key that follows a '/' or ends in
//     a short extension that is not a credential word (auth/token.go,
//     config/secrets.go, tokens.example.com, but not db.password or
//     cfg.token), then ':' and a line, line:column or line range of at most
//     7 digits each, optionally ending a sentence ("secrets.go:204.") or a
//     compiler message ("auth.go:10:5:").
//   - A sentence: "key: " followed by a common English word such as the,
//     handled, now or stored (see proseWords) and then another word that is
//     not itself a key ("- password: handled in secrets.go").
//
// Anything else after "key: " is taken as the value, even inside a
// sentence: "password: hunter2 in prod", "password: swordfish for the
// demo" and a prose word alone on its line ("password: handled") are all
// redacted. Telling a multi-word passphrase from prose is not attempted;
// a real credential is never one of those common words.
package redact

import (
	"cmp"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
)

// Marker is what replaces a secret.
const Marker = "[REDACTED]"

// minSecretLen is the shortest configured value New accepts as a secret.
// Values such as "1", "true" or "prod" also occur everywhere in ordinary
// output; replacing every occurrence would corrupt results and logs while
// protecting nothing an attacker could not guess.
const minSecretLen = 6

// maxPasses bounds the passes of String. A pass can reveal more to redact:
// a secret that ends in "[RED" completed by a Marker, a key that becomes
// credential-like once a token inside it is gone, a URL whose end was inside
// a redacted value. Each pass that changes something turns text into
// Marker, so passes stop; in practice after two.
const maxPasses = 16

// Redactor removes secrets from text and JSON values. It is immutable once
// made by New and safe for concurrent use. A nil *Redactor redacts the token
// patterns and credential keys only, like New(nil).
type Redactor struct {
	// secrets are the exact values to remove and their JSON- and
	// URL-escaped forms, longest first.
	secrets []literal
}

// New returns a Redactor for the given exact secret values, typically the
// values of the configured secret env vars and headers. Values shorter than 6
// bytes are ignored (see minSecretLen), as are values that are part of Marker
// itself; duplicates count once. Besides each value, its JSON-escaped and
// URL-escaped forms are removed too, so a password with a quote or a space is
// also caught inside raw JSON or a URL.
func New(secrets []string) *Redactor {
	r := &Redactor{}
	seen := make(map[string]bool)
	add := func(s string) {
		if len(s) < minSecretLen || seen[s] || strings.Contains(Marker, s) {
			return
		}
		seen[s] = true
		r.secrets = append(r.secrets, newLiteral(s))
	}
	for _, s := range secrets {
		add(s)
		add(jsonEscape(s, true))
		add(jsonEscape(s, false))
		add(url.QueryEscape(s))
		add(url.PathEscape(s))
	}
	// Longest first, so that where one secret contains another the longer
	// is found whole; ties in byte order to keep New deterministic.
	slices.SortFunc(r.secrets, func(a, b literal) int {
		if c := cmp.Compare(len(b.s), len(a.s)); c != 0 {
			return c
		}
		return strings.Compare(a.s, b.s)
	})
	return r
}

// jsonEscape returns s as it appears inside a JSON string, with or without
// the HTML escaping of <, > and & that encoding/json applies by default.
func jsonEscape(s string, html bool) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	if err := enc.Encode(s); err != nil {
		return s
	}
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
}

// String returns s with every configured secret and every recognised
// credential replaced by Marker. Text without secrets comes back unchanged.
// String is idempotent: redacting its output again changes nothing. It
// costs a few milliseconds per MiB, and twice that where it finds something.
func (r *Redactor) String(s string) string {
	out, _ := r.redact(s)
	return out
}

// Bytes is String for a byte slice. When nothing is redacted it returns b
// itself; otherwise a new slice.
func (r *Redactor) Bytes(b []byte) []byte {
	out, changed := r.redact(string(b))
	if !changed {
		return b
	}
	return []byte(out)
}

// redact is String, also reporting whether anything was replaced.
func (r *Redactor) redact(s string) (string, bool) {
	changed := false
	for range maxPasses {
		t, c := r.pass(s)
		if !c {
			break
		}
		s, changed = t, true
	}
	return s, changed
}

// pass replaces the exact secrets in s, then the token patterns in the
// result, and reports whether it changed anything. Patterns run second so
// that they see the text with the secrets gone, as it will be recorded.
func (r *Redactor) pass(s string) (string, bool) {
	var sp spans
	if r != nil {
		for _, sec := range r.secrets {
			// Overlapping occurrences ("aaaaaa" in "aaaaaaa") too.
			sec.each(s, func(i int) { sp.add(i, i+len(sec.s)) })
		}
	}
	s, c1 := sp.apply(s)
	sp = sp[:0]
	findPatterns(s, &sp)
	s, c2 := sp.apply(s)
	return s, c1 || c2
}

// span is the byte range [start, end) of a secret in a text.
type span struct{ start, end int }

// spans collects the secrets found in one text.
type spans []span

func (sp *spans) add(start, end int) {
	if start < end {
		*sp = append(*sp, span{start, end})
	}
}

// apply replaces the spans of s by Marker: overlapping spans become one,
// and a span that overlaps a Marker already in s is widened to all of it, so
// a Marker is never cut in pieces. It reports whether the result differs
// from s.
func (sp spans) apply(s string) (string, bool) {
	if len(sp) == 0 {
		return s, false
	}
	merged := merge(sp)
	if strings.Contains(s, Marker) {
		k := 0 // merged[:k] end before the current Marker
		for i := 0; k < len(merged); {
			j := strings.Index(s[i:], Marker)
			if j < 0 {
				break
			}
			m := span{i + j, i + j + len(Marker)}
			for k < len(merged) && merged[k].end <= m.start {
				k++
			}
			for x := k; x < len(merged) && merged[x].start < m.end; x++ {
				merged[x].start = min(merged[x].start, m.start)
				merged[x].end = max(merged[x].end, m.end)
			}
			i = m.end
		}
		merged = merge(merged)
	}
	size, changed := len(s), false
	for _, x := range merged {
		size += len(Marker) - (x.end - x.start)
		changed = changed || s[x.start:x.end] != Marker
	}
	if !changed {
		return s, false
	}
	var b strings.Builder
	b.Grow(size)
	last := 0
	for _, x := range merged {
		b.WriteString(s[last:x.start])
		b.WriteString(Marker)
		last = x.end
	}
	b.WriteString(s[last:])
	return b.String(), true
}

// merge sorts spans and joins those that overlap, in place.
func merge(sp spans) spans {
	slices.SortFunc(sp, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	out := sp[:1]
	for _, x := range sp[1:] {
		last := &out[len(out)-1]
		if x.start < last.end {
			last.end = max(last.end, x.end)
			continue
		}
		out = append(out, x)
	}
	return out
}
