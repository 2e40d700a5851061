package redact_test

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/redact"
)

func addSeeds(f *testing.F, add func(secret, text string)) {
	for _, tt := range patternTests {
		add("hunter2hunter2", tt.in)
	}
	add("ED]abc", "x[REDACTED]abc tttttt ED]abc")
	add("aaaaaa", "aaaaaaaaaaaaa")
	add(`pa"ss<>`, `{"pw":"pa\"ss\u003c\u003e"}`)
	add("p@ss word", "https://u:p%40ss+word@h/")
}

// FuzzString checks that String never panics, removes every configured
// secret found in its input, and is idempotent.
func FuzzString(f *testing.F) {
	addSeeds(f, func(secret, text string) { f.Add(secret, "second", text) })
	f.Fuzz(func(t *testing.T, secret1, secret2, text string) {
		r := redact.New([]string{secret1, secret2})
		start := time.Now()
		out := r.String(text)
		if d := time.Since(start); d > time.Second {
			t.Fatalf("String took %v on %d bytes", d, len(text))
		}
		for _, sec := range []string{secret1, secret2} {
			if len(sec) >= redact.MinSecretLen && !strings.Contains(redact.Marker, sec) && strings.Contains(text, sec) && strings.Contains(out, sec) {
				t.Fatalf("secret %q left in String(%q) = %q", sec, text, out)
			}
		}
		if again := r.String(out); again != out {
			t.Fatalf("String is not idempotent:\n  in %q\n out %q\nagain %q", text, out, again)
		}
		if b := r.Bytes([]byte(text)); string(b) != out {
			t.Fatalf("Bytes(%q) = %q, String = %q", text, b, out)
		}
	})
}

// FuzzJSON checks that JSON turns valid JSON into valid JSON without the
// secret in any string, and is idempotent.
func FuzzJSON(f *testing.F) {
	addSeeds(f, func(secret, text string) {
		b, _ := json.Marshal(map[string]any{"text": text, "list": []any{text, 1.5, nil}})
		f.Add(secret, string(b))
	})
	f.Add("hunter2hunter2", `{"password":{"a":[1,2]},"n":12345678901234567890,"x":1e400}`)
	f.Add("hunter2hunter2", `["hunter2hunter2", "\u0068unter2hunter2", {"hunter2hunter2": null}]`)
	f.Fuzz(func(t *testing.T, secret, data string) {
		r := redact.New([]string{secret})
		out := r.JSON(json.RawMessage(data))
		if !json.Valid([]byte(data)) {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("JSON(%s) = %s, not valid JSON", data, out)
		}
		if again := r.JSON(out); string(again) != string(out) {
			t.Fatalf("JSON is not idempotent:\n  in %s\n out %s\nagain %s", data, out, again)
		}
		if len(secret) < redact.MinSecretLen || strings.Contains(redact.Marker, secret) {
			return
		}
		v, err := redact.Decode(out)
		if err != nil {
			t.Fatalf("decoding %s: %v", out, err)
		}
		var check func(v any)
		check = func(v any) {
			switch v := v.(type) {
			case string:
				if strings.Contains(v, secret) {
					t.Fatalf("secret %q left in JSON(%s) = %s", secret, data, out)
				}
			case []any:
				for _, x := range v {
					check(x)
				}
			case map[string]any:
				for k, x := range v {
					check(k)
					check(x)
				}
			}
		}
		check(v)
	})
}

// mixFragments are pieces of text that interact with the finders: names,
// separators, quotes, token starts, Marker and its pieces, secrets.
var mixFragments = []string{
	"password", "token", "Token", "api_key", "next", "page", "_", "-", ".", "=", ":", " ", "\t", "\n",
	`"`, `'`, `\"`, `\`, "[", "]", "(", ")", "{", "}", ",", ";", "&", "<", ">", "$", "@", "/", "//", "://", "#", "?",
	redact.Marker, "[REDACTED", "REDACTED]", "ED]", "[RE", "Bearer ", "basic ", "Authorization", "Cookie", "bearer",
	"AKIA", "ABCDEFGHIJKLMNOP", "ghp_", strings.Repeat("a1", 18), "xoxb-", "1234567890", "eyJhbGciOiJub25lIn0", "eyJ",
	"-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEAu1SU1Lf",
	"hooks.slack.com/services/", "https", "user", "pw123", "dXNlcjpwYXNz", "null", "str", "cfg.x", "abc",
	"s3cr3tval", "ue[REDAC", "TED]s3", "secret", "ED]xyz",
}

// TestMixtures checks String's guarantees on many random mixtures of
// fragments: no configured secret survives and a second pass changes nothing.
func TestMixtures(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 2000
	}
	rnd := rand.New(rand.NewPCG(7, 11))
	secretSets := [][]string{nil, {"s3cr3tval"}, {"ED]xyz", "pw123pw123"}, {"ue[REDAC"}, {"TED]s3", "s3cr3tval"}}
	for range n {
		var b strings.Builder
		for range 1 + rnd.IntN(24) {
			b.WriteString(mixFragments[rnd.IntN(len(mixFragments))])
		}
		in := b.String()
		secrets := secretSets[rnd.IntN(len(secretSets))]
		r := redact.New(secrets)
		out := r.String(in)
		for _, sec := range secrets {
			if strings.Contains(in, sec) && strings.Contains(out, sec) {
				t.Fatalf("secret %q left in String(%q) = %q", sec, in, out)
			}
		}
		if again := r.String(out); again != out {
			t.Fatalf("String is not idempotent (secrets %q):\n  in %q\n out %q\nagain %q", secrets, in, out, again)
		}
	}
}

// TestPathological checks that inputs built to make the finders backtrack
// or match everywhere are still redacted in linear time.
func TestPathological(t *testing.T) {
	const size = 1 << 20
	r := redact.New([]string{"aaaaaaab", "hunter2hunter2"})
	for _, unit := range []string{
		"a", "token=", "token:", `"token":"`, `\"token\":\"`, "password=x ", "://", "u:p@", "eyJ", "eyJhbGciOiJub25lIn0.",
		"-----BEGIN RSA PRIVATE KEY-----", "-", "Bearer ", "Bearer abcdefgh1 ", "Basic ", "AKIA", "ghp_", "xoxb-",
		redact.Marker, "[REDACTED", "hunter2hunter", "hunter2hunter2", "aaaaaaa", "'", `"`, "\\", "=", ":",
		strings.Repeat("k", 200) + "_token=", "Cookie: ", "a=b ", "auth/token.go:1", "token.go:1:2-", "password: the ",
	} {
		in := strings.Repeat(unit, size/len(unit)+1)
		start := time.Now()
		out := r.String(in)
		// Linear work on 1 MiB takes milliseconds (a second or so under
		// -race on a loaded machine); quadratic work would take hours.
		// The bound is far from both, so that it catches the one and
		// never flakes on the other.
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("String on %q repeated took %v", unit, d)
		}
		if again := r.String(out); again != out {
			t.Errorf("String on %q repeated is not idempotent", unit)
		}
	}
}
