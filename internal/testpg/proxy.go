package testpg

import (
	"net"
	"net/url"
	"sync"
	"testing"
)

// Proxy stands between a test's clients and its PostgreSQL server, so
// that the test can cut the database off (as a restart or a network
// failure does), or make it stop answering (as a hung server or a
// network that drops packets does), and bring it back.
type Proxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	down  bool
	hung  bool
	flow  *sync.Cond // signalled when hung is cleared
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// NewProxy starts a proxy to the server dsn (a postgres:// URL) names,
// stopped when t ends, and returns it and a DSN that connects through it.
func NewProxy(t testing.TB, dsn string) (*Proxy, string) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("the proxy needs a postgres:// URL DSN (%s): %v", EnvDSN, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: u.Host, conns: map[net.Conn]struct{}{}}
	p.flow = sync.NewCond(&p.mu)
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.Cut()
		p.wg.Wait()
	})
	u.Host = ln.Addr().String()
	return p, u.String()
}

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.down {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.wg.Add(1)
		p.conns[c] = struct{}{}
		p.mu.Unlock()
		go p.pipe(c)
	}
}

func (p *Proxy) pipe(c net.Conn) {
	defer p.wg.Done()
	defer func() {
		p.mu.Lock()
		delete(p.conns, c)
		p.mu.Unlock()
		c.Close()
	}()
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer s.Close()
	p.mu.Lock()
	p.conns[s] = struct{}{}
	p.mu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.copy(s, c)
		s.Close()
	}()
	p.copy(c, s)
	c.Close()
	<-done
	p.mu.Lock()
	delete(p.conns, s)
	p.mu.Unlock()
}

// copy forwards what src sends to dst, holding it while the proxy hangs.
func (p *Proxy) copy(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			for p.hung {
				p.flow.Wait()
			}
			p.mu.Unlock()
			if _, err := dst.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Cut closes every connection through the proxy and refuses new ones.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down, p.hung = true, false
	p.flow.Broadcast()
	for c := range p.conns {
		c.Close()
	}
}

// Hang keeps the connections open, and accepts new ones, but forwards
// nothing until Restore: the database stops answering.
func (p *Proxy) Hang() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hung = true
}

// Restore accepts connections again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down, p.hung = false, false
	p.flow.Broadcast()
}
