//go:build !linux

package control

import "net"

// peerCred reports false: on this platform the control socket's peer is
// not read from the kernel, and PeerActor names the daemon's own user.
func peerCred(net.Conn) (peer, bool) { return peer{}, false }
