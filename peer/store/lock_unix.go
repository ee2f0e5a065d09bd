//go:build unix

package store

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock (flock) on path, creating it,
// without waiting, and writes this process's id in it (a LockedError
// names the holder so). The lock lasts until the file is closed or the process
// ends, however it ends. A path that holds anything but a regular file (a
// directory, a named pipe, a link to a device) is an error naming it: a
// lock on that would be no lock of this store's alone.
func lockFile(path string) (*os.File, error) {
	f, err := openLock(path, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, lockedBy(f, path)
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	writePID(f)
	return f, nil
}

// lockShared takes a shared advisory lock (flock) on the file at path,
// which it does not create, without waiting: ErrLocked while another
// holds it exclusively (lockFile); anything but a regular file is an
// error naming it, as for lockFile.
func lockShared(path string) (*os.File, error) {
	f, err := openLock(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, lockedBy(f, path)
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return f, nil
}
