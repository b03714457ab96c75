//go:build !unix

package sqlite

import (
	"context"
	"errors"
	"os"
)

// lockFile is not implemented here: Exclusive opens fail, shared ones take
// no lock.
func lockFile(path string, exclusive bool) (*os.File, error) {
	if exclusive {
		return nil, errors.New("exclusive opens need flock, which this platform lacks")
	}
	return nil, nil
}

// migrationLock is nil here: Migrate takes bun's lock row instead.
func migrationLock(string) func(ctx context.Context) (func(), error) { return nil }
