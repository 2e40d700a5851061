package store_test

import (
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testpg"
)

// The PostgreSQL tests run against a real server (internal/testpg): the one
// SWITCHBOARD_TEST_POSTGRES_DSN names, or else one this test binary starts
// on the first test that needs it and stops when the tests end (TestMain).
// Each test gets a schema of its own.

// postgresTestDSN creates a schema for t, dropped when t ends, and returns
// a DSN whose search_path puts the tables there.
func postgresTestDSN(t *testing.T) string {
	t.Helper()
	return testpg.Schema(t, testpg.Shared(t))
}
