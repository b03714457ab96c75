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

// migrationLock serializes migrations of the database at path across
// processes with an exclusive lock on lockPath+".migrate", which the kernel
// lets go of when the process ends, however it ends.
func migrationLock(lockPath string) func(ctx context.Context) (func(), error) {
	return func(ctx context.Context) (func(), error) {
		f, err := os.OpenFile(lockPath+".migrate", os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, err
		}
		for {
			err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
			if !errors.Is(err, syscall.EWOULDBLOCK) {
				break
			}
			select {
			case <-ctx.Done():
				f.Close()
				return nil, ctx.Err()
			case <-time.After(10 * time.Millisecond):
			}
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", lockPath+".migrate", err)
		}
		return func() { f.Close() }, nil
	}
}
