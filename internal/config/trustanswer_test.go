package config_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// TestTrustAnswered: the answer to the question whether to trust a file at
// first use is handed to Options.TrustAnswered with the file and the hash
// of the contents asked about: no, yes, and a yes that could not be
// recorded. Nothing is handed over when nothing was asked.
func TestTrustAnswered(t *testing.T) {
	home, _ := userHome(t)
	file := filepath.Join(home, ".cursor", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(cursorFile), 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(cursorFile))
	hash := hex.EncodeToString(sum[:])
	load := func(state string, yes bool) ([]config.TrustAnswer, error) {
		var got []config.TrustAnswer
		err := startErr(config.Load(file, config.Options{StateDir: state,
			ConfirmTrust:  func(string) (bool, error) { return yes, nil },
			TrustAnswered: func(a config.TrustAnswer) error { got = append(got, a); return nil }}))
		return got, err
	}
	errOpt := cmpopts.IgnoreFields(config.TrustAnswer{}, "Err")

	state := t.TempDir()
	got, err := load(state, false)
	if err == nil {
		t.Fatal("no: the file's servers beyond the allowlist may start untrusted")
	}
	if want := []config.TrustAnswer{{Path: file, SHA256: hash}}; !cmp.Equal(got, want, errOpt) {
		t.Errorf("no: got %+v, want %+v", got, want)
	}

	got, err = load(state, true)
	if err != nil {
		t.Fatalf("yes: %v", err)
	}
	if want := []config.TrustAnswer{{Path: file, SHA256: hash, Yes: true}}; !cmp.Equal(got, want, errOpt) || got[0].Err != nil {
		t.Errorf("yes: got %+v, want %+v", got, want)
	}
	if st, _ := config.CheckTrust(state, file); st != config.Trusted {
		t.Errorf("yes: trust %s, want %s", st, config.Trusted)
	}

	// Trusted now: nothing is asked, nothing answered.
	if got, err = load(state, true); err != nil || len(got) != 0 {
		t.Errorf("trusted: got %+v, %v; want no answer and no error", got, err)
	}

	// A state "directory" that is a file: the yes cannot be recorded.
	bad := filepath.Join(t.TempDir(), "state")
	if err := os.WriteFile(bad, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err = load(bad, true)
	if err == nil {
		t.Fatal("unrecorded yes: the file loaded")
	}
	if len(got) != 1 || !got[0].Yes || got[0].Err == nil || got[0].Path != file {
		t.Errorf("unrecorded yes: got %+v, want one yes with its error", got)
	}
}
