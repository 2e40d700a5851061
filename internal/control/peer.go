package control

import (
	"context"
	"net"
	"os/user"
	"strconv"

	"github.com/switchboard-mcp/switchboard/internal/audit"
)

// This file says who is at the other end of a control connection, for
// the audit trail: the kernel's word for the connecting process where the
// platform gives it (Linux: SO_PEERCRED), else the daemon's own user.

// peer is a connecting process's credentials.
type peer struct {
	uid, pid int
}

// ConnContext is the control socket's http.Server ConnContext: it puts
// the connection's peer (PeerActor) in the context of every request that
// comes on it (audit.WithActor), so that what those requests do is
// recorded as done by that process's user.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	return audit.WithActor(ctx, PeerActor(c))
}

// PeerActor returns who is at the other end of a control connection, via
// control. On Linux that is the connecting process as the kernel saw it
// when it connected: its user id, that user's name, and its process id.
// Elsewhere, or when the credentials cannot be read, it is the daemon's
// own OS user, which the socket's mode (0600, in the state directory)
// restricts it to, besides root.
func PeerActor(c net.Conn) audit.Actor {
	a := audit.Actor{Via: audit.ViaControl}
	if p, ok := peerCred(c); ok {
		a.UID, a.PID = strconv.Itoa(p.uid), p.pid
		if u, err := user.LookupId(a.UID); err == nil {
			a.User = u.Username
		}
		return a
	}
	if u, err := user.Current(); err == nil {
		a.User = u.Username
	}
	return a
}
