// Package testpg gives tests a real PostgreSQL server: the one
// SWITCHBOARD_TEST_POSTGRES_DSN names, or else a throwaway one it starts
// from the Debian postgresql package (/usr/lib/postgresql/*/bin) in a
// temporary directory, listening on 127.0.0.1 and on a unix socket there.
// As root it runs initdb and postgres as the postgres user (initdb refuses
// to run as root). When PostgreSQL is not installed, every function here
// fails the test with [InstallHint]: a test that needs PostgreSQL never
// skips silently.
//
// A test binary either shares one server among its tests ([Shared], with
// TestMain calling [StopShared] after m.Run) or starts one for a single
// test ([Start], stopped when the test ends). Either way, tests isolate
// their data in a schema ([Schema]) or a database ([Database]) of their
// own, dropped when the test ends.
//
// internal/store's and internal/daemon's tests use the shared server (a
// server start costs about a second of CPU). A new server's cluster is a
// copy of one initdb made once, kept in the user's cache directory
// (initdb costs about 1.7 s of CPU, a copy 0.2 s).
package testpg

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/rogpeppe/go-internal/lockedfile"
)

// EnvDSN names the environment variable that points the tests at a server
// of one's own instead of a throwaway one. Its value is an administrative
// DSN (a user that may create schemas and databases), as a postgres:// URL
// or in key=value form.
const EnvDSN = "SWITCHBOARD_TEST_POSTGRES_DSN"

// InstallHint says how to get PostgreSQL for the tests; every failure to
// find or start a server includes it.
const InstallHint = "install it with `apt-get install -y postgresql` (or run `make test`, which installs it), " +
	"or set " + EnvDSN + " to the DSN of a server to use"

// StartServer starts a throwaway PostgreSQL server and returns its
// administrative DSN (user postgres, database postgres, no password) and a
// function that stops it and deletes its files. It runs the newest
// installed version with fsync off: the data is thrown away. The server
// gets SIGQUIT if the process that started it dies first.
func StartServer() (dsn string, stop func(), err error) {
	initdbs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(initdbs) == 0 {
		return "", nil, fmt.Errorf("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): %s", InstallHint)
	}
	slices.SortFunc(initdbs, func(a, b string) int { return pgVersion(b) - pgVersion(a) })
	bin := filepath.Dir(initdbs[0])

	dir, err := os.MkdirTemp("", "switchboard-pg-")
	if err != nil {
		return "", nil, fmt.Errorf("making the PostgreSQL directory: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	attr := serverProcAttr()
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return "", nil, fmt.Errorf("running PostgreSQL as root needs the postgres user (%v): %s", err, InstallHint)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return "", nil, fmt.Errorf("giving %s to the postgres user: %w", dir, err)
		}
		attr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	data := filepath.Join(dir, "data")
	if err := makeData(bin, dir, data, attr); err != nil {
		return "", nil, err
	}

	port, err := freePort()
	if err != nil {
		return "", nil, err
	}
	logFile, err := os.Create(filepath.Join(dir, "postgres.log"))
	if err != nil {
		return "", nil, fmt.Errorf("creating the PostgreSQL log: %w", err)
	}
	defer logFile.Close() // the child has its own descriptor
	// fsync and full_page_writes off: the data is thrown away, and a
	// killed client (the store's crash tests) does not need them.
	srv := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-k", dir, "-h", "127.0.0.1",
		"-p", strconv.Itoa(port), "-c", "fsync=off", "-c", "full_page_writes=off", "-c", "max_connections=200")
	srv.Dir = dir
	srv.SysProcAttr = attr
	srv.Stdout, srv.Stderr = logFile, logFile
	if err := srv.Start(); err != nil {
		return "", nil, fmt.Errorf("starting postgres: %w", err)
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
			return "", nil, fmt.Errorf("postgres exited at start:\n%s", log)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Errorf("postgres did not accept connections within a minute: %w", cerr)
		}
	}
}

// makeData makes a new cluster's data directory at data, in dir (owned
// by the user the server runs as): a copy of a cluster initdb made once
// and kept in the user's cache directory (initdb costs about 1.7 s of CPU,
// a copy 0.2 s), or, where there is no cache directory, initdb's own.
func makeData(bin, dir, data string, attr *syscall.SysProcAttr) error {
	template, err := templateData(bin, attr)
	if err != nil {
		return runInitdb(bin, dir, data, attr)
	}
	// cp -a keeps the owner (the postgres user, as root) and the modes
	// PostgreSQL insists on.
	if out, err := exec.Command("cp", "-a", template, data).CombinedOutput(); err != nil {
		return fmt.Errorf("copying the PostgreSQL cluster %s: %w\n%s", template, err, out)
	}
	return nil
}

// runInitdb makes a new cluster at data, in dir.
func runInitdb(bin, dir, data string, attr *syscall.SysProcAttr) error {
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--no-locale", "--no-sync")
	initdb.Dir = dir
	initdb.SysProcAttr = attr
	if out, err := initdb.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %w\n%s", err, out)
	}
	return nil
}

