package config_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

func TestMarshalResolved(t *testing.T) {
	cfg, err := config.Load("testdata/formats/native.yaml", config.TestOpts)
	if err != nil {
		t.Fatal(err)
	}
	out, err := config.MarshalResolved(cfg.Redacted())
	if err != nil {
		t.Fatal(err)
	}
	config.Golden(t, "resolved-native.yaml", out)

	// Unredacted, the output is a configuration that resolves to the same.
	out, err = config.MarshalResolved(cfg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := config.Parse("resolved.yaml", out, config.Options{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatalf("parsing the resolved output: %v\n%s", err, out)
	}
	sameConfig(t, cfg, again)
}

func TestMarshalDefault(t *testing.T) {
	out, err := config.MarshalResolved(config.Default())
	if err != nil {
		t.Fatal(err)
	}
	config.Golden(t, "resolved-default.yaml", out)
	if _, err := config.MarshalResolved(nil); err == nil {
		t.Error("MarshalResolved(nil) succeeded, want an error")
	}
}

// TestMarshalRate: limits.rate is written back as a configuration that
// resolves to the same buckets.
func TestMarshalRate(t *testing.T) {
	cfg := config.Default()
	cfg.Limits.Rate = config.Rate{PerUser: config.Bucket{PerSecond: 2.5, Burst: 10}, PerUserServer: config.Bucket{PerSecond: 0.5, Burst: 1}}
	out, err := config.MarshalResolved(cfg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := config.Parse("resolved.yaml", out, config.Options{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatalf("parsing the resolved output: %v\n%s", err, out)
	}
	if diff := cmp.Diff(cfg.Limits, again.Limits); diff != "" {
		t.Errorf("limits differ (-want +got):\n%s\n%s", diff, out)
	}
}
