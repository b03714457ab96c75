package sqlite

import (
	"context"

	"github.com/settleflow/settleflow/storage/bunstore"
)

// Open opens the SQLite database at path with OpenDB, brings its schema up
// to date and returns the Store on it. Close the Store when done.
func Open(ctx context.Context, path string, opts OpenOptions) (*bunstore.Store, error) {
	db, err := OpenDB(path, opts)
	if err != nil {
		return nil, err
	}
	s, err := bunstore.New(db)
	if err != nil {
		db.Close()
		return nil, err
	}
	if err := s.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}
