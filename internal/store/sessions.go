package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// ConsoleSession is one browser session of the web console. The store
// keeps a hash of the session id, never the id itself, so a copy of the
// database holds no usable cookie.
type ConsoleSession struct {
	// ID is the random id the browser's cookie holds.
	ID string
	// CSRF is the session's CSRF token.
	CSRF string
	// Authed marks a session that logged in with a gateway token; Token
	// (the token's name), Fingerprint (the SHA-256 of its secret) and
	// User name it, so that a reload that removes or changes the token
	// ends the session.
	Authed      bool
	Token       string
	Fingerprint string
	User        string
	// Created and Seen are when the session started and was last used,
	// to the microsecond, in UTC.
	Created time.Time
	Seen    time.Time
}

// SessionStore keeps the web console's sessions, so that they survive a
// restart and are shared by every replica on the same database.
// Implementations are safe for concurrent use.
type SessionStore interface {
	// SaveConsoleSession stores a session, replacing one with the same id.
	SaveConsoleSession(ctx context.Context, s ConsoleSession) error
	// ConsoleSession returns the session with the given id, or a
	// *fault.Error of kind NotFound.
	ConsoleSession(ctx context.Context, id string) (ConsoleSession, error)
	// TouchConsoleSession records that a session was used at seen; a
	// session that is no longer stored (logged out or expired on another
	// replica) is a *fault.Error of kind NotFound.
	TouchConsoleSession(ctx context.Context, id string, seen time.Time) error
	// DeleteConsoleSession forgets a session; a missing one is no error.
	DeleteConsoleSession(ctx context.Context, id string) error
	// ExpireConsoleSessions deletes the sessions last seen before
	// seenBefore or created before createdBefore, and reports how many.
	ExpireConsoleSessions(ctx context.Context, seenBefore, createdBefore time.Time) (int64, error)
}

// Compile-time checks that both implementations keep console sessions.
var (
	_ SessionStore = (*SQLite)(nil)
	_ SessionStore = (*Postgres)(nil)
)

// sessionKey is what the store keeps for a session id: its SHA-256.
func sessionKey(id string) string {
	d := sha256.Sum256([]byte(id))
	return hex.EncodeToString(d[:])
}

func noSession() error {
	return fault.New(fault.NotFound, "no console session with that id").
		WithSuggestions("log in again")
}

// SaveConsoleSession implements SessionStore.
func (s *SQLite) SaveConsoleSession(ctx context.Context, cs ConsoleSession) error {
	_, err := s.write.ExecContext(ctx, `INSERT INTO console_sessions
		(id_hash, csrf, authed, token, fingerprint, user_name, created_at, seen_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id_hash) DO UPDATE SET csrf = excluded.csrf, authed = excluded.authed, token = excluded.token,
			fingerprint = excluded.fingerprint, user_name = excluded.user_name, created_at = excluded.created_at, seen_at = excluded.seen_at`,
		sessionKey(cs.ID), cs.CSRF, cs.Authed, cleanText(cs.Token), cs.Fingerprint, cleanText(cs.User),
		cs.Created.UnixMicro(), cs.Seen.UnixMicro())
	if err != nil {
		return fmt.Errorf("saving a console session: %w", err)
	}
	return nil
}

// ConsoleSession implements SessionStore.
func (s *SQLite) ConsoleSession(ctx context.Context, id string) (ConsoleSession, error) {
	cs := ConsoleSession{ID: id}
	var created, seen int64
	err := s.read.QueryRowContext(ctx, `SELECT csrf, authed, token, fingerprint, user_name, created_at, seen_at
		FROM console_sessions WHERE id_hash = ?`, sessionKey(id)).
		Scan(&cs.CSRF, &cs.Authed, &cs.Token, &cs.Fingerprint, &cs.User, &created, &seen)
	if errors.Is(err, sql.ErrNoRows) {
		return ConsoleSession{}, noSession()
	}
	if err != nil {
		return ConsoleSession{}, fmt.Errorf("reading a console session: %w", err)
	}
	cs.Created, cs.Seen = time.UnixMicro(created).UTC(), time.UnixMicro(seen).UTC()
	return cs, nil
}

