package upstream

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// A failed connection is explained here: what happened, in words a person
// can act on ("connection refused by 127.0.0.1:1", "HTTP 501 Not
// Implemented from ...", "executable uvx not found on PATH", "exited with
// code 3 before answering initialize"), and what to try. The explanation
// becomes the message of the *fault.Error that Dial returns, which the
// supervisor keeps as the server's last error; the SDK's own error stays
// its cause.

// explanation is what went wrong and what to try.
type explanation struct {
	msg   string
	hints []string
}

// field names where a server's setting is made, for a hint: its key in
// the configuration ("servers.github.url"), or the flag of a command
// line's ad hoc server ("the --url").
func field(srv config.Server, key string) string {
	if srv.Name == config.AdHocName {
		switch key {
		case "url":
			return "the --url"
		case "command", "args":
			return "the --stdio command"
		}
	}
	return "servers." + srv.Name + "." + key
}

// shownURL is srv's URL as it may be shown: without a password or
// secret-looking query parameters.
func shownURL(srv config.Server) string {
	return redactedServer(srv).URL
}

// redactedServer is srv with its secrets hidden (config.Config.Redacted's rules).
func redactedServer(srv config.Server) config.Server {
	return (&config.Config{Servers: []config.Server{srv}}).Redacted().Servers[0]
}

// hostOf returns host:port of a URL (with the scheme's default port), or
// the URL itself when it does not parse.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	if u.Port() != "" {
		return u.Host
	}
	switch u.Scheme {
	case "https", "wss":
		return net.JoinHostPort(u.Hostname(), "443")
	default:
		return net.JoinHostPort(u.Hostname(), "80")
	}
}

// explainNet explains a failure to reach a network server: a refused or
// reset connection, an unknown host, a TLS handshake that failed. ok is
// false when err is none of these.
func explainNet(srv config.Server, err error) (explanation, bool) {
	host := hostOf(srv.URL)
	where := shownURL(srv)
	url := field(srv, "url")
	var dnsErr *net.DNSError
	var recErr tls.RecordHeaderError
	var unknownCA x509.UnknownAuthorityError
	var badHost x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	isRec := errors.As(err, &recErr)
	switch {
	case isRec && string(recErr.RecordHeader[:]) == "HTTP/",
		strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"): // net/http's words for it
		return explanation{fmt.Sprintf("TLS handshake failed: %s answered plain HTTP (%s)", host, where),
			[]string{fmt.Sprintf("use http:// instead of https:// in %s", url)}}, true
	case isRec:
		return explanation{fmt.Sprintf("TLS handshake failed: %s did not answer with TLS (%s)", host, where),
			[]string{fmt.Sprintf("check the scheme and port in %s: is the server serving TLS there?", url)}}, true
	case errors.As(err, &unknownCA), errors.As(err, &badHost), errors.As(err, &invalid), errors.As(err, &verify):
		why := err.Error()
		if verify != nil && verify.Err != nil {
			why = verify.Err.Error()
		}
		return explanation{fmt.Sprintf("TLS handshake failed: the certificate of %s is not trusted: %s", host, lastPart(why)),
			[]string{"if the server uses a private certificate authority, add it to the system's trust store (or point SSL_CERT_FILE at it)",
				fmt.Sprintf("check that the host name in %s is the one its certificate names", url)}}, true
	case errors.As(err, &dnsErr):
		if dnsErr.IsNotFound {
			return explanation{fmt.Sprintf("no such host %q (%s)", dnsErr.Name, where),
				[]string{fmt.Sprintf("check the host name in %s (a typo, or a name only a VPN resolves?)", url)}}, true
		}
		return explanation{fmt.Sprintf("looking up host %q failed: %s (%s)", dnsErr.Name, dnsErr.Err, where),
			[]string{"check the network connection and DNS settings"}}, true
	case errors.Is(err, syscall.ECONNREFUSED):
		return explanation{fmt.Sprintf("connection refused by %s (%s)", host, where),
			[]string{"start the server, or check the host and port in " + url}}, true
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return explanation{fmt.Sprintf("connection reset by %s (%s)", host, where),
			[]string{"the server, or a proxy in front of it, dropped the connection: check its logs"}}, true
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return explanation{fmt.Sprintf("%s is unreachable: no route to it (%s)", host, where),
			[]string{"check the network connection (and a VPN the server needs)"}}, true
	}
	var op *net.OpError
	if errors.As(err, &op) {
		if op.Timeout() {
			return explanation{fmt.Sprintf("no answer from %s: %s timed out (%s)", host, op.Op, where),
				[]string{"check that the server is up and that no firewall drops the connection"}}, true
		}
		return explanation{fmt.Sprintf("cannot reach %s: %s (%s)", host, op.Err, where),
			[]string{"check the host and port in " + url}}, true
	}
	return explanation{}, false
}

