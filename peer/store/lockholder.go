package store

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spvfilter/spvfilter/peer/internal/diskfile"
)

// LockedError is the error of a store held by another process (or by
// another Store in this one): errors.Is(err, ErrLocked) holds. PID is the
// process that holds it, as it wrote itself in the lock file, or 0 when
// the file names none.
type LockedError struct {
	Path string // the lock file
	PID  int
}

func (e *LockedError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("%v: %s (held by process %d)", ErrLocked, e.Path, e.PID)
	}
	return fmt.Sprintf("%v: %s", ErrLocked, e.Path)
}

// Is makes a LockedError ErrLocked.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// maxLockFile bounds what is read of a lock file: a process id and a
// newline.
const maxLockFile = 32

// lockedBy is the error of the lock file f at path held by another: the
// process written in it, if any.
func lockedBy(f *os.File, path string) error {
	buf := make([]byte, maxLockFile)
	n, _ := f.ReadAt(buf, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil || pid <= 0 {
		pid = 0
	}
	return &LockedError{Path: path, PID: pid}
}

// writePID writes this process's id in the lock file f, which it holds,
// for the error of another that finds the store held (LockedError). It is
// a note only: a failure to write it is not one of the store's.
func writePID(f *os.File) {
	if f.Truncate(0) == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
}

// openLock opens the lock file at path, a regular file, with flag; an
// error names it.
func openLock(path string, flag int) (*os.File, error) {
	f, err := diskfile.OpenRegular(path, flag, 0o644)
	if errors.Is(err, diskfile.ErrNotRegular) {
		return nil, fmt.Errorf("lock file %s: %w", path, err)
	}
	return f, err
}
