//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// TestStateDirWritableByOthers: a state directory others may write to is
// not used as it is (issue 18 item 5): its mode is fixed and the command
// says so; one that is not a directory is refused with what to do.
func TestStateDirWritableByOthers(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "servers", "--config", cfg, "--state-dir", dir)
	wantCode(t, r, ExitOK)
	wantContains(t, "servers stderr", r.stderr, "the state directory "+dir+" was writable by other users (mode 0777); its mode is now 0700")
	info, err := os.Stat(dir)
	if err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("mode after: %v %v, want 0700", info.Mode().Perm(), err)
	}
	// Once fixed, nothing more is said.
	r = runCLI(t, "servers", "--config", cfg, "--state-dir", dir)
	wantCode(t, r, ExitOK)
	if r.stderr != "" {
		t.Errorf("second run stderr: %q, want nothing", r.stderr)
	}

	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "servers", "--config", cfg, "--state-dir", file)
	wantCode(t, r, ExitFailure)
	wantContains(t, "servers stderr", r.stderr, "the state directory "+file+" is not a directory")
}
