// Internal on purpose: tests the key splitting and credential-key test (splitKey, isCredentialKey) below Value.

package redact

import "testing"

func TestIsCredentialKey(t *testing.T) {
	tests := []struct {
		key  string
		want bool
	}{
		{"password", true},
		{"Password", true},
		{"PASSWORD", true},
		{"db_password", true},
		{"dbPassword", true},
		{"PGPASSWORD", true},
		{"passwd", true},
		{"passphrase", true},
		{"secret", true},
		{"client_secret", true},
		{"clientSecret", true},
		{"token", true},
		{"access_token", true},
		{"refresh-token", true},
		{"authToken", true},
		{"x-auth-token", true},
		{"api_key", true},
		{"apiKey", true},
		{"APIKey", true},
		{"X-API-Key", true},
		{"apikey", true},
		{"x-apikey", true},
		{"access_key", true},
		{"AWS_SECRET_ACCESS_KEY", true},
		{"private_key", true},
		{"privateKey", true},
		{"authorization", true},
		{"Proxy-Authorization", true},
		{"auth", true},
		{"cookie", true},
		{"Set-Cookie", true},
		{"session", true},
		{"session_id", true},
		{"sessionId", true},
		{"sessionid", true},
		{"Mcp-Session-Id", true},
		{"credential", true},
		{"credentials", true},
		{"google.credentials", true},
		{"csrf_token", true},
		{"signing_key", true},

		{"author", false},
		{"authors", false},
		{"authored_at", false},
		{"git_author_name", false},
		{"tokens", false},
		{"tokens_used", false},
		{"max_tokens", false},
		{"maxTokens", false},
		{"input_tokens", false},
		{"token_count", false},
		{"tokenCount", false},
		{"max_token", false},
		{"tokenizer", false},
		{"next_token", false},
		{"NextToken", false},
		{"nextPageToken", false},
		{"page_token", false},
		{"eos_token", false},
		{"auth_type", false},
		{"authType", false},
		{"token_url", false},
		{"authorization_endpoint", false},
		{"secret_name", false},
		{"password_min_length", false},
		{"access_token_expires_in", false},
		{"cookie_name", false},
		{"session_timeout", false},
		{"key", false},
		{"keys", false},
		{"keyboard", false},
		{"monkey", false},
		{"primary_key", false},
		{"passenger", false},
		{"bypass", false},
		{"possession", false},
		{"oauth", false},
		{"", false},
		{"city", false},
	}
	for _, tt := range tests {
		if got := isCredentialKey(tt.key); got != tt.want {
			t.Errorf("isCredentialKey(%q) = %v, want %v", tt.key, got, tt.want)
		}
	}
}

func TestSplitKey(t *testing.T) {
	tests := map[string]string{
		"xApiKey":        "x api key",
		"X-API-Key":      "x api key",
		"APIKey":         "api key",
		"oauth2Token":    "oauth2 token",
		"snake_case.dot": "snake case dot",
		"HTTPServer":     "http server",
		"__x__":          "x",
	}
	for in, want := range tests {
		got := ""
		for i, s := range splitKey(in, nil) {
			if i > 0 {
				got += " "
			}
			got += s
		}
		if got != want {
			t.Errorf("splitKey(%q) = %q, want %q", in, got, want)
		}
	}
}
