package config_test

import (
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// TestDefaultConstantsAreTheSchemas checks the defaults that other
// packages read as constants against those a configuration gets, which
// are the schema's (the Default functions read its tags): a constant that
// drifted from its key's default would make them disagree.
func TestDefaultConstantsAreTheSchemas(t *testing.T) {
	t.Parallel()
	c := config.Default()
	for _, tc := range []struct {
		key                 string
		constant, effective any
	}{
		{"defaults.request_timeout", config.DefaultRequestTimeout, c.Defaults.RequestTimeout},
		{"defaults.connect_timeout", config.DefaultConnectTimeout, c.Defaults.ConnectTimeout},
		{"defaults.max_retries", config.DefaultMaxRetries, c.Defaults.MaxRetries},
		{"defaults.discovery_ttl", config.DefaultDiscoveryTTL, c.Defaults.DiscoveryTTL},
		{"defaults.health.ping_timeout", config.DefaultPingTimeout, c.Defaults.Health.PingTimeout},
		{"defaults.health.max_failures", config.DefaultMaxFailures, c.Defaults.Health.MaxFailures},
		{"limits.max_concurrent", config.DefaultMaxConcurrent, c.Limits.MaxConcurrent},
		{"limits.session_limit", config.DefaultSessionLimit, c.Limits.SessionLimit},
		{"gateway.listen", config.DefaultListen, c.Gateway.Listen},
		{"gateway.shutdown_timeout", config.DefaultShutdownTimeout, c.Gateway.ShutdownTimeout},
		{"gateway.max_request_bytes", int64(config.DefaultMaxRequestBytes), c.Gateway.MaxRequestBytes},
		{"gateway.input_timeout", config.DefaultInputTimeout, c.Gateway.InputTimeout},
		{"gateway.write_timeout", config.DefaultWriteTimeout, c.Gateway.WriteTimeout},
		{"agent.max_steps", config.DefaultAgentMaxSteps, c.Agent.MaxSteps},
		{"agent.timeout", config.DefaultAgentTimeout, c.Agent.Timeout},
	} {
		if tc.constant != tc.effective {
			t.Errorf("%s: the constant is %v, the schema's default %v", tc.key, tc.constant, tc.effective)
		}
	}
}

// TestIntrospectionAuthMethodDefault: gateway.oauth.introspection without
// auth_method authenticates with client_secret_basic, its schema default.
func TestIntrospectionAuthMethodDefault(t *testing.T) {
	t.Parallel()
	src := "gateway:\n  oauth:\n    resource: https://mcp.example.com\n    issuer: https://login.example.com\n    introspection: {client_id: gw, client_secret_env: GW_SECRET}\n"
	cfg, err := config.Parse("sb.yaml", []byte(src), config.Options{LookupEnv: func(k string) (string, bool) { return "s3cret", k == "GW_SECRET" }})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Gateway.OAuth.Introspection.AuthMethod; got != "client_secret_basic" {
		t.Errorf("auth method %q, want client_secret_basic", got)
	}
}
