package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Record is the part of a server's health that outlives a process: whether a
// user or the health loop disabled it, and why (seed 001 MCPServerConfig's
// failureCount and autoDisabled).
type Record struct {
	// Disabled is set by a user (`servers disable`) or by auto-disable.
	Disabled     bool      `json:"disabled,omitempty"`
	AutoDisabled bool      `json:"auto_disabled,omitempty"`
	DisabledAt   time.Time `json:"disabled_at,omitzero"`
	Reason       string    `json:"reason,omitempty"`

	ConsecutiveFailures int       `json:"consecutive_failures,omitempty"`
	LastError           string    `json:"last_error,omitempty"`
	LastConnectedAt     time.Time `json:"last_connected_at,omitzero"`
}

// StateStore persists each server's Record. Implementations must be safe
// for concurrent use.
type StateStore interface {
	// LoadState returns the record for server, or the zero Record.
	LoadState(ctx context.Context, server string) (Record, error)
	// SaveState replaces the record for server.
	SaveState(ctx context.Context, server string, r Record) error
}

// MemoryStore is a StateStore that keeps records in memory.
type MemoryStore struct {
	mu sync.Mutex
	m  map[string]Record
}

var _ StateStore = (*MemoryStore)(nil)

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore { return &MemoryStore{m: map[string]Record{}} }

// LoadState implements StateStore.
func (s *MemoryStore) LoadState(_ context.Context, server string) (Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[server], nil
}

// SaveState implements StateStore.
func (s *MemoryStore) SaveState(_ context.Context, server string, r Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[server] = r
	return nil
}

// FileStore is a StateStore kept in one JSON file, written atomically
// (temporary file, fsync, rename). It lets `switchboard servers disable`
// and auto-disable survive between runs until the persistent store lands.
type FileStore struct {
	path string
	mu   sync.Mutex
}

var _ StateStore = (*FileStore)(nil)

// NewFileStore returns a FileStore at path; the file is created on the first
// save.
func NewFileStore(path string) *FileStore { return &FileStore{path: path} }

func (s *FileStore) read() (map[string]Record, error) {
	m := map[string]Record{}
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading server state: %w", err)
	}
	if len(data) == 0 {
		return m, nil
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("reading server state %s: %w; delete the file to reset it", s.path, err)
	}
	return m, nil
}

// LoadState implements StateStore.
func (s *FileStore) LoadState(_ context.Context, server string) (Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.read()
	if err != nil {
		return Record{}, err
	}
	return m[server], nil
}

// SaveState implements StateStore.
func (s *FileStore) SaveState(_ context.Context, server string, r Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.read()
	if err != nil {
		return err
	}
	if r == (Record{}) {
		delete(m, server)
	} else {
		m[server] = r
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(s.path, append(data, '\n'))
}

func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("saving server state: %w", err)
	}
	f, err := os.CreateTemp(dir, ".state-*")
	if err != nil {
		return fmt.Errorf("saving server state: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("saving server state: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("saving server state: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("saving server state: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("saving server state: %w", err)
	}
	return nil
}