// TouchConsoleSession implements SessionStore.
func (s *SQLite) TouchConsoleSession(ctx context.Context, id string, seen time.Time) error {
	res, err := s.write.ExecContext(ctx, `UPDATE console_sessions SET seen_at = ? WHERE id_hash = ?`,
		seen.UnixMicro(), sessionKey(id))
	if err != nil {
		return fmt.Errorf("marking a console session used: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return noSession()
	}
	return nil
}

// DeleteConsoleSession implements SessionStore.
func (s *SQLite) DeleteConsoleSession(ctx context.Context, id string) error {
	if _, err := s.write.ExecContext(ctx, `DELETE FROM console_sessions WHERE id_hash = ?`, sessionKey(id)); err != nil {
		return fmt.Errorf("deleting a console session: %w", err)
	}
	return nil
}

// ExpireConsoleSessions implements SessionStore.
func (s *SQLite) ExpireConsoleSessions(ctx context.Context, seenBefore, createdBefore time.Time) (int64, error) {
	res, err := s.write.ExecContext(ctx, `DELETE FROM console_sessions WHERE seen_at < ? OR created_at < ?`,
		seenBefore.UnixMicro(), createdBefore.UnixMicro())
	if err != nil {
		return 0, fmt.Errorf("expiring console sessions: %w", err)
	}
	return res.RowsAffected()
}

// SaveConsoleSession implements SessionStore.
func (p *Postgres) SaveConsoleSession(ctx context.Context, cs ConsoleSession) error {
	_, err := p.pool.Exec(ctx, `INSERT INTO console_sessions
		(id_hash, csrf, authed, token, fingerprint, user_name, created_at, seen_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (id_hash) DO UPDATE SET csrf = excluded.csrf, authed = excluded.authed, token = excluded.token,
			fingerprint = excluded.fingerprint, user_name = excluded.user_name, created_at = excluded.created_at, seen_at = excluded.seen_at`,
		sessionKey(cs.ID), cs.CSRF, cs.Authed, cleanText(cs.Token), cs.Fingerprint, cleanText(cs.User),
		dbTime(cs.Created), dbTime(cs.Seen))
	if err != nil {
		return fmt.Errorf("saving a console session: %w", err)
	}
	return nil
}

// ConsoleSession implements SessionStore.
func (p *Postgres) ConsoleSession(ctx context.Context, id string) (ConsoleSession, error) {
	cs := ConsoleSession{ID: id}
	err := p.pool.QueryRow(ctx, `SELECT csrf, authed, token, fingerprint, user_name, created_at, seen_at
		FROM console_sessions WHERE id_hash = $1`, sessionKey(id)).
		Scan(&cs.CSRF, &cs.Authed, &cs.Token, &cs.Fingerprint, &cs.User, &cs.Created, &cs.Seen)
	if errors.Is(err, pgx.ErrNoRows) {
		return ConsoleSession{}, noSession()
	}
	if err != nil {
		return ConsoleSession{}, fmt.Errorf("reading a console session: %w", err)
	}
	cs.Created, cs.Seen = cs.Created.UTC(), cs.Seen.UTC()
	return cs, nil
}

// TouchConsoleSession implements SessionStore.
func (p *Postgres) TouchConsoleSession(ctx context.Context, id string, seen time.Time) error {
	tag, err := p.pool.Exec(ctx, `UPDATE console_sessions SET seen_at = $1 WHERE id_hash = $2`,
		dbTime(seen), sessionKey(id))
	if err != nil {
		return fmt.Errorf("marking a console session used: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return noSession()
	}
	return nil
}

// DeleteConsoleSession implements SessionStore.
func (p *Postgres) DeleteConsoleSession(ctx context.Context, id string) error {
	if _, err := p.pool.Exec(ctx, `DELETE FROM console_sessions WHERE id_hash = $1`, sessionKey(id)); err != nil {
		return fmt.Errorf("deleting a console session: %w", err)
	}
	return nil
}

// ExpireConsoleSessions implements SessionStore.
func (p *Postgres) ExpireConsoleSessions(ctx context.Context, seenBefore, createdBefore time.Time) (int64, error) {
	tag, err := p.pool.Exec(ctx, `DELETE FROM console_sessions WHERE seen_at < $1 OR created_at < $2`,
		dbTime(seenBefore), dbTime(createdBefore))
	if err != nil {
		return 0, fmt.Errorf("expiring console sessions: %w", err)
	}
	return tag.RowsAffected(), nil
}