// lastPart is the text after an error's last "x509: " or "tls: " prefix.
func lastPart(s string) string {
	for _, p := range []string{"x509: ", "tls: "} {
		if i := strings.LastIndex(s, p); i >= 0 {
			return s[i+len(p):]
		}
	}
	return s
}

// httpFailure is an HTTP exchange with a network server that went wrong:
// the request failed, the server answered with an error status, or it
// answered with something that is not MCP.
type httpFailure struct {
	method      string
	status      int    // 0 when the request failed
	contentType string // of a 2xx answer that is not MCP
	body        string // the start of an error answer's body: the server's words
	err         error  // why the request failed
	stream      bool   // the request opened an SSE event stream
}

// wireWatch follows the HTTP exchanges of one connection: it keeps the
// latest failure (for Dial's error) and reports a 404 for the session (a
// server that restarted or ended the session).
type wireWatch struct {
	mu   sync.Mutex
	last *httpFailure
	// gone, when set, is called with the session ID the server said it
	// no longer has, and how it said so ("HTTP 404").
	gone func(session, how string)
}

func (w *wireWatch) failed(f *httpFailure) {
	w.mu.Lock()
	w.last = f
	w.mu.Unlock()
}

// ok records an exchange that went well: earlier failures (a server/discover
// that an older server refuses, say) are no longer the story.
func (w *wireWatch) ok() {
	w.mu.Lock()
	w.last = nil
	w.mu.Unlock()
}

func (w *wireWatch) lastFailure() *httpFailure {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

func (w *wireWatch) setGone(f func(session, how string)) {
	w.mu.Lock()
	w.gone = f
	w.mu.Unlock()
}

// sessionGone reports that the server no longer has session.
func (w *wireWatch) sessionGone(session, how string) {
	w.mu.Lock()
	f := w.gone
	w.mu.Unlock()
	if f != nil {
		f(session, how)
	}
}

// maxBodyWords is how much of an error answer's body is kept.
const maxBodyWords = 512

// observe notes what an exchange says about the connection. It may
// replace resp.Body (to read the start of an error answer); the caller
// returns resp as observe leaves it.
func (w *wireWatch) observe(req *http.Request, resp *http.Response, err error, streamable bool) {
	if w == nil {
		return
	}
	if err != nil {
		if req.Context().Err() == nil {
			w.failed(&httpFailure{method: req.Method, err: err})
		}
		return
	}
	session := req.Header.Get("Mcp-Session-Id")
	ct := resp.Header.Get("Content-Type")
	var words string
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		head, _ := io.ReadAll(io.LimitReader(resp.Body, maxBodyWords))
		resp.Body = &readCloser{Reader: io.MultiReader(bytes.NewReader(head), resp.Body), Closer: resp.Body}
		words = bodyWords(ct, head)
	}
	switch {
	case req.Method == http.MethodDelete:
		return
	case streamable && session != "" && (resp.StatusCode == http.StatusNotFound ||
		resp.StatusCode == http.StatusBadRequest && strings.Contains(strings.ToLower(words), "session")):
		// The MCP specification: a server answers 404 to a request for a
		// session it no longer has, and the client must start a new one.
		// Servers built on the TypeScript SDK's example (server-everything
		// among them) answer 400 "No valid session ID provided" instead.
		// Either way the request was not processed.
		if n, ok := req.Context().Value(deliveryKey{}).(*deliveryNote); ok {
			n.refused.Store(true)
		}
		how := fmt.Sprintf("HTTP %d", resp.StatusCode)
		if words != "" && resp.StatusCode != http.StatusNotFound {
			how += ": " + words
		}
		w.sessionGone(session, how)
		return
	case streamable && req.Method == http.MethodGet:
		// The standalone event stream is optional (405 is normal); its
		// failure is not the connection's.
		return
	}
	wantStream := req.Method == http.MethodGet
	switch {
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		w.failed(&httpFailure{method: req.Method, status: resp.StatusCode, body: words, stream: wantStream})
	case resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent:
		w.ok()
	case wantStream && !strings.HasPrefix(ct, "text/event-stream"),
		!wantStream && !strings.HasPrefix(ct, "application/json") && !strings.HasPrefix(ct, "text/event-stream"):
		w.failed(&httpFailure{method: req.Method, status: resp.StatusCode, contentType: ct, stream: wantStream})
	default:
		w.ok()
	}
}

