package sealed

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// Layout of the secret store under the state directory.
const (
	secretsDir  = "secrets" // 0700
	secretsKey  = "key"     // KeySize random bytes, 0600
	secretsFile = "values"  // one sealed JSON object of key → value, 0600
)

// secretsMagic starts the sealed file of a secret store.
const secretsMagic = "SBSECRT1"

// Secrets is a small store of named secret values (the answers to VS Code
// inputs), sealed in one file of the state directory. It implements
// config.SecretStore. Every call reads the file afresh, so a value stored
// on a terminal is there for a daemon already running.
type Secrets struct {
	dir string

	mu  sync.Mutex
	key *Key
}

// NewSecrets returns the secret store of the state directory stateDir.
// Nothing is created until a value is stored.
func NewSecrets(stateDir string) *Secrets {
	return &Secrets{dir: filepath.Join(stateDir, secretsDir)}
}

// Path is the sealed file holding the values.
func (s *Secrets) Path() string { return filepath.Join(s.dir, secretsFile) }

// Secret returns the value stored under key, if there is one.
func (s *Secrets) Secret(key string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	vals, err := s.read()
	if err != nil {
		return "", false, err
	}
	v, ok := vals[key]
	return v, ok, nil
}

// SetSecret stores value under key.
func (s *Secrets) SetSecret(key, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	vals, err := s.read()
	if err != nil {
		return err
	}
	vals[key] = value
	return s.write(vals)
}

// DeleteSecret removes the value stored under key, reporting whether there
// was one.
func (s *Secrets) DeleteSecret(key string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	vals, err := s.read()
	if err != nil {
		return false, err
	}
	if _, ok := vals[key]; !ok {
		return false, nil
	}
	delete(vals, key)
	return true, s.write(vals)
}

// loadKey returns the store's key, creating it on first use. The caller
// holds s.mu.
func (s *Secrets) loadKey() (*Key, error) {
	if s.key != nil {
		return s.key, nil
	}
	k, err := LoadKey(filepath.Join(s.dir, secretsKey))
	if err != nil {
		return nil, fmt.Errorf("opening the secret store: %w", err)
	}
	s.key = k
	return k, nil
}

// read returns the stored values; none when there is no file yet.
func (s *Secrets) read() (map[string]string, error) {
	vals := map[string]string{}
	data, err := os.ReadFile(s.Path())
	if errors.Is(err, fs.ErrNotExist) {
		return vals, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the secret store: %w", err)
	}
	k, err := s.loadKey()
	if err != nil {
		return nil, err
	}
	plain, err := k.Open(secretsMagic, data, secretsFile)
	if err != nil {
		return nil, fmt.Errorf("reading the secret store %s: %w", s.Path(), err)
	}
	if err := json.Unmarshal(plain, &vals); err != nil {
		return nil, fmt.Errorf("decoding the secret store %s: %w", s.Path(), err)
	}
	return vals, nil
}

// write seals vals into the store's file.
func (s *Secrets) write(vals map[string]string) error {
	k, err := s.loadKey()
	if err != nil {
		return err
	}
	plain, err := json.Marshal(vals)
	if err != nil {
		return fmt.Errorf("encoding the secret store: %w", err)
	}
	data, err := k.Seal(secretsMagic, plain, secretsFile)
	if err != nil {
		return err
	}
	if err := WriteFile(s.Path(), data); err != nil {
		return fmt.Errorf("writing the secret store: %w", err)
	}
	return nil
}
