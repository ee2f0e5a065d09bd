//go:build unix

package main

import (
	"errors"
	"os"
	"syscall"
)

// removeAbandoned removes the hidden file path, named as made by the
// process pid, when that process no longer runs and no process holds
// the file locked, and reports whether it did. The lock is what a
// process in another pid namespace (a container) writing into the same
// directory keeps its file by, its pid meaning nothing here; a file
// system without locks leaves the pid to decide.
func removeAbandoned(path string, pid int) bool {
	if !leftBehind(path, pid) {
		return false
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return false
	}
	if err := lockFile(f); errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EINTR) {
		return false // a process writes it
	}
	return os.Remove(path) == nil
}

// leftBehind reports whether the process pid, which made the hidden file
// path, no longer runs. A process of another user's, which may not be
// signalled, runs as far as it can tell.
func leftBehind(_ string, pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// holdTemp locks f, a hidden file this process writes, for as long as
// it is open, so that a sweep in another pid namespace leaves it. A file
// system without locks leaves it unlocked.
func holdTemp(f *os.File) {
	lockFile(f)
}

// lockFile takes f's exclusive lock (flock), without waiting.
func lockFile(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var lerr error
	if err := rc.Control(func(fd uintptr) {
		lerr = syscall.Flock(int(fd), syscall.LOCK_EX|syscall.LOCK_NB)
	}); err != nil {
		return err
	}
	return lerr
}
