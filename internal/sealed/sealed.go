// Package sealed keeps small secrets at rest in the state directory: sealed
// with AES-256-GCM under a random key file (mode 0600) beside them, each
// record bound to its file name, written atomically with mode 0600.
//
// It is the one implementation of this for everything Switchboard keeps
// secret on disk: the OAuth sign-in store (internal/oauth) and the values
// of VS Code inputs ([Secrets], a config.SecretStore). The key protects the
// records from copies of the state directory without the key (a backup of
// one folder, a pasted file, a grep) and from casual reading; it does not
// protect them from someone who can read the whole directory as the user
// (see docs/decisions.md).
package sealed

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// KeySize is the size of a key file: 32 random bytes (AES-256).
const KeySize = 32

// ErrNotSealed is the cause of Open's error for data that is not a record
// of the expected kind (another magic, or too short).
var ErrNotSealed = errors.New("not a sealed record")

// ErrKeyMismatch is the cause of Open's error for a record that does not
// decrypt: the key file was replaced, or the record was altered or copied
// over another file.
var ErrKeyMismatch = errors.New("the record does not decrypt with the store's key (the key file was replaced, or the record was altered)")

// Key seals and opens records. It is safe for concurrent use.
type Key struct {
	aead cipher.AEAD
}

// LoadKey reads the key file at path, creating it (and its folder, mode
// 0700) with a new random key on first use. Two processes that create it
// at once end up with the same key: the first one written wins.
func LoadKey(path string) (*Key, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating %s: %w", filepath.Dir(path), err)
	}
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		raw, err = createKey(path)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the key file %s: %w", path, err)
	}
	if len(raw) != KeySize {
		return nil, fmt.Errorf("the key file %s has %d bytes, want %d: move it away (what it sealed is then lost)", path, len(raw), KeySize)
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, fmt.Errorf("the key file %s: %w", path, err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("the key file %s: %w", path, err)
	}
	return &Key{aead: gcm}, nil
}

// createKey writes a new random key to path unless another process wrote
// one first, and returns the key now at path.
func createKey(path string) ([]byte, error) {
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	tmp, err := writeTemp(filepath.Dir(path), key)
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp)
	// Link fails if the key exists: then the other process's key wins.
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	return os.ReadFile(path)
}

// Seal encrypts plain into a record that starts with magic (which tells
// kinds and versions of records apart). name is the additional data: the
// record opens only under the same name, so a record copied over another
// file does not open.
func (k *Key) Seal(magic string, plain []byte, name string) ([]byte, error) {
	nonce := make([]byte, k.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("sealing: %w", err)
	}
	out := append([]byte(magic), nonce...)
	return k.aead.Seal(out, nonce, plain, []byte(name)), nil
}

// Open decrypts a record made by Seal with the same magic and name. A
// record of another kind fails with ErrNotSealed; one that does not
// decrypt with ErrKeyMismatch.
func (k *Key) Open(magic string, data []byte, name string) ([]byte, error) {
	ns := k.aead.NonceSize()
	if !bytes.HasPrefix(data, []byte(magic)) || len(data) < len(magic)+ns {
		return nil, ErrNotSealed
	}
	data = data[len(magic):]
	plain, err := k.aead.Open(nil, data[:ns], data[ns:], []byte(name))
	if err != nil {
		return nil, ErrKeyMismatch
	}
	return plain, nil
}

// WriteFile writes data to path atomically (a synced temporary file in the
// same folder, renamed into place), mode 0600, creating the folder with
// mode 0700.
func WriteFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := writeTemp(dir, data)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// writeTemp writes data to a new file of mode 0600 in dir, synced, and
// returns its name; the caller links or renames it into place.
func writeTemp(dir string, data []byte) (string, error) {
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return "", err
	}
	err = tmp.Chmod(0o600)
	if err == nil {
		_, err = tmp.Write(data)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return tmp.Name(), nil
}
