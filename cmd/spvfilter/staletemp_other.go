//go:build !unix

package main

import (
	"os"
	"time"
)

// abandonedAge is how old a hidden file must be for claim to take it
// for one a killed process left, where whether its process runs cannot
// be asked.
const abandonedAge = 24 * time.Hour

// claim reports whether the hidden file path was last written
// abandonedAge ago or earlier (leftBehind); there is no file to hold
// locked, and the caller closes nil.
func claim(path string, _ tempKind, pid int) (*os.File, bool) {
	return nil, leftBehind(path, pid)
}

// leftBehind reports whether the hidden file path was last written
// abandonedAge ago or earlier. The process id it carries is not looked
// at: there is no signal 0 to ask the system whether that process runs.
func leftBehind(path string, _ int) bool {
	st, err := os.Lstat(path)
	return err == nil && st.Mode().IsRegular() && time.Since(st.ModTime()) >= abandonedAge
}

// holdTemp does nothing where files are not locked: f is at its name.
func holdTemp(*os.File) bool { return true }

// holdEarlier does nothing where files are not locked: name names the
// earlier file.
func holdEarlier(string) (*os.File, bool) { return nil, true }

// keepLock has no lock to keep where files are not locked.
func keepLock(*os.File) *os.File { return nil }