// bodyWords is what an error answer says, on one line: a JSON-RPC error's
// message, or plain text; nothing for HTML or other markup.
func bodyWords(ct string, b []byte) string {
	var rpc struct {
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	var s string
	switch {
	case json.Unmarshal(b, &rpc) == nil && rpc.Error != nil:
		s = rpc.Error.Message
	case strings.HasPrefix(ct, "text/plain") || ct == "":
		s = string(b)
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// explainHTTP explains an HTTP exchange that went wrong while connecting.
func explainHTTP(srv config.Server, f *httpFailure) explanation {
	if f.status == 0 {
		if e, ok := explainNet(srv, f.err); ok {
			return e
		}
		return explanation{msg: fmt.Sprintf("%s %s failed: %v", f.method, shownURL(srv), f.err)}
	}
	where := shownURL(srv)
	url := field(srv, "url")
	sse := srv.Transport == config.TransportSSE
	if f.status >= 200 && f.status <= 299 {
		ct := f.contentType
		if ct == "" {
			ct = "none"
		}
		if f.stream {
			e := explanation{msg: fmt.Sprintf("%s is not an event stream (Content-Type %s)", where, ct)}
			e.hints = append(e.hints, fmt.Sprintf("check %s: an SSE server's endpoint usually ends in /sse", url))
			if sse {
				e.hints = append(e.hints, "if the server speaks streamable HTTP (one /mcp endpoint), set transport: http")
			}
			return e
		}
		e := explanation{msg: fmt.Sprintf("%s answered with Content-Type %s, not MCP (JSON or an event stream)", where, ct),
			hints: []string{fmt.Sprintf("check the path in %s: a streamable-HTTP server usually answers at /mcp", url)}}
		return e
	}
	msg := fmt.Sprintf("HTTP %d %s from %s", f.status, http.StatusText(f.status), where)
	if f.body != "" {
		msg += ": " + f.body
	}
	e := explanation{msg: msg}
	switch {
	case f.status == http.StatusNotFound:
		e.hints = []string{fmt.Sprintf("check the path in %s: streamable-HTTP servers usually answer at /mcp, SSE servers at /sse", url)}
	case f.status == http.StatusMethodNotAllowed || f.status == http.StatusNotImplemented:
		if sse || f.stream {
			e.hints = []string{"the server opens no event stream at this URL; if it speaks streamable HTTP (one /mcp endpoint), set transport: http"}
		} else {
			e.hints = []string{fmt.Sprintf("the server takes no MCP requests by POST at this URL; if it is an older SSE server, set transport: sse and its /sse URL in %s", url)}
		}
	case f.status == http.StatusUnauthorized || f.status == http.StatusForbidden:
		e.hints = []string{fmt.Sprintf("the server wants credentials: set them in %s (e.g. Authorization: Bearer ${TOKEN})", field(srv, "headers"))}
	case f.status == http.StatusBadRequest && strings.Contains(strings.ToLower(f.body), "https"):
		e.hints = []string{fmt.Sprintf("use https:// instead of http:// in %s", url)}
	case f.status == http.StatusTooManyRequests:
		e.hints = []string{"the server is limiting requests; Switchboard retries later"}
	case f.status >= 500:
		e.hints = []string{"the server failed to answer; check its logs"}
	default:
		e.hints = []string{fmt.Sprintf("check that %s is the server's MCP endpoint and that its transport (%s) is right", url, srv.Transport)}
	}
	return e
}

// execNotFound is a stdio server's command that is not on the PATH.
type execNotFound struct {
	command string
	path    string // the PATH searched
}

func (e *execNotFound) Error() string {
	return fmt.Sprintf("executable %s not found on PATH", e.command)
}

// Where to get the commands servers are most often run with.
const (
	installNode   = "install Node.js, which provides node, npm and npx: https://nodejs.org/"
	installUV     = "install uv, which provides uv and uvx: https://docs.astral.sh/uv/getting-started/installation/"
	installPython = "install Python 3: https://www.python.org/downloads/"
	installBun    = "install Bun: https://bun.sh/"
)

// installHints maps a command to where to get it.
var installHints = map[string]string{
	"npx": installNode, "npm": installNode, "node": installNode,
	"uvx": installUV, "uv": installUV,
	"python3": installPython, "python": installPython,
	"bunx": installBun, "bun": installBun,
	"deno":   "install Deno: https://deno.com/",
	"docker": "install Docker: https://docs.docker.com/get-docker/",
}

// explainStart explains why a stdio server's command could not be
// started; ok is false when err is no such failure.
func explainStart(srv config.Server, err error) (explanation, bool) {
	cmd := field(srv, "command")
	var nf *execNotFound
	if errors.As(err, &nf) {
		e := explanation{msg: nf.Error()}
		if h := installHints[filepath.Base(nf.command)]; h != "" {
			e.hints = append(e.hints, h)
		}
		e.hints = append(e.hints, fmt.Sprintf("if it is installed, give its absolute path in %s", cmd))
		return e, true
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return explanation{}, false
	}
	switch {
	case srv.Cwd != "" && !isDir(srv.Cwd):
		// A child that cannot change to its directory fails its exec
		// with ENOENT, naming the program: look before blaming it.
		return explanation{fmt.Sprintf("working directory %s does not exist", srv.Cwd),
			[]string{"create it, or fix " + field(srv, "cwd")}}, true
	case errors.Is(pe.Err, fs.ErrNotExist):
		return explanation{fmt.Sprintf("executable %s does not exist", srv.Command),
			[]string{"check the path in " + cmd}}, true
	case errors.Is(pe.Err, fs.ErrPermission):
		return explanation{fmt.Sprintf("%s is not executable (permission denied)", srv.Command),
			[]string{"make it executable (chmod +x), or run it through its interpreter"}}, true
	case errors.Is(pe.Err, syscall.ENOEXEC):
		return explanation{fmt.Sprintf("%s is not a program this system can run (exec format error)", srv.Command),
			[]string{"a script needs a #! line naming its interpreter, or run it through the interpreter"}}, true
	}
	return explanation{}, false
}

// lookPath finds a stdio server's command on the PATH its child gets
// (its env's PATH, or Switchboard's own): a relative result (a PATH entry
// such as ".") is refused, as exec.LookPath does.
func lookPath(command string, env []string) (string, error) {
	pathList := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathList = v
		}
	}
	for _, dir := range filepath.SplitList(pathList) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, command)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", &execNotFound{command: command, path: pathList}
}

