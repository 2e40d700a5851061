package config

import (
	"net"
	"net/url"
	"path/filepath"
	"strings"
)

// A client's file may hold Switchboard's own entry (written by `switchboard
// client connect`, or by hand): the gateway's URL, or `switchboard serve
// --stdio`. Read as a server, it would make Switchboard connect to itself
// and list its own tools under its own name, again and again. In a
// client's file such an entry is skipped, with a warning that says why.

// OwnEntryName is the name `switchboard client connect` gives its entry
// unless told otherwise (clients.DefaultName).
const OwnEntryName = "switchboard"

// isOwnGateway reports whether srv is Switchboard's own gateway: the
// command `switchboard serve ...`, or a loopback URL at /mcp, /mcp/VIEW or
// /sse that is on the gateway's port (listen, else the default) or is
// named as client connect names its entry (OwnEntryName), whatever the
// port: a gateway started with serve --listen on another port is still
// recognised when the file is read without that flag.
func isOwnGateway(srv Server, listen string) bool {
	if srv.Command != "" {
		base := strings.TrimSuffix(strings.ToLower(filepath.Base(srv.Command)), ".exe")
		return base == "switchboard" && len(srv.Args) > 0 && srv.Args[0] == "serve"
	}
	if srv.URL == "" {
		return false
	}
	u, err := url.Parse(srv.URL)
	if err != nil || u.Scheme != "http" {
		return false
	}
	if listen == "" {
		listen = DefaultListen
	}
	_, port, err := net.SplitHostPort(listen)
	if srv.Name != OwnEntryName && (err != nil || u.Port() != port) {
		return false
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); !(host == "localhost" || ip != nil && ip.IsLoopback()) {
		return false
	}
	p := strings.TrimSuffix(u.Path, "/")
	return p == "/mcp" || strings.HasPrefix(p, "/mcp/") || p == "/sse"
}
