package config

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

// Trust is recorded per file, by the SHA-256 of its contents, in the state
// directory: one store for everything a file may only do once the user
// trusts it (its hooks run, its servers start commands beyond the
// allowlist). Any change to the file needs trust again.

// TrustFileName is the file in the state directory holding trust records.
const TrustFileName = "trust.json"

// legacyTrustFileName is where the records were kept when only hooks
// needed trust; it is read while trust.json does not exist yet.
const legacyTrustFileName = "hooks-trust.json"

// TrustState says whether a file is trusted as it is now.
type TrustState string

// The trust states.
const (
	Trusted   TrustState = "trusted"   // trusted as it is now
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

// contentHash is the hex SHA-256 of a file's contents.
func contentHash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// CheckTrust reports whether the file at path, as it is on disk now, is
// trusted in the records of stateDir. With no state directory nothing is
// trusted.
func CheckTrust(stateDir, path string) (TrustState, error) {
	st, _, err := trustOf(stateDir, path, nil)
	return st, err
}

// trustOf is the trust state of the file at path with the given contents
// (read from disk when nil), and its record if it has one.
func trustOf(stateDir, path string, data []byte) (TrustState, *TrustRecord, error) {
	if stateDir == "" || path == "" {
		return Untrusted, nil, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return Untrusted, nil, fmt.Errorf("checking the trust of %s: %w", path, err)
	}
	tf, err := readTrust(stateDir)
	if err != nil {
		return Untrusted, nil, err
	}
	rec, ok := tf.Files[abs]
	if !ok {
		return Untrusted, nil, nil
	}
	if data == nil {
		if data, err = os.ReadFile(abs); err != nil {
			return Untrusted, &rec, fmt.Errorf("hashing %s: %w", abs, err)
		}
	}
	if contentHash(data) != rec.SHA256 {
		return Changed, &rec, nil
	}
	return Trusted, &rec, nil
}

// Trust records the current SHA-256 of the file at path in stateDir, so
// that it is trusted until it changes.
func Trust(stateDir, path string) (TrustRecord, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return TrustRecord{}, fmt.Errorf("trusting %s: %w", path, err)
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return TrustRecord{}, fault.Wrap(fault.NotFound, err, "cannot read %s to trust it", abs)
	}
	return trustData(stateDir, abs, data)
}

// trustData records data as the trusted contents of the file at abs.
func trustData(stateDir, abs string, data []byte) (TrustRecord, error) {
	if stateDir == "" {
		return TrustRecord{}, fault.New(fault.Config, "no state directory to keep trust records in")
	}
	tf, err := readTrust(stateDir)
	if err != nil {
		return TrustRecord{}, err
	}
	rec := TrustRecord{Path: abs, SHA256: contentHash(data), TrustedAt: time.Now().UTC()}
	tf.Files[abs] = rec
	if err := writeTrust(stateDir, tf); err != nil {
		return TrustRecord{}, err
	}
	return rec, nil
}

func readTrust(stateDir string) (trustFile, error) {
	tf := trustFile{Files: map[string]TrustRecord{}}
	path := filepath.Join(stateDir, TrustFileName)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		path = filepath.Join(stateDir, legacyTrustFileName)
		data, err = os.ReadFile(path)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return tf, nil
	}
	if err != nil {
		return tf, fmt.Errorf("reading trust records: %w", err)
	}
	if err := json.Unmarshal(data, &tf); err != nil {
		return trustFile{Files: map[string]TrustRecord{}}, fmt.Errorf("reading trust records %s: %w", path, err)
	}
	if tf.Files == nil {
		tf.Files = map[string]TrustRecord{}
	}
	return tf, nil
}

// writeTrust replaces the records atomically (write, then rename), mode
// 0600.
func writeTrust(stateDir string, tf trustFile) error {
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return fmt.Errorf("creating the state directory: %w", err)
	}
	data, err := json.MarshalIndent(tf, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding trust records: %w", err)
	}
	f, err := os.CreateTemp(stateDir, TrustFileName+".*")
	if err != nil {
		return fmt.Errorf("writing trust records: %w", err)
	}
	if _, err := f.Write(append(data, '\n')); err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("writing trust records: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing trust records: %w", err)
	}
	if err := os.Rename(f.Name(), filepath.Join(stateDir, TrustFileName)); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing trust records: %w", err)
	}
	return nil
}

// TrustCommand is the command that trusts the file at path, with its
// absolute path, as messages show it.
func TrustCommand(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return "switchboard config trust " + quoteForShell(path)
}

// quoteForShell quotes s for a POSIX shell when it needs quoting.
func quoteForShell(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '/' || r == '.' || r == '_' || r == '-' || r == '+' || r == ':' || r == '@' || r == '~' || r == ',') {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	out := "'"
	for _, r := range s {
		if r == '\'' {
			out += `'\''`
		} else {
			out += string(r)
		}
	}
	return out + "'"
}

