package config

// SessionMode is whose upstream session a gateway client's requests to a
// server use (the server's session: key).
type SessionMode string

// The session modes.
const (
	// SessionShared is one upstream session for every caller (the default):
	// right for stateless servers.
	SessionShared SessionMode = "shared"
	// SessionPerClient is one upstream session per gateway client session,
	// opened on its first use and closed when the client's session ends:
	// browser automation, REPLs, servers keyed by roots.
	SessionPerClient SessionMode = "per_client"
	// SessionPerUser is one upstream session per gateway user, shared by
	// that user's client sessions: per-user state or credentials.
	SessionPerUser SessionMode = "per_user"
)

// DefaultMaxUpstreamSessions is max_sessions when unset: the most per-client or
// per-user upstream sessions of one server open at once.
const DefaultMaxUpstreamSessions = 16

// Owned reports whether the server's sessions belong to a client or a
// user rather than being shared.
func (m SessionMode) Owned() bool { return m == SessionPerClient || m == SessionPerUser }

// serverSession checks a server's max_sessions: against its session:
// (readFields read both; the schema has checked their enum and bounds).
func (r *resolver) serverSession(s *rawServer, srv *Server) {
	if f := s.field("max_sessions"); f != nil && s.typed.MaxSessions != nil {
		if !srv.Session.Owned() {
			r.ps.warn(f.val.pos, s.path(f.key), "max_sessions has no effect on a shared session", "set session: per_client or per_user, or remove max_sessions")
		}
	}
}
