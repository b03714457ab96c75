package webhook

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/settleflow/settleflow/storage"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationsTable records this package's migrations, kept apart from the
// engine's own.
const migrationsTable = "webhook_migrations"

// Migrate creates or upgrades the webhook_ tables in db, through the
// database's one migration runner (storage.DB.Migrate): safe to run from
// several processes at once. [New] calls it.
func Migrate(ctx context.Context, db *storage.DB) error {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return err
	}
	if err := db.Migrate(ctx, storage.Migrations{Table: migrationsTable, Files: sub}); err != nil {
		return fmt.Errorf("webhook: %w", err)
	}
	return nil
}
