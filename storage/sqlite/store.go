package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/settleflow/settleflow/storage/bunstore"
)

// Open opens the SQLite database at path with OpenDB, brings its schema up
// to date and returns the workflow Store on it. Close the Store when done; it
// closes the database. Other packages on the same database (apikey, webhook)
// take the Store's handle, s.DB().
func Open(ctx context.Context, path string, opts OpenOptions) (*bunstore.Store, error) {
	// Every Store on the file holds its lock: shared, or exclusive for an
	// Exclusive open, so that an Exclusive Store knows no other Store, in
	// any process, writes workflows to the file.
	lock, err := lockFile(path+".lock", opts.Exclusive)
	if errors.Is(err, errLocked) {
		if opts.Exclusive {
			return nil, fmt.Errorf("sqlite: open %s exclusively: another store has it open (%s is locked)", path, path+".lock")
		}
		return nil, fmt.Errorf("sqlite: open %s: a store has it open exclusively (%s is locked)", path, path+".lock")
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	var closers []io.Closer
	if lock != nil {
		closers = append(closers, lock)
	}
	db, err := openDB(path, opts, closers)
	if err != nil {
		closeLock(lock)
		return nil, err
	}
	s, err := bunstore.NewWithOptions(db, bunstore.Options{SoleWriter: opts.Exclusive})
	if err != nil {
		db.Close()
		return nil, err
	}
	if err := s.Migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

var errLocked = errors.New("locked")

func closeLock(f *os.File) {
	if f != nil {
		f.Close()
	}
}
