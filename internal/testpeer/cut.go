package testpeer

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// CutTransport is a streamable-HTTP client's transport (an
// http.RoundTripper, over http.DefaultTransport) whose connection breaks
// once: the event stream answering the first POST whose body names Method
// ("tools/call", say) ends after its first event, its connection closed.
// It notes the Last-Event-ID of each GET, so that a test can check that
// the client resumed; [CutTransport.Proxy] puts it in front of a server for
// a client that is not Go.
type CutTransport struct {
	Method string
	// Standalone cuts, instead, the event stream answering the client's
	// first GET (its standalone stream), after its first event that
	// carries an id.
	Standalone bool

	mu      sync.Mutex
	cut     bool
	resumed []string
}

// RoundTrip sends req, cutting the first answer to Method after its first
// event.
func (c *CutTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var match bool
	if req.Method == http.MethodPost && req.Body != nil {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		match = !c.Standalone && bytes.Contains(body, []byte(`"method":"`+c.Method+`"`))
	}
	if c.Standalone && req.Method == http.MethodGet && req.Header.Get("Last-Event-ID") == "" {
		c.mu.Lock()
		match = !c.cut
		c.mu.Unlock()
	}
	if id := req.Header.Get("Last-Event-ID"); req.Method == http.MethodGet && id != "" {
		c.mu.Lock()
		c.resumed = append(c.resumed, id)
		c.mu.Unlock()
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || !match || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp, err
	}
	c.mu.Lock()
	first := !c.cut
	c.cut = true
	c.mu.Unlock()
	if first {
		resp.Body = &cutBody{r: bufio.NewReader(resp.Body), c: resp.Body, needID: c.Standalone}
	}
	return resp, nil
}

// Resumed reports whether a stream was cut, and the Last-Event-ID of each
// GET since.
func (c *CutTransport) Resumed() (cut bool, lastEventIDs []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cut, slices.Clone(c.resumed)
}

// Proxy serves, for the length of the test, an HTTP proxy to the server at
// base through c: the cut answer's connection breaks (the handler aborts)
// after the first event. It returns the proxy's URL.
func (c *CutTransport) Proxy(t testing.TB, base string) string {
	t.Helper()
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		out, err := http.NewRequestWithContext(req.Context(), req.Method, base+req.URL.RequestURI(), req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		out.Header = req.Header.Clone()
		resp, err := c.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				_, _ = w.Write(buf[:n])
				if f, ok := w.(http.Flusher); ok {
					f.Flush()
				}
			}
			if err != nil {
				break
			}
		}
		if _, ok := resp.Body.(*cutBody); ok {
			panic(http.ErrAbortHandler) // the connection breaks
		}
	}))
	t.Cleanup(proxy.Close)
	return proxy.URL
}

// cutBody reads the first event of a stream (with needID, the first that
// carries an id, and what came before it), then closes the connection.
type cutBody struct {
	r      *bufio.Reader
	c      io.Closer
	needID bool
	rest   []byte
	read   bool
}

func (b *cutBody) Read(p []byte) (int, error) {
	for !b.read {
		id := false
		for {
			line, err := b.r.ReadBytes('\n')
			b.rest = append(b.rest, line...)
			id = id || bytes.HasPrefix(line, []byte("id:"))
			if err != nil {
				b.read = true
				break
			}
			if string(line) == "\n" {
				b.read = id || !b.needID
				break
			}
		}
	}
	if b.c != nil {
		_ = b.c.Close()
		b.c = nil
	}
	if len(b.rest) == 0 {
		return 0, io.EOF
	}
	n := copy(p, b.rest)
	b.rest = b.rest[n:]
	return n, nil
}

func (b *cutBody) Close() error {
	if b.c == nil {
		return nil
	}
	return b.c.Close()
}
