package config

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestMarshalResolved(t *testing.T) {
	cfg, err := Load("testdata/formats/native.yaml", testOpts)
	if err != nil {
		t.Fatal(err)
	}
	out, err := MarshalResolved(cfg.Redacted())
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "resolved-native.yaml", out)

	// Unredacted, the output is a configuration that resolves to the same.
	out, err = MarshalResolved(cfg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse("resolved.yaml", out, Options{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatalf("parsing the resolved output: %v\n%s", err, out)
	}
	if diff := cmp.Diff(cfg.Servers, again.Servers, ignorePos); diff != "" {
		t.Errorf("servers differ (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(cfg.Defaults, again.Defaults); diff != "" {
		t.Errorf("defaults differ (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(cfg.Limits, again.Limits); diff != "" {
		t.Errorf("limits differ (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(cfg.History, again.History); diff != "" {
		t.Errorf("history differs (-want +got):\n%s", diff)
	}
}

func TestMarshalDefault(t *testing.T) {
	out, err := MarshalResolved(Default())
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "resolved-default.yaml", out)
	if _, err := MarshalResolved(nil); err == nil {
		t.Error("MarshalResolved(nil) succeeded, want an error")
	}
}

func TestFormatDuration(t *testing.T) {
	tests := map[string]string{"30s": "30s", "5m": "5m", "1h": "1h", "1h30m": "1h30m", "1m30s": "1m30s", "500ms": "500ms", "0s": "0s"}
	for in, want := range tests {
		d, err := parseDurationForTest(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := formatDuration(d); got != want {
			t.Errorf("formatDuration(%s): got %q, want %q", in, got, want)
		}
	}
}

func TestQuoteYAML(t *testing.T) {
	tests := map[string]string{
		"npx": "npx", "/opt/bin/x": "/opt/bin/x", "-y": `"-y"`, "@scope/pkg": `"@scope/pkg"`,
		"true": `"true"`, "null": `"null"`, "8080": `"8080"`, "": `""`, "a b": `"a b"`,
		"https://x": `"https://x"`, "a\nb": `"a\nb"`, "<tag>": `"<tag>"`,
	}
	for in, want := range tests {
		if got := quoteYAML(in); got != want {
			t.Errorf("quoteYAML(%q): got %s, want %s", in, got, want)
		}
	}
}
func parseDurationForTest(s string) (time.Duration, error) { return time.ParseDuration(s) }

// TestMarshalRate: limits.rate is written back as a configuration that
// resolves to the same buckets.
func TestMarshalRate(t *testing.T) {
	cfg := Default()
	cfg.Limits.Rate = Rate{PerUser: Bucket{PerSecond: 2.5, Burst: 10}, PerUserServer: Bucket{PerSecond: 0.5, Burst: 1}}
	out, err := MarshalResolved(cfg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse("resolved.yaml", out, Options{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatalf("parsing the resolved output: %v\n%s", err, out)
	}
	if diff := cmp.Diff(cfg.Limits, again.Limits); diff != "" {
		t.Errorf("limits differ (-want +got):\n%s\n%s", diff, out)
	}
}
