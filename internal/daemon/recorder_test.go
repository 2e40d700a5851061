package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file holds the tests' recorders of what a client reads off the
// wire: wireRecorder, an HTTP client transport that records each message
// of each stream as it came, and recordingTransport, an mcp.Transport
// that shows a test each message its client writes and reads.

// wireRecorder is an HTTP client transport that records each message its
// client reads, with the stream it came on, as it came: before the client
// reads a line, the recorder has recorded it.
type wireRecorder struct {
	mu   sync.Mutex
	seen []wireSeen
	get  bool // a standalone stream is open
}

// wireSeen is one message a client read.
type wireSeen struct {
	// Stream is "GET" (the standalone stream) or "POST method" (the
	// request's own stream, method the request's).
	Stream string
	// Key is the "key" argument of the request whose stream it came on.
	Key  string
	Data []byte
}

// streamKey is the message's stream and its request's key argument, as
// one string ("POST tools/call A").
func (w wireSeen) streamKey() string {
	return strings.TrimSpace(w.Stream + " " + w.Key)
}

func (s *wireRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	stream, key := r.Method, ""
	if r.Method == http.MethodPost && r.Body != nil {
		b, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		var m struct {
			Method string `json:"method"`
			Params struct {
				Arguments struct {
					Key string `json:"key"`
				} `json:"arguments"`
			} `json:"params"`
		}
		_ = json.Unmarshal(b, &m)
		stream, key = "POST "+m.Method, m.Params.Arguments.Key
		r = r.Clone(r.Context())
		r.Body = io.NopCloser(bytes.NewReader(b))
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	if r.Method == http.MethodGet && resp.StatusCode == http.StatusOK {
		s.mu.Lock()
		s.get = true
		s.mu.Unlock()
	}
	pr, pw := io.Pipe()
	body := resp.Body
	resp.Body = pr
	// The client reads what the scanner has read and recorded first.
	go func() {
		sc := bufio.NewScanner(body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			if data, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				s.mu.Lock()
				s.seen = append(s.seen, wireSeen{stream, key, bytes.TrimSpace(slices.Clone(data))})
				s.mu.Unlock()
			}
			if _, err := pw.Write(append(slices.Clone(line), '\n')); err != nil {
				break
			}
		}
		body.Close()
		pw.CloseWithError(sc.Err())
	}()
	return resp, nil
}

// requests returns what was read of the requests of method: the stream
// each came on (with its request's key) and its params as they came (ids
// differ: the gateway's requests carry its own).
func (s *wireRecorder) requests(method string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, w := range s.seen {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(w.Data, &m) == nil && m.Method == method && m.ID != nil {
			out = append(out, w.streamKey()+" "+string(m.Params))
		}
	}
	return out
}

// notifications returns what was read of the notifications of method:
// the stream each came on and its params as they came ("-" where it had
// none).
func (s *wireRecorder) notifications(method string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, w := range s.seen {
		var m map[string]json.RawMessage
		if json.Unmarshal(w.Data, &m) != nil || m["id"] != nil || string(m["method"]) != `"`+method+`"` {
			continue
		}
		params := "-"
		if p, ok := m["params"]; ok {
			params = string(p)
		}
		out = append(out, w.streamKey()+" "+params)
	}
	return out
}

// logRead is a log message a client read, and its data.
type logRead struct {
	wireSeen
	data any
}

// logMessages returns the log messages read, in order.
func (s *wireRecorder) logMessages() []logRead {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []logRead
	for _, w := range s.seen {
		var m struct {
			Method string `json:"method"`
			Params struct {
				Data any `json:"data"`
			} `json:"params"`
		}
		if json.Unmarshal(w.Data, &m) == nil && m.Method == "notifications/message" {
			out = append(out, logRead{w, m.Params.Data})
		}
	}
	return out
}

// logs returns the streams (with their requests' keys) the log messages
// whose data is data came on, sorted.
func (s *wireRecorder) logs(data string) []string {
	var out []string
	for _, m := range s.logMessages() {
		if m.data == data {
			out = append(out, m.streamKey())
		}
	}
	slices.Sort(out)
	return out
}

// logsWith returns each log message read whose data has prefix, as
// "stream data" (without the request's key), in order.
func (s *wireRecorder) logsWith(prefix string) []string {
	var out []string
	for _, m := range s.logMessages() {
		if data := fmt.Sprint(m.data); strings.HasPrefix(data, prefix) {
			out = append(out, m.Stream+" "+data)
		}
	}
	return out
}

func (s *wireRecorder) standaloneOpen() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.get
}

// recordingTransport is an mcp.Transport that calls wrote with each
// message its client writes and read with each it reads, if they are not
// nil.
type recordingTransport struct {
	mcp.Transport
	wrote, read func(jsonrpc.Message)
}

func (t recordingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return recordingConn{c, t}, nil
}

type recordingConn struct {
	mcp.Connection
	t recordingTransport
}

func (c recordingConn) Write(ctx context.Context, m jsonrpc.Message) error {
	if c.t.wrote != nil {
		c.t.wrote(m)
	}
	return c.Connection.Write(ctx, m)
}

func (c recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err == nil && c.t.read != nil {
		c.t.read(m)
	}
	return m, err
}
