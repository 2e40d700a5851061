package redact_test

import (
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/redact"
)

// Test tokens are assembled at run time so that secret scanners do not
// flag this file.
var (
	awsKeyID     = "AKIA" + "IOSFODNN7EXAMPLE"
	awsSecret    = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
	ghToken      = "ghp_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
	ghPAT        = "github_pat_" + "11ABCDEFG0123456789abc_defghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRS"
	slackBot     = "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
	slackApp     = "xapp-" + "1-A0123456789-1234567890123-abcdef0123456789"
	jwt          = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	pemBody      = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\nVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
	pemBlock     = "-----BEGIN RSA PRIVATE KEY-----\n" + pemBody + "-----END RSA PRIVATE KEY-----"
	basicCred    = "dXNlcjpodW50ZXIy" // user:hunter2
	bearerToken  = "abcDEF123456ghiJKL"
	uuid         = "550e8400-e29b-41d4-a716-446655440000"
	commitSHA    = "3f786850e387550fdab836ed7e6dc881de23001b"
	base64Image  = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
	sha256Digest = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
)

func TestStringSecrets(t *testing.T) {
	tests := []struct {
		name    string
		secrets []string
		in      string
		want    string
	}{
		{"plain", []string{"hunter2hunter2"}, "the password is hunter2hunter2.", "the password is [REDACTED]."},
		{"repeated", []string{"s3cr3t!"}, "s3cr3t! s3cr3t!s3cr3t!", "[REDACTED] [REDACTED][REDACTED]"},
		{"self-overlap", []string{"aaaaaa"}, "xaaaaaaax", "x[REDACTED]x"},
		{"nested, longest first", []string{"abcdef", "abcdef123456"}, "abcdef123456 abcdef", "[REDACTED] [REDACTED]"},
		{"overlapping secrets removed whole", []string{"abcdef123", "123456xyz"}, "<abcdef123456xyz>", "<[REDACTED]>"},
		{"too short ignored", []string{"12345", "true"}, "12345 true", "12345 true"},
		{"in a JSON string", []string{"pa55word!"}, `{"cmd":"login --pw pa55word!"}`, `{"cmd":"login --pw [REDACTED]"}`},
		{"JSON-escaped form", []string{`pa"ss<wo>rd`}, `{"x":"pa\"ss\u003cwo\u003erd"}`, `{"x":"[REDACTED]"}`},
		{"in a URL path", []string{"0123456789abcdef"}, "https://api.example.com/v1/0123456789abcdef/items", "https://api.example.com/v1/[REDACTED]/items"},
		{"URL-escaped form", []string{"p@ss word!"}, "https://x.example/?q=p%40ss+word%21&n=1", "https://x.example/?q=[REDACTED]&n=1"},
		{"multi-line secret", []string{"line one\nline two"}, "a line one\nline two b", "a [REDACTED] b"},
		{"next to Marker", []string{"ED]abc"}, "x[REDACTED]abc", "x[REDACTED]"},
		{"completed by another", []string{"tttttt", "ED]abc"}, "ttttttabc ED]abc", "[REDACTED] [REDACTED]"},
		{"inside an assignment", []string{"s3cr3tpart"}, "token=abc-s3cr3tpart-def x", "token=[REDACTED] x"},
		{"no secrets", nil, "nothing to see", "nothing to see"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := redact.New(tt.secrets)
			got := r.String(tt.in)
			if got != tt.want {
				t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if again := r.String(got); again != got {
				t.Errorf("String(%q) = %q, want it unchanged", got, again)
			}
		})
	}
}