// fileTrust is what decides which commands a configuration file may run.
type fileTrust struct {
	// applies is true for client files, whose commands beyond the
	// allowlist need trust; the native format has security.allowed_commands
	// instead.
	applies bool
	abs     string // the file, absolute
	state   TrustState
	rec     *TrustRecord
	client  string // the client whose user file it is (UserClientFile), or ""
	err     error  // the trust records could not be read
	// widen is true when the file's launch.allow counts: a client's file
	// trusted as it is, a native file trusted so or kept in the user's
	// configuration folder (as for its hooks).
	widen bool
}

// fileTrustOf works out the trust of a file with the given contents.
func fileTrustOf(filename string, data []byte, format Format, opts Options) fileTrust {
	ft := fileTrust{applies: format != FormatNative, abs: filename, state: Untrusted}
	if abs, err := filepath.Abs(filename); err == nil {
		ft.abs = abs
	}
	if !ft.applies {
		// A native file's commands are governed by its allowlist, but what
		// it allows beyond the launch rules counts only where its hooks
		// would run.
		if opts.assumeTrusted || inUserConfigDir(ft.abs, opts.UserEnv) {
			ft.widen = true
			return ft
		}
		ft.state, ft.rec, ft.err = trustOf(opts.StateDir, filename, data)
		ft.widen = ft.state == Trusted
		return ft
	}
	ft.client, _ = UserClientFile(filename, opts.UserEnv)
	ft.state, ft.rec, ft.err = trustOf(opts.StateDir, filename, data)
	if opts.assumeTrusted {
		ft.state, ft.err = Trusted, nil
	}
	ft.widen = ft.state == Trusted
	return ft
}

// inUserConfigDir reports whether the file at abs is in the user's
// configuration folder (switchboard/ under os.UserConfigDir), which only
// the user writes; lookup reads the user's environment.
func inUserConfigDir(abs string, lookup func(string) (string, bool)) bool {
	dir := userConfigDir(lookup)
	if dir == "" {
		return false
	}
	return strings.HasPrefix(abs, filepath.Join(dir, "switchboard")+string(filepath.Separator))
}

// TrustPreview loads the file at path as Load does, but as if the user
// trusted it: what `switchboard config trust FILE` shows before recording
// the trust (the servers, and the commands the file would then run). Every
// check but the allowlist still applies, so a file that only trust would
// let load has no problem here. A server the launch policy refuses even
// in a trusted file (which Load keeps, unable to start) is an error here,
// as trusting the file would not make it run; a missing env file or cwd
// is not, as the server starts once the path exists, nor is an input with
// no value, as it starts once the value is stored. A variable that is not
// set is an error here, *UnresolvedVariableError, for the caller to read
// the file again with a stand-in for it.
func TrustPreview(path string, opts Options) (*Config, error) {
	opts.assumeTrusted = true
	opts.ConfirmTrust = nil
	cfg, err := Load(path, opts)
	if err != nil {
		return nil, err
	}
	var refused []Problem
	for _, srv := range cfg.Servers {
		for _, p := range srv.CannotStart {
			var ui *InputUnsetError
			if missingPath(p) == nil && !errors.As(p.Err, &ui) {
				refused = append(refused, p)
			}
		}
	}
	if len(refused) > 0 {
		return nil, &ValidationError{Problems: sortProblems(refused, path)}
	}
	return cfg, nil
}

// TrustStatus is what Switchboard knows about a file's trust, for the CLI
// to show (config trust, config validate).
type TrustStatus struct {
	Path  string     // the file, absolute
	State TrustState // as the file is now
	// Record is the trust record, if the file was ever trusted (its
	// SHA-256 and when).
	Record *TrustRecord
	// Client is the client whose user file it is (UserClientFile): such a
	// file may be trusted at first use. "" for any other file.
	Client string
	// Native is true for a native switchboard.yaml, whose commands are
	// governed by security.allowed_commands rather than by trust (its
	// hooks still need trust outside the user's configuration folder).
	Native bool
}

// FileTrustStatus reports the trust of the file at path, as it is on
// disk now, in the records of stateDir; lookupEnv reads the user's
// environment, to know the user's own client files (nil: the process's).
func FileTrustStatus(stateDir, path string, lookupEnv func(string) (string, bool)) (TrustStatus, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return TrustStatus{}, fmt.Errorf("checking the trust of %s: %w", path, err)
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return TrustStatus{}, fault.Wrap(fault.NotFound, err, "cannot read %s", abs)
	}
	st := TrustStatus{Path: abs}
	st.Client, _ = UserClientFile(abs, lookupEnv)
	ps := &problems{}
	if root := parseTree(abs, data, ps); len(ps.errs) == 0 {
		st.Native = detectFormat(root, abs) == FormatNative
	}
	st.State, st.Record, err = trustOf(stateDir, abs, data)
	return st, err
}
