package hooks

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// TrustFileName is the file in the state directory holding trust records.
const TrustFileName = "hooks-trust.json"

// TrustState says whether a configuration file's hooks may run.
type TrustState string

// The trust states.
const (
	Trusted   TrustState = "trusted"   // trusted as it is now (or needs no trust)
	Untrusted TrustState = "untrusted" // never trusted
	Changed   TrustState = "changed"   // trusted once, changed since
)

// TrustRecord is one trusted file.
type TrustRecord struct {
	Path      string    `json:"path"`
	SHA256    string    `json:"sha256"`
	TrustedAt time.Time `json:"trusted_at"`
}

type trustFile struct {
	Files map[string]TrustRecord `json:"files"`
}

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

// fileHash is the SHA-256 of a file's contents.
func fileHash(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// CheckTrust reports whether the file at path is trusted as it is now in
// the records of stateDir. A file that needs no trust is Trusted.
func CheckTrust(stateDir, path string) (TrustState, error) {
	if !NeedsTrust(path) {
		return Trusted, nil
	}
	if stateDir == "" {
		return Untrusted, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return Untrusted, err
	}
	tf, err := readTrust(stateDir)
	if err != nil {
		return Untrusted, err
	}
	rec, ok := tf.Files[abs]
	if !ok {
		return Untrusted, nil
	}
	sum, err := fileHash(abs)
	if err != nil {
		return Untrusted, fmt.Errorf("hashing %s: %w", abs, err)
	}
	if sum != rec.SHA256 {
		return Changed, nil
	}
	return Trusted, nil
}

// Trust records the current hash of the file at path in stateDir, so
// that its hooks run until it changes.
func Trust(stateDir, path string) (TrustRecord, error) {
	if stateDir == "" {
		return TrustRecord{}, fault.New(fault.Config, "no state directory to keep trust records in")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return TrustRecord{}, fmt.Errorf("trusting %s: %w", path, err)
	}
	sum, err := fileHash(abs)
	if err != nil {
		return TrustRecord{}, fault.Wrap(fault.NotFound, err, "cannot read %s to trust it", abs)
	}
	tf, err := readTrust(stateDir)
	if err != nil {
		return TrustRecord{}, err
	}
	rec := TrustRecord{Path: abs, SHA256: sum, TrustedAt: time.Now().UTC()}
	tf.Files[abs] = rec
	if err := writeTrust(stateDir, tf); err != nil {
		return TrustRecord{}, err
	}
	return rec, nil
}

func readTrust(stateDir string) (trustFile, error) {
	tf := trustFile{Files: map[string]TrustRecord{}}
	data, err := os.ReadFile(filepath.Join(stateDir, TrustFileName))
	if errors.Is(err, fs.ErrNotExist) {
		return tf, nil
	}
	if err != nil {
		return tf, fmt.Errorf("reading hook trust records: %w", err)
	}
	if err := json.Unmarshal(data, &tf); err != nil {
		return trustFile{Files: map[string]TrustRecord{}}, fmt.Errorf("reading hook trust records %s: %w", filepath.Join(stateDir, TrustFileName), err)
	}
	if tf.Files == nil {
		tf.Files = map[string]TrustRecord{}
	}
	return tf, nil
}

// writeTrust replaces the records atomically (write, then rename).
func writeTrust(stateDir string, tf trustFile) error {
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return fmt.Errorf("creating the state directory: %w", err)
	}
	data, err := json.MarshalIndent(tf, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding hook trust records: %w", err)
	}
	f, err := os.CreateTemp(stateDir, TrustFileName+".*")
	if err != nil {
		return fmt.Errorf("writing hook trust records: %w", err)
	}
	if _, err := f.Write(append(data, '\n')); err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("writing hook trust records: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing hook trust records: %w", err)
	}
	if err := os.Rename(f.Name(), filepath.Join(stateDir, TrustFileName)); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing hook trust records: %w", err)
	}
	return nil
}
