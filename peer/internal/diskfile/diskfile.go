// Package diskfile writes files whole or not at all, reads them within a
// bound, and sets damaged ones aside: what the chain state, the ban list
// and the address book share on disk.
package diskfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteAtomic writes data to path through a temporary file (path.tmp)
// renamed into place, so that the file is whole, old or new, after a
// crash; with sync, the new one is on stable storage when it returns.
// Writers of one path must not run at once.
func WriteAtomic(path string, data []byte, sync bool) error {
	return WriteAtomicMode(path, data, sync, 0o666)
}

// WriteAtomicMode is WriteAtomic with the new file's permission bits
// (before the umask): 0o600 for a file only its owner may read. A
// temporary file left by a crash is removed first, so that it cannot
// lend the new file its own permissions.
func WriteAtomicMode(path string, data []byte, sync bool, perm os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && sync {
		err = f.Sync()
	}
	if err = errors.Join(err, f.Close()); err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if sync {
		return SyncDir(filepath.Dir(path))
	}
	return nil
}

// SyncDir flushes a directory's entries, so that files created in it
// survive a power failure.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}

// ErrTooLarge: a file larger than the bound it is read within.
var ErrTooLarge = errors.New("larger than its bound")

// ErrNotRegular: something other than a regular file where one belongs
// (a directory, a device, a pipe that would block the reader).
var ErrNotRegular = errors.New("not a regular file")

// OpenRegular opens the file at path as os.OpenFile does (flag, perm)
// if it is a regular file; anything else (a directory, a device, a named
// pipe, which it opens without waiting for a writer, or a symbolic link
// to one of these) is an error wrapping ErrNotRegular, which says what
// it is but not its path (the os errors name it).
func OpenRegular(path string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|openNonblock, perm)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%w but %v", ErrNotRegular, fi.Mode().Type())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadLimited reads the regular file at path whole if it holds at most
// limit bytes; a larger one is an error wrapping ErrTooLarge, not read
// if its size says so and read no further than limit+1 bytes if it grew,
// and anything but a regular file one wrapping ErrNotRegular (see
// OpenRegular). A missing file is the os error (fs.ErrNotExist).
func ReadLimited(path string, limit int64) ([]byte, error) {
	f, err := OpenRegular(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	tooLarge := fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)
	if fi.Size() > limit {
		return nil, tooLarge
	}
	var buf bytes.Buffer
	buf.Grow(int(fi.Size()) + bytes.MinRead)
	if _, err := buf.ReadFrom(io.LimitReader(f, limit+1)); err != nil {
		return nil, err
	}
	if int64(buf.Len()) > limit {
		return nil, tooLarge
	}
	return buf.Bytes(), nil
}
