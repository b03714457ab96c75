//go:build unix

package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lockFile takes an advisory lock on path (created if missing), exclusive
// or shared, without waiting. The lock lasts until the file is closed, or
// the process ends, however it ends.
func lockFile(path string, exclusive bool) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	if err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errLocked
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}

// migrationLock serializes migrations of the database across processes
// with an exclusive lock on lockPath+".migrate", waited for until ctx ends.
// Like every lockFile lock, it ends with its process, however it ends.
func migrationLock(lockPath string) func(ctx context.Context) (func(), error) {
	return func(ctx context.Context) (func(), error) {
		for {
			f, err := lockFile(lockPath+".migrate", true)
			if !errors.Is(err, errLocked) {
				if err != nil {
					return nil, err
				}
				return func() { f.Close() }, nil
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
}
