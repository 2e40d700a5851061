package store

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// The PostgreSQL tests run against a real server: the one
// SWITCHBOARD_TEST_POSTGRES_DSN names, or else one this test binary starts
// from the Debian postgresql package on the first test that needs it, in a
// temporary directory, and stops when the tests end (TestMain). Each test
// gets a schema of its own.

const envPostgresDSN = "SWITCHBOARD_TEST_POSTGRES_DSN"

const installHint = "install it with `apt-get install -y postgresql` (or run `make test`, which installs it), " +
	"or set " + envPostgresDSN + " to the DSN of a server to use"

var testPG struct {
	once sync.Once
	dsn  string // an administrative DSN
	err  error
	stop func()
}

// postgresServer returns the DSN of the test server, starting it if
// needed.
func postgresServer(t testing.TB) string {
	t.Helper()
	testPG.once.Do(func() {
		if dsn := os.Getenv(envPostgresDSN); dsn != "" {
			testPG.dsn = dsn
			return
		}
		testPG.dsn, testPG.stop, testPG.err = startPostgres()
	})
	if testPG.err != nil {
		t.Fatalf("PostgreSQL for tests: %v", testPG.err)
	}
	return testPG.dsn
}

func stopPostgres() {
	if testPG.stop != nil {
		testPG.stop()
	}
}

var schemaSeq atomic.Int64

// postgresTestDSN creates a schema for t, dropped when t ends, and returns
// a DSN whose search_path puts the tables there.
func postgresTestDSN(t *testing.T) string {
	t.Helper()
	base := postgresServer(t)
	schema := fmt.Sprintf("sbtest_%d_%d", os.Getpid(), schemaSeq.Add(1))
	admin(t, base, "CREATE SCHEMA "+schema)
	t.Cleanup(func() { admin(t, base, "DROP SCHEMA "+schema+" CASCADE") })
	return withSearchPath(t, base, schema)
}

func withSearchPath(t testing.TB, dsn, schema string) string {
	if !isPostgresDSN(dsn) {
		return dsn + " search_path=" + schema
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("parsing %s: %v", envPostgresDSN, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

func admin(t testing.TB, dsn, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connecting to the test PostgreSQL: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// startPostgres runs initdb and postgres from /usr/lib/postgresql/*/bin
// in a new temporary directory, listening on 127.0.0.1 on a free port
// and on a unix socket in that directory. As root, it runs them as the
// postgres user: initdb refuses to run as root.
func startPostgres() (dsn string, stop func(), err error) {
	initdbs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(initdbs) == 0 {
		return "", nil, fmt.Errorf("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): %s", installHint)
	}
	sort.Slice(initdbs, func(i, j int) bool { return pgVersion(initdbs[i]) > pgVersion(initdbs[j]) })
	bin := filepath.Dir(initdbs[0])

	dir, err := os.MkdirTemp("", "switchboard-pg-")
	if err != nil {
		return "", nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	attr := &syscall.SysProcAttr{Pdeathsig: syscall.SIGQUIT}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return "", nil, fmt.Errorf("running PostgreSQL as root needs the postgres user (%v): %s", err, installHint)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return "", nil, err
		}
		attr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	data := filepath.Join(dir, "data")

	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--no-locale", "--no-sync")
	initdb.Dir = dir
	initdb.SysProcAttr = attr
	if out, err := initdb.CombinedOutput(); err != nil {
		return "", nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}

	port, err := freePort()
	if err != nil {
		return "", nil, err
	}
	logFile, err := os.Create(filepath.Join(dir, "postgres.log"))
	if err != nil {
		return "", nil, err
	}
	defer logFile.Close() // the child has its own descriptor
	// fsync and full_page_writes off: the data is thrown away, and a
	// killed client (the crash tests) does not need them.
	srv := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-k", dir, "-h", "127.0.0.1",
		"-p", strconv.Itoa(port), "-c", "fsync=off", "-c", "full_page_writes=off", "-c", "max_connections=200")
	srv.Dir = dir
	srv.SysProcAttr = attr
	srv.Stdout, srv.Stderr = logFile, logFile
	if err := srv.Start(); err != nil {
		return "", nil, fmt.Errorf("starting postgres: %v", err)
	}
	exited := make(chan struct{})
	go func() { srv.Wait(); close(exited) }()
	stop = func() {
		srv.Process.Signal(syscall.SIGINT) // fast shutdown
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			srv.Process.Kill()
			<-exited
		}
		os.RemoveAll(dir)
	}

	dsn = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		conn, cerr := pgx.Connect(ctx, dsn)
		if cerr == nil {
			conn.Close(ctx)
			cancel()
			return dsn, stop, nil
		}
		cancel()
		select {
		case <-exited:
			log, _ := os.ReadFile(filepath.Join(dir, "postgres.log"))
			os.RemoveAll(dir)
			return "", nil, fmt.Errorf("postgres exited at start:\n%s", log)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Errorf("postgres did not accept connections within a minute: %v", cerr)
		}
	}
}

// pgVersion is the major version in /usr/lib/postgresql/VERSION/bin/initdb.
func pgVersion(initdb string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return v
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// TestPostgresInstallHint checks the message a machine without PostgreSQL
// gets names the way to install it.
func TestPostgresInstallHint(t *testing.T) {
	for _, want := range []string{"apt-get install -y postgresql", "make test", envPostgresDSN} {
		if !strings.Contains(installHint, want) {
			t.Errorf("install hint %q does not mention %q", installHint, want)
		}
	}
}
