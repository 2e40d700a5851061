package upstream

import (
	"context"
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
