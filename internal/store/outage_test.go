package store_test

import (
	"context"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// dbProxy stands between a store and its PostgreSQL server, so that a
// test can cut the database off (as a restart or a network failure does)
// and bring it back.
type dbProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	down  bool
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// newDBProxy starts a proxy to the server dsn names and returns it and a
// DSN that connects through it.
func newDBProxy(t *testing.T, dsn string) (*dbProxy, string) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("the test needs a postgres:// URL, got %q (%v)", dsn, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &dbProxy{ln: ln, target: u.Host, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.cut()
		p.wg.Wait()
	})
	u.Host = ln.Addr().String()
	return p, u.String()
}

func (p *dbProxy) serve() {
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

func (p *dbProxy) pipe(c net.Conn) {
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
		io.Copy(s, c)
		s.Close()
	}()
	io.Copy(c, s)
	c.Close()
	<-done
	p.mu.Lock()
	delete(p.conns, s)
	p.mu.Unlock()
}

// cut closes every connection through the proxy and refuses new ones.
func (p *dbProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
}

// restore accepts connections again.
func (p *dbProxy) restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}

// TestFlightSurvivesDatabaseOutage: PostgreSQL is cut off from two
// replicas, each running a call, for longer than either's lease, so that
// both leases have expired when it is back. The replica that looks first
// must not take the call of the other, which is alive and renews its
// lease once it can: each judges the other only once it has itself been
// in contact for longer than the other's lease.
func TestFlightSurvivesDatabaseOutage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	direct := openPostgresTest(t)
	proxy, via := newDBProxy(t, testDB(t, postgresTestDSN))
	open := func(lease time.Duration) *store.Recorder {
		s, err := store.OpenPostgres(ctx, via, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		r := store.NewRecorder(s, store.RecorderOptions{Keep: -1, Lease: lease})
		runRecorder(t, r)
		return r
	}
	a, b := open(3*time.Second), open(900*time.Millisecond)
	eventually(t, "both replicas register", func() bool { return a.Registered() && b.Registered() })
	calls := []store.CallRecord{testCall("outlivedA", 0), testCall("outlivedB", 1)}
	ends := []func(){a.Begin(calls[0]), b.Begin(calls[1])}
	eventually(t, "the replicas note their calls in flight", func() bool { return a.FlightUnwritten() == 0 && b.FlightUnwritten() == 0 })

	proxy.cut()
	count := func(q string) int {
		n, err := store.Count(ctx, direct, q)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	eventually(t, "both leases expire", func() bool { return count("SELECT count(*) FROM replicas WHERE expires_at < now()") == 2 })
	proxy.restore()
	eventually(t, "both replicas renew their leases", func() bool {
		return count("SELECT count(*) FROM replicas WHERE expires_at > now()") == 2
	})
	for _, c := range calls {
		if got, err := direct.Call(ctx, c.ID); err == nil {
			t.Errorf("the call %s of a live replica: got %+v, want no record while it runs", c.ID, got)
		}
	}
	if n := count("SELECT count(*) FROM calls_in_flight"); n != 2 {
		t.Errorf("calls in flight: got %d, want both", n)
	}
	for i, r := range []*store.Recorder{a, b} {
		if err := r.Commit(ctx, calls[i]); err != nil {
			t.Fatal(err)
		}
		ends[i]()
		if c, err := direct.Call(ctx, calls[i].ID); err != nil || c.Status != "success" {
			t.Errorf("the call %s once it ended: got %+v (%v), want its success record", calls[i].ID, c, err)
		}
	}
}