// explainExit explains a stdio server that ended before the handshake
// completed: what its stderr says, first (a table cuts a long message),
// and its exit status.
func explainExit(srv config.Server, ps *os.ProcessState, stderr string) explanation {
	var e explanation
	how := describeExit(ps) + " before answering initialize"
	if s := stderrSummary(stderr); s != "" {
		e.msg = s + " (" + how + ")"
		if strings.Contains(s, "E404") || strings.Contains(s, "404 Not Found") {
			e.hints = append(e.hints, fmt.Sprintf("the package is not in the registry: check its name in %s", field(srv, "args")))
		}
	} else {
		e.msg = how + "; it wrote nothing to stderr"
	}
	e.hints = append(e.hints, "run the command by hand to see what it does: "+commandLine(srv))
	return e
}

// describeExit says how a process ended: "exited with code 3", "was
// killed by signal killed".
func describeExit(ps *os.ProcessState) string {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("was killed by signal %s", ws.Signal())
	}
	return fmt.Sprintf("exited with code %d", ps.ExitCode())
}

// commandLine is srv's command and arguments as they may be shown (secret
// arguments redacted), quoted for a shell where needed.
func commandLine(srv config.Server) string {
	r := redactedServer(srv)
	parts := make([]string, 0, 1+len(r.Args))
	for _, a := range append([]string{r.Command}, r.Args...) {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// deliveryKey is the context key of a call's *deliveryNote.
type deliveryKey struct{}

// deliveryNote records, for one call, that the server refused its
// request without processing it.
type deliveryNote struct{ refused atomic.Bool }

// notDelivered marks an error of a request the server never processed.
type notDelivered struct{ err error }

func (e *notDelivered) Error() string { return e.err.Error() }
func (e *notDelivered) Unwrap() error { return e.err }

// NotDelivered reports whether err is the failure of a request that the
// server never processed: the connection could not be made (refused, no
// such host), or the server said it no longer has the session (HTTP 404,
// or 400 naming the session), as a streamable-HTTP server that restarted
// does. Sending such a request again, on a new session, is safe whatever
// the tool does.
func NotDelivered(err error) bool {
	var nd *notDelivered
	return errors.As(err, &nd)
}

// isDialError reports whether err is a failure to open a connection, so
// that nothing was sent.
func isDialError(err error) bool {
	var op *net.OpError
	var dnsErr *net.DNSError
	return (errors.As(err, &op) && op.Op == "dial") || errors.As(err, &dnsErr)
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