// patternTests are texts with credentials in recognised shapes, and texts
// that look similar but must stay unchanged (want == "").
var patternTests = []struct {
	name string
	in   string
	want string // "" means unchanged
}{
	// file:line and host:port are not assignments
	{"file and line", "see auth/secrets.go:148 and token.go:120", ""},
	{"host and port", "dial tokens.example.com:443", ""},
	{"numeric secret still redacted", "password:12345678", "password:[REDACTED]"},
	{"dotted key with a word value still redacted", "db.password:hunter2x", "db.password:[REDACTED]"},
	{"citation ending a sentence", "The token is checked in internal/builtin/taskapi/auth.go:10.", ""},
	{"citation then a comma and full stop", "see config/secrets.go:204, then auth.go:170.", ""},
	{"citation with column and compiler message", "auth.go:10:5: undefined: x", ""},
	{"citation with a line range", "secrets.yaml:10-12 and token.json:3", ""},
	{"citation after a path without extension", "see cmd/token:12.", ""},
	{"dotted setting with a numeric secret redacted", "db.password:12345678", "db.password:[REDACTED]"},
	{"dotted credential ending redacted", "cfg.token:12345678.", "cfg.token:[REDACTED]"},
	{"file name with a long number redacted", "secrets.go:12345678901", "secrets.go:[REDACTED]"},
	{"file name with a word value redacted", "secrets.go:hunter2x", "secrets.go:[REDACTED]"},
	// AWS
	{"aws key id", "key " + awsKeyID + ".", "key [REDACTED]."},
	{"aws temporary key id", "ASIA" + "ABCDEFGHIJKLMNOP", "[REDACTED]"},
	{"aws role id in JSON", `{"RoleId":"AROA` + `ABCDEFGHIJ012345"}`, `{"RoleId":"[REDACTED]"}`},
	{"aws key id inside a word", "XAKIA" + "IOSFODNN7EXAMPLE", ""},
	{"aws key id too long", awsKeyID + "X", ""},
	{"aws key id lower case", "AKIA" + "iosfodnn7example", ""},
	{"aws secret env", "AWS_SECRET_ACCESS_KEY=" + awsSecret + "\n", "AWS_SECRET_ACCESS_KEY=[REDACTED]\n"},
	{"aws secret ini", "aws_secret_access_key = " + awsSecret, "aws_secret_access_key = [REDACTED]"},
	{"aws secret JSON", `{"aws_secret_access_key": "` + awsSecret + `"}`, `{"aws_secret_access_key": "[REDACTED]"}`},

	// GitHub
	{"github classic", "token " + ghToken + " end", "token [REDACTED] end"},
	{"github oauth", "gho_" + strings.Repeat("a1", 18), "[REDACTED]"},
	{"github app in a URL", "https://x-access-token:ghs_" + strings.Repeat("Z9", 20) + "@github.com/o/r.git", "https://x-access-token:[REDACTED]@github.com/o/r.git"},
	{"github fine-grained", "pat=" + ghPAT, "pat=[REDACTED]"},
	{"github too short", "ghp_" + strings.Repeat("a", 35), ""},
	{"github inside a word", "xghp_" + strings.Repeat("a", 36), ""},
	{"github prefix in prose", "the ghp_ prefix marks a personal token", ""},

	// Slack
	{"slack bot", "SLACK=" + slackBot, "SLACK=[REDACTED]"},
	{"slack user", "xoxp-" + "1234567890-abcdefghij", "[REDACTED]"},
	{"slack app", "app token " + slackApp, "app token [REDACTED]"},
	{"slack webhook", "post to https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX now",
		"post to https://hooks.slack.com/services/[REDACTED] now"},
	{"slack prefix in prose", "tokens start with xoxb- or xapp-", ""},
	{"slack docs link", "see https://hooks.slack.com/services/ for details", ""},

	// JWT
	{"jwt", "id_token: " + jwt, "id_token: [REDACTED]"},
	{"jwt in Bearer", "Authorization: Bearer " + jwt, "Authorization: Bearer [REDACTED]"},
	{"jwt unsigned", "eyJhbGciOiJub25lIn0" + ".eyJzdWIiOiIxIn0.", "[REDACTED]"},
	{"jwt then full stop", "token " + jwt + ". Next", "token [REDACTED]. Next"},
	{"jwt-like word", "eyJustAnotherWord.example.com", ""},
	{"jwt header only", "eyJhbGciOiJIUzI1NiJ9 alone", ""},

	// PEM
	{"pem", "key:\n" + pemBlock + "\nafter", "key:\n[REDACTED]\nafter"},
	{"pem pkcs8", "-----BEGIN PRIVATE KEY-----\n" + pemBody + "-----END PRIVATE KEY-----", "[REDACTED]"},
	{"pem openssh", "-----BEGIN OPENSSH PRIVATE KEY-----\n" + pemBody + "-----END OPENSSH PRIVATE KEY-----", "[REDACTED]"},
	{"pem in JSON", `{"key":"-----BEGIN EC PRIVATE KEY-----\n` + strings.ReplaceAll(pemBody, "\n", `\n`) + `-----END EC PRIVATE KEY-----\n"}`,
		`{"key":"[REDACTED]\n"}`},
	{"pem encrypted headers", "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,3F17F5316E2BAC89\n\n" + pemBody + "-----END RSA PRIVATE KEY-----", "[REDACTED]"},
	{"pem cut short", "-----BEGIN RSA PRIVATE KEY-----\n" + pemBody, "[REDACTED]"},
	{"pem certificate", "-----BEGIN CERTIFICATE-----\n" + pemBody + "-----END CERTIFICATE-----", ""},
	{"pem public key", "-----BEGIN PUBLIC KEY-----\n" + pemBody + "-----END PUBLIC KEY-----", ""},
	{"pem label in code", `const begin = "-----BEGIN RSA PRIVATE KEY-----"` + "\n" + `const end = "-----END RSA PRIVATE KEY-----"`, ""},

	// Bearer and Basic
	{"bearer", "curl -H 'Authorization: Bearer " + bearerToken + "'", "curl -H 'Authorization: Bearer [REDACTED]'"},
	{"bearer lower case", "bearer " + bearerToken, "bearer [REDACTED]"},
	{"bearer long", "Bearer " + strings.Repeat("x", 24), "Bearer [REDACTED]"},
	{"bearer prose", "Bearer tokens are sent by the Bearer authentication scheme.", ""},
	{"bearer short", "Bearer abc1", ""},
	{"basic", "Authorization: Basic " + basicCred, "Authorization: Basic [REDACTED]"},
	{"basic in text", "use Basic " + basicCred + " here", "use Basic [REDACTED] here"},
	{"basic prose", "Basic usage: run it. Basic auth is simple.", ""},
	{"basic not user:pass", "Basic aGVsbG8gd29ybGQ=", ""},

	// URL user information
	{"url password", "postgres://app:s3cret@db.internal:5432/app", "postgres://app:[REDACTED]@db.internal:5432/app"},
	{"url password with @", "mysql://root:p@ss@localhost/db", "mysql://root:[REDACTED]@localhost/db"},
	{"url password only", "redis://:hunter2@cache:6379", "redis://:[REDACTED]@cache:6379"},
	{"url in JSON", `{"dsn":"amqp://guest:guest1@rabbit/"}`, `{"dsn":"amqp://guest:[REDACTED]@rabbit/"}`},
	{"url user only", "ssh://git@github.com/org/repo.git", ""},
	{"url port", "http://localhost:8080/path?x=1", ""},
	{"url with @ in path", "https://example.com/@user:name", ""},
	{"email after url", "see http://example.com or mail a:b@c.d", ""},

	// Assignments
	{"env password", "DB_PASSWORD=hunter2 ./run", "DB_PASSWORD=[REDACTED] ./run"},
	{"cli option", "--api-key=abc123def --verbose", "--api-key=[REDACTED] --verbose"},
	{"query string", "https://x.example/cb?code=1&access_token=abcd1234&state=s", "https://x.example/cb?code=1&access_token=[REDACTED]&state=s"},
	{"yaml", "auth:\n  password: hunter2\n  user: me", "auth:\n  password: [REDACTED]\n  user: me"},
	{"json", `{"user":"me","password":"hunter2","n":1}`, `{"user":"me","password":"[REDACTED]","n":1}`},
	{"json number", `{"secret": 123456, "n": 1}`, `{"secret": [REDACTED], "n": 1}`},
	{"json in a JSON string", `"{\"api_key\":\"abc123\",\"q\":\"x\"}"`, `"{\"api_key\":\"[REDACTED]\",\"q\":\"x\"}"`},
	{"single quotes", "client_secret='s3cr3t value'", "client_secret='[REDACTED]'"},
	{"camel case", "sessionToken: abcdef123", "sessionToken: [REDACTED]"},
	{"header cookie", "Cookie: session=abc; theme=dark\nHost: x", "Cookie: [REDACTED]\nHost: x"},
	{"header authorization", "Authorization: token " + strings.Repeat("f", 12) + "\n", "Authorization: token [REDACTED]\n"},
	{"header in a JSON string", `{"raw":"Cookie: a=b; c=d\r\nHost: x"}`, `{"raw":"Cookie: [REDACTED]\r\nHost: x"}`},
	{"log fields", `level=info msg="login" password="a b c" user=me`, `level=info msg="login" password="[REDACTED]" user=me`},
	{"comparison", `if token == "" || password != old {`, ""},
	{"go short declaration", `token := os.Getenv("TOKEN")`, ""},
	{"arrow", "token => token.trim()", ""},
	{"reference", "password=$DB_PASSWORD token=${TOKEN} secret: {{ .Secret }} api_key=<your-key> pw=%s", ""},
	{"type annotation", "def login(password: str, token: Optional[str] = None) -> bool:", ""},
	{"typescript", "interface Creds { token: string; password?: string }", ""},
	{"keyword", "password=None auth: true session: null", ""},
	{"dotted name", "Token: cfg.Token, Password: opts.Password,", ""},
	{"call", "password = getpass.getpass()", ""},
	{"counts", `{"max_tokens": 1024, "tokens_used": 99, "token_count": 3, "total_tokens": 5}`, ""},
	{"author", "author: Jane Doe\nauthored: 2024", ""},
	{"pagination", `{"nextPageToken": "CAUQAA", "next_token": "abc123"}`, ""},
	{"auth metadata", `{"token_url": "https://x/token", "auth_type": "oauth2", "secret_name": "db-creds"}`, ""},
	{"short value", "auth: ok", ""},
	{"base64 padding", `{"data":"AAAAtoken=","x":"a"} {"data":"AAAAtoken==","y":1}`, ""},
	{"empty value", `password="" token=`, ""},
	{"prose", "Please enter your password: the one you chose.", ""},
	{"prose in a list", "- password: handled in secrets.go\n- Token: Now read from the environment", ""},
	{"secret followed by words redacted", "password: swordfish for the demo", "password: [REDACTED] for the demo"},
	{"secret with a digit redacted", "- password: hunter2 in prod", "- password: [REDACTED] in prod"},
	{"prose word alone redacted", "password: handled\n", "password: [REDACTED]\n"},
	{"prose word before a key redacted", "password: the host: db1", "password: [REDACTED] host: db1"},
	{"prose word with = redacted", "password=handled in x", "password=[REDACTED] in x"},
	{"prose word without a blank redacted", "password:the one", "password:[REDACTED] one"},
	{"prose word then a comment redacted", "password: the # old", "password: [REDACTED] # old"},
	{"quoted key with a prose word redacted", `"password": the one`, `"password": [REDACTED] one`},

	// Things that must never change.
	{"commit sha", "commit " + commitSHA + " (HEAD -> main)", ""},
	{"uuid", "id=" + uuid + " request " + uuid, ""},
	{"digest", "image@" + sha256Digest, ""},
	{"base64 image", `{"type":"image","data":"` + base64Image + `","mimeType":"image/png"}`, ""},
	{"data url", "data:image/png;base64," + base64Image, ""},
	{"prose with colons", "Note: the key point is this: keys rotate daily.", ""},
	{"html", `<a href="https://example.com/a?b=c&amp;d=e">link</a>`, ""},
	{"code", "func (k *Key) Token() string { return k.token }", ""},
	{"time", "2024-01-02T03:04:05Z 12:30:45", ""},
}

