package bunstore

import "context"

// MigrateUntil applies the migrations up to and including until, to build a
// database as an older release left it.
func (s *Store) MigrateUntil(ctx context.Context, until string) error { return s.migrate(ctx, until) }
