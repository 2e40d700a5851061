package control

import (
	"net"

	"golang.org/x/sys/unix"
)

// peerCred reads the credentials of the process at the other end of a
// unix socket connection (SO_PEERCRED: as they were when it connected).
func peerCred(c net.Conn) (peer, bool) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return peer{}, false
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return peer{}, false
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil || credErr != nil {
		return peer{}, false
	}
	return peer{uid: int(cred.Uid), pid: int(cred.Pid)}, true
}
