package bunstore

import (
	"context"
	"strings"

	"github.com/settleflow/settleflow"
)

// MigrateBeforeCanceled applies the migrations up to and including until
// with the state machine as it was before Canceled, building a database as
// the releases before Canceled left it.
func (s *Store) MigrateBeforeCanceled(ctx context.Context, until string) error {
	var statuses []settleflow.Status
	for _, st := range settleflow.Statuses {
		if st != settleflow.Canceled {
			statuses = append(statuses, st)
		}
	}
	var transitions []settleflow.Transition
	for _, tr := range settleflow.Transitions() {
		if tr.Next() != settleflow.Canceled {
			transitions = append(transitions, tr)
		}
	}
	return s.migrate(ctx, until, statuses, transitions)
}

// RunDown runs the down migration named (its file name without
// ".tx.down.sql") of the store's dialect in one transaction, as bun's
// migrator would roll it back.
func (s *Store) RunDown(ctx context.Context, name string) error {
	dir := "migrations/sqlite/"
	if s.postgres {
		dir = "migrations/postgres/"
	}
	b, err := migrationFiles.ReadFile(dir + name + ".tx.down.sql")
	if err != nil {
		return err
	}
	tx, err := s.sdb.Bun().BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // committed below on success
	for _, q := range strings.Split(string(b), "--bun:split") {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return tx.Commit()
}
