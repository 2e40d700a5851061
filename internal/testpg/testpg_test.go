package testpg_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/switchboard-mcp/switchboard/internal/testpg"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testpg.StopShared()
	os.Exit(code)
}

// TestInstallHint checks the message a machine without PostgreSQL gets
// names the ways to get it.
func TestInstallHint(t *testing.T) {
	for _, want := range []string{"apt-get install -y postgresql", "make test", testpg.EnvDSN} {
		if !strings.Contains(testpg.InstallHint, want) {
			t.Errorf("install hint %q does not mention %q", testpg.InstallHint, want)
		}
	}
}

// query returns the single text value sql yields on dsn.
func query(t *testing.T, dsn, sql string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connecting to %s: %v", dsn, err)
	}
	defer conn.Close(ctx)
	var s string
	if err := conn.QueryRow(ctx, sql).Scan(&s); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return s
}

// TestIsolation checks that schemas and databases keep tests apart: a
// table made through one DSN is not seen through another, and each is
// gone after its test.
func TestIsolation(t *testing.T) {
	admin := testpg.Shared(t)
	tests := []struct {
		name string
		make func(testing.TB, string) string
		// where names the schema or database a DSN lands in.
		where string
	}{
		{"schema", testpg.Schema, "SELECT current_schema()"},
		{"database", testpg.Database, "SELECT current_database()"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var names []string
			t.Run("use", func(t *testing.T) {
				a, b := tt.make(t, admin), tt.make(t, admin)
				na, nb := query(t, a, tt.where), query(t, b, tt.where)
				if !strings.HasPrefix(na, "sbtest_") || na == nb {
					t.Fatalf("got %s %q and %q, want two distinct sbtest_ names", tt.name, na, nb)
				}
				names = []string{na, nb}
				testpg.Exec(t, a, "CREATE TABLE only_in_a (x int)")
				testpg.Exec(t, a, "INSERT INTO only_in_a VALUES (1)")
				if got := query(t, a, "SELECT count(*)::text FROM only_in_a"); got != "1" {
					t.Errorf("rows in a: got %s, want 1", got)
				}
				if err := testpg.ExecErr(b, "SELECT * FROM only_in_a"); !isUndefinedTable(err) {
					t.Errorf("reading a's table through b: got %v, want undefined_table", err)
				}
			})
			// The subtest's cleanup dropped both.
			for _, n := range names {
				for _, table := range []string{"pg_namespace WHERE nspname", "pg_database WHERE datname"} {
					if got := query(t, admin, "SELECT count(*)::text FROM "+table+" = '"+n+"'"); got != "0" {
						t.Errorf("%s: got %s rows in %s, want 0 after its test", n, got, table)
					}
				}
			}
		})
	}
}

func isUndefinedTable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "42P01"
}

// TestStart checks a server of a test's own: it answers while the test
// runs and is stopped after.
func TestStart(t *testing.T) {
	if os.Getenv(testpg.EnvDSN) != "" {
		t.Logf("%s is set: Start hands out that server, which this test cannot stop", testpg.EnvDSN)
	}
	var dsn string
	t.Run("run", func(t *testing.T) {
		dsn = testpg.Start(t)
		if got := query(t, dsn, "SELECT 'up'"); got != "up" {
			t.Errorf("got %q, want up", got)
		}
		if os.Getenv(testpg.EnvDSN) != "" {
			return
		}
		// Its cluster is a copy of the one initdb made once and kept
		// (initdb costs seconds of CPU), as the shared server's is:
		// initdb gives each cluster it makes its own system identifier.
		const id = "SELECT system_identifier::text FROM pg_control_system()"
		if own, sh := query(t, dsn, id), query(t, testpg.Shared(t), id); own != sh {
			t.Errorf("system identifiers: got %s for a server of the test's own and %s for the shared one, want both copied from the kept cluster", own, sh)
		}
	})
	if os.Getenv(testpg.EnvDSN) != "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if conn, err := pgx.Connect(ctx, dsn); err == nil {
		conn.Close(ctx)
		t.Errorf("the server at %s still accepts connections after its test ended", dsn)
	}
}
