//go:build !unix

package store

import "os"

// lockFile opens path without locking it: on systems without flock two
// processes are kept from the same store only by the filter cache's own
// lock (bbolt's), not for the header files. Anything but a regular file
// at path is an error naming it.
func lockFile(path string) (*os.File, error) {
	return openLock(path, os.O_RDWR|os.O_CREATE)
}

// lockShared opens path, which it does not create, without locking it.
func lockShared(path string) (*os.File, error) { return openLock(path, os.O_RDONLY) }
