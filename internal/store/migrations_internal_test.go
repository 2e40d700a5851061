// Internal on purpose: checks the unexported migration list itself (versions counting up, SQL for both engines).

package store

import "testing"

func TestMigrationsWellFormed(t *testing.T) {
	for i, m := range migrations {
		if m.version != i+1 {
			t.Errorf("migration %d has version %d, want %d: versions count up from 1", i, m.version, i+1)
		}
		if m.name == "" || len(m.sqlite) == 0 || len(m.postgres) == 0 {
			t.Errorf("migration %d needs a name and SQL for both engines", m.version)
		}
	}
}
