//go:build linux

package store

import (
	"os"

	"golang.org/x/sys/unix"
)

// dropCache asks the kernel to drop the file's pages from the page cache,
// so that the next read comes from the disk.
func dropCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return err
	}
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}
