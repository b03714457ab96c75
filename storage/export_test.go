package storage

// SetLeaseCheckHook sets the function run before each check of a lease
// holding (nil: none), for tests of holders whose checks stall.
func SetLeaseCheckHook(f func()) { leaseCheckHook = f }
