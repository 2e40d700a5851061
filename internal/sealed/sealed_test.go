package sealed_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/sealed"
)

var _ config.SecretStore = (*sealed.Secrets)(nil)

func TestSealOpen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	k, err := sealed.LoadKey(filepath.Join(dir, "sub", "key"))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := k.Seal("TEST0001", []byte("hunter2"), "a")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(rec, []byte("hunter2")) {
		t.Fatal("the sealed record holds the plain text")
	}
	got, err := k.Open("TEST0001", rec, "a")
	if err != nil || string(got) != "hunter2" {
		t.Fatalf("got %q, %v; want hunter2", got, err)
	}
	if _, err := k.Open("TEST0001", rec, "b"); !errors.Is(err, sealed.ErrKeyMismatch) {
		t.Errorf("opened under another name: got %v, want ErrKeyMismatch", err)
	}
	if _, err := k.Open("OTHER001", rec, "a"); !errors.Is(err, sealed.ErrNotSealed) {
		t.Errorf("opened with another magic: got %v, want ErrNotSealed", err)
	}
	// The same key file gives the same key; a replaced one does not open.
	k2, err := sealed.LoadKey(filepath.Join(dir, "sub", "key"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k2.Open("TEST0001", rec, "a"); err != nil {
		t.Errorf("reloaded key: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "key"), make([]byte, sealed.KeySize), 0o600); err != nil {
		t.Fatal(err)
	}
	k3, err := sealed.LoadKey(filepath.Join(dir, "sub", "key"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k3.Open("TEST0001", rec, "a"); !errors.Is(err, sealed.ErrKeyMismatch) {
		t.Errorf("replaced key: got %v, want ErrKeyMismatch", err)
	}
	for _, p := range []string{filepath.Join(dir, "sub"), filepath.Join(dir, "sub", "key")} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		want := fs.FileMode(0o600)
		if fi.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}
}

func TestLoadKeyWrongSize(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(path, []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := sealed.LoadKey(path); err == nil {
		t.Fatal("a 5-byte key file loaded")
	}
}

// TestLoadKeyConcurrent: processes (here goroutines) creating the key at
// once all end up with the one key written first.
func TestLoadKeyConcurrent(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "key")
	keys := make([]*sealed.Key, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() {
			k, err := sealed.LoadKey(path)
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		})
	}
	wg.Wait()
	rec, err := keys[0].Seal("M", []byte("x"), "n")
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		if _, err := k.Open("M", rec, "n"); err != nil {
			t.Errorf("key %d differs: %v", i, err)
		}
	}
}

// TestSecrets: values are kept between instances, sealed: the value never
// appears on disk in plain text, and the files are 0600.
func TestSecrets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := sealed.NewSecrets(dir)
	if _, ok, err := s.Secret("k"); ok || err != nil {
		t.Fatalf("empty store: got ok=%v err=%v", ok, err)
	}
	const value = "sk-live-0123456789abcdef"
	if err := s.SetSecret("vscode-input:/x/mcp.json#token", value); err != nil {
		t.Fatal(err)
	}
	other := sealed.NewSecrets(dir)
	v, ok, err := other.Secret("vscode-input:/x/mcp.json#token")
	if err != nil || !ok || v != value {
		t.Fatalf("got %q, %v, %v; want the stored value", v, ok, err)
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(data, []byte(value)) || bytes.Contains(data, []byte("mcp.json")) {
			t.Errorf("%s holds the value or its key in plain text", p)
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", p, fi.Mode().Perm())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := other.DeleteSecret("vscode-input:/x/mcp.json#token"); !ok || err != nil {
		t.Fatalf("delete: %v, %v", ok, err)
	}
	if _, ok, _ := s.Secret("vscode-input:/x/mcp.json#token"); ok {
		t.Error("deleted value still there")
	}
}

// TestSecretsTampered: a store whose file was altered says so.
func TestSecretsTampered(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := sealed.NewSecrets(dir)
	if err := s.SetSecret("k", "v"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-1] ^= 1
	if err := os.WriteFile(s.Path(), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := sealed.NewSecrets(dir).Secret("k"); !errors.Is(err, sealed.ErrKeyMismatch) {
		t.Fatalf("got %v, want ErrKeyMismatch", err)
	}
}
