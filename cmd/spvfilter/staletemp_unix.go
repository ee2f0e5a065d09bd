//go:build unix

package main

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// claim opens and locks the hidden file path, named as made by the
// process pid, when that process no longer runs and no process holds the
// file locked, and reports whether it did; the caller closes the file
// (its lock kept while it looks the file over and removes it). The lock
// is what a process in another pid namespace (a container) writing into
// the same directory keeps its files by, its pid meaning nothing here
// (holdTemp, holdEarlier); a file system without locks leaves the pid to
// decide. A new file (kind tempWritten) is opened for writing where it
// may be: over NFS, an exclusive flock needs it (flock(2)). An earlier
// file, perhaps a second name of the output, is opened only for reading,
// the output left untouched (over NFS it is then left).
func claim(path string, kind tempKind, pid int) (*os.File, bool) {
	if !leftBehind(path, pid) {
		return nil, false
	}
	const flags = syscall.O_NONBLOCK | syscall.O_NOFOLLOW
	mode := os.O_RDONLY
	if kind == tempWritten {
		mode = os.O_RDWR
	}
	f, err := os.OpenFile(path, mode|flags, 0)
	if err != nil && mode != os.O_RDONLY {
		f, err = os.OpenFile(path, os.O_RDONLY|flags, 0)
	}
	if err != nil {
		return nil, false
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, false
	}
	if !lockFree(lockFile(f, syscall.LOCK_EX)) || !atName(f) {
		f.Close() // a process holds it, or it has gone meanwhile
		return nil, false
	}
	return f, true
}

// leftBehind reports whether the process pid, which made the hidden file
// path, no longer runs. A process of another user's, which may not be
// signalled, runs as far as it can tell.
func leftBehind(_ string, pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// holdTemp locks f, a hidden file this process has just made to write,
// for as long as it is open (keepLock keeps it longer), so that a sweep
// in another pid namespace leaves it, and reports whether f is still at
// its name: such a sweep may have claimed it between its making and its
// lock, and holds it or has removed it. A file system without locks
// leaves it unlocked.
func holdTemp(f *os.File) bool {
	return !lockBusy(lockFile(f, syscall.LOCK_EX)) && atName(f)
}

// holdEarlier opens and locks, shared (writers keeping the same file
// aside at once may all hold it), the hidden file name, a second name
// this process has just given the output's earlier file, so that a sweep
// in another pid namespace leaves it while the new file is put in place,
// and reports whether name still names it: such a sweep may have removed
// it before the lock, as the output's second name. The caller closes the
// file once the name is no longer needed. A lock held longer than a
// sweep holds one is another program's on the output, and a file this
// process may not read or a symbolic link cannot be locked: the name is
// then kept unlocked.
func holdEarlier(name string) (*os.File, bool) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, !errors.Is(err, fs.ErrNotExist)
	}
	for range 20 {
		if !lockBusy(lockFile(f, syscall.LOCK_SH)) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !atName(f) {
		f.Close()
		return nil, false
	}
	return f, true
}

// keepLock returns a second descriptor of f, a hidden file holdTemp
// locked, which keeps its lock after f is closed (the lock is the open
// file's, shared by its descriptors), until it is closed in turn; nil
// if there is none.
func keepLock(f *os.File) *os.File {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	var held *os.File
	rc.Control(func(fd uintptr) {
		syscall.ForkLock.RLock()
		defer syscall.ForkLock.RUnlock()
		if nfd, err := syscall.Dup(int(fd)); err == nil {
			syscall.CloseOnExec(nfd)
			held = os.NewFile(uintptr(nfd), f.Name())
		}
	})
	return held
}

// atName reports whether f, an open file, is still the file at its name.
func atName(f *os.File) bool {
	st, err := f.Stat()
	named, nerr := os.Lstat(f.Name())
	return err == nil && nerr == nil && os.SameFile(st, named)
}

// lockBusy reports whether err, of lockFile, says another holds the
// lock (or the wait was interrupted); a file system without locks is
// not busy.
func lockBusy(err error) bool {
	return errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EINTR)
}

// lockFree reports whether err, of a sweep's lockFile, leaves the file
// to it: none, or one saying the file system has no locks. Any other
// (EWOULDBLOCK: another holds it; EBADF: over NFS, a file opened only
// for reading) leaves the file to whoever may hold it.
func lockFree(err error) bool {
	return err == nil || errors.Is(err, syscall.ENOLCK) || errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.ENOSYS)
}

// lockFile takes f's lock (flock), exclusive (LOCK_EX) or shared
// (LOCK_SH) as how says, without waiting.
func lockFile(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var lerr error
	if err := rc.Control(func(fd uintptr) {
		lerr = syscall.Flock(int(fd), how|syscall.LOCK_NB)
	}); err != nil {
		return err
	}
	return lerr
}
