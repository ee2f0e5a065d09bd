//go:build unix

package store

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// fileStamp describes the file at path as the system last changed it: its
// size, device, inode, and times of modification and change. Any write
// to the file (or replacing it) changes the change time, which no one
// can set back.
func fileStamp(path string) (string, error) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return "", err
	}
	return fmt.Sprintf("size %d dev %d ino %d mtime %d ctime %d\n",
		st.Size, uint64(st.Dev), uint64(st.Ino), st.Mtim.Nano(), st.Ctim.Nano()), nil
}
