package config_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

func TestTelemetryBlock(t *testing.T) {
	src := agentServers + `telemetry:
  enabled: true
  endpoint: https://api.honeycomb.io
  protocol: grpc
  service_name: gw-prod
  sample_ratio: 0.25
  headers:
    x-honeycomb-team: ${API_KEY}
`
	cfg, err := config.Parse("sb.yaml", []byte(src), config.TestOpts)
	if err != nil {
		t.Fatal(err)
	}
	on, ratio := true, 0.25
	want := config.Telemetry{Enabled: &on, Endpoint: "https://api.honeycomb.io", Protocol: "grpc", ServiceName: "gw-prod", SampleRatio: &ratio,
		Headers: map[string]string{"x-honeycomb-team": "key_secret"}, Pos: config.Pos{File: "sb.yaml", Line: 6, Col: 1}}
	if diff := cmp.Diff(want, cfg.Telemetry); diff != "" {
		t.Errorf("telemetry (-want +got):\n%s", diff)
	}

	// config show hides the header values and reads back the same block.
	out, err := config.MarshalResolved(cfg.Redacted())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "key_secret") || !strings.Contains(string(out), "x-honeycomb-team: '[REDACTED]'") && !strings.Contains(string(out), `x-honeycomb-team: "[REDACTED]"`) {
		t.Errorf("config show of the telemetry block:\n%s", out)
	}
	plain, err := config.MarshalResolved(cfg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := config.Parse("sb.yaml", plain, config.TestOpts)
	if err != nil {
		t.Fatalf("output does not parse: %v\n%s", err, plain)
	}
	if !cfg.Telemetry.Equal(again.Telemetry) {
		t.Errorf("read back %+v, want %+v\n%s", again.Telemetry, cfg.Telemetry, plain)
	}

	// An absent or empty block says nothing, and is not written.
	for _, src := range []string{agentServers, agentServers + "telemetry:\n"} {
		cfg, err := config.Parse("sb.yaml", []byte(src), config.TestOpts)
		if err != nil {
			t.Fatal(err)
		}
		tel := cfg.Telemetry
		tel.Pos = config.Pos{}
		if diff := cmp.Diff(config.Telemetry{}, tel); diff != "" {
			t.Errorf("an absent block (-want +got):\n%s", diff)
		}
		out, _ := config.MarshalResolved(cfg)
		if strings.Contains(string(out), "telemetry:") {
			t.Errorf("an absent block is written:\n%s", out)
		}
	}
}

func TestTelemetryProblems(t *testing.T) {
	tests := []problemCase{
		{
			name: "unknown key",
			src:  "telemetry:\n  endpiont: http://x:4318\n",
			want: []string{`sb.yaml:7:3: telemetry.endpiont: unknown field "endpiont"; did you mean "endpoint"?`},
		},
		{
			name: "endpoint",
			src:  "telemetry:\n  endpoint: localhost:4318\n",
			want: []string{`sb.yaml:7:13: telemetry.endpoint: URL "localhost:4318" must start with http:// or https://; give the OTLP receiver's http:// or https:// URL, e.g. http://localhost:4318 (http/protobuf) or http://localhost:4317 (grpc)`},
		},
		{
			name: "credentials in the endpoint",
			src:  "telemetry:\n  endpoint: https://user:pw@otlp.example.com\n",
			want: []string{`sb.yaml:7:13: telemetry.endpoint: must not carry credentials; send the credentials as a header: telemetry.headers`},
		},
		{
			name: "protocol, ratio, header",
			src:  "telemetry:\n  protocol: http/json\n  sample_ratio: 2\n  headers:\n    \"bad header\": x\n",
			want: []string{
				`sb.yaml:7:13: telemetry.protocol: unknown protocol "http/json"; use http/protobuf or grpc`,
				`sb.yaml:8:17: telemetry.sample_ratio: 2 is out of range; write a number from 0 (no new traces) to 1 (every trace)`,
				`sb.yaml:10:5: telemetry.headers.bad header: invalid header name "bad header"; use letters, digits and -`,
			},
		},
	}
	checkProblems(t, agentServers, config.TestOpts, tests)
}