// templateData returns the cluster kept for new servers of the
// PostgreSQL in bin, made if need be: under a file lock, so that test
// binaries run side by side make it once, and put in place by a rename,
// so that it is there whole or not at all. initdb runs in a temporary
// directory, which the postgres user can reach (the cache directory, in
// root's home, it may not).
func templateData(bin string, attr *syscall.SysProcAttr) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	parent := filepath.Join(cache, "switchboard-testpg")
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	unlock, err := lockedfile.MutexAt(filepath.Join(parent, "lock")).Lock()
	if err != nil {
		return "", fmt.Errorf("locking the kept PostgreSQL cluster's directory: %w", err)
	}
	defer unlock()
	// Keyed by the server's directory (its version) and the user it runs
	// as, which owns the files.
	template := filepath.Join(parent, fmt.Sprintf("%s-uid%d", strings.ReplaceAll(strings.Trim(bin, "/"), "/", "_"), os.Geteuid()))
	if _, err := os.Stat(filepath.Join(template, "PG_VERSION")); err == nil {
		return template, nil
	}
	work, err := os.MkdirTemp("", "switchboard-pg-initdb-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	if attr.Credential != nil {
		if err := os.Chown(work, int(attr.Credential.Uid), int(attr.Credential.Gid)); err != nil {
			return "", err
		}
	}
	if err := runInitdb(bin, work, filepath.Join(work, "data"), attr); err != nil {
		return "", err
	}
	tmp := fmt.Sprintf("%s.%d.tmp", template, os.Getpid())
	os.RemoveAll(tmp)
	if out, err := exec.Command("cp", "-a", filepath.Join(work, "data"), tmp).CombinedOutput(); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("keeping the PostgreSQL cluster: %w\n%s", err, out)
	}
	if err := os.Rename(tmp, template); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	return template, nil
}

// pgVersion is the major version in /usr/lib/postgresql/VERSION/bin/initdb.
func pgVersion(initdb string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return v
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port for PostgreSQL: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// shared is the server Shared hands out.
var shared struct {
	once sync.Once
	dsn  string
	err  error
	stop func()
}

// Shared returns the administrative DSN of the server the test binary's
// tests share: $SWITCHBOARD_TEST_POSTGRES_DSN, or else one started on the
// first call. A binary that uses Shared must call StopShared from TestMain
// after m.Run.
func Shared(t testing.TB) string {
	t.Helper()
	shared.once.Do(func() {
		if dsn := os.Getenv(EnvDSN); dsn != "" {
			shared.dsn = dsn
			return
		}
		shared.dsn, shared.stop, shared.err = StartServer()
	})
	if shared.err != nil {
		t.Fatalf("PostgreSQL for tests: %v", shared.err)
	}
	return shared.dsn
}

// StopShared stops the server Shared started, if it started one.
func StopShared() {
	if shared.stop != nil {
		shared.stop()
	}
}

// Start returns the administrative DSN of a server for t alone, stopped
// when t ends — or of the server $SWITCHBOARD_TEST_POSTGRES_DSN names, which
// is left running.
func Start(t testing.TB) string {
	t.Helper()
	if dsn := os.Getenv(EnvDSN); dsn != "" {
		return dsn
	}
	dsn, stop, err := StartServer()
	if err != nil {
		t.Fatalf("PostgreSQL for tests: %v", err)
	}
	t.Cleanup(stop)
	return dsn
}

var seq atomic.Int64

// uniqueName returns a schema or database name no other test (in this
// process or another on the same server) uses.
func uniqueName() string {
	return fmt.Sprintf("sbtest_%d_%d", os.Getpid(), seq.Add(1))
}

// Schema creates a schema for t on the server admin names, dropped with
// everything in it when t ends, and returns a DSN whose search_path puts
// new tables there. The DSN has admin's form (URL or key=value).
func Schema(t testing.TB, admin string) string {
	t.Helper()
	name := uniqueName()
	Exec(t, admin, "CREATE SCHEMA "+name)
	t.Cleanup(func() { Exec(t, admin, "DROP SCHEMA "+name+" CASCADE") })
	dsn, err := withParam(admin, "search_path", name)
	if err != nil {
		t.Fatalf("parsing the PostgreSQL DSN (%s): %v", EnvDSN, err)
	}
	return dsn
}

// Database creates a database for t on the server admin names, dropped
// when t ends (connections still open are cut), and returns a DSN that
// connects to it. The DSN has admin's form (URL or key=value).
func Database(t testing.TB, admin string) string {
	t.Helper()
	name := uniqueName()
	Exec(t, admin, "CREATE DATABASE "+name)
	t.Cleanup(func() { Exec(t, admin, "DROP DATABASE "+name+" WITH (FORCE)") })
	if !isURL(admin) {
		return admin + " dbname=" + name
	}
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("parsing the PostgreSQL DSN (%s): %v", EnvDSN, err)
	}
	u.Path = "/" + name
	u.RawPath = ""
	return u.String()
}

// withParam sets a run-time parameter (search_path, say) in a DSN.
func withParam(dsn, key, value string) (string, error) {
	if !isURL(dsn) {
		return dsn + " " + key + "=" + value, nil
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// isURL reports whether dsn is in URL form rather than key=value.
func isURL(dsn string) bool {
	l := strings.ToLower(dsn)
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}

// Exec runs one SQL statement on the server dsn names, failing t if it
// cannot.
func Exec(t testing.TB, dsn, sql string) {
	t.Helper()
	if err := exec1(dsn, sql); err != nil {
		t.Fatalf("PostgreSQL for tests: %v", err)
	}
}

func exec1(dsn, sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("connecting to the test PostgreSQL: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	return nil
}
