//go:build !unix

package store

import "os"

// lockFile opens path without locking it: on systems without flock two
// processes are kept from the same store only by the filter cache's own
// lock (bbolt's), not for the header files.
func lockFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
}

// lockShared opens path, which it does not create, without locking it.
func lockShared(path string) (*os.File, error) { return os.Open(path) }
