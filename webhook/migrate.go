package webhook

import (
	"context"
	"embed"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Names of the bookkeeping tables of this package's migrations, kept apart
// from the engine's own.
const (
	migrationsTable     = "webhook_migrations"
	migrationLocksTable = "webhook_migration_locks"
)

// Migrate creates or upgrades the webhook_ tables in db. It is safe to run
// from several processes at once: every migration is idempotent and is
// recorded with an upsert, so no lock is held that a killed process could
// leave behind. [New] calls it.
func Migrate(ctx context.Context, db *bun.DB) error {
	ms := migrate.NewMigrations()
	if err := ms.Discover(migrationFiles); err != nil {
		return fmt.Errorf("webhook: migrations: %w", err)
	}
	m := migrate.NewMigrator(db, ms,
		migrate.WithTableName(migrationsTable),
		migrate.WithLocksTableName(migrationLocksTable),
		migrate.WithUpsert(true),
		migrate.WithMarkAppliedOnSuccess(true),
	)
	if err := m.Init(ctx); err != nil {
		return fmt.Errorf("webhook: migrate init: %w", err)
	}
	if _, err := m.Migrate(ctx); err != nil {
		return fmt.Errorf("webhook: migrate: %w", err)
	}
	return nil
}