func TestStringPatterns(t *testing.T) {
	r := redact.New(nil)
	for _, tt := range patternTests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			if want == "" {
				want = tt.in
			}
			got := r.String(tt.in)
			if got != want {
				t.Errorf("String(%q)\n got %q\nwant %q", tt.in, got, want)
			}
			if again := r.String(got); again != got {
				t.Errorf("String(%q) = %q, want it unchanged", got, again)
			}
		})
	}
}

func TestNilRedactor(t *testing.T) {
	var r *redact.Redactor
	if got, want := r.String("x "+ghToken), "x [REDACTED]"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if got, want := string(r.JSON([]byte(`{"token":"abc"}`))), `{"token":"[REDACTED]"}`; got != want {
		t.Errorf("JSON = %s, want %s", got, want)
	}
}

func TestBytes(t *testing.T) {
	r := redact.New([]string{"hunter2hunter2"})
	clean := []byte("nothing secret here")
	if got := r.Bytes(clean); &got[0] != &clean[0] {
		t.Errorf("Bytes of clean input returned a copy, want the input itself")
	}
	in := []byte("pw hunter2hunter2")
	if got, want := string(r.Bytes(in)), "pw [REDACTED]"; got != want {
		t.Errorf("Bytes = %q, want %q", got, want)
	}
	if got, want := string(in), "pw hunter2hunter2"; got != want {
		t.Errorf("input changed to %q, want %q", got, want)
	}
}

func TestConcurrentUse(t *testing.T) {
	r := redact.New([]string{"hunter2hunter2"})
	done := make(chan bool)
	for range 8 {
		go func() {
			for range 100 {
				if got := r.String("a hunter2hunter2 " + ghToken); got != "a [REDACTED] [REDACTED]" {
					t.Errorf("String = %q", got)
				}
				_ = r.Value(map[string]any{"password": "x", "list": []any{"hunter2hunter2"}})
			}
			done <- true
		}()
	}
	for range 8 {
		<-done
	}
}
