package store_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strings"
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

// TestRecorderKeepsRecordsThroughDatabaseOutage: PostgreSQL is cut off
// (restarted, unreachable) while calls end. Their Commits give up waiting
// after CommitWait, as before, but the records stay queued and are
// written once the database is back, rather than being dropped after a
// quarter of a second of retries.
func TestRecorderKeepsRecordsThroughDatabaseOutage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	direct := openPostgresTest(t)
	dsn := testDB(t, postgresTestDSN) // the database direct opened
	proxy, via := newDBProxy(t, dsn)
	s, err := store.OpenPostgres(ctx, via, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var logs syncBuffer
	r := store.NewRecorder(s, store.RecorderOptions{Keep: -1, CommitWait: 200 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	stop := runRecorder(t, r)
	defer func() { t.Logf("the recorder logged:\n%s", logs.String()) }()
	if err := r.Commit(ctx, testCall("before", 0)); err != nil {
		t.Fatal(err)
	}

	proxy.cut()
	err = r.Commit(ctx, testCall("during", 1))
	if err == nil || !strings.Contains(err.Error(), "stays queued") {
		t.Fatalf("Commit while the database is cut off: got %v, want it to say the record stays queued", err)
	}
	// Longer than the retries of a batch that fails for another reason
	// (or until the record is dropped, as it was).
	eventually(t, "the database is down for a second", func() bool {
		since, _, _ := r.Unavailable()
		return (!since.IsZero() && time.Since(since) > time.Second) || strings.Contains(logs.String(), "records dropped")
	})
	if since, waiting, err := r.Unavailable(); since.IsZero() || waiting != 1 || err == nil {
		t.Errorf("Unavailable while the database is cut off: got since %v, %d records waiting, error %v; want a time, 1 and the error", since, waiting, err)
	}
	proxy.restore()
	fctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := r.Flush(fctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		t.Logf("Flush: %v", err)
	}
	if c, err := direct.Call(ctx, "during"); err != nil || c.Status != "success" {
		t.Errorf("the call that ended while the database was cut off: got %+v (%v), want its record", c, err)
	}
	if since, _, _ := r.Unavailable(); !since.IsZero() {
		t.Errorf("Unavailable once the database is back: got since %v, want zero", since)
	}
	if n := r.WriteFailures(); n != 0 {
		t.Errorf("write failures: got %d, want none (the records waited for the database)", n)
	}
	stop()
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
