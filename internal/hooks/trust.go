package hooks

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// Trust records live in the one store that config keeps for every file
// (config.Trust): trusting a file lets its hooks run and its servers start
// the commands it names.

// TrustFileName is the file in the state directory holding trust records.
const TrustFileName = config.TrustFileName

// TrustState says whether a configuration file's hooks may run.
type TrustState = config.TrustState

// The trust states.
const (
	Trusted   = config.Trusted   // trusted as it is now (or needs no trust)
	Untrusted = config.Untrusted // never trusted
	Changed   = config.Changed   // trusted once, changed since
)

// TrustRecord is one trusted file.
type TrustRecord = config.TrustRecord

// NeedsTrust reports whether hooks from the configuration file at path
// run only once trusted: every file but those in the user's configuration
// directory (switchboard/ under os.UserConfigDir), which only the user
// writes. "" (no file: the embedded default, or a configuration built in
// code) needs none.
func NeedsTrust(path string) bool {
	if path == "" {
		return false
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return true
	}
	if dir, err := os.UserConfigDir(); err == nil {
		own := filepath.Join(dir, "switchboard") + string(filepath.Separator)
		if strings.HasPrefix(abs, own) {
			return false
		}
	}
	return true
}

// CheckTrust reports whether the file at path is trusted as it is now in
// the records of stateDir. A file that needs no trust is Trusted.
func CheckTrust(stateDir, path string) (TrustState, error) {
	if !NeedsTrust(path) {
		return Trusted, nil
	}
	return config.CheckTrust(stateDir, path)
}

// Trust records the current hash of the file at path in stateDir, so
// that its hooks run until it changes.
func Trust(stateDir, path string) (TrustRecord, error) {
	return config.Trust(stateDir, path)
}

// trustCommand is the command that trusts the file at path so that its
// hooks run, as a log line says it: the file by name (a bare hooks trust
// trusts the file found where it runs), and --yes, for the daemon that
// logs it has no terminal and neither may its reader.
func trustCommand(path string) string {
	return strings.Replace(config.TrustCommand(path), "config trust", "hooks trust", 1) + " --yes"
}
