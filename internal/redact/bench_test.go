package redact_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/redact"
)

// cleanText returns about n bytes of text without secrets, mixing what
// tool results and logs hold: prose, JSON, code, log lines, hashes, UUIDs,
// URLs and base64 data.
func cleanText(n int) string {
	parts := []string{
		"The quick brown fox jumps over the lazy dog. Note: keys rotate daily; see the docs for details.\n",
		`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"Found 3 items in London: weather is 18C."}],"isError":false,"max_tokens":1024,"usage":{"input_tokens":12,"output_tokens":40}}}` + "\n",
		"func (s *Server) Run(ctx context.Context) error { token := s.cfg.Token; if token == \"\" { return errNoToken } }\n",
		"time=2024-05-01T12:30:45Z level=INFO msg=\"tool call\" server=github tool=search_issues duration=132ms status=ok\n",
		"commit " + commitSHA + " request " + uuid + " image@" + sha256Digest + "\n",
		"GET https://api.example.com/v1/repos/org/repo/issues?state=open&per_page=100 HTTP/1.1\nAccept: application/json\n",
		`{"type":"image","mimeType":"image/png","data":"` + strings.Repeat(base64Image[:88], 8) + `"}` + "\n",
		"Basic usage: call the Bearer of news, then the basic setup; author: Jane Doe, authored 2024.\n",
	}
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString(parts[i%len(parts)])
	}
	return b.String()
}

// base64Text returns a JSON image result of about n bytes of random base64.
func base64Text(n int) string {
	data := make([]byte, n*3/4)
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(rnd.Uint32())
	}
	return `{"type":"image","mimeType":"image/png","data":"` + base64.StdEncoding.EncodeToString(data) + `"}`
}

// dirtyText is cleanText with a credential in every line or so.
func dirtyText(n int) string {
	secrets := []string{
		"password=hunter2hunter2", awsKeyID, ghToken, slackBot, jwt,
		"Authorization: Bearer " + bearerToken, "postgres://u:pw123456@db/x",
		`"api_key": "0123456789abcdef"`, pemBlock,
	}
	lines := strings.SplitAfter(cleanText(n), "\n")
	for i := range lines {
		if i%2 == 0 {
			lines[i] = secrets[i%len(secrets)] + " " + lines[i]
		}
	}
	return strings.Join(lines, "")
}

func BenchmarkString(b *testing.B) {
	r := redact.New([]string{"hunter2hunter2", "correct-horse-battery", "0123456789abcdef0123"})
	for _, tt := range []struct {
		name string
		text string
	}{
		{"clean-1MiB", cleanText(1 << 20)},
		{"dirty-1MiB", dirtyText(1 << 20)},
		{"base64-1MiB", base64Text(1 << 20)},
		{"clean-1KiB", cleanText(1 << 10)},
	} {
		b.Run(tt.name, func(b *testing.B) {
			b.SetBytes(int64(len(tt.text)))
			for b.Loop() {
				r.String(tt.text)
			}
		})
	}
}

func BenchmarkJSON(b *testing.B) {
	r := redact.New([]string{"hunter2hunter2"})
	var items []any
	for i := 0; len(items) < 4000; i++ {
		items = append(items, map[string]any{"id": i, "title": fmt.Sprintf("Issue %d: something broke", i), "body": cleanText(200), "labels": []any{"bug", "p1"}})
	}
	raw, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": cleanText(1 << 18)}}, "items": items})
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		r.JSON(raw)
	}
}

// TestCleanTextUnchanged checks the benchmark's clean text really is clean:
// none of it is redacted.
func TestCleanTextUnchanged(t *testing.T) {
	text := cleanText(64<<10) + base64Text(64<<10)
	if got := redact.New(nil).String(text); got != text {
		i := 0
		for i < len(got) && got[i] == text[i] {
			i++
		}
		t.Errorf("clean text changed at %d: %q", i, got[max(0, i-40):min(len(got), i+40)])
	}
}
